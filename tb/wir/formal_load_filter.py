"""Formal harness of ``wir.load_filter`` in a small configuration.

Inputs are free (``AnySeq``) except that every valid warp and block slot is in range. The
harness keeps the paper's view of the filter, written from the spec: per warp "stored to
shared (global) memory since its block's last barrier or launch", per block slot the
barriers released since its launch (saturating). It asserts:

- **no stale load reuse**: a ``SHARED`` (``GLOBAL``) load is let through to the reuse
  buffer only when its warp has not stored to shared (global) memory since the last
  barrier or launch of its block, and the block's barrier count is not saturated; it is
  let through whenever both hold;
- the tag fields are the spec's: ``tbid`` the block slot for a shared load and null
  otherwise, ``barrier`` the block's count for a shared or global load and 0 otherwise;
  every other instruction is let through;
- (induction strengthening) the RTL's flags and counters equal the shadow's.
"""

from amaranth import Signal
from amaranth.hdl import Assert

from gpurf.hw.wir.layouts import LoadKind
from gpurf.hw.wir.load_filter import LoadFilter

from ..formal_base import FormalHarness

__all__ = ["SMALL", "LoadFilterFormal"]

SMALL = {"warps": 3, "blocks": 2, "barrier_bits": 2}
"""The proof configuration: 3 warps, 2 block slots, 2-bit barrier counters (saturated at
3, so saturation is reached within the proof's depth)."""


class LoadFilterFormal(FormalHarness):
    """The filter with free inputs and the invariants above (``params`` override SMALL;
    ``block`` is the component class)."""

    block = LoadFilter
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.store, dut.barrier, dut.launch)
        self.free(m, dut.query)
        self.assume_when(m, [
            (dut.store.valid, dut.store.payload.warp < config.warps),
            (dut.barrier.valid, dut.barrier.payload.tb < config.blocks),
            (dut.launch.valid, dut.launch.payload.tb < config.blocks),
            (1, (dut.query.warp < config.warps) & (dut.query.tb < config.blocks))])
        shared, global_, counts = self._shadow(m)
        self._answers(m, shared, global_, counts)
        m.d.comb += [Assert(dut.shared_flags == shared), Assert(dut.global_flags == global_)]
        for b in range(config.blocks):
            m.d.comb += Assert(dut.counts[b] == counts[b])

    def _shadow(self, m):
        """Per warp: stored since the last barrier/launch of its block; per block: count."""
        dut, config = self.dut, self.dut.config
        store, barrier, launch = dut.store, dut.barrier, dut.launch
        shared = Signal(config.warps, name="stored_shared")
        global_ = Signal(config.warps, name="stored_global")
        for w in range(config.warps):
            cleared = ((barrier.valid & barrier.payload.warps[w])
                       | (launch.valid & launch.payload.warps[w]))
            storing = store.valid & (store.payload.warp == w)
            for flags, kind in ((shared, store.payload.shared),
                                (global_, store.payload.global_)):
                with m.If(storing & kind):
                    m.d.sync += flags[w].eq(1)
                with m.Elif(cleared):
                    m.d.sync += flags[w].eq(0)
        counts = [Signal(config.barrier_bits, name=f"barriers_{b}")
                  for b in range(config.blocks)]
        for b, count in enumerate(counts):
            with m.If(launch.valid & (launch.payload.tb == b)):
                m.d.sync += count.eq(0)
            with m.Elif(barrier.valid & (barrier.payload.tb == b)
                        & (count != config.saturated)):
                m.d.sync += count.eq(count + 1)
        return shared, global_, counts

    def _answers(self, m, shared, global_, counts):
        dut, config = self.dut, self.dut.config
        query, answer = dut.query, dut.answer
        count = Signal(config.barrier_bits)
        stored_shared, stored_global = Signal(), Signal()
        for b in range(config.blocks):
            with m.If(query.tb == b):
                m.d.comb += count.eq(counts[b])
        for w in range(config.warps):
            with m.If(query.warp == w):
                m.d.comb += [stored_shared.eq(shared[w]), stored_global.eq(global_[w])]
        open_ = count != config.saturated
        with m.Switch(query.kind):
            with m.Case(LoadKind.SHARED):
                m.d.comb += [Assert(answer.reuse == (~stored_shared & open_)),
                             Assert(answer.tbid == query.tb), Assert(answer.barrier == count)]
            with m.Case(LoadKind.GLOBAL):
                m.d.comb += [Assert(answer.reuse == (~stored_global & open_)),
                             Assert(answer.tbid == config.null_tbid),
                             Assert(answer.barrier == count)]
            with m.Default():
                m.d.comb += [Assert(answer.reuse), Assert(answer.tbid == config.null_tbid),
                             Assert(answer.barrier == 0)]
        # The events: a shared load reused after a barrier, a shared load refused after a
        # store, a global load refused by a saturated counter, a launch and a barrier of
        # one slot in one cycle, a store and a clear of one warp in one cycle.
        barrier, launch, store = dut.barrier, dut.launch, dut.store
        self.covers(m, [
            ((query.kind == LoadKind.SHARED) & answer.reuse & (count != 0), "shared_reuse"),
            ((query.kind == LoadKind.SHARED) & ~answer.reuse & open_, "store_blocks_reuse"),
            ((query.kind == LoadKind.GLOBAL) & ~stored_global & ~open_, "saturated"),
            (barrier.valid & launch.valid & (barrier.payload.tb == launch.payload.tb)
             & (counts[0] != 0) & (barrier.payload.tb == 0), "launch_over_barrier"),
            (self.running & store.valid & store.payload.shared & barrier.valid
             & (barrier.payload.warps >> store.payload.warp)[0], "store_over_clear"),
        ])
