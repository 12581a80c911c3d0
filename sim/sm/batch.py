"""Fast functional execution of thread blocks: warps at one instruction run as one array.

:func:`run_blocks` runs a cohort of :class:`~gpurf.sim.sm.warp.ThreadBlock` objects to completion
like :meth:`ThreadBlock.run`, but each round groups the ready warps of every block of the
cohort by their next instruction and executes a group at once:

- an arithmetic or global-memory instruction runs for the whole group, across blocks, as
  one numpy call: the cohort's register file holds each register slot of all its blocks as
  one ``(blocks x warps, 32)`` array (every block's :attr:`ThreadBlock.regfile` rows are
  views of it), so the group's registers are ``(k, 32)`` slices of it;
- a shared-memory, local-memory or generic instruction, or an atomic, runs once per block
  (each block has its own shared and local memory; atomics stay in launch order per block);
- a branch or an exit runs for the group when every warp takes it uniformly, and warp by
  warp otherwise (a divergent branch pushes SIMT stack entries); a barrier warp by warp.

Blocks share nothing but global memory, any interleaving of a block's warps between
barriers is a legal schedule, and blocks communicate through global memory only by atomics
(each warp's lanes in lane order; an integer atomic's final value does not depend on the
order), so a kernel's integer results equal a block-by-block, warp-by-warp run's; the old
values atomics return, and float atomic sums, follow this run's order. A kernel that waits
for another block (a spin lock on a flag) is outside this model: the block it waits for may
not have run yet.

With ``traces`` (one :class:`WarpTrace` per warp) the run records what a timing model
needs to replay each warp: its dynamic instruction sequence and, per global or shared
access, the L1 requests it makes (:mod:`gpurf.sim.sm.timing` replays them cycle by cycle).
"""

import itertools
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from .memory import FaultError
from .program import ALU, BRA, EXIT, Program
from .values import TraceValues, ValueRecorder
from .warp import ExecutionError, ThreadBlock

__all__ = ["COHORT", "LINE_BYTES", "SHARED_BANKS", "WarpGroup", "WarpTrace", "new_traces",
           "run_block", "run_blocks"]

COHORT = 32
"""Blocks run functionally together by default (:func:`run_blocks`)."""
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
    values : TraceValues or None
        With values recorded (``run_blocks(..., values=True)``), the register values of
        each instruction (:mod:`gpurf.sim.sm.values`).
    """

    pcs: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    values: TraceValues | None = None


class _Specials:
    """Special registers of a group of warps as ``(k, 32)`` arrays: rows ``sel`` of the
    cohort's ``(blocks x warps, 32)`` arrays, built on first use."""

    __slots__ = ("cohort", "sel")

    def __init__(self, cohort, sel):
        self.cohort, self.sel = cohort, sel

    def __getitem__(self, name):
        table = self.cohort.specials
        rows = table.get(name)
        if rows is None:
            rows = table[name] = np.concatenate([b.special_rows(name)
                                                 for b in self.cohort.blocks])
        return rows[self.sel]


class _Cohort:
    """Blocks run together: their register file (per slot, ``(blocks x warps, 32)``),
    special registers built on demand, and the traces of their warps by row."""

    __slots__ = ("blocks", "recorder", "rows", "specials", "traces")

    def __init__(self, blocks, rows, traces, recorder):
        self.blocks, self.rows, self.traces = blocks, rows, traces
        self.recorder = recorder
        """A :class:`~gpurf.sim.sm.values.ValueRecorder` when values are recorded."""
        self.specials = {}


class WarpGroup:
    """Warps at the same instruction, seen by a closure as one warp with ``(k, 32)``
    registers (views of the cohort's register file, or gathered copies). The warps are of
    one block (``shared`` is its shared memory) or, for instructions that do not touch
    shared memory, of several (``shared`` is ``None``)."""

    __slots__ = ("local", "memory", "params", "regs", "shared", "special", "statics")

    def __init__(self, block: ThreadBlock, special, regs, shared):
        self.memory = block.memory
        self.shared = shared
        self.local = block.local if shared is not None else None
        self.statics = block.statics
        self.params = block.params
        self.special = special
        self.regs = regs


@cache
def _static(program: Program):
    """Per instruction: register slots it reads or writes, those it writes, and whether
    it must run per block (shared memory, atomics)."""
    uses, dests, private = [], [], []
    slots = program.slots
    for ins in program.code:
        names = dict.fromkeys((*ins.sources, *ins.dests))
        uses.append(tuple(slots[n] for n in names))
        dests.append(tuple(slots[n] for n in ins.dests))
        private.append(ins.space in ("shared", "local", "generic")
                       or ins.base in ("atom", "red"))
    return uses, dests, private


def _selector(indices):
    """A slice when ``indices`` are evenly spaced (registers are then views), else an
    index array (gathered copies, written back after the instruction)."""
    if len(indices) == 1:
        return slice(indices[0], indices[0] + 1)
    step = indices[1] - indices[0]
    if step > 0 and indices == list(range(indices[0], indices[-1] + 1, step)):
        return slice(indices[0], indices[-1] + 1, step)
    return np.array(indices)


def _shared_requests(addresses):
    """Requests of one warp's shared access: the most distinct words one bank serves."""
    words = np.unique(addresses >> np.uint64(2))
    return int(np.bincount((words % np.uint64(SHARED_BANKS)).astype(np.intp)).max()) \
        if words.size else 1


def _requests(space, addresses):
    """The L1 requests of one warp's access (see :class:`WarpTrace`): bank conflicts for
    shared memory, 128-byte lines for every other space (global, local, const, generic).
    ``addresses`` are per lane, or ``(lanes, elements)`` for a vector access."""
    if space != "shared":
        return tuple(sorted(set((addresses.ravel() >> _LINE_SHIFT).tolist())))
    return _shared_requests(addresses)


def _group_requests(space, addresses, counts):
    """Per warp of a group, the L1 requests of its share (``counts`` lanes each, in
    order) of ``addresses``."""
    if space == "shared":
        bounds = np.cumsum(counts)[:-1]
        return [_shared_requests(a) for a in np.split(addresses, bounds)]
    elements = 1 if addresses.ndim == 1 else addresses.shape[1]
    lines = addresses.ravel() >> _LINE_SHIFT
    owner = np.repeat(np.arange(len(counts)), np.asarray(counts) * elements)
    order = np.lexsort((lines, owner))
    lines, owner = lines[order], owner[order]
    keep = np.ones(lines.size, bool)
    keep[1:] = (lines[1:] != lines[:-1]) | (owner[1:] != owner[:-1])
    lines, owner = lines[keep].tolist(), owner[keep]
    ends = np.searchsorted(owner, np.arange(1, len(counts) + 1)).tolist()
    starts = [0, *ends[:-1]]
    return [tuple(lines[a:b]) for a, b in zip(starts, ends, strict=True)]


def _fault(program, pc, fault, warps):
    ins = program.code[pc]
    where = sorted({(w.block.block_id, w.index) for w in warps})
    blocks = {b for b, _ in where}
    if len(blocks) == 1:
        at = f"block {where[0][0]}, warps {[i for _, i in where]}"
    else:
        at = f"blocks/warps {where}"
    return ExecutionError(f"{program.kernel.file}:{ins.line}: {ins.opcode}: {fault} ({at})")


def _masks(warps) -> np.ndarray:
    """The active lanes of ``warps``, a row each (``np.stack`` of their masks, joined in
    one call: about three times faster for a cohort's 256 warps)."""
    masks = [w.stack[-1][2] for w in warps]
    return np.concatenate(masks).reshape(len(masks), -1)


def _step_group(cohort, warps, pc, shared):
    """Execute ALU instruction ``pc`` for ``warps`` (of ``cohort``) as one call."""
    block = warps[0].block
    program = block.program
    uses, dests, _ = _static(program)
    sel = _selector([w.row for w in warps])
    rows, traces = cohort.rows, cohort.traces
    regs = {s: rows[s][sel] for s in uses[pc]}
    mask = _masks(warps)
    guard = program.guards[pc]
    if guard is not None:
        g = regs[guard]
        mask = mask & (~g if program.code[pc].guard_negated else g)
    recorder = cohort.recorder
    before = None if recorder is None else recorder.sources(pc, regs)
    try:
        touched = program.ops[pc](WarpGroup(block, _Specials(cohort, sel), regs, shared),
                                  mask)
    except FaultError as fault:
        raise _fault(program, pc, fault, warps) from None
    if before is not None:
        recorder.record([traces[w.row].values for w in warps], pc, before, regs, mask)
    if not isinstance(sel, slice):
        for d in dests[pc]:
            rows[d][sel] = regs[d]
    counts = np.count_nonzero(mask, axis=1).tolist()
    requests = None
    if touched is not None and traces is not None and touched[0] != "param":
        requests = _group_requests(touched[0], touched[1], counts)
    _advance(warps, pc, counts, traces, requests)


def _advance(warps, pc, counts, traces, requests):
    """Book-keeping of ``warps`` that executed ``pc`` and go on at ``pc + 1``."""
    nxt = pc + 1
    for k, warp in enumerate(warps):
        stack = warp.stack
        top = stack[-1]
        top[0] = nxt
        if nxt == top[1]:
            while len(stack) > 1 and stack[-1][0] == stack[-1][1]:
                stack.pop()
        warp.instructions += 1
        warp.thread_instructions += counts[k]
        if traces is not None:
            trace = traces[warp.row]
            trace.pcs.append(pc)
            if requests is not None:
                trace.requests.append(requests[k])


def _control_group(cohort, warps, pc):
    """Execute branch or exit ``pc`` for ``warps`` at once where every warp takes it
    uniformly; return the warps that must step on their own (divergent)."""
    program = warps[0].program
    guard = program.guards[pc]
    active = _masks(warps)
    # Lanes that execute, as Warp.step counts them: a branch's active lanes, an exit's
    # leaving lanes.
    counts = np.count_nonzero(active, axis=1)
    if guard is None:
        whole = np.ones(len(warps), bool)
        none = ~whole
    else:
        g = cohort.rows[guard][_selector([w.row for w in warps])]
        taken = active & (~g if program.code[pc].guard_negated else g)
        whole = (taken == active).all(axis=1)
        none = ~taken.any(axis=1)
    kind = program.kinds[pc]
    if kind == EXIT and guard is not None:
        counts = np.count_nonzero(taken, axis=1)
    rest = []
    done_blocks = {}
    traces = cohort.traces
    target = program.targets[pc] if kind == BRA else None
    for warp, w, n, c in zip(warps, whole.tolist(), none.tolist(), counts.tolist(),
                             strict=True):
        stack = warp.stack
        if n:
            nxt = pc + 1
        elif w and kind == BRA:
            nxt = target
        elif w and len(stack) == 1:
            stack.clear()
            warp.done = True
            done_blocks[id(warp.block)] = warp.block
            nxt = None
        else:
            rest.append(warp)
            continue
        if nxt is not None:
            top = stack[-1]
            top[0] = nxt
            while len(stack) > 1 and stack[-1][0] == stack[-1][1]:
                stack.pop()
        warp.instructions += 1
        warp.thread_instructions += c
        if traces is not None:
            traces[warp.row].pcs.append(pc)
    for block in done_blocks.values():
        block.update()
    return rest


def _step_one(warp, pc, traces, recorder=None):
    before = None if recorder is None else recorder.sources(pc, warp.regs)
    record = warp.step()
    if before is not None:
        recorder.record([traces[warp.row].values], pc, before, warp.regs, record.mask)
    if traces is not None:
        trace = traces[warp.row]
        trace.pcs.append(pc)
        if record.addresses is not None and record.space != "param":
            trace.requests.append(_requests(record.space, record.addresses))


def _join(blocks) -> list:
    """Give ``blocks`` (fresh, of one launch) one register file: per slot a
    ``(blocks x warps, 32)`` array whose row ranges are the blocks' register files."""
    first = blocks[0]
    if len(blocks) == 1:
        return first.regfile
    n = first.warp_count
    rows = [np.concatenate([b.regfile[s] for b in blocks]) for s in range(len(first.regfile))]
    for i, block in enumerate(blocks):
        block.regfile = [r[i * n:(i + 1) * n] for r in rows]
        for warp in block.warps:
            warp.row = i * n + warp.index
            warp._regs = None
    return rows


def run_blocks(blocks: list[ThreadBlock], traces: list[list[WarpTrace]] | None = None, *,
               values: bool = False) -> int:
    """Run the fresh ``blocks`` (of one launch, not yet run) to completion together (see the
    module docstring); record each warp's :class:`WarpTrace` into ``traces[block][warp]``
    when given, with ``values`` its register values (:mod:`gpurf.sim.sm.values`). Returns
    the warp instructions executed."""
    if not blocks:
        return 0
    program = blocks[0].program
    kinds = program.kinds
    private = _static(program)[2]
    flat = None if traces is None else [t for block_traces in traces for t in block_traces]
    recorder = None
    if values and flat is not None:
        recorder = ValueRecorder(program)
        for trace in flat:
            trace.values = TraceValues()
    cohort = _Cohort(blocks, _join(blocks), flat, recorder)
    executed = 0
    live = [b for b in blocks if not b.done]
    with np.errstate(all="ignore"):
        while live:
            groups = {}
            running = []
            for block in live:
                ready = alive = False
                for warp in block.warps:
                    if not warp.done:
                        alive = True
                        if not warp.waiting:
                            groups.setdefault(warp.stack[-1][0], []).append(warp)
                            ready = True
                if not alive:
                    continue
                if not ready:
                    stuck = [w.index for w in block.warps if w.waiting]
                    raise ExecutionError(f"{program.kernel.file}: block {block.block_id} "
                                         f"deadlocked: warps {stuck} wait at a barrier")
                running.append(block)
            live = running
            for pc, warps in groups.items():
                executed += len(warps)
                kind = kinds[pc]
                if kind == ALU:
                    if not private[pc]:
                        if len(warps) > 1:
                            _step_group(cohort, warps, pc, None)
                        else:
                            _step_one(warps[0], pc, flat, recorder)
                        continue
                    for block, own in itertools.groupby(warps, key=lambda w: w.block):
                        own = list(own)
                        if len(own) > 1:
                            _step_group(cohort, own, pc, block.shared)
                        else:
                            _step_one(own[0], pc, flat, recorder)
                    continue
                if kind in (BRA, EXIT) and len(warps) > 1:
                    warps = _control_group(cohort, warps, pc)
                for warp in warps:
                    _step_one(warp, pc, flat, recorder)
    if recorder is not None:
        for trace in flat:
            recorder.finish(trace.values, trace.pcs)
    return executed


def run_block(block: ThreadBlock, traces: list[WarpTrace] | None = None) -> int:
    """Run ``block`` to completion, grouping warps at the same instruction; record each
    warp's :class:`WarpTrace` into ``traces`` when given. Returns the warp instructions."""
    return run_blocks([block], None if traces is None else [traces])


def new_traces(block: ThreadBlock) -> list[WarpTrace]:
    """An empty trace per warp of ``block``."""
    return [WarpTrace() for _ in range(block.warp_count)]
