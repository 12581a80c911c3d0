"""The golden blocks the timing model consults, from one injectable factory.

:class:`~gpurf.sim.sm.timing.TimingSM` takes ``blocks=`` (default :data:`GOLDEN`): an
object whose methods build, per sub-core, the operand collector, the RBA scorer and the
warp selector, and, per SM, the sub-core assigner. A recording wrapper or an object that
drives the RTL hands in the same methods (``docs/sm.md``, "Blocks of the timing model",
lists what the SM calls on each block per cycle and in what order).
"""

from gpurf.golden.subcore.operand_collector import OperandCollector
from gpurf.golden.subcore.rba_scorer import RbaScorer
from gpurf.golden.subcore.subcore_assigner import SubcoreAssigner
from gpurf.golden.subcore.warp_selector import pick_warp

from .config import SMConfig

__all__ = ["GOLDEN", "GoldenBlocks"]


class GoldenBlocks:
    """Factory of the golden sub-core blocks (:mod:`gpurf.golden.subcore`).

    Each method is called once per block instance when a launch's SM is built; subclass it
    (or write any object with these four methods) to hand the SM other implementations.
    """

    def collector(self, config: SMConfig, subcore: int) -> OperandCollector:
        """Sub-core ``subcore``'s operand collector (it carries no register data: the
        timing model's values, if any, go through :mod:`gpurf.sim.sm.values`)."""
        oc = OperandCollector(cus=config.cus, banks=config.banks, operands=config.operands,
                              lanes=32, data_width=32, slots=config.slots, reg_bits=8,
                              read_latency=config.read_latency, bank_map=config.bank_map)
        oc.carries_data = False
        return oc

    def scorer(self, config: SMConfig, subcore: int) -> RbaScorer:
        """Sub-core ``subcore``'s RBA scorer (built only under the ``rba`` scheduler)."""
        return RbaScorer(slots=config.slots, operands=config.operands, banks=config.banks,
                         cus=config.cus, score_width=config.score_width,
                         score_latency=config.score_latency)

    def selector(self, config: SMConfig, subcore: int):
        """Sub-core ``subcore``'s warp selector: a callable with the signature of
        :func:`~gpurf.golden.subcore.warp_selector.pick_warp` (GTO and RBA only)."""
        return pick_warp

    def assigner(self, config: SMConfig) -> SubcoreAssigner:
        """The SM's sub-core assigner (a 2-sub-core assigner for a 1-sub-core SM, whose
        picks the SM then ignores)."""
        return SubcoreAssigner(subcores=max(2, config.subcores), depth=config.hash_depth)


GOLDEN = GoldenBlocks()
"""The default ``blocks=`` of :class:`~gpurf.sim.sm.timing.TimingSM`."""
