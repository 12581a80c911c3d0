"""Formal harness of ``wir.pending_retry`` in a small configuration.

Every input is free (``AnySeq``) after a reset in the first cycle. The harness keeps the
spec's queue as a shift register of ``depth`` payloads and a count: a re-check that
leaves drops the head, a still-pending one re-queues it at the tail, then an accepted
enqueue is appended. It asserts:

- **no instruction lost, duplicated or reordered**: ``recheck`` offers exactly when the
  shadow queue is non-empty, and then offers its oldest payload; ``count`` is the shadow's
  count; ``enq.ready`` is low exactly when it is full;
- the ring holds the shadow queue from the head the spec's pointer names (leaves so far
  modulo ``depth``).

The head and tail pointers are local to the block's ``elaborate``, so the harness cannot
tie them to its own and k-induction does not close (an unreachable state with the RTL's
head elsewhere stays consistent for any ``k``): the proof is BMC.
"""

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert

from gpurf.hw.wir.pending_retry import PendingRetry

from ..formal_base import FormalHarness

__all__ = ["SMALL", "PendingRetryFormal"]

SMALL = {"depth": 4, "width": 2}
"""The proof configuration: 4 entries of 2 bits (a pointer that wraps within the depth)."""


class PendingRetryFormal(FormalHarness):
    """The queue with free inputs and the invariants above (``params`` override SMALL;
    ``block`` is the component class)."""

    block = PendingRetry
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        depth = config.depth
        self.free_streams(m, dut.enq)
        self.free_ready(m, dut.recheck)
        self.free(m, dut.still_pending)
        queue = [Signal(config.width, name=f"queued_{i}") for i in range(depth)]
        count = Signal(range(depth + 1), name="queued")
        head = Signal(config.pointer_bits, name="spec_head")
        leave, requeue, push = Signal(), Signal(), Signal()
        m.d.comb += [
            leave.eq(dut.recheck.valid & dut.recheck.ready),
            requeue.eq(leave & dut.still_pending),
            push.eq(dut.enq.valid & dut.enq.ready),
            Assert(dut.count == count),
            Assert(dut.enq.ready == (count != depth)),
            Assert(dut.recheck.valid == (count != 0)),
        ]
        with m.If(count != 0):
            m.d.comb += Assert(dut.recheck.payload == queue[0])
        kept = count - leave
        for i in range(depth):
            shifted = queue[i + 1] if i + 1 < depth else 0
            after = Mux(leave, shifted, queue[i])
            after = Mux(requeue & (kept == i), queue[0], after)
            after = Mux(push & (kept + requeue == i), dut.enq.payload, after)
            m.d.sync += queue[i].eq(after)
        m.d.sync += [count.eq(kept + requeue + push), head.eq(head + leave)]
        for i in range(depth):
            read = dut.ring.read_port(domain="comb")
            m.d.comb += read.addr.eq(head + i)
            with m.If(i < count):
                m.d.comb += Assert(read.data == queue[i])
        # The events: a full queue refusing an enqueue, a re-queue and an enqueue in one
        # cycle, a re-queue into a full queue, a re-check that leaves, the ring wrapping.
        wrapped = Signal()
        with m.If(leave & (head == depth - 1)):
            m.d.sync += wrapped.eq(1)
        self.covers(m, [
            (dut.enq.valid & ~dut.enq.ready, "full"),
            (requeue & push, "requeue_and_enqueue"),
            (requeue & (count == depth), "requeue_when_full"),
            (leave & ~dut.still_pending, "leave"),
            (wrapped & (count > 1) & Cat(queue[0] != queue[1]), "wrapped"),
        ])
