"""Warps and thread blocks of the functional SM model.

A :class:`Warp` holds 32 lanes of every virtual register as numpy arrays and a SIMT
reconvergence stack; :meth:`Warp.step` executes exactly one warp instruction and returns a
:class:`Step` describing it (the instruction, the lanes that executed it, the registers it
read and wrote, the memory addresses it touched), so a timing model can drive warps one
instruction at a time and charge each one its latency, bank accesses and memory traffic.

SIMT stack (Fung et al., MICRO 2007, with the immediate post-dominator as reconvergence
point): each entry is ``[pc, reconvergence pc, mask]``; the top entry executes. At a
branch whose guard splits the active lanes, the top entry's pc becomes the branch's
reconvergence pc and two entries are pushed, not-taken first, then taken (so the taken
path runs first); an entry whose pc reaches its reconvergence pc is popped and its lanes
continue in the entry below. ``ret``/``exit`` remove their lanes from every entry.

A :class:`ThreadBlock` owns its warps, its shared memory and its barrier: ``bar.sync``
parks a warp until every warp of the block that has not exited has arrived (barriers
are counted per warp; the kernels call them in converged code). :meth:`ThreadBlock.run`
runs the block to completion warp by warp, which is a legal schedule for a functional
result. numpy floating-point warnings (overflow to inf, NaN) are GPU semantics, not
errors: callers stepping warps themselves should wrap the loop in
``numpy.errstate(all="ignore")`` as :meth:`ThreadBlock.run` does.
"""

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

from gpurf.sim.ptx.ir import Instruction

from .memory import FaultError, Memory
from .program import ALU, BAR, BRA, EXIT, Program
from .semantics import STORAGE

__all__ = ["ExecutionError", "Step", "ThreadBlock", "Warp"]

LANES = 32


class ExecutionError(RuntimeError):
    """A fault while executing (bad address, deadlock); names the file and line."""


@dataclass(slots=True)
class Step:
    """One executed warp instruction.

    Attributes
    ----------
    warp : int
        Warp index in its block.
    pc : int
        Index of the instruction in the kernel.
    instruction : Instruction
    mask : numpy.ndarray
        Lanes (32 booleans) that executed it: the active lanes with the guard applied
        (for a branch, all active lanes: each evaluates the branch; the lanes that took
        it are the mask of the next instruction executed).
    space : str or None
        The instruction's state space for memory instructions (``"global"``, ``"shared"``,
        ``"local"``, ``"const"``, ``"param"`` or ``"generic"``).
    addresses : numpy.ndarray or None
        Byte addresses of the executing lanes, in lane order, for accesses other than
        ``.param`` (``(lanes, elements)`` for a ``.v2``/``.v4`` access).
    """

    warp: int
    pc: int
    instruction: Instruction
    mask: np.ndarray
    space: str | None = None
    addresses: np.ndarray | None = None

    @property
    def sources(self) -> tuple[str, ...]:
        return self.instruction.sources

    @property
    def dests(self) -> tuple[str, ...]:
        return self.instruction.dests

    @property
    def active(self) -> int:
        """The executing lanes as an integer bit mask (bit l = lane l)."""
        return int(np.packbits(self.mask, bitorder="little").view("<u4")[0])


class Warp:
    """Warp ``index`` of ``block``: 32 lanes of registers, a SIMT stack, counters."""

    def __init__(self, block: "ThreadBlock", index: int):
        program = block.program
        self.block = block
        self.index = index
        self.row = index
        """This warp's row in its block's (or its cohort's) register-file arrays."""
        self.program = program
        self.memory = block.memory
        self.shared = block.shared
        self.local = block.local
        self.statics = block.statics
        self.params = block.params
        self._regs = None
        self._special = None
        left = block.threads - index * LANES
        self.stack = [[0, program.end, _active_lanes(left)]]
        self.waiting = False
        self.done = left <= 0  # no active lane
        self.instructions = 0
        self.thread_instructions = 0

    @property
    def regs(self) -> list:
        """Per register slot, this warp's 32 lanes (views of :attr:`ThreadBlock.regfile`)."""
        if self._regs is None:
            self._regs = [registers[self.index] for registers in self.block.regfile]
        return self._regs

    @property
    def special(self) -> dict:
        """Special registers (``"%tid.x"``, ...): 32 lanes each, read-only."""
        if self._special is None:
            block, index = self.block, self.index
            self._special = {**block.uniform_specials,
                             **{n: rows[index] for n, rows in block.lane_specials.items()}}
        return self._special

    @property
    def pc(self) -> int | None:
        """The next instruction, ``None`` once the warp has exited."""
        return self.stack[-1][0] if self.stack else None

    @property
    def ready(self) -> bool:
        """Whether the warp can execute (not exited, not waiting at a barrier)."""
        return not (self.done or self.waiting)

    def step(self) -> Step:
        """Execute the next instruction of this warp and describe it."""
        program = self.program
        top = self.stack[-1]
        pc, mask = top[0], top[2]
        guard = program.guards[pc]
        ins = program.code[pc]
        if guard is not None:
            g = self.regs[guard]
            mask = mask & (~g if ins.guard_negated else g)
        kind = program.kinds[pc]
        record = Step(self.index, pc, ins, top[2] if kind == BRA else mask)
        if kind == ALU:
            try:
                touched = program.ops[pc](self, mask)
            except FaultError as fault:
                raise ExecutionError(f"{program.kernel.file}:{ins.line}: {ins.opcode}: {fault} "
                                     f"(block {self.block.block_id}, warp {self.index})") from None
            if touched is not None:
                record.space, record.addresses = touched
            top[0] = pc + 1
        elif kind == BRA:
            self._branch(top, pc, mask, guard is not None)
        elif kind == EXIT:
            self._exit(top, pc, mask)
        else:
            top[0] = pc + 1
            self.waiting = True
        self.instructions += 1
        self.thread_instructions += int(np.count_nonzero(record.mask))
        stack = self.stack
        while len(stack) > 1 and stack[-1][0] == stack[-1][1]:
            stack.pop()
        if kind == BAR or self.done:
            self.block.update()
        return record

    def _branch(self, top, pc, taken, guarded):
        target = self.program.targets[pc]
        active = top[2]
        if not guarded or np.array_equal(taken, active):
            top[0] = target
        elif not taken.any():
            top[0] = pc + 1
        else:
            rpc = self.program.reconverge[pc]
            top[0] = rpc
            self.stack.append([pc + 1, rpc, active & ~taken])
            self.stack.append([target, rpc, taken])

    def _exit(self, top, pc, leaving):
        top[0] = pc + 1
        kept = []
        for entry in self.stack:
            entry[2] = entry[2] & ~leaving
            if entry[2].any():
                kept.append(entry)
        self.stack[:] = kept
        self.done = not kept


class ThreadBlock:
    """Block ``block_id`` of a launch of ``program``: its warps, shared memory, barrier.

    Parameters
    ----------
    program : Program
    block_id, block_dim, grid_dim : tuple of 3 int
    memory : Memory
        Global memory, shared by all blocks of the launch.
    params : bytes
        The packed kernel parameters.
    dynamic_shared : int
        Bytes of the ``.extern .shared`` array (the launch's dynamic shared memory).
    """

    def __init__(self, program: Program, block_id, block_dim, grid_dim, memory: Memory,
                 params: bytes, dynamic_shared: int = 0):
        self.program = program
        self.block_id = tuple(block_id)
        self.block_dim = tuple(block_dim)
        self.grid_dim = tuple(grid_dim)
        self.memory = memory
        self.params = params
        self.threads = int(math.prod(self.block_dim))
        self.warp_count = -(-self.threads // LANES)
        self.shared = Memory(program.kernel.shared_bytes + dynamic_shared, space="shared")
        self.local = Memory(self.warp_count * LANES * program.kernel.local_bytes, space="local")
        """Every thread's local frame, thread ``t``'s at ``t * local_bytes``."""
        self.statics = program.statics
        self.barriers = 0
        self.uniform_specials = {"%nwarpid": _uniform(self.warp_count), "%smid": _uniform(0),
                                 "%clock": _uniform(0)}
        """Special registers equal in every lane of every warp of the block (read-only)."""
        for axis, i in zip("xyz", range(3), strict=True):
            self.uniform_specials[f"%ntid.{axis}"] = _uniform(self.block_dim[i])
            self.uniform_specials[f"%ctaid.{axis}"] = _uniform(self.block_id[i])
            self.uniform_specials[f"%nctaid.{axis}"] = _uniform(self.grid_dim[i])
        self.lane_specials = _lane_specials(self.block_dim, self.warp_count)
        """Special registers that differ between lanes or warps, as ``(warps, 32)`` arrays
        (read-only)."""
        self.regfile = [np.zeros((self.warp_count, LANES), STORAGE[width])
                        for width in program.register_widths]
        """Per register slot, the ``(warps, 32)`` lanes of every warp (warp ``i``'s
        :attr:`Warp.regs` are row views), so a group of warps executes as one array."""
        self.warps = [Warp(self, i) for i in range(self.warp_count)]

    @property
    def done(self) -> bool:
        return all(w.done for w in self.warps)

    def special_rows(self, name: str) -> np.ndarray:
        """Special register ``name`` of every warp as a ``(warps, 32)`` array (read-only)."""
        rows = self.lane_specials.get(name)
        if rows is None:
            rows = np.broadcast_to(self.uniform_specials[name], (self.warp_count, LANES))
        return rows

    def update(self) -> None:
        """Release the barrier once every warp that has not exited waits at it."""
        live = [w for w in self.warps if not w.done]
        if live and all(w.waiting for w in live):
            self.barriers += 1
            for w in live:
                w.waiting = False

    def run(self, on_step=None) -> int:
        """Run every warp to completion; return the warp instructions executed.
        ``on_step(step, warp)`` is called after each instruction when given (the
        :class:`Step` and the :class:`Warp` that executed it, registers updated)."""
        executed = 0
        with np.errstate(all="ignore"):
            while not self.done:
                progressed = False
                for warp in self.warps:
                    while warp.ready:
                        record = warp.step()
                        executed += 1
                        progressed = True
                        if on_step is not None:
                            on_step(record, warp)
                if not progressed:
                    stuck = [w.index for w in self.warps if w.waiting]
                    raise ExecutionError(f"{self.program.kernel.file}: block {self.block_id} "
                                         f"deadlocked: warps {stuck} wait at a barrier")
        return executed


def _read_only(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


@cache
def _uniform(value: int) -> np.ndarray:
    """32 lanes of ``value`` (shared between blocks, read-only)."""
    return _read_only(np.full(LANES, value, np.uint32))


@cache
def _active_lanes(threads: int) -> np.ndarray:
    """The initial mask of a warp with ``threads`` threads left in its block (read-only:
    the SIMT stack replaces masks, never updates them in place)."""
    return _read_only(np.arange(LANES) < max(0, threads))


@cache
def _lane_specials(block_dim: tuple, warps: int) -> dict[str, np.ndarray]:
    """``%tid.*``, ``%laneid``, ``%warpid`` of every warp of a block (read-only)."""
    tid = np.arange(warps * LANES, dtype=np.uint32).reshape(warps, LANES)
    bx, by, _ = (np.uint32(d) for d in block_dim)
    table = {"%tid.x": tid % bx, "%tid.y": (tid // bx) % by, "%tid.z": tid // (bx * by),
             "%laneid": tid % np.uint32(LANES),
             "%warpid": tid // np.uint32(LANES)}
    return {name: _read_only(rows) for name, rows in table.items()}
