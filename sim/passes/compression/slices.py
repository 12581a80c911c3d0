"""Slice register allocation (paper Section 4.3): every virtual register's width in 4-bit
slices packed into physical registers of 8 slices, each part of an operand in one
register, at most two parts, and the indirection table contents.

Interference is per thread (:mod:`gpurf.sim.ptx.liveness`): a register written by an instruction
interferes with every register live after it, and the registers live at the entry with
each other. Per-thread is enough for storage (unlike GReEneR's power gating): a write only
touches the executing lanes and the operand's slices (the truncator's per-slice write
mask), so lanes parked by divergence keep their slices. Unlike
:func:`gpurf.sim.ptx.regalloc.allocate_registers`, a ``mov``'s source and destination interfere
(they may be stored in different widths).

Greedy in order of first definition (linear-scan order), each operand placed where it
opens the fewest new registers: in one register (best fit: the fewest free slices that
hold it), else split over two registers (the one with the most free slices first, the
remainder best-fit), else in newly opened registers. Slices inside a register are taken
lowest first. The count is compared with the slice lower bound (most slices live at once
/ 8, rounded up).

**Interpretation (64-bit registers):** an indirection entry describes at most 8 slices (a
thread register, spec 3.2.3), so a PTX register of more than 8 slices (a 64-bit value that
needs more than 32 bits) is two architectural registers, as in SASS: its low 8 slices and
the rest, each with its own entry (each itself splittable). Predicates live in their own
file and take no slices.
"""

from dataclasses import dataclass

from gpurf.golden.compression.value_extractor import data_positions, pack_entry, unpack_entry
from gpurf.hw.compression.layouts import SLICES
from gpurf.sim.ptx.ir import Kernel
from gpurf.sim.ptx.liveness import Liveness

__all__ = ["SliceAllocation", "allocate_slices", "slice_interference"]

FULL = (1 << SLICES) - 1


def slice_interference(kernel: Kernel, live: Liveness, regs) -> dict[str, set[str]]:
    """Register -> the registers (of ``regs``) it may not share a slice with."""
    graph = {r: set() for r in regs}
    for pc, ins in enumerate(kernel.instructions):
        for d in ins.dests:
            if d in graph:
                for other in live.live_after[pc]:
                    if other in graph and other != d:
                        graph[d].add(other)
                        graph[other].add(d)
    entry = [r for r in (live.live_before[0] if live.live_before else ()) if r in graph]
    for a in entry:
        graph[a].update(b for b in entry if b != a)
    return graph


@dataclass(frozen=True)
class SliceAllocation:
    """The allocation of one kernel.

    Attributes
    ----------
    slices : dict
        Virtual register -> its data slices.
    entries : dict
        Virtual register -> its packed 32-bit ``indirection_entry_layout`` words, one per
        architectural register (two for a register of more than 8 slices).
    registers : int
        Physical registers per thread.
    lower_bound : int
        Most slices live at once, in registers (rounded up).
    """

    slices: dict
    entries: dict
    registers: int
    lower_bound: int

    def positions(self, vreg: str) -> list[tuple[int, int]]:
        """``(physical register, slice)`` of data slice 0, 1, ... of ``vreg``."""
        result = []
        for word in self.entries[vreg]:
            entry = unpack_entry(word)
            result += [(entry[f"r{part}"], s) for part, s in data_positions(entry)]
        return result

    def table(self) -> list[dict]:
        """The indirection table contents: per architectural register (in order), the
        virtual register, part and the entry's fields."""
        rows = []
        for vreg, words in self.entries.items():
            for half, word in enumerate(words):
                rows.append({"vreg": vreg, "half": half, "word": word, **unpack_entry(word)})
        return rows


def _lowest(free: int, count: int) -> int:
    mask = 0
    for s in range(SLICES):
        if count and free >> s & 1:
            mask |= 1 << s
            count -= 1
    return mask


def _place(need: int, free: list[int]) -> tuple[int, int, int, int] | None:
    """``(r0, m0, r1, m1)`` for ``need`` slices given each register's free slices."""
    counts = [f.bit_count() for f in free]
    fits = [r for r, c in enumerate(counts) if c >= need]
    if fits:
        r0 = min(fits, key=lambda r: (counts[r], r))
        return r0, _lowest(free[r0], need), 0, 0
    order = sorted((r for r, c in enumerate(counts) if c), key=lambda r: (-counts[r], r))
    for r0 in order:
        rest = need - counts[r0]
        others = [r for r in order if r != r0 and counts[r] >= rest]
        if others:
            r1 = min(others, key=lambda r: (counts[r], r))
            return r0, free[r0], r1, _lowest(free[r1], rest)
    return None


def allocate_slices(kernel: Kernel, live: Liveness, slices: dict[str, int]) -> SliceAllocation:
    """Place every register of ``slices`` (virtual register -> data slices, 1..16)."""
    graph = slice_interference(kernel, live, slices)
    first = {}
    for pc, ins in enumerate(kernel.instructions):
        for d in ins.dests:
            first.setdefault(d, pc)
    order = sorted(slices, key=lambda r: (first.get(r, -1), r))
    masks: dict[str, list[tuple[int, int]]] = {}
    entries: dict[str, tuple[int, ...]] = {}
    registers = 0
    for vreg in order:
        words = []
        for need in ([slices[vreg]] if slices[vreg] <= SLICES
                     else [SLICES, slices[vreg] - SLICES]):
            while True:
                used = [0] * registers
                for other in graph[vreg]:
                    for r, m in masks.get(other, ()):
                        used[r] |= m
                for r, m in masks.get(vreg, ()):
                    used[r] |= m
                placed = _place(need, [FULL & ~u for u in used])
                if placed is not None:
                    break
                registers += 1
            r0, m0, r1, m1 = placed
            masks.setdefault(vreg, []).extend([(r0, m0)] + ([(r1, m1)] if m1 else []))
            words.append(pack_entry({"r0": r0, "m0": m0, "r1": r1, "m1": m1}))
        entries[vreg] = tuple(words)
    most = max((sum(slices[r] for r in point if r in slices)
                for point in (*live.live_before, *live.live_after)), default=0)
    return SliceAllocation(dict(slices), entries, registers, -(-most // SLICES))
