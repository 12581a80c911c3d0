"""Pending-retry queue of WIR (paper Section VI-B)."""

import functools

from amaranth import Module, Signal
from amaranth.lib import memory

from gpurf.hw.params import ConfiguredComponent

from .configs import PendingRetryConfig

__all__ = ["PendingRetry", "PendingRetryConfig"]


class PendingRetry(ConfiguredComponent, config=PendingRetryConfig):
    """FIFO of instructions that hit a pending reuse-buffer entry and wait for its result.

    A ring in an unmapped memory (``depth`` x ``width`` bits) with a head and a tail pointer
    and an occupancy count (flip-flops, reset to empty). The payload is opaque: whatever
    the composition needs to redo the lookup and retire the instruction.

    - **Enqueue** (``enq``, stream): a pending hit. ``enq.ready`` is low only when the queue
      is full, and then the instruction executes normally instead (paper VI-B). An enqueued
      instruction is visible at ``recheck`` from the next cycle.
    - **Re-check** (``recheck``, stream, latency 0): ``valid`` while the queue holds an
      instruction, ``payload`` = the oldest. The composition raises ``recheck.ready`` on a
      cycle where the rename stage brings no new instruction and uses that cycle's reuse
      buffer lookup for the head; ``still_pending`` (sampled on the transfer) re-queues it at
      the tail, otherwise it leaves the queue (hit: to retire; miss: to execute).
    - A re-queue and an enqueue in the same cycle both fit when the queue was not full; the
      re-queued (older) instruction goes in first.

    Attributes
    ----------
    enq : In(stream.Signature(width))
        Pending hits.
    recheck : Out(stream.Signature(width))
        The head, offered for a re-check.
    still_pending : In(1)
        The re-check hit a pending entry again.
    count : Out(range(depth + 1))
        Instructions queued.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.head = Signal(config.pointer_bits)
        """The ring slot of the oldest instruction (a formal harness reads the queue from
        it)."""
        self.tail = Signal(config.pointer_bits)
        """The ring slot the next instruction is written to (``head + count``, modulo the
        depth; a formal harness states it)."""

    @functools.cached_property
    def ring(self) -> memory.Memory:
        """The ring of queued payloads. Created on first use (elaboration, or a formal
        harness's own ports), so that a component built only to check its parameters or read
        its ports leaves no unused memory behind."""
        return memory.Memory(shape=self.config.width, depth=self.config.depth, init=[])

    def elaborate(self, platform):
        m = Module()
        config = self.config
        m.submodules.ring = ring = self.ring
        head, tail = self.head, self.tail
        count = Signal(range(config.depth + 1))
        read = ring.read_port(domain="comb")
        requeue_port, enq_port = ring.write_port(), ring.write_port()
        leave, requeue, push = Signal(), Signal(), Signal()
        m.d.comb += [
            self.count.eq(count),
            self.enq.ready.eq(count != config.depth),
            self.recheck.valid.eq(count != 0),
            read.addr.eq(head),
            self.recheck.payload.eq(read.data),
            leave.eq(self.recheck.valid & self.recheck.ready),
            requeue.eq(leave & self.still_pending),
            push.eq(self.enq.valid & self.enq.ready),
            requeue_port.addr.eq(tail),
            requeue_port.data.eq(read.data),
            requeue_port.en.eq(requeue),
            enq_port.addr.eq(tail + requeue),
            enq_port.data.eq(self.enq.payload),
            enq_port.en.eq(push),
        ]
        m.d.sync += [
            head.eq(head + leave),
            tail.eq(tail + requeue + push),
        ]
        drop = leave & ~self.still_pending
        with m.If(push & ~drop):
            m.d.sync += count.eq(count + 1)
        with m.Elif(drop & ~push):
            m.d.sync += count.eq(count - 1)
        return m

