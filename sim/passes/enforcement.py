"""What a pass asks an execution to enforce: the registers that lose their value.

A pass says, per instruction, which physical registers lose their value once it has
executed (GReEneR: turned OFF; RegLess: erased, or evicted and not preloaded); richer
state goes in hooks. :func:`gpurf.sim.sm.poison.run_enforced` runs a workload with an
:class:`Enforcement` and fails at the first read of a value the pass threw away.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

__all__ = ["ALL_LANES", "Enforcement"]

ALL_LANES = (1 << 32) - 1


@dataclass(frozen=True)
class Enforcement:
    """What a pass asks the run to enforce.

    Attributes
    ----------
    keys : dict
        Virtual register -> physical registers (:func:`gpurf.sim.passes.dataflow.register_keys`).
    poison_after : sequence of frozenset
        Per pc, the physical registers that hold poison after the instruction executes.
    name : str
        The pass, for messages.
    before, after : callable or None
        ``hook(poison, scratch, step)`` called before the source check / after
        ``poison_after`` is applied; ``poison`` is the warp's dict register -> poisoned lanes
        (may be changed), ``scratch`` a dict for the pass' own per-warp state. Both are
        reset at every thread block.
    values : callable or None
        ``hook(warp, step)`` called last, with the :class:`~gpurf.sim.sm.Warp` that executed
        the step (``warp.regs[warp.program.slots[vreg]]`` holds its 32 lanes): checks or
        rewrites the values the instruction wrote.
    """

    keys: dict
    poison_after: Sequence
    name: str = "pass"
    before: Callable | None = None
    after: Callable | None = None
    values: Callable | None = None
