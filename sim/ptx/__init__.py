"""PTX front end: parser, IR, CFG, dominators, liveness, register allocation.

``load_ptx(path)`` parses a file into a :class:`Module`; :func:`build_cfg` gives a kernel's
control-flow graph with dominators and post-dominators; :func:`liveness` the live registers
per block and instruction; :func:`allocate_registers` the physical 32-bit registers.
"""

from .ir import Instruction, Kernel, Module
from .parser import PtxError, load_ptx, parse_ptx

__all__ = ["Instruction", "Kernel", "Module", "PtxError", "load_ptx", "parse_ptx"]
