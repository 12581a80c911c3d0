"""Formal harness of ``compression.read_path`` in a small configuration.

Inputs are free (``AnySeq``) after a reset in the first cycle: table loads, requests and the
register file's data, with any entries (legal or not: the properties below do not depend on
the values). The harness numbers the accepted requests and assumes each carries its number
(mod ``2^tag_width``) as its tag, and asserts:

- **one result per accepted request, in request order**: a result's tag is the number of
  results before it (mod ``2^tag_width``), and there are never more results than accepted
  requests;
- at most 4 requests in flight (accepted, no result yet): the pipeline depth;
- a register-file read happens only while a request is in flight.

The stage registers are local to the block's ``elaborate``, so k-induction does not close:
the proof is BMC.
"""

from amaranth import Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.compression.read_path import ReadPath

from ..formal_base import FormalHarness

__all__ = ["SMALL", "ReadPathFormal"]

SMALL = {"lanes": 1, "entries": 4, "banks": 1, "tag_width": 3}
"""The proof configuration: one lane, a 4-entry one-bank table, 3-bit tags."""

IN_FLIGHT = 4
"""Requests in flight at most (accepted in ``t..t+3``, the first result in ``t+4``)."""


class ReadPathFormal(FormalHarness):
    """The read path with free inputs and the invariants above (``params`` override SMALL;
    ``block`` is the component class)."""

    block = ReadPath
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free(m, dut.request_valid, dut.request, dut.rf_data)
        self.free_streams(m, dut.load)
        accepted = Signal(8, name="accepted")
        results = Signal(8, name="results")
        accept = dut.request_valid & dut.request_ready & self.running
        tags = (1 << config.tag_width) - 1
        m.d.comb += Assume(dut.request.tag == (accepted & tags))
        with m.If(accept):
            m.d.sync += accepted.eq(accepted + 1)
        with m.If(dut.result_valid):
            m.d.sync += results.eq(results + 1)
        in_flight = Signal(8, name="in_flight")
        m.d.comb += in_flight.eq(accepted - results)
        m.d.comb += Assume(accepted < 200)
        m.d.comb += [
            Assert(results <= accepted),
            Assert(in_flight <= IN_FLIGHT),
            Assert(~dut.rf_valid | (in_flight != 0)),
        ]
        with m.If(dut.result_valid):
            m.d.comb += Assert(dut.result.tag == (results & tags))
        split = dut.request_ready == 0
        back_to_back = Signal(name="back_to_back")
        m.d.sync += back_to_back.eq(dut.result_valid)
        # The events: a split operand's busy cycle, results in consecutive cycles, four in
        # flight, a converted operand's result.
        self.covers(m, [
            (split & (in_flight != 0), "split_busy"),
            (dut.result_valid & back_to_back, "back_to_back_results"),
            (in_flight == IN_FLIGHT, "four_in_flight"),
            (dut.result_valid & (results == 2), "third_result"),
        ])
