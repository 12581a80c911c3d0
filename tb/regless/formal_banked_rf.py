"""Formal harness of ``regless.banked_rf`` (its banks composed with the address decoding).

Every input is free (``AnySeq``) after a reset in the first cycle; one register
``(warp, reg)`` is chosen freely and kept (``AnyConst``). The harness shadows its value (the
last one written; 0 at the start, as the memories) and asserts:

- a read of the register answers, one cycle later, the value it had **before** the read's
  cycle (a write in the same cycle is seen from the next cycle on: no transparency);
- ``read_resp`` is valid exactly the cycle after a read; its payload is 0 while not valid;
- (induction strengthening) the register's word, in its bank and row, holds the shadow
  (not reset, as the memories: a write during the reset cycle is stored).

The last item and the first hold only if no other register shares the word: the fixed
placement's bijection is what makes the proof close (a mutant that drops the warp from the
row, aliasing the warps' registers, is killed).

Covers: a read and a write in one bank in one cycle, a read of the register answering a
value written earlier (nonzero), a read of the register in the cycle it is written.
"""

from amaranth import Signal
from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume

from gpurf.hw.regless.banked_rf import BankedRf

from ..formal_base import FormalHarness

__all__ = ["SMALL", "BankedRfFormal"]

SMALL = {"entries": 16, "banks": 2, "warps": 2, "lanes": 1, "data_width": 2}
"""The proof configuration: 16 entries (2 warps x 8 registers) over 2 banks, 2-bit values."""


class BankedRfFormal(FormalHarness):
    """The register file with free inputs and the rules above (``params`` override SMALL;
    ``block`` a mutant class)."""

    block = BankedRf
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.read, dut.write)
        for port in (dut.read, dut.write):
            m.d.comb += [Assume(port.payload.warp < config.warps),
                         Assume(port.payload.reg < config.regs)]
        warp, reg = AnyConst(config.warp_bits), AnyConst(config.reg_bits)
        m.d.comb += [Assume(warp < config.warps), Assume(reg < config.regs)]
        shadow = Signal(config.value_layout, reset_less=True)
        after_reset = self.after_reset

        def names(ref):
            return (ref.warp == warp) & (ref.reg == reg)

        write, read = dut.write, dut.read
        with m.If(write.valid & names(write.payload)):
            m.d.sync += shadow.eq(write.payload.data)
        asked, expected, was_read = Signal(), Signal(config.value_layout), Signal()
        m.d.sync += [asked.eq(read.valid & names(read.payload)), expected.eq(shadow),
                     was_read.eq(read.valid)]
        with m.If(after_reset):
            m.d.comb += Assert(dut.read_resp.valid == was_read)
            with m.If(asked):
                m.d.comb += Assert(dut.read_resp.payload.as_value() == expected.as_value())
            with m.If(~dut.read_resp.valid):
                m.d.comb += Assert(dut.read_resp.payload.as_value() == 0)
        self._word_holds(m, warp, reg, shadow)
        bank_of = (read.payload.warp + read.payload.reg)[:config.bank_bits]
        wbank_of = (write.payload.warp + write.payload.reg)[:config.bank_bits]
        self.covers(m, [
            (read.valid & write.valid & (bank_of == wbank_of), "same_bank"),
            (asked & (expected.as_value() != 0), "reads_written_value"),
            (read.valid & names(read.payload) & write.valid & names(write.payload)
             & (write.payload.data.as_value() != shadow.as_value()), "read_while_written"),
        ], guard=after_reset)

    def _word_holds(self, m, warp, reg, shadow):
        """The register's word in its bank equals the shadow (k-induction strengthening)."""
        config = self.dut.config
        bank = (warp + reg)[:config.bank_bits]
        row = warp * config.rows_per_warp + (reg >> config.bank_bits)
        for b, memory in enumerate(self.dut.banks):
            port = memory.read_port(domain="comb")
            m.d.comb += port.addr.eq(row)
            with m.If(bank == b):
                m.d.comb += Assert(port.data.as_value() == shadow.as_value())
