"""Hand-made mutants of the RegLess blocks that count and list lines (``osu_bank``,
``capacity_manager``), each killed by its block's formal harness
(``tests/test_formal_regless.py``).

Kept apart from :mod:`gpurf.tb.regless.mutants` (the OSU, register file and shard
mutants) only because that module changed in the same session; the two may merge.
"""

from amaranth import Const

from gpurf.hw.gates import ripple_add
from gpurf.hw.regless.capacity_manager import CapacityManager
from gpurf.hw.regless.osu_bank import OsuBank

__all__ = ["AcksCountedOnce", "BarrierIgnored", "OutstandingIgnored", "WriteNotMarked"]


class WriteNotMarked(OsuBank):
    """A write stores its data but does not mark its line written (nor, at its last use,
    move it to the dirty list): a released line goes to the clean list, where an allocation
    drops its value without a writeback. Killed by "the bank's dirty bit equals the
    shadow's unsaved bit"."""

    def _lines(self, m, tag, fill_eff, write_eff, wb_done):
        super()._lines(m, tag, fill_eff, Const(0, len(write_eff)), wb_done)


class OutstandingIgnored(CapacityManager):
    """At a warp's last issue the free-line counters get back the region's whole usage, its
    outstanding writes included, and each late write frees its line again. Killed by the
    per-bank conservation of lines."""

    def _free(self, m, is_state, activate, drain, dec, after, issue_warp):
        nothing = [[Const(0, self.config.count_bits)] * self.config.banks
                   for _ in range(self.config.warps)]
        super()._free(m, is_state, activate, drain, dec, nothing, issue_warp)


class AcksCountedOnce(CapacityManager):
    """Acknowledgements of one warp from several banks in one cycle count as one, so its
    pending count never reaches 0 (or reaches it late). Killed by "pending + acknowledged =
    the header's entries" while PRELOADING."""

    def _acks(self, m):
        config = self.config
        after = []
        for w in range(config.warps):
            hit = 0
            for b in range(config.banks):
                ack = self.preloaded[b]
                hit = hit | (ack.valid & (ack.warp == w))
            after.append(ripple_add(m, self.pending[w], hit, config.entry_bits,
                                    f"pending_after_{w}", subtract=True))
        return after


class BarrierIgnored(CapacityManager):
    """A drained warp is pushed on the stack while ``at_barrier`` holds it (the capacity
    manager of sessions 11-22, which deadlocks backprop_forward at paper size and 256
    entries). Killed by "a DRAINING warp held at a barrier stays DRAINING"."""

    def _pushes(self, m, is_state, held):
        return super()._pushes(m, is_state, Const(0, self.config.warps))
