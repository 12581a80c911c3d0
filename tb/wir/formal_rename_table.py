"""Formal harness of ``wir.rename_table`` in a small configuration.

Inputs are free (``AnySeq``, valid ones in range) after a reset in the first cycle. The
harness counts, per physical register, the increments minus the decrements the table has
emitted since reset, and asserts:

- no leak: that count equals the number of valid table entries (read through the harness's
  own read ports) mapping the register, so every reference the table holds was announced
  once and every dropped one released once;
- a retire maps its register: the next cycle the entry is ``{preg, valid, pin=divergent}``;
- nothing is ready for exactly ``warps`` cycles after reset and no event is emitted then;
- (induction strengthening) while clearing, the rows already cleared are all zero.
"""

from amaranth import Cat, Mux, Signal
from amaranth.asserts import Initial
from amaranth.hdl import Assert

from gpurf.hw.wir.rename_table import RenameTable

from ..formal_base import FormalHarness

__all__ = ["SMALL", "RenameTableFormal"]

SMALL = {"warps": 2, "regs": 2, "pregs": 4, "sources": 1}
"""The proof configuration: 2 warps x 2 logical registers, 4 physical registers."""


class RenameTableFormal(FormalHarness):
    """The rename tables with free inputs and the invariants above."""

    block = RenameTable
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.issue, dut.retire, dut.exit)
        issue, retire = dut.issue.payload, dut.retire.payload
        self.assume_when(m, [
            (dut.issue.valid, (issue.warp < config.warps) & (issue.dst < config.regs)
             & Cat(s < config.regs for s in issue.src).all()),
            (dut.retire.valid, (retire.warp < config.warps) & (retire.reg < config.regs)),
            (dut.exit.valid, dut.exit.payload < config.warps),
        ])
        rows = []
        for w in range(config.warps):
            read = dut.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(w)
            rows.append(read.data)
        self._clear(m, rows)
        self._counts(m, rows)
        self._retire(m, rows)
        # The events: a retire, a reference released, a sweep (warp exit).
        self.covers(m, [
            (dut.retire.valid & dut.retire.ready, "retire"),
            (dut.ref_dec.valid, "release"),
            (dut.sweeping, "sweep"),
        ])

    def _clear(self, m, rows):
        dut, warps = self.dut, self.dut.config.warps
        age = Signal(range(warps + 1))
        m.d.sync += age.eq(Mux(age == warps, age, age + 1))
        with m.If(dut.clearing):
            m.d.comb += [Assert(dut.clear_row == age), Assert(~dut.sweeping),
                         Assert(~dut.ref_inc.valid), Assert(~dut.ref_dec.valid)]
            for w, row in enumerate(rows):
                with m.If(w < dut.clear_row):
                    m.d.comb += Assert(row.as_value() == 0)
        m.d.comb += [Assert(dut.ready == (age == warps)),
                     Assert(dut.issue.ready == (age == warps) & ~dut.sweeping)]

    def _counts(self, m, rows):
        dut, config = self.dut, self.dut.config
        for p in range(config.pregs):
            count = Signal(range(config.warps * config.regs + 2), name=f"count_{p}")
            inc = dut.ref_inc.valid & (dut.ref_inc.preg == p)
            dec = dut.ref_dec.valid & (dut.ref_dec.preg == p)
            m.d.sync += count.eq(count + inc - dec)
            held = sum(row[r].valid & (row[r].preg == p)
                       for row in rows for r in range(config.regs))
            with m.If(~dut.clearing):
                m.d.comb += Assert(count == held)
            with m.Else():
                m.d.comb += Assert(count == 0)

    def _retire(self, m, rows):
        dut, config = self.dut, self.dut.config
        retire = dut.retire.payload
        was = Signal()
        warp, reg = Signal(config.warp_bits), Signal(range(config.regs))
        preg, pin = Signal(config.preg_bits), Signal()
        m.d.sync += [was.eq(dut.retire.valid & dut.retire.ready & ~Initial()),
                     warp.eq(retire.warp), reg.eq(retire.reg), preg.eq(retire.preg),
                     pin.eq(retire.divergent)]
        for w, row in enumerate(rows):
            for r in range(config.regs):
                with m.If(was & (warp == w) & (reg == r)):
                    m.d.comb += Assert((row[r].valid == 1) & (row[r].preg == preg)
                                       & (row[r].pin == pin))
