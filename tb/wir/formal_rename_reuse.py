"""Formal harness of ``wir.rename_reuse`` (the rename and reuse stages composed), in a
small configuration, assume-guarantee.

Inputs are free (``AnySeq``; warps, registers, thread-block slots in range) after a reset
in the first cycle; the pool's answers (``result_saturated``, ``operand_saturated``,
``low_reg``) are free too, so every saturation and low-register case is explored.

**Assumptions (the parts' proven properties).** ``wir.rename_table``'s clear
(``formal_rename_table.py``: while clearing, the row being cleared is the cycle count and
the rows before it are zero) and ``wir.pending_retry``'s bound (``formal_pending_retry.py``:
``count`` at most ``depth``), assumed on the parts' state; from reset they hold anyway.

**Guarantees (asserted).** Per physical register ``p``, the composition's reference
events since reset (``inc[0..5]`` minus ``dec[0..4]``) equal the references held: the
rename table's valid entries naming ``p`` (read through the harness's own read ports),
the reuse buffer's valid entries (each register operand, and the result once filled), the
hit on ``out`` naming ``p`` and the hits delivered on ``out`` before (their in-flight
result references, which the environment now holds). So no event of either part is lost,
doubled or emitted for a holder that does not exist. Also: an instruction issued in cycle
``t`` leaves on ``out`` in ``t + 2`` (not ``retried``, its warp and destination); a hit on
``out`` is never pending; the queue never exceeds its depth.
"""

from amaranth import Cat, Signal
from amaranth.asserts import Initial
from amaranth.hdl import Assert, Assume

from gpurf.hw.wir.configs import DEC_PORTS, INC_PORTS, SOURCES
from gpurf.hw.wir.rename_reuse import RenameReuse

from ..formal_base import FormalHarness

__all__ = ["SMALL", "RenameReuseFormal"]

SMALL = {"warps": 1, "regs": 2, "pregs": 4, "entries": 2, "opcode_bits": 4, "imm_bits": 2,
         "blocks": 1, "barrier_bits": 1, "retry_depth": 2}
"""The proof configuration: 1 warp x 2 logical registers, 4 physical registers, 2 reuse
entries (tags fold together), a 2-deep pending-retry queue, 2-bit immediates."""


class RenameReuseFormal(FormalHarness):
    """The composition with free inputs, the parts' invariants assumed, the guarantees
    above asserted, and covers of the events it claims to exercise."""

    block = RenameReuse
    SMALL = SMALL

    def check(self, m):
        self._drive(m)
        rows = self._rows(m)
        self._assume_parts(m, rows)
        self._balance(m, rows)
        self._timing(m)
        self._covers(m)

    def _drive(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.issue, dut.retire, dut.exit, dut.barrier, dut.launch,
                          dut.fill)
        self.free(m, dut.result_saturated, dut.operand_saturated, dut.low_reg)
        issue, retire = dut.issue.payload, dut.retire.payload
        m.d.comb += [
            Assume(issue.warp < config.warps), Assume(issue.dst < config.regs),
            Assume(issue.tb < config.blocks),
            Assume(retire.warp < config.warps), Assume(retire.reg < config.regs),
            Assume(dut.exit.payload < config.warps),
            Assume(dut.barrier.payload.tb < config.blocks),
            Assume(dut.launch.payload.tb < config.blocks),
        ]
        for k in range(SOURCES):
            with m.If(issue.opcode.regs[k]):
                m.d.comb += Assume(issue.operand[k] < config.regs)

    def _rows(self, m):
        """The rename table's rows through the harness's own read ports."""
        rename = self.dut.rename
        rows = []
        for w in range(self.dut.config.warps):
            read = rename.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(w)
            rows.append(read.data)
        return rows

    def _assume_parts(self, m, rows):
        """The parts' proven invariants on their state."""
        dut = self.dut
        rename = dut.rename
        with m.If(rename.clearing):
            for w, row in enumerate(rows):
                with m.If(w < rename.clear_row):
                    m.d.comb += Assume(row.as_value() == 0)
        m.d.comb += Assume(dut.retry.count <= dut.config.retry_depth)

    def _balance(self, m, rows):
        """Per register: net events == holders (table, buffer, hits out and delivered)."""
        dut, config = self.dut, self.dut.config
        reuse = dut.reuse
        tags = config.reuse.tag_layout
        entries = []
        for e in range(config.entries):
            read = reuse.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            entries.append((reuse.valid[e], read.data))
        out = dut.out.payload
        hit_out = dut.out.valid & out.response.hit
        width = (config.warps * config.regs + 4 * config.entries + 16).bit_length() + 2
        for p in range(config.pregs):
            net = Signal(width, name=f"net_{p}")
            given = Signal(width, name=f"given_{p}")
            ups = [dut.inc[k].valid & (dut.inc[k].preg == p) for k in range(1 + INC_PORTS)]
            downs = [dut.dec[k].valid & (dut.dec[k].preg == p) for k in range(1 + DEC_PORTS)]
            delivered = hit_out & (out.response.result == p)
            m.d.sync += [net.eq(net + sum(ups) - sum(downs)), given.eq(given + delivered)]
            held = [row[r].valid & (row[r].preg == p) & ~dut.rename.clearing
                    for row in rows for r in range(config.regs)]
            for valid, word in entries:
                view = tags(word.tag)
                held += [valid & view.opcode.regs[k] & (view.operand[k] == p)
                         for k in range(SOURCES)]
                held.append(valid & ~word.pending & (word.result == p))
            m.d.comb += Assert(net == sum(held) + delivered + given)

    def _timing(self, m):
        """Issue at ``t`` -> ``out`` at ``t + 2``; a hit is not pending; the queue bound."""
        dut, config = self.dut, self.dut.config
        issued = Signal(2)
        warp = [Signal(config.rename.warp_bits, name=f"issued_warp_{k}") for k in range(2)]
        dst = [Signal(config.rename.reg_bits, name=f"issued_dst_{k}") for k in range(2)]
        taken = dut.issue.valid & dut.issue.ready & self.running
        m.d.sync += [issued.eq(Cat(taken, issued[0])),
                     warp[0].eq(dut.issue.payload.warp), warp[1].eq(warp[0]),
                     dst[0].eq(dut.issue.payload.dst), dst[1].eq(dst[0])]
        out = dut.out.payload
        with m.If(issued[1] & ~Initial()):
            m.d.comb += [Assert(dut.out.valid), Assert(~out.retried),
                         Assert(out.warp == warp[1]), Assert(out.dst == dst[1])]
        with m.If(dut.out.valid & out.response.hit):
            m.d.comb += Assert(~out.response.pending)
        m.d.comb += Assert(dut.queued <= config.retry_depth)

    def _covers(self, m):
        dut = self.dut
        out = dut.out.payload
        response = out.response
        reuse = dut.reuse
        staged = dut.rename.renamed.valid
        self.covers(m, [
            (dut.out.valid & response.hit & ~out.retried, "reuse_hit"),
            (dut.out.valid & response.pending, "pending_queued"),
            (staged & reuse.response.payload.pending & ~dut.retry.enq.ready, "queue_full"),
            (dut.out.valid & out.retried & response.hit, "recheck_hit"),
            (dut.out.valid & out.retried & ~response.hit, "recheck_miss"),
            (dut.inc[1 + 4].valid, "fill"),
            (dut.dec[0].valid & ~dut.rename.sweeping, "remap_release"),
            (dut.dec[0].valid & dut.rename.sweeping, "exit_sweep_release"),
            (dut.low_reg & Cat(dut.dec[1 + k].valid for k in range(DEC_PORTS)).any(),
             "low_register_eviction"),
            (staged & ~dut.loads.answer.reuse, "load_after_store_bypass"),
            (dut.out.valid & out.retried & response.reserved, "recheck_reserves"),
        ])
