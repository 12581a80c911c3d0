"""Instruction-level dataflow shared by the compiler passes: successors, physical register
keys, and warp-level (SIMT) liveness.

The passes of the papers (GReEneR, RegLess) reason about *physical* registers: GReEneR runs
on PTXPlus, after register allocation, and a register shared by two virtual registers is
one power domain. :func:`register_keys` names the 32-bit physical registers of every virtual
register from :mod:`gpurf.sim.ptx.regalloc` (``"R4"``, a 64-bit value ``("R4", "R5")``,
predicates ``"P1"``).

Per-thread liveness (:mod:`gpurf.sim.ptx.liveness`) is not enough to throw a warp register's
value away: a warp register holds the values of 32 lanes, and while a divergent warp runs
one side of a branch the other lanes are parked — at the first instruction of the other
side, or at the reconvergence point — and still need their values. The papers treat a
warp as one thread; :func:`warp_liveness` adds to every instruction inside a divergent
region (blocks reachable from a guarded branch's successors before its immediate
post-dominator, the model's reconvergence point) the registers live where the parked lanes
wait. Without it, the passes poison values of parked lanes (GReEneR on ``sobel`` at W = 1
reads a poisoned register: tests/test_passes_greener.py). This is the warp-register hazard
RegLess' soft definitions (its Section 4.4) address for invalidations.
"""

from dataclasses import dataclass

from gpurf.sim.ptx.cfg import CFG, EXIT, build_cfg
from gpurf.sim.ptx.ir import Kernel
from gpurf.sim.ptx.liveness import Liveness, liveness
from gpurf.sim.ptx.regalloc import Allocation, allocate_registers

__all__ = ["EXIT", "KernelFlow", "divergent_regions", "identity_keys", "instruction_successors",
           "kernel_flow",
           "register_keys", "warp_liveness"]


def instruction_successors(cfg: CFG) -> list[tuple[int, ...]]:
    """Per instruction, the instructions control may reach next (:data:`EXIT` = ``-1``)."""
    succs = []
    for block in cfg.blocks:
        succs.extend((i + 1,) for i in range(block.start, block.end - 1))
        succs.append(tuple(EXIT if s == EXIT else cfg.blocks[s].start for s in block.succs))
    return succs


def register_keys(kernel: Kernel, allocation: Allocation) -> dict[str, tuple[str, ...]]:
    """Virtual register -> the physical registers it occupies (``("R4", "R5")``, ``("P1",)``);
    registers the allocator left out (never defined) are absent."""
    keys = {}
    for vreg, first in allocation.physical.items():
        units = allocation.units[vreg]
        keys[vreg] = ((f"P{first}",) if units == 0
                      else tuple(f"R{first + k}" for k in range(units)))
    return keys


def identity_keys(kernel: Kernel) -> dict[str, tuple[str, ...]]:
    """Each virtual register its own key: for hand-written examples that are already
    physical (the papers' PTXPlus)."""
    return {name: (name,) for name in kernel.regs}


def divergent_regions(cfg: CFG) -> list[tuple[int, frozenset, tuple[int, ...]]]:
    """Per guarded branch: ``(branch pc, instructions of its region, parking pcs)``. The
    region is every instruction of the blocks reachable from the branch's successor blocks
    without passing its immediate post-dominator; the parking pcs are the fall-through
    instruction and the reconvergence instruction (``len(code)`` for the exit)."""
    regions = []
    code = cfg.kernel.instructions
    for block in cfg.blocks:
        pc = block.end - 1
        if not (code[pc].is_branch and code[pc].guard is not None):
            continue
        stop = cfg.ipdom.get(block.index, EXIT)
        seen, todo = set(), [s for s in block.succs if s not in (EXIT, stop)]
        while todo:
            b = todo.pop()
            if b in seen:
                continue
            seen.add(b)
            todo.extend(s for s in cfg.blocks[b].succs if s not in (EXIT, stop) and s not in seen)
        pcs = frozenset(i for b in seen for i in range(cfg.blocks[b].start, cfg.blocks[b].end))
        regions.append((pc, pcs, (pc + 1, cfg.reconvergence_pc(pc))))
    return regions


def warp_liveness(cfg: CFG, live: Liveness) -> list[frozenset]:
    """Per instruction, the virtual registers live after it for *some lane* of the warp:
    per-thread liveness plus, inside each divergent region, the registers live before the
    instructions where parked lanes wait (see the module docstring)."""
    code = cfg.kernel.instructions
    result = [set(s) for s in live.live_after]
    for _, pcs, parks in divergent_regions(cfg):
        parked = set().union(*(live.live_before[p] for p in parks if p < len(code)))
        for pc in pcs:
            result[pc] |= parked
    return [frozenset(s) for s in result]


@dataclass(frozen=True)
class KernelFlow:
    """Everything the passes need about a kernel, computed once.

    Attributes
    ----------
    kernel : Kernel
    cfg : CFG
    live : Liveness
        Per-thread liveness of the virtual registers.
    warp_live_after : list of frozenset
        :func:`warp_liveness`.
    keys : dict
        :func:`register_keys` (or :func:`identity_keys`).
    succs : list of tuple
        :func:`instruction_successors`.
    allocation : Allocation or None
    """

    kernel: Kernel
    cfg: CFG
    live: Liveness
    warp_live_after: list
    keys: dict
    succs: list
    allocation: Allocation | None

    def access_keys(self, pc: int) -> frozenset:
        """Physical registers the instruction at ``pc`` reads or writes."""
        ins = self.kernel.instructions[pc]
        return frozenset(k for v in (*ins.dests, *ins.sources) for k in self.keys.get(v, ()))

    def live_keys_after(self, pc: int) -> frozenset:
        """Physical registers holding a value some lane still needs after ``pc``."""
        return frozenset(k for v in self.warp_live_after[pc] for k in self.keys.get(v, ()))


def kernel_flow(kernel: Kernel, *, physical: bool = True) -> KernelFlow:
    """The :class:`KernelFlow` of ``kernel``: on physical registers from the allocator, or
    with ``physical=False`` on the virtual registers as written."""
    cfg = build_cfg(kernel)
    live = liveness(kernel, cfg)
    allocation = allocate_registers(kernel, live) if physical else None
    keys = register_keys(kernel, allocation) if physical else identity_keys(kernel)
    return KernelFlow(kernel, cfg, live, warp_liveness(cfg, live), keys,
                      instruction_successors(cfg), allocation)
