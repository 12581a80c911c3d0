"""Run a workload functionally and check it against its numpy reference.

:func:`run_kernel` loads a workload (``sim/kernels/<name>/`` or a user's kernel folder,
:mod:`~gpurf.sim.sm.workload`: PTX + launch description),
generates the inputs, runs every thread block on the functional model (cohorts of blocks
one after another: blocks share nothing but global memory, and the kernels do not
communicate through it), reads the output buffers back and computes the reference outputs.

A launch with a ``[loop]`` (:mod:`~gpurf.sim.sm.launch`) is a host loop: each iteration is
one launch over the same global memory, in order; before a launch the ``until`` flag buffer
is zeroed, after it the ``swap`` pairs exchange names and the loop ends when the flag is all
zeros. With timing, each launch starts on an empty SM (caches and pipelines drained, as
between two kernel launches) and the statistics add across launches
(:func:`add_timing_stats`).

Inside :func:`~gpurf.sim.sm.recording.shared_functional_runs`, timing runs of one kernel,
size, program and values setting share one functional pass: the first records it, the others
replay it (:mod:`~gpurf.sim.sm.recording`; the same statistics, outputs and expected outputs).
"""

import itertools
import time
from dataclasses import dataclass, field, fields, replace
from functools import cache

import numpy as np

from gpurf.sim.kernels import reference
from gpurf.sim.ptx.ir import Kernel, type_width
from gpurf.sim.ptx.parser import load_ptx

from .batch import COHORT, run_blocks
from .launch import PARAM_TYPES, Launch, LaunchError, LaunchSpec, load_launch
from .memory import GlobalMemory
from .program import Program
from .recording import KernelRecording, LaunchRecording, RecordedBlock, current_scope
from .warp import ThreadBlock
from .workload import UnknownKernelError, find_workload

__all__ = ["KernelRun", "LaunchError", "UnknownKernelError", "add_timing_stats", "check_params",
           "load_workload", "pack_params", "run_kernel"]


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
        instructions / (32 x warp instructions)), ``launches`` (the host loop's launches;
        1 without a loop), ``blocks``, ``warps``, ``barriers`` (summed over launches),
        ``seconds`` (wall time of the run), ``cpu_seconds`` (its process CPU time), and
        with timing ``timing`` (:class:`~gpurf.sim.sm.stats.TimingStats`) and
        ``timing_core`` (which timing loop ran the last launch:
        :attr:`~gpurf.sim.sm.timing.TimingSM.core_used`).
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
    spec.input_function = workload.input_function(spec)
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


def pack_params(launch: Launch, kernel: Kernel, memory: GlobalMemory, params=None) -> bytes:
    """The kernel's parameter buffer: values at the ``.param`` offsets (``params``: one
    iteration's, default the first launch's)."""
    raw = bytearray(kernel.param_bytes)
    for (_, ptype, value), ptx in zip(params or launch.params, kernel.params, strict=True):
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
               timing=None, values=False, power=None, mechanism=None) -> KernelRun:
    """Run workload ``name`` (``"saxpy"``, ``"fma_subcore/unbalanced"``) at ``size``.

    ``progress(iterable)`` may wrap the blocks of each launch (e.g. a tqdm bar);
    ``on_step(step, warp)`` is called after every warp instruction (warp by warp, block by
    block; without it, blocks run in cohorts of :data:`~gpurf.sim.sm.batch.COHORT` and warps
    at the same instruction run together, :func:`gpurf.sim.sm.batch.run_blocks`). With
    ``timing`` (an :class:`~gpurf.sim.sm.config.SMConfig`) the blocks run on the timing model
    (:class:`~gpurf.sim.sm.timing.TimingSM`) and ``stats["timing"]`` holds its
    :class:`~gpurf.sim.sm.stats.TimingStats` (summed over a host loop's launches); the
    outputs are the same either way. With ``values`` (``True`` or a
    :class:`~gpurf.sim.sm.values.RegisterStorage`; needs ``timing``) register values go
    through timing and every register access is checked (:mod:`gpurf.sim.sm.values`).
    ``power(sm)`` (with ``timing``) gives each launch's SM its register power states
    (:class:`~gpurf.sim.sm.power.RegisterPower`).
    ``mechanism(program) -> (program, options)`` (optional) gives the program to run in
    place of the workload's (e.g. one that narrows what it writes) and keyword options of
    :class:`~gpurf.sim.sm.timing.TimingSM` (:mod:`gpurf.sim.sm.compression`).
    """
    if values is not False and timing is None:
        raise ValueError("values through timing need a timing configuration")
    spec, program, variant = load_workload(name)
    program, options = mechanism(program) if mechanism else (program, {})
    options = {"values": values, "power": power, **options}
    stats = {"warp_instructions": 0, "thread_instructions": 0, "launches": 0, "blocks": 0,
             "warps": 0, "barriers": 0}
    scope = current_scope() if timing is not None and on_step is None else None
    key = (name, size, program, _values_on(values), options.get("cohort", COHORT))
    found = scope.get(key) if scope is not None else None
    start, cpu = time.perf_counter(), time.process_time()
    if found is not None:
        run = _replay(found, program, name, size, stats, progress, timing, options)
    else:
        recording = KernelRecording(program) if scope is not None else None
        run = _run(name, size, spec, program, variant, stats, progress, on_step, timing,
                   options, recording)
        if recording is not None:
            recording.seal(run.outputs, run.expected, run.inputs, run.rtol)
            scope.put(key, recording)
    stats["seconds"] = time.perf_counter() - start
    stats["cpu_seconds"] = time.process_time() - cpu
    stats["simd_efficiency"] = (stats["thread_instructions"]
                                / max(1, 32 * stats["warp_instructions"]))
    return run


def _run(name, size, spec, program, variant, stats, progress, on_step, timing, options,
         recording) -> KernelRun:
    """The launches of ``name`` at ``size`` run functionally (recorded into ``recording``
    when given) and, with ``timing``, on the timing model."""
    launch = spec.make(size, variant)
    inputs = {k: v.copy() for k, v in launch.buffers.items()}
    memory = GlobalMemory(launch.buffers)
    for iteration in launch.iterations:
        if launch.loop and launch.loop.until:
            _zero(memory, launch.loop.until)
        launched = None
        if recording is not None:
            launched = LaunchRecording()
            recording.launches.append(launched)
        timed = _launch(program, launch, iteration, memory, stats, progress, on_step, timing,
                        options, launched)
        if timed is not None:
            stats["timing"] = add_timing_stats(stats.get("timing"), timed)
        for first, second in launch.loop.swaps if launch.loop else ():
            _swap(memory, first, second)
        if launch.loop and launch.loop.until and not memory.read(launch.loop.until).any():
            break
    else:
        if launch.loop and launch.loop.until:
            raise LaunchError(launch.loop.exhausted)
    outputs = {k: memory.read(k) for k in launch.outputs}
    expected = find_workload(name).expected(spec, launch, size, inputs)
    return KernelRun(name, size, outputs, expected, inputs, stats, launch.rtol)


def _values_on(values) -> bool:
    """Whether ``run_kernel``'s ``values`` records register values."""
    return values is not False and values is not None


def _replay(recording: KernelRecording, program, name, size, stats, progress, timing,
            options) -> KernelRun:
    """The timing runs of ``recording``'s launches, replayed (:mod:`.recording`)."""
    from .timing import TimingSM

    recording.check(program)
    for launched in recording.launches:
        blocks = launched.block_ids
        stats["launches"] += 1
        stats["blocks"] += len(blocks)
        sm = TimingSM(recording.program, timing, None, functional=launched.replayer(),
                      **options)
        timed = sm.run_blocks(progress(blocks) if progress else blocks, len(blocks),
                              on_block=_counter(stats))
        stats["timing"] = add_timing_stats(stats.get("timing"), timed)
        stats["timing_core"] = sm.core_used
    return KernelRun(name, size, *({k: v.copy() for k, v in buffers.items()} for buffers in
                                   (recording.outputs, recording.expected, recording.inputs)),
                     stats, recording.rtol)


def _counter(stats: dict):
    """``count(block)``: add a run block's counters (a
    :class:`~gpurf.sim.sm.recording.RecordedBlock`) to ``stats``."""
    def count(block):
        stats["warps"] += block.warp_count
        stats["barriers"] += block.barriers
        stats["warp_instructions"] += block.instructions
        stats["thread_instructions"] += block.thread_instructions
    return count


def _launch(program, launch, iteration, memory, stats, progress, on_step, timing, options,
            recording=None):
    """One launch of ``iteration``'s grid; the timing statistics with ``timing`` (its
    functional pass recorded into ``recording``, a
    :class:`~gpurf.sim.sm.recording.LaunchRecording`, when given)."""
    params = pack_params(launch, program.kernel, memory, iteration.params)
    blocks = _blocks(iteration.grid)
    stats["launches"] += 1
    stats["blocks"] += len(blocks)

    def make_block(block_id):
        return ThreadBlock(program, block_id, launch.block, iteration.grid, memory, params)

    count = _counter(stats)
    ordered = progress(blocks) if progress else blocks
    if timing is not None:
        from .timing import TimingSM

        functional = None
        if recording is not None:
            functional = recording.recorder(make_block, values=_values_on(options["values"]))
        sm = TimingSM(program, timing, make_block, functional=functional, **options)
        timed = sm.run_blocks(ordered, len(blocks), on_block=count)
        stats["timing_core"] = sm.core_used
        return timed
    if on_step is None:
        ids = iter(ordered)
        while cohort := [make_block(b) for b in itertools.islice(ids, COHORT)]:
            run_blocks(cohort)
            for block in cohort:
                count(RecordedBlock.of(block))
        return None
    for block_id in ordered:
        block = make_block(block_id)
        block.run(on_step)
        count(RecordedBlock.of(block))
    return None


def _zero(memory: GlobalMemory, name: str) -> None:
    """Zero buffer ``name`` in ``memory`` (a host loop's flag before a launch)."""
    offset, dtype, shape = memory.buffers[name]
    memory.data[offset:offset + int(np.prod(shape)) * dtype.itemsize] = 0


def _swap(memory: GlobalMemory, first: str, second: str) -> None:
    """Exchange the names of two buffers of ``memory`` (the host swapping two pointers)."""
    for table in (memory.buffers, memory.addresses):
        table[first], table[second] = table[second], table[first]


def add_timing_stats(total, more):
    """``total`` + ``more`` (:class:`~gpurf.sim.sm.stats.TimingStats`) field by field:
    numbers add, lists add element by element, dicts of numbers add key by key; the
    configuration (and anything else) is ``total``'s. ``total`` may be ``None``."""
    if total is None:
        return more
    summed = {}
    for item in fields(total):
        a, b = getattr(total, item.name), getattr(more, item.name)
        if isinstance(a, bool) or item.name == "config":
            continue
        if isinstance(a, int | float):
            summed[item.name] = a + b
        elif isinstance(a, list) and all(isinstance(x, int | float) for x in a + b):
            summed[item.name] = [x + y for x, y in zip(a, b, strict=True)]
        elif isinstance(a, dict) and all(isinstance(x, int | float)
                                         for x in [*a.values(), *b.values()]):
            summed[item.name] = {k: a.get(k, 0) + b.get(k, 0) for k in {**a, **b}}
    return replace(total, **summed)
