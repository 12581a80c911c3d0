"""Formal harness of ``compression.write_path`` in a small configuration.

Inputs are free (``AnySeq``) after a reset in the first cycle: table loads and writebacks,
any data, integer or float. Assumed: an offered writeback is held until taken (the table's
stream rule), every loaded entry has a slice in ``r0`` (``m0 != 0``, the truncator's input
protocol) and a writeback names a register whose entry was loaded. The harness counts the
accepted writebacks and the writes shown per port (a write shows as a non-zero ``m0`` on
``rf_write[p][0]``) and asserts, per port:

- **one write per accepted writeback**: never more writes shown than writebacks accepted,
  at most ``buffer + 2`` in flight;
- **nothing else on the port**: while no write shows, every field of the port is zero;
- on port 0, which wins every bank conflict (the table's fixed priority), **the paper's
  two-cycle write-back**: a writeback accepted in cycle ``t`` shows in ``t + 2``, and only
  then; the other ports wait in the conflict buffer (covered: a full buffer, a wait).

The stage registers are local to the block's ``elaborate``, so the proof is BMC.
"""

from itertools import pairwise

from amaranth import Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.compression.write_path import WritePath

from ..formal_base import FormalHarness

__all__ = ["SMALL", "WritePathFormal"]

SMALL = {"lanes": 1, "entries": 4, "banks": 2, "ports": 2, "buffer": 1}
"""The proof configuration: one lane, a 4-entry two-bank table, two ports (bank
conflicts), one conflict-buffer entry per port."""

LATENCY = 2
"""Cycles from an accepted writeback to its write without a conflict (paper 3.2.6)."""


class WritePathFormal(FormalHarness):
    """The write path with free inputs and the invariants above (``params`` override
    SMALL; ``block`` is the component class)."""

    block = WritePath
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free(m, dut.write_valid, dut.write)
        self.free_streams(m, dut.load)
        loaded = self._loaded(m)
        for p in range(config.ports):
            self.assume_held(m, dut.write_valid[p], dut.write_ready[p], dut.write[p],
                             name=f"write{p}")
            with m.If(dut.write_valid[p]):
                m.d.comb += Assume(loaded.bit_select(dut.write[p].reg, 1))
            self._port(m, p)

    def _loaded(self, m):
        """The registers whose entry was loaded (assumed legal: ``m0 != 0``)."""
        dut = self.dut
        loaded = Signal(dut.config.entries, name="loaded")
        with m.If(dut.load.valid):
            m.d.comb += Assume(dut.load.payload.entry.m0 != 0)
            m.d.sync += loaded.bit_select(dut.load.payload.reg, 1).eq(1)
        return loaded

    def _port(self, m, p):
        dut, config = self.dut, self.dut.config
        accept = dut.write_valid[p] & dut.write_ready[p] & self.running
        shown = dut.rf_write[p][0].mask != 0
        accepted = Signal(8, name=f"accepted{p}")
        written = Signal(8, name=f"written{p}")
        m.d.sync += [accepted.eq(accepted + accept), written.eq(written + shown)]
        in_flight = accepted - written
        m.d.comb += [
            Assume(accepted < 200),
            Assert(written <= accepted),
            Assert(in_flight <= config.buffer + LATENCY),
            Assert(shown | (dut.rf_write[p].as_value() == 0)),
        ]
        waited = Signal(name=f"waited{p}")
        m.d.sync += waited.eq(dut.write_valid[p] & ~dut.write_ready[p])
        events = [(shown, f"write_{p}"),
                  (shown & (dut.rf_write[p][1].mask != 0), f"split_write_{p}")]
        if p == 0:
            self._exact_latency(m, accept, shown)
        else:
            events += [(in_flight == config.buffer + LATENCY, f"full_{p}"),
                       (waited & accept, f"conflict_wait_{p}")]
        self.covers(m, events)

    @staticmethod
    def _exact_latency(m, accept, shown):
        """A write shows exactly ``LATENCY`` cycles after its writeback, and only then."""
        stages = [Signal(name=f"accepted_before_{k}") for k in range(1, LATENCY + 1)]
        m.d.sync += stages[0].eq(accept)
        m.d.sync += [later.eq(earlier) for earlier, later in pairwise(stages)]
        m.d.comb += Assert(shown == stages[-1])
