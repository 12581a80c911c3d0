"""Run one PTX kernel of ``tests/data/ptx`` on the functional model, for the PTX tests."""

from pathlib import Path

import numpy as np

from gpurf.sim.ptx.parser import load_ptx, parse_ptx
from gpurf.sim.sm.batch import run_blocks
from gpurf.sim.sm.memory import GlobalMemory
from gpurf.sim.sm.program import Program
from gpurf.sim.sm.semantics import NUMPY_TYPES
from gpurf.sim.sm.warp import ThreadBlock

DATA = Path(__file__).parent / "data" / "ptx"


def program(name: str) -> Program:
    """The only kernel of ``tests/data/ptx/<name>.ptx``, compiled."""
    kernels = load_ptx(DATA / f"{name}.ptx").kernels
    return Program(next(iter(kernels.values())))


def program_of(text: str, file: str = "t.ptx") -> Program:
    return Program(next(iter(parse_ptx(text, file).kernels.values())))


def pack(prog: Program, args, memory: GlobalMemory) -> bytes:
    """The parameter buffer: an array argument's buffer address, ``bytes`` as given (a
    struct), a number as the parameter's type."""
    raw = bytearray(prog.kernel.param_bytes)
    for i, (param, arg) in enumerate(zip(prog.kernel.params, args, strict=True)):
        if isinstance(arg, np.ndarray):
            value = np.uint64(memory.addresses[f"arg{i}"]).tobytes()
        elif isinstance(arg, bytes):
            value = arg
        else:
            value = np.array(arg, NUMPY_TYPES[param.type]).tobytes()
        raw[param.offset:param.offset + len(value)] = value
    return bytes(raw)


def launch(prog: Program, args, block: int, grid: int = 1, dynamic_shared: int = 0,
           warp_by_warp: bool = False) -> list:
    """Run ``prog`` with ``args`` on ``grid`` blocks of ``block`` threads; return the
    arguments with every array read back. ``warp_by_warp`` runs each block warp after warp
    (:meth:`ThreadBlock.run`) instead of the grouped :func:`run_blocks`: another legal
    interleaving."""
    memory = GlobalMemory({f"arg{i}": a for i, a in enumerate(args)
                           if isinstance(a, np.ndarray)})
    params = pack(prog, args, memory)
    blocks = [ThreadBlock(prog, (b, 0, 0), (block, 1, 1), (grid, 1, 1), memory, params,
                          dynamic_shared) for b in range(grid)]
    if warp_by_warp:
        for b in blocks:
            b.run()
    else:
        run_blocks(blocks)
    return [memory.read(f"arg{i}") if isinstance(a, np.ndarray) else a
            for i, a in enumerate(args)]
