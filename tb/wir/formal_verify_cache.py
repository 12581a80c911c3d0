"""Formal harness of ``wir.verify_cache`` in a small configuration.

Inputs are free (``AnySeq``) after a reset in the first cycle. Per physical register the
harness keeps the spec's knowledge: the value of its last fill, valid until a write to the
register (an invalidate; a fill in the cycle of a write is stale and ignored). It asserts:

- coherence: a hit answers the register's last filled value, and only while no write to it
  came after that fill (a write in the lookup's own cycle makes it a miss);
- a fill is found: a lookup in the cycle after a fill of the same register (with no write
  in either cycle) hits;
- (induction strengthening) every valid entry holds a register the spec knows, with its
  value, no two valid entries hold the same register, and the FIFO pointer names an
  entry.
"""

from amaranth import Cat, Signal
from amaranth.asserts import Initial
from amaranth.hdl import Assert

from gpurf.hw.wir.verify_cache import VerifyCache

from ..formal_base import FormalHarness

__all__ = ["SMALL", "VerifyCacheFormal"]

SMALL = {"entries": 2, "pregs": 4, "lanes": 1, "data_width": 2, "invalidate_ports": 1}
"""The proof configuration: 2 entries, 4 registers, 2-bit values, 1 write port."""


class VerifyCacheFormal(FormalHarness):
    """The verify cache with free inputs and the invariants above."""

    block = VerifyCache
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.lookup, dut.fill)
        self.free(m, dut.invalidate_valid, dut.invalidate_preg)
        known = Signal(config.pregs)
        values = [Signal(config.value_bits, name=f"value_{p}") for p in range(config.pregs)]
        for p in range(config.pregs):
            written = Cat(dut.invalidate_valid[k] & (dut.invalidate_preg[k] == p)
                          for k in range(config.invalidate_ports)).any()
            with m.If(written):
                m.d.sync += known[p].eq(0)
            with m.Elif(dut.fill.valid & (dut.fill.payload.preg == p)):
                m.d.sync += [known[p].eq(1), values[p].eq(dut.fill.payload.value)]
        self._answers(m, known, values)
        self._entries(m, known, values)

    def _answers(self, m, known, values):
        dut, config = self.dut, self.dut.config
        lookup = dut.lookup.payload
        written = Cat(dut.invalidate_valid[k] & (dut.invalidate_preg[k] == lookup)
                      for k in range(config.invalidate_ports)).any()
        may_hit, want, must_hit = Signal(), Signal(config.value_bits), Signal()
        filled_last = Signal()
        fill_preg = Signal(config.preg_bits)
        m.d.sync += [filled_last.eq(dut.fill.valid & ~Initial()),
                     fill_preg.eq(dut.fill.payload.preg)]
        for p in range(config.pregs):
            with m.If(lookup == p):
                m.d.sync += [may_hit.eq(known[p] & ~written), want.eq(values[p]),
                             must_hit.eq(dut.lookup.valid & known[p] & ~written
                                         & filled_last & (fill_preg == p))]
        result = dut.result
        with m.If(result.valid & result.payload.hit):
            m.d.comb += [Assert(may_hit), Assert(result.payload.value.as_value() == want)]
        with m.If(~result.payload.hit):
            m.d.comb += Assert(result.payload.value.as_value() == 0)
        with m.If(must_hit):
            m.d.comb += Assert(result.valid & result.payload.hit)
        # The events: a hit, a miss on a register written since its fill, a full cache.
        self.covers(m, [
            (result.valid & result.payload.hit, "hit"),
            (dut.lookup.valid & written & Cat(known[p] & (lookup == p)
                                              for p in range(config.pregs)).any(),
             "invalidated_lookup"),
            (dut.valid.all(), "full"),
        ])

    def _entries(self, m, known, values):
        dut, config = self.dut, self.dut.config
        m.d.comb += Assert(dut.pointer < config.entries)
        for e in range(config.entries):
            read = dut.values.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            with m.If(dut.valid[e]):
                for p in range(config.pregs):
                    with m.If(dut.tag[e] == p):
                        m.d.comb += [Assert(known[p]),
                                     Assert(read.data.as_value() == values[p])]
                for other in range(e + 1, config.entries):
                    with m.If(dut.valid[other]):
                        m.d.comb += Assert(dut.tag[e] != dut.tag[other])

