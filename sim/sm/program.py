"""A kernel prepared for execution: compiled instructions, branch targets, reconvergence.

:class:`Program` is built once per kernel and shared by every warp that runs it. It fixes
each virtual register's slot (:attr:`Program.slots`) and width, compiles every instruction
into a numpy closure (:mod:`gpurf.sim.sm.semantics`), and resolves, for every branch, its target
and its reconvergence point: the first instruction of the immediate post-dominator of the
branch's block (:meth:`gpurf.sim.ptx.cfg.CFG.reconvergence_pc`).
"""

from functools import cached_property

from gpurf.sim.ptx.cfg import build_cfg
from gpurf.sim.ptx.ir import Kernel

from .memory import STATIC_BASE, Memory
from .semantics import Context, compile_instruction

__all__ = ["ALU", "BAR", "BRA", "EXIT", "Program"]

ALU, BRA, EXIT, BAR = range(4)
"""Instruction kinds: computed by a closure, branch, ``ret``/``exit``, barrier."""


class Program:
    """``kernel`` compiled for :class:`~gpurf.sim.sm.warp.Warp` (raises
    :class:`~gpurf.sim.ptx.parser.PtxError` for instructions the model does not implement)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.cfg = build_cfg(kernel)
        names = sorted(kernel.regs, key=lambda n: (kernel.regs[n].width, n))
        self.slots = {name: i for i, name in enumerate(names)}
        self.widths = {name: kernel.regs[name].width for name in names}
        shared = {v.name: v.offset for v in kernel.shared}
        if kernel.dynamic_shared:
            shared[kernel.dynamic_shared] = kernel.shared_bytes
        ctx = Context(kernel.file, self.slots, self.widths, shared,
                      {p.name: (p.offset, p.type) for p in kernel.params},
                      {v.name: v.offset for v in kernel.local},
                      {v.name: STATIC_BASE + v.offset for v in kernel.statics},
                      kernel.local_bytes)
        self.statics = _static_image(kernel)
        """The module's ``.global``/``.const`` variables, initialized from the PTX; like a
        CUDA module's, they keep their values from one launch of this program to the next."""
        code = kernel.instructions
        self.code = code
        self.ops = [compile_instruction(ins, ctx) for ins in code]
        self.kinds = [_kind(ins) for ins in code]
        self.guards = [None if ins.guard is None else self.slots[ins.guard] for ins in code]
        self.targets = [kernel.labels[ins.operands[0].name] if ins.is_branch else None
                        for ins in code]
        self.reconverge = [self.cfg.reconvergence_pc(i) if ins.is_branch else None
                           for i, ins in enumerate(code)]
        self.end = len(code)

    @cached_property
    def register_widths(self) -> list[int]:
        """Width in bits of the register in each slot."""
        return [self.widths[name] for name in self.slots]


def _kind(ins) -> int:
    if ins.base == "bar" and ins.mods[0] == "warp":
        return ALU
    return {"bra": BRA, "ret": EXIT, "exit": EXIT, "bar": BAR}.get(ins.base, ALU)


def _static_image(kernel: Kernel) -> Memory:
    size = max((v.offset + len(v.data) for v in kernel.statics), default=0)
    memory = Memory(size, base=STATIC_BASE, space="global")
    for v in kernel.statics:
        memory.data[v.offset:v.offset + len(v.data)] = bytearray(v.data)
    return memory
