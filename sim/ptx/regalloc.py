"""Register allocation: PTX virtual registers to physical 32-bit registers.

The allocator colours the interference graph built from :func:`~gpurf.sim.ptx.liveness.liveness`:
a register written by an instruction interferes with every register live after it (except
itself, and except the source of an unguarded register-to-register ``mov``, so copies can
share a register). Registers are coloured greedily in order of their first definition —
linear-scan order, which is optimal on straight-line code — taking the lowest free
register, and a second time with the 64-bit values first (first fit in definition order
can strand a pair above 32-bit values, as on gaussian); the allocation with fewer
registers is kept; a 64-bit value takes an aligned pair ``R2k, R2k+1`` (as SASS requires), 16-bit
values a whole 32-bit register. A ``mov`` prefers its source's register when that is free.
Predicates live in a separate file (as on the GPU) and are counted apart.

``Allocation.registers`` is the registers per thread, comparable to ``ptxas -v``'s
"Used N registers"; ``Allocation.physical[v]`` the first physical register of ``v``, used
for bank mapping (bank = register mod banks).
"""

from dataclasses import dataclass

from .ir import Kernel, Reg
from .liveness import Liveness, liveness

__all__ = ["Allocation", "allocate_registers", "interference"]


@dataclass(frozen=True)
class Allocation:
    """Result of :func:`allocate_registers`.

    Attributes
    ----------
    physical : dict
        Virtual register -> first physical register (``R<n>``; predicates ``P<n>``).
    units : dict
        Virtual register -> 32-bit registers it takes (1 or 2; predicates 1).
    registers : int
        32-bit registers per thread (highest used + 1).
    predicates : int
        Predicate registers per thread.
    """

    physical: dict
    units: dict
    registers: int
    predicates: int

    def name(self, vreg: str) -> str:
        """``R12`` / ``R12:R13`` / ``P3``: the physical register(s) of ``vreg``."""
        first = self.physical[vreg]
        if self.units[vreg] == 0:
            return f"P{first}"
        return f"R{first}" if self.units[vreg] == 1 else f"R{first}:R{first + 1}"


def _units(kernel: Kernel, name: str) -> int:
    width = kernel.regs[name].width
    return 0 if width == 1 else (2 if width == 64 else 1)


def _copy_source(ins, kernel):
    """The source register of an unguarded same-width register ``mov``, else ``None``."""
    if ins.base != "mov" or ins.guard is not None or not isinstance(ins.operands[1], Reg):
        return None
    src, dst = ins.operands[1].name, ins.operands[0].name
    return src if kernel.regs[src].width == kernel.regs[dst].width else None


def interference(kernel: Kernel, live: Liveness) -> dict[str, set[str]]:
    """The interference graph: register -> registers it may not share storage with."""
    graph = {name: set() for name in kernel.regs}

    def add(a, b):
        if a != b:
            graph[a].add(b)
            graph[b].add(a)

    for i, ins in enumerate(kernel.instructions):
        copy = _copy_source(ins, kernel)
        for d in ins.dests:
            for other in live.live_after[i]:
                if other != copy:
                    add(d, other)
    entry = sorted(live.live_in[0]) if live.live_in else []
    for i, a in enumerate(entry):
        for b in entry[i + 1:]:
            add(a, b)
    return graph


def allocate_registers(kernel: Kernel, live: Liveness | None = None) -> Allocation:
    """Allocate the registers of ``kernel`` (see the module docstring): colour in order of
    definition, and again with the 64-bit values first; keep the one with fewer registers
    (the first on a tie)."""
    live = live or liveness(kernel)
    graph = interference(kernel, live)
    first_def, prefer = {}, {}
    for i, ins in enumerate(kernel.instructions):
        for d in ins.dests:
            first_def.setdefault(d, i)
        copy = _copy_source(ins, kernel)
        if copy is not None:
            prefer.setdefault(ins.dests[0], copy)
            prefer.setdefault(copy, ins.dests[0])
    entry = live.live_in[0] if live.live_in else set()
    names = [n for n in kernel.regs if n in first_def or n in entry]
    by_definition = sorted(names, key=lambda n: (first_def.get(n, -1), n))
    wide_first = sorted(by_definition, key=lambda n: _units(kernel, n) != 2)
    tries = [_colour(kernel, graph, prefer, order) for order in (by_definition, wide_first)]
    return min(tries, key=lambda allocation: allocation.registers)


def _colour(kernel: Kernel, graph: dict, prefer: dict, order: list[str]) -> Allocation:
    """Greedy colouring of ``order``: each register takes its copy partner's register when
    that is free, else the lowest free (aligned for 64-bit values)."""
    physical, units = {}, {}
    for name in order:
        size = _units(kernel, name)
        taken = set()
        for other in graph[name]:
            if other in physical and (_units(kernel, other) == 0) == (size == 0):
                taken.update(range(physical[other], physical[other] + max(1, units[other])))
        choice = prefer.get(name)
        start = physical.get(choice) if choice in physical else None
        if start is None or not _fits(start, size, taken) or units.get(choice) != size:
            start = next(r for r in range(0, 4096, 2 if size == 2 else 1)
                         if _fits(r, size, taken))
        physical[name], units[name] = start, size
    regs = max((physical[n] + units[n] for n in physical if units[n]), default=0)
    preds = max((physical[n] + 1 for n in physical if units[n] == 0), default=0)
    return Allocation(physical, units, regs, preds)


def _fits(start: int, size: int, taken: set) -> bool:
    return all(r not in taken for r in range(start, start + max(1, size)))
