"""Proof by execution: run a workload with a pass's annotations enforced as poison.

A pass says, per instruction, which physical registers lose their value once it has
executed (GReEneR: turned OFF; RegLess: erased, or evicted and not preloaded), in an
:class:`~gpurf.sim.passes.enforcement.Enforcement`. The functional model
(:func:`gpurf.sim.sm.run_kernel`) runs the workload warp by warp with an ``on_step``
observer that keeps, per warp, a 32-bit poison mask per physical register:

- the instruction's source registers are read by its executing lanes (``Step.mask``; for
  a guarded non-branch instruction that is the lanes whose guard holds, so the guard
  predicate is checked in those lanes only): a poisoned lane among them fails the run with
  :class:`PoisonReadError` naming kernel, block, warp, pc, instruction and register;
- its destinations are written in the executing lanes, which clears their poison there
  (a masked write leaves the other lanes poisoned, as in the hardware);
- then every register the annotation names becomes poison in all 32 lanes (the power
  domain / storage is the whole warp register).

A pass whose state is richer than one mask per instruction (RegLess: a region entry
poisons every register it does not preload; an eviction keeps the line's lanes for a later
preload) gives ``before`` / ``after`` hooks, called around the checks of every
instruction with the warp's poison masks and a per-warp scratch dict.
A pass that constrains register *contents* (static data compression: narrowed values)
gives a ``values`` hook, called with the :class:`~gpurf.sim.sm.Warp` itself; the run
then drives the thread blocks' warps directly (``run_kernel`` does not expose them).

Registers start clean. The run must also still match its numpy reference
(:attr:`gpurf.sim.sm.KernelRun.passed`); the poison check is the stronger statement, since the
model keeps the true values and so cannot be fooled by a lucky stale value.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

from gpurf.sim.passes.enforcement import ALL_LANES, Enforcement

from .run import KernelRun, run_kernel
from .warp import ExecutionError

__all__ = ["PoisonReadError", "run_enforced"]


class PoisonReadError(ExecutionError):
    """An instruction read a register its pass had thrown away."""


@dataclass
class _Tracker:
    workload: str
    enforcement: Enforcement
    on_step: Callable | None
    block: tuple = ()
    poison: dict = field(default_factory=dict)
    scratch: dict = field(default_factory=dict)
    checked: int = 0

    def blocks(self, ids):
        for block_id in ids:
            self.block = block_id
            self.poison, self.scratch = {}, {}
            yield block_id

    def __call__(self, step, warp):
        keys = self.enforcement.keys
        poison = self.poison.setdefault(step.warp, {})
        scratch = self.scratch.setdefault(step.warp, {})
        if self.enforcement.before is not None:
            self.enforcement.before(poison, scratch, step)
        lanes = step.active
        ins = step.instruction
        for vreg in step.sources:
            for key in keys.get(vreg, ()):
                bad = poison.get(key, 0) & lanes
                if bad:
                    raise PoisonReadError(
                        f"{self.workload}: {self.enforcement.name}: block {self.block}, warp "
                        f"{step.warp}, pc {step.pc} ({ins.opcode}, line {ins.line}) reads "
                        f"{vreg} ({key}) poisoned in lanes {bad:#010x}")
                self.checked += 1
        for vreg in step.dests:
            for key in keys.get(vreg, ()):
                if key in poison:
                    poison[key] &= ~lanes
        for key in self.enforcement.poison_after[step.pc]:
            poison[key] = ALL_LANES
        if self.enforcement.after is not None:
            self.enforcement.after(poison, scratch, step)
        if self.enforcement.values is not None:
            self.enforcement.values(warp, step)
        if self.on_step is not None:
            self.on_step(self.block, step)


def run_enforced(workload: str, enforcement: Enforcement, size: str = "test", *,
                 on_step: Callable | None = None) -> tuple[KernelRun, int]:
    """Run ``workload`` with ``enforcement``; return the run and the number of register
    reads checked. Raises :class:`PoisonReadError` at the first poisoned read.
    ``on_step(block_id, step)`` is called after each instruction's checks."""
    tracker = _Tracker(workload, enforcement, on_step)
    run = run_kernel(workload, size, progress=tracker.blocks, on_step=tracker)
    return run, tracker.checked
