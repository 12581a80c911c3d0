"""Fast functional execution of a thread block: warps at one instruction run as one array.

:func:`run_block` runs a :class:`~sim.sm.warp.ThreadBlock` to completion like
:meth:`ThreadBlock.run`, but each round groups the ready warps by their next instruction
and executes an arithmetic or memory instruction for a whole group at once: the group's
registers are ``(k, 32)`` slices of the block's register file
(:attr:`ThreadBlock.regfile`), so the instruction's numpy closure runs once for ``k``
warps. Control instructions (branches, exits, barriers) still step warp by warp. Any
interleaving of the warps between barriers is a legal schedule for these kernels (they do
not communicate through memory inside a barrier interval), so the results equal the
warp-by-warp run's.

With ``traces`` (one :class:`WarpTrace` per warp) the run records what a timing model
needs to replay each warp: its dynamic instruction sequence and, per global or shared
access, the L1 requests it makes (:mod:`sim.sm.timing` replays them cycle by cycle).
"""

import itertools
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .memory import MemoryFaultError
from .program import ALU, Program
from .warp import ExecutionError, ThreadBlock

__all__ = ["LINE_BYTES", "SHARED_BANKS", "WarpGroup", "WarpTrace", "new_traces", "run_block"]

LINE_BYTES = 128
"""L1 line size: a global access makes one L1 request per distinct 128-byte line."""
SHARED_BANKS = 32
"""Shared-memory banks of 4 bytes: an access takes as many requests as the most distinct
words any one bank is asked for."""

_LINE_SHIFT = np.uint64(LINE_BYTES.bit_length() - 1)


@dataclass(slots=True)
class WarpTrace:
    """One warp's dynamic instruction stream.

    Attributes
    ----------
    pcs : list of int
        The instructions it executed, in order.
    requests : list
        Per global or shared access, in order: a tuple of the 128-byte line numbers a
        global access touches, or for a shared access the number of requests its bank
        conflicts cost (an ``int``).
    """

    pcs: list = field(default_factory=list)
    requests: list = field(default_factory=list)


class _Specials:
    """Special registers of a group of warps as ``(k, 32)`` arrays, stacked on demand."""

    __slots__ = ("warps",)

    def __init__(self, warps):
        self.warps = warps

    def __getitem__(self, name):
        return np.stack([w.special[name] for w in self.warps])


class WarpGroup:
    """Warps of one block at the same instruction, seen by a closure as one warp with
    ``(k, 32)`` registers (views of the block's register file, or gathered copies)."""

    __slots__ = ("block", "memory", "params", "regs", "shared", "special")

    def __init__(self, block: ThreadBlock, warps, regs):
        self.block = block
        self.memory = block.memory
        self.shared = block.shared
        self.params = block.params
        self.special = _Specials(warps)
        self.regs = regs


@cache
def _slots_used(program: Program):
    """Per instruction: register slots it reads or writes, and those it writes."""
    uses, dests = [], []
    slots = program.slots
    for ins in program.code:
        names = dict.fromkeys((*ins.sources, *ins.dests))
        uses.append(tuple(slots[n] for n in names))
        dests.append(tuple(slots[n] for n in ins.dests))
    return uses, dests


def _selector(indices):
    """A slice when ``indices`` are evenly spaced (registers are then views), else an
    index array (gathered copies, written back after the instruction)."""
    if len(indices) == 1:
        return slice(indices[0], indices[0] + 1)
    step = indices[1] - indices[0]
    if all(b - a == step for a, b in itertools.pairwise(indices)):
        return slice(indices[0], indices[-1] + 1, step)
    return np.array(indices)


def _requests(space, addresses):
    """The L1 requests of one warp's access (see :class:`WarpTrace`)."""
    if space == "global":
        return tuple(sorted(set((addresses >> _LINE_SHIFT).tolist())))
    words = np.unique(addresses >> np.uint64(2))
    return int(np.bincount((words % np.uint64(SHARED_BANKS)).astype(np.intp)).max()) \
        if words.size else 1


def _step_group(block, warps, pc, traces):
    program = block.program
    uses, dests = _slots_used(program)
    sel = _selector([w.index for w in warps])
    regfile = block.regfile
    regs = {s: regfile[s][sel] for s in uses[pc]}
    mask = np.stack([w.stack[-1][2] for w in warps])
    guard = program.guards[pc]
    if guard is not None:
        g = regs[guard]
        mask = mask & (~g if program.code[pc].guard_negated else g)
    try:
        touched = program.ops[pc](WarpGroup(block, warps, regs), mask)
    except MemoryFaultError as fault:
        ins = program.code[pc]
        raise ExecutionError(f"{program.kernel.file}:{ins.line}: {ins.opcode}: {fault} "
                             f"(block {block.block_id}, warps {[w.index for w in warps]})"
                             ) from None
    if not isinstance(sel, slice):
        for d in dests[pc]:
            regfile[d][sel] = regs[d]
    counts = np.count_nonzero(mask, axis=1).tolist()
    split = None
    if touched is not None and traces is not None and touched[0] != "param":
        split = np.split(touched[1], np.cumsum(counts)[:-1])
    for k, warp in enumerate(warps):
        stack = warp.stack
        stack[-1][0] = pc + 1
        while len(stack) > 1 and stack[-1][0] == stack[-1][1]:
            stack.pop()
        warp.instructions += 1
        warp.thread_instructions += counts[k]
        if traces is not None:
            trace = traces[warp.index]
            trace.pcs.append(pc)
            if split is not None:
                trace.requests.append(_requests(touched[0], split[k]))


def run_block(block: ThreadBlock, traces: list[WarpTrace] | None = None) -> int:
    """Run ``block`` to completion, grouping warps at the same instruction; record each
    warp's :class:`WarpTrace` into ``traces`` when given. Returns the warp instructions."""
    program = block.program
    kinds = program.kinds
    executed = 0
    with np.errstate(all="ignore"):
        while not block.done:
            groups = {}
            for warp in block.warps:
                if warp.ready:
                    groups.setdefault(warp.stack[-1][0], []).append(warp)
            if not groups:
                stuck = [w.index for w in block.warps if w.waiting]
                raise ExecutionError(f"{program.kernel.file}: block {block.block_id} "
                                     f"deadlocked: warps {stuck} wait at a barrier")
            for pc, warps in groups.items():
                executed += len(warps)
                if kinds[pc] == ALU and len(warps) > 1:
                    _step_group(block, warps, pc, traces)
                    continue
                for warp in warps:
                    record = warp.step()
                    if traces is not None:
                        trace = traces[warp.index]
                        trace.pcs.append(pc)
                        if record.addresses is not None and record.space != "param":
                            trace.requests.append(_requests(record.space, record.addresses))
    return executed


def new_traces(block: ThreadBlock) -> list[WarpTrace]:
    """An empty trace per warp of ``block``."""
    return [WarpTrace() for _ in range(block.warp_count)]

