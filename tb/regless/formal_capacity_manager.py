"""Formal harness of ``regless.capacity_manager`` in a small configuration.

After a reset in the first cycle the descriptor stream (``region``) and the queues'
``ready`` are free (``AnySeq``). The harness plays the OSU: it acknowledges a queue entry in
the cycle it leaves its queue (``preloaded[b]`` = that transfer). It plays the scheduler
under the protocol's assumptions (``Assume``): an instruction is issued only for an ACTIVE
warp, with a destination bank only where the warp's outstanding writes stay within its
region's usage (the scoreboard's guarantee); a write completes only where one is
outstanding. Per warp it counts the entry words taken and the acknowledgements since the
warp's last header. It asserts:

1. **conservation**, per bank: ``free[b]`` + the lines every warp holds (its usage while
   PRELOADING or ACTIVE, its outstanding writes while DRAINING) = lines per bank, so the
   counters never underflow nor exceed the capacity; outstanding writes stay within usage
   and are 0 for INACTIVE and PRELOADING warps;
2. **a warp is ACTIVE only after all its region's entries left the queues and were
   acknowledged**: while ACTIVE, taken = acknowledged = the header's ``n_entries``; while
   PRELOADING, ``pending`` + acknowledged = ``n_entries``;
3. **the stack** holds distinct warps, each INACTIVE and not exited; stack fill +
   warps not INACTIVE + exited warps = warps; exited warps are INACTIVE;
4. **a barrier holds a drained warp**: ``at_barrier`` is free; a DRAINING warp whose bit
   was set stays DRAINING in the next cycle.

With one line per bank each bank's queue holds at most one entry, shown on its ``preload``
output, so the harness can strengthen the induction (and k-induction closes at depth 2):
per warp, acknowledged <= taken <= the header's entries, taken - acknowledged = the queued
entries naming it, a PRELOADING warp's taken entries plus those still due (``remaining``
while it streams) = the header's entries; a queued entry or a streamed region names a
PRELOADING warp in range, and a streamed region still owes an entry. With deeper queues the
queued entries are not all visible (``amaranth.lib.fifo.SyncFIFO``'s storage is local to its
``elaborate``), so these are left out and the proof is BMC.

Covers (after the reset cycle): a warp activated after its region's entries were
acknowledged, a header for the top warp that does not fit (not taken), an entry word
waiting for room in its bank's queue, a late write of a DRAINING warp freeing a line, a
drained warp pushed back on the stack, a drained warp held at a barrier, a warp exited.
"""

from amaranth import Cat, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.regless.capacity_manager import CapacityManager
from gpurf.hw.regless.layouts import RegionWord, WarpState

from ..formal_base import FormalHarness

__all__ = ["SMALL", "CapacityManagerFormal"]

SMALL = {"warps": 2, "banks": 2, "lines": 4, "regs": 4, "max_entries": 4}
"""The proof configuration: 2 warps, 2 banks x 2 lines, 4 registers, up to 4 entries."""


class CapacityManagerFormal(FormalHarness):
    """The capacity manager in its harness (``params`` override SMALL; ``block`` a mutant
    class)."""

    block = CapacityManager
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.region)
        for b in range(config.banks):
            out = dut.preload[b]
            self.free_ready(m, out)
            m.d.comb += [dut.preloaded[b].valid.eq(out.valid & out.ready),
                         dut.preloaded[b].warp.eq(out.payload.warp)]
        self._scheduler(m)
        self._conservation(m)
        self._activation(m)
        self._stack(m)
        self._barrier(m)
        self._covers(m)

    def _is(self, warp, state):
        return self.dut.state[warp] == state

    def _scheduler(self, m):
        dut, config = self.dut, self.dut.config
        issue, written = dut.issue, dut.written
        self.free_streams(m, issue, written)
        m.d.comb += Assume(~issue.valid | (issue.payload.warp < config.warps))
        m.d.comb += Assume(~written.valid | (written.payload.warp < config.warps))
        for w in range(config.warps):
            with m.If(issue.valid & (issue.payload.warp == w)):
                m.d.comb += Assume(self._is(w, WarpState.ACTIVE))
                for b in range(config.banks):
                    with m.If(issue.payload.has_dst & (issue.payload.dst_bank == b)):
                        m.d.comb += Assume(dut.outstanding[w][b] < dut.usage[w][b])
            for b in range(config.banks):
                with m.If(written.valid & (written.payload.warp == w)
                          & (written.payload.bank == b)):
                    m.d.comb += Assume(dut.outstanding[w][b] != 0)

    def _conservation(self, m):
        dut, config = self.dut, self.dut.config
        for b in range(config.banks):
            total = dut.free[b]
            for w in range(config.warps):
                holding = self._is(w, WarpState.PRELOADING) | self._is(w, WarpState.ACTIVE)
                draining = self._is(w, WarpState.DRAINING)
                total = total + (holding * dut.usage[w][b]) + (draining * dut.outstanding[w][b])
                m.d.comb += [
                    Assert(dut.outstanding[w][b] <= dut.usage[w][b]),
                    Assert(~(self._is(w, WarpState.INACTIVE)
                             | self._is(w, WarpState.PRELOADING))
                           | (dut.outstanding[w][b] == 0)),
                ]
            m.d.comb += [Assert(total == config.lines_per_bank),
                         Assert(dut.free[b] <= config.lines_per_bank)]

    def _activation(self, m):
        dut, config = self.dut, self.dut.config
        word = dut.region.payload
        take = dut.region.valid & dut.region.ready
        self.expected = []
        for w in range(config.warps):
            expected = Signal(config.entry_bits + 1, name=f"expected_{w}")
            taken = Signal(config.entry_bits + 1, name=f"taken_{w}")
            acked = Signal(config.entry_bits + 1, name=f"acked_{w}")
            self.expected.append(expected)
            header = take & ~dut.busy & (word.warp == w) & ~word.done
            entry = take & dut.busy & (dut.stream_warp == w)
            acks = sum(dut.preloaded[b].valid & (dut.preloaded[b].warp == w)
                       for b in range(config.banks))
            with m.If(header):
                m.d.sync += [expected.eq(word.n_entries), taken.eq(0), acked.eq(0)]
            with m.Else():
                m.d.sync += [taken.eq(taken + entry), acked.eq(acked + acks)]
            with m.If(self._is(w, WarpState.ACTIVE)):
                m.d.comb += [Assert(taken == expected), Assert(acked == expected)]
            with m.If(self._is(w, WarpState.PRELOADING)):
                m.d.comb += Assert(dut.pending[w] + acked == expected)
            if config.lines_per_bank == 1:
                self._queued(m, w, expected, taken, acked)
        if config.lines_per_bank == 1:
            self._streams(m)

    def _queued(self, m, w, expected, taken, acked):
        """Induction strengthening where each bank's queue holds one entry, seen on its
        ``preload`` output: warp ``w``'s entries taken and not acknowledged are the ones
        queued, each queued entry names a PRELOADING warp, and the entries still due
        (``remaining`` while ``w`` streams) complete the header's count."""
        dut, config = self.dut, self.dut.config
        queued = sum(dut.preload[b].valid & (dut.preload[b].payload.warp == w)
                     for b in range(config.banks))
        streaming = dut.busy & (dut.stream_warp == w)
        m.d.comb += [Assert(acked <= taken), Assert(taken <= expected),
                     Assert(taken - acked == queued)]
        with m.If(self._is(w, WarpState.PRELOADING)):
            m.d.comb += Assert(taken + (streaming * dut.remaining) == expected)
        with m.If(streaming):
            m.d.comb += Assert(self._is(w, WarpState.PRELOADING))
        for b in range(config.banks):
            with m.If(dut.preload[b].valid & (dut.preload[b].payload.warp == w)):
                m.d.comb += Assert(self._is(w, WarpState.PRELOADING))

    def _streams(self, m):
        """Induction strengthening: queued entries and the streamed region name warps in
        range; a streamed region still owes an entry."""
        dut, config = self.dut, self.dut.config
        m.d.comb += [Assert(~dut.preload[b].valid | (dut.preload[b].payload.warp
                                                     < config.warps))
                     for b in range(config.banks)]
        m.d.comb += Assert(~dut.busy | ((dut.stream_warp < config.warps)
                                        & (dut.remaining != 0)))

    def _stack(self, m):
        dut, config = self.dut, self.dut.config
        busy = 0
        exited = 0
        for w in range(config.warps):
            busy = busy + ~self._is(w, WarpState.INACTIVE)
            exited = exited + dut.exited[w]
            with m.If(dut.exited[w]):
                m.d.comb += Assert(self._is(w, WarpState.INACTIVE))
        m.d.comb += Assert(dut.depth + busy + exited == config.warps)
        for i in range(config.warps):
            with m.If(i < dut.depth):
                warp = dut.stack[i]
                m.d.comb += Assert(warp < config.warps)
                for w in range(config.warps):
                    with m.If(warp == w):
                        m.d.comb += [Assert(self._is(w, WarpState.INACTIVE)),
                                     Assert(~dut.exited[w])]
                for j in range(i):
                    m.d.comb += Assert(dut.stack[j] != warp)

    def _barrier(self, m):
        """A DRAINING warp held at a barrier in one cycle is DRAINING in the next."""
        dut, config = self.dut, self.dut.config
        self.free(m, dut.at_barrier)
        held = Signal(config.warps)
        m.d.sync += held.eq(Cat(self._is(w, WarpState.DRAINING) & dut.at_barrier[w]
                                for w in range(config.warps)))
        for w in range(config.warps):
            with m.If(self.running & held[w]):
                m.d.comb += Assert(self._is(w, WarpState.DRAINING))

    def _covers(self, m):
        dut, config = self.dut, self.dut.config
        region, written, word = dut.region, dut.written, dut.region.payload
        was_active = Signal(config.warps)
        m.d.sync += was_active.eq(dut.eligible)
        draining = [self._is(w, WarpState.DRAINING) for w in range(config.warps)]
        activated = Cat(dut.eligible[w] & ~was_active[w] & (self.expected[w] != 0)
                        for w in range(config.warps))
        late = Cat(written.valid & (written.payload.warp == w) & draining[w]
                   for w in range(config.warps))
        drained = Cat(draining[w] & ~dut.outstanding[w].as_value().any()
                      for w in range(config.warps))
        held = Cat(drained[w] & dut.at_barrier[w] for w in range(config.warps))
        self.covers(m, [
            (activated.any(), "activated"),
            (region.valid & ~region.ready & ~dut.busy & dut.want.valid & ~word.done
             & (word.kind == RegionWord.HEADER) & (word.warp == dut.stack[0]),
             "header_does_not_fit"),
            (region.valid & ~region.ready & dut.busy, "entry_waits"),
            (late.any(), "late_write"),
            (drained.any(), "drained"),
            (held.any(), "held_at_barrier"),
            (dut.exited.any(), "exited"),
        ], guard=self.running)
