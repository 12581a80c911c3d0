"""Formal harness of ``greener.correction_table`` in a small configuration.

Inputs are free (``AnySeq``; valid ones name warps and registers in range) except for the
stream rule on ``insert`` and ``remove``
(valid and payload held until ready), a reset in the first cycle, and the protocol rule
that an insert of a (warp, PC) with instances in flight carries the same registers (one
PC, one static instruction). The harness keeps the spec's view of the table, written
independently of the RTL: per warp and per (non-reserved) PC, the number of in-flight
stored instances and their register set, with an insert stored only while its warp holds
fewer than ``entries`` instances at the start of the cycle. It asserts:

- ``ready``, ``insert.ready`` and ``remove.ready`` are low for exactly ``warps`` cycles
  after reset and high afterwards;
- every query answers exactly the spec: ``keep_on`` iff valid, ready and an in-flight
  instance of the warp with a different PC uses the register. So a register kept ON by
  the table is never released to SLEEP/OFF while such an entry exists, no query keeps a
  register ON without one, and an inserted entry is found until it is removed;
- a warp never holds more than ``entries`` instances;
- (induction strengthening) the clear counter follows the cycles since reset, cleared
  rows are empty, and the table rows hold exactly the shadow's instances.
"""

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.greener.correction_table import CorrectionTable

from ..formal_base import FormalHarness

__all__ = ["SMALL", "CorrectionTableFormal"]

SMALL = {"warps": 2, "entries": 2, "entry_regs": 2, "regs": 4, "pc_bits": 2, "query_ports": 2}
"""The proof configuration: 2 warps x 2 entries x 2 registers, 4 registers, 2-bit PCs."""


class CorrectionTableFormal(FormalHarness):
    """The table with free inputs and the invariants above (``params`` override SMALL)."""

    block = CorrectionTable
    SMALL = SMALL

    def check(self, m):
        self._drive(m)
        self._ready(m)
        shadow = self._shadow(m)
        self._rows(m, shadow)
        self._queries(m, shadow)
        self._covers(m, shadow)

    def _covers(self, m, shadow):
        """The events: a query kept ON, a full warp dropping an insert, a removal."""
        dut, config = self.dut, self.dut.config
        insert = dut.insert
        full = Cat((insert.payload.warp == w) & (sum(count for (v, _), (count, _) in
                                                     shadow.items() if v == w) == config.entries)
                   for w in range(config.warps)).any()
        self.covers(m, [
            (dut.keep_on.any(), "keep_on"),
            (insert.valid & insert.ready & insert.payload.valid.any() & full, "full_drop"),
            (dut.remove.valid & dut.remove.ready & Cat(
                (dut.remove.payload.warp == w) & (dut.remove.payload.pc == pc) & (count > 0)
                for (w, pc), (count, _) in shadow.items()).any(), "remove"),
        ])

    def _rows(self, m, shadow):
        """Induction strengthening, through the harness's own read ports of the table:
        rows already cleared hold no entry during the clear; afterwards each count is the
        number of entries with that PC, and each such entry holds exactly the register
        set."""
        dut, config = self.dut, self.dut.config
        for w in range(config.warps):
            read = dut.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(w)
            entries = [read.data[e] for e in range(config.entries)]
            with m.If(dut.clearing & (w < dut.clear_row)):
                m.d.comb += Assert(Cat(entry.pc.all() for entry in entries).all())
            for pc in range(config.empty_pc):
                count, mask = shadow[w, pc]
                same = Cat(entry.pc == pc for entry in entries)
                with m.If(dut.clearing):
                    m.d.comb += Assert(count == 0)
                with m.Else():
                    m.d.comb += Assert(count == sum(same[e] for e in range(config.entries)))
                for e, entry in enumerate(entries):
                    held = Cat(Cat(reg == r for reg in entry.reg).any()
                               for r in range(config.regs))
                    with m.If(~dut.clearing & same[e]):
                        m.d.comb += Assert(held == mask)

    def _drive(self, m):
        """Free inputs; both streams follow the stream rule."""
        dut = self.dut
        self.free_streams(m, dut.insert, dut.remove)
        for port in (dut.insert, dut.remove):
            self.assume_held(m, port.valid, port.ready, port.payload)
        self.free(m, dut.query)
        self._in_range(m)

    def _in_range(self, m):
        """Valid inputs name warps below ``warps`` and registers below ``regs``."""
        dut, config = self.dut, self.dut.config
        insert = dut.insert.payload
        rules = [(dut.insert.valid, insert.warp < config.warps),
                 (dut.remove.valid, dut.remove.payload.warp < config.warps)]
        rules += [(dut.insert.valid & insert.valid[k], insert.reg[k] < config.regs)
                  for k in range(config.entry_regs)]
        rules += [(q.valid, (q.warp < config.warps) & (q.reg < config.regs))
                  for q in (dut.query[p] for p in range(config.query_ports))]
        self.assume_when(m, rules)

    def _ready(self, m):
        """Not ready for exactly ``warps`` cycles after the reset cycle."""
        dut, warps = self.dut, self.dut.config.warps
        age = Signal(range(warps + 1))
        m.d.sync += age.eq(Mux(age == warps, age, age + 1))
        ready = Signal()
        with m.If(dut.clearing):
            m.d.comb += Assert(dut.clear_row == age)
        m.d.comb += [
            ready.eq(age == warps),
            Assert(dut.ready == ready),
            Assert(dut.insert.ready == ready),
            Assert(dut.remove.ready == ready),
        ]

    def _regmask(self, m):
        """The insert payload's register set, one bit per register id."""
        config, payload = self.dut.config, self.dut.insert.payload
        mask = Signal(config.regs)
        for r in range(config.regs):
            m.d.comb += mask[r].eq(Cat(payload.valid[k] & (payload.reg[k] == r)
                                       for k in range(config.entry_regs)).any())
        return mask

    def _shadow(self, m):
        """Per (warp, pc): in-flight stored instances and their register set."""
        dut, config = self.dut, self.dut.config
        insert, remove = dut.insert, dut.remove
        mask_in = self._regmask(m)
        shadow = {}
        for w in range(config.warps):
            counts = {pc: Signal(range(config.entries + 1), name=f"count_w{w}_pc{pc}")
                      for pc in range(config.empty_pc)}
            occupancy = Signal(range(config.entries * config.empty_pc + 1),
                               name=f"occupancy_w{w}")
            m.d.comb += [occupancy.eq(sum(counts.values())),
                         Assert(occupancy <= config.entries)]
            for pc, count in counts.items():
                mask = Signal(config.regs, name=f"mask_w{w}_pc{pc}")
                same_insert = insert.valid & (insert.payload.warp == w) & (insert.payload.pc == pc)
                with m.If(same_insert & (count > 0)):
                    m.d.comb += Assume(mask_in == mask)
                stored = Signal(name=f"stored_w{w}_pc{pc}")
                dropped = Signal(name=f"removed_w{w}_pc{pc}")
                m.d.comb += [
                    stored.eq(same_insert & insert.ready & mask_in.any()
                              & (occupancy < config.entries)),
                    dropped.eq(remove.valid & remove.ready & (remove.payload.warp == w)
                               & (remove.payload.pc == pc) & (count > 0)),
                ]
                m.d.sync += count.eq(count + stored - dropped)
                with m.If(stored):
                    m.d.sync += mask.eq(mask_in)
                shadow[w, pc] = (count, mask)
        return shadow

    def _queries(self, m, shadow):
        """``keep_on`` is exactly the spec's answer on every port."""
        dut = self.dut
        for p in range(dut.config.query_ports):
            query = dut.query[p]
            users = Cat((query.warp == w) & (query.pc != pc) & (count > 0)
                        & (mask >> query.reg)[0]
                        for (w, pc), (count, mask) in shadow.items())
            m.d.comb += Assert(dut.keep_on[p] == (query.valid & dut.ready & users.any()))
