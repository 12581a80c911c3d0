"""Run a workload functionally and check it against its numpy reference.

:func:`run_kernel` loads a workload (``sim/kernels/<name>/`` or a user's kernel folder,
:mod:`~gpurf.sim.sm.workload`: PTX + launch description),
generates the inputs, runs every thread block on the functional model (cohorts of blocks
one after another: blocks share nothing but global memory, and the kernels do not
communicate through it), reads the output buffers back and computes the reference outputs.
"""

import itertools
import time
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from gpurf.sim.kernels import reference
from gpurf.sim.ptx.ir import Kernel, type_width
from gpurf.sim.ptx.parser import load_ptx

from .batch import COHORT, run_blocks
from .launch import PARAM_TYPES, Launch, LaunchError, LaunchSpec, load_launch
from .memory import GlobalMemory
from .program import Program
from .warp import ThreadBlock
from .workload import UnknownKernelError, find_workload

__all__ = ["KernelRun", "LaunchError", "UnknownKernelError", "check_params", "load_workload",
           "pack_params", "run_kernel"]


@dataclass
class KernelRun:
    """The result of :func:`run_kernel`.

    Attributes
    ----------
    name, size : str
    outputs, expected, inputs : dict of numpy.ndarray
        Output buffers after the run, the reference's outputs, the generated inputs.
    stats : dict
        ``warp_instructions``, ``thread_instructions``, ``simd_efficiency`` (thread
        instructions / (32 x warp instructions)), ``blocks``, ``warps``, ``barriers``,
        ``seconds`` (wall time of the run), ``cpu_seconds`` (its process CPU time), and
        with timing ``timing`` (:class:`~gpurf.sim.sm.stats.TimingStats`).
    rtol : float
        Relative tolerance of the comparison (0: bit-exact).
    """

    name: str
    size: str
    outputs: dict
    expected: dict
    inputs: dict
    stats: dict = field(default_factory=dict)
    rtol: float = 0.0

    def mismatches(self) -> dict[str, int]:
        """Elements of each output that differ from the reference."""
        result = {}
        for name, want in self.expected.items():
            got = self.outputs[name]
            if self.rtol:
                same = np.isclose(got, want, rtol=self.rtol, atol=0, equal_nan=True)
            else:
                same = (got.view(np.uint8).reshape((*got.shape, -1))
                        == want.astype(got.dtype).view(np.uint8).reshape((*got.shape, -1))
                        ).all(axis=-1)
            result[name] = int(np.count_nonzero(~same))
        return result

    @property
    def passed(self) -> bool:
        return not any(self.mismatches().values())


@cache
def _program(ptx_path: str, entry: str, mtime: float) -> Program:
    module = load_ptx(ptx_path)
    if entry not in module.kernels:
        raise LookupError(entry)
    return Program(module.kernels[entry])


def load_workload(name: str) -> tuple[LaunchSpec, Program, str | None]:
    """The launch description, compiled program and variant of workload ``name`` (a shipped
    kernel or a kernel folder, :func:`~gpurf.sim.sm.workload.find_workload`)."""
    workload = find_workload(name)
    spec = load_launch(workload.launch_file)
    variant = workload.variant
    if variant and variant not in spec.variants:
        raise UnknownKernelError(f"unknown variant {variant!r} of {workload.folder.name}; "
                                 f"known: {', '.join(spec.variants)}")
    if workload.shipped and not callable(getattr(reference, spec.reference or "", None)):
        raise spec.error((), "reference", f"no function {spec.reference!r} in "
                         "gpurf.sim.kernels.reference")
    ptx = workload.ptx_file()
    try:
        program = _program(str(ptx), spec.entry, ptx.stat().st_mtime)
    except LookupError:
        raise spec.error((), "entry", f"entry {spec.entry!r} is not in {ptx}") from None
    check_params(spec, program.kernel)
    return spec, program, variant


def check_params(spec: LaunchSpec, kernel: Kernel) -> None:
    """The launch's ``[[params]]`` match the kernel's ``.param`` list in count and width."""
    if len(spec.params) != len(kernel.params):
        raise spec.error(("params", 0), None, f"{len(spec.params)} [[params]] given, the "
                         f"kernel {kernel.name} takes {len(kernel.params)}")
    for i, (param, ptx) in enumerate(zip(spec.params, kernel.params, strict=True)):
        width = 64 if "buffer" in param else type_width(param["type"])
        if width != type_width(ptx.type):
            raise spec.error(("params", i), "type" if "type" in param else "buffer",
                             f"parameter {param['name']!r} has {width} bits, the kernel's "
                             f".param {ptx.name} is .{ptx.type}")


def pack_params(launch: Launch, kernel: Kernel, memory: GlobalMemory) -> bytes:
    """The kernel's parameter buffer: values at the ``.param`` offsets."""
    raw = bytearray(kernel.param_bytes)
    for (_, ptype, value), ptx in zip(launch.params, kernel.params, strict=True):
        if ptype == "ptr":
            data = np.uint64(memory.addresses[value]).tobytes()
        else:
            data = np.array(value).astype(PARAM_TYPES[ptype]).tobytes()
        raw[ptx.offset:ptx.offset + len(data)] = data
    return bytes(raw)


def _blocks(grid):
    gx, gy, gz = grid
    return [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]


def run_kernel(name: str, size: str = "test", *, progress=None, on_step=None,
               timing=None, values=False) -> KernelRun:
    """Run workload ``name`` (``"saxpy"``, ``"fma_subcore/unbalanced"``) at ``size``.

    ``progress(iterable)`` may wrap the blocks (e.g. a tqdm bar); ``on_step(step, warp)``
    is called after every warp instruction (warp by warp, block by block; without it, blocks
    run in cohorts of :data:`~gpurf.sim.sm.batch.COHORT` and warps at the same instruction run
    together, :func:`gpurf.sim.sm.batch.run_blocks`). With ``timing`` (an
    :class:`~gpurf.sim.sm.config.SMConfig`) the blocks run on the timing model
    (:class:`~gpurf.sim.sm.timing.TimingSM`) and ``stats["timing"]`` holds its
    :class:`~gpurf.sim.sm.stats.TimingStats`; the outputs are the same either way. With
    ``values`` (``True`` or a :class:`~gpurf.sim.sm.values.RegisterStorage`; needs
    ``timing``) register values go through timing and every register access is checked
    (:mod:`gpurf.sim.sm.values`).
    """
    if values is not False and timing is None:
        raise ValueError("values through timing need a timing configuration")
    spec, program, variant = load_workload(name)
    launch = spec.make(size, variant)
    inputs = {k: v.copy() for k, v in launch.buffers.items()}
    memory = GlobalMemory(launch.buffers)
    params = pack_params(launch, program.kernel, memory)
    blocks = _blocks(launch.grid)
    stats = {"warp_instructions": 0, "thread_instructions": 0, "blocks": len(blocks),
             "warps": 0, "barriers": 0}

    def make_block(block_id):
        return ThreadBlock(program, block_id, launch.block, launch.grid, memory, params)

    def count(block):
        stats["warps"] += len(block.warps)
        stats["barriers"] += block.barriers
        stats["warp_instructions"] += sum(w.instructions for w in block.warps)
        stats["thread_instructions"] += sum(w.thread_instructions for w in block.warps)

    start, cpu = time.perf_counter(), time.process_time()
    ordered = progress(blocks) if progress else blocks
    if timing is not None:
        from .timing import TimingSM

        sm = TimingSM(program, timing, make_block, values=values)
        stats["timing"] = sm.run_blocks(ordered, len(blocks), on_block=count)
    elif on_step is None:
        ids = iter(ordered)
        while cohort := [make_block(b) for b in itertools.islice(ids, COHORT)]:
            run_blocks(cohort)
            for block in cohort:
                count(block)
    else:
        for block_id in ordered:
            block = make_block(block_id)
            block.run(on_step)
            count(block)
    stats["seconds"] = time.perf_counter() - start
    stats["cpu_seconds"] = time.process_time() - cpu
    stats["simd_efficiency"] = (stats["thread_instructions"]
                                / max(1, 32 * stats["warp_instructions"]))
    outputs = {k: memory.read(k) for k in launch.outputs}
    expected = find_workload(name).expected(spec, launch, size, inputs)
    return KernelRun(name, size, outputs, expected, inputs, stats, launch.rtol)
