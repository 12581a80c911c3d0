"""The compiler passes of the papers, run on workloads (``gpurf compile``).

The passes (:mod:`gpurf.sim.passes`) read one kernel; what loads a workload, runs it on
the golden SM or loops over every workload sits here, above the SM:

- :func:`compile_workload`: a pass's annotations on one workload's kernel;
- :func:`pass_table`: the per-kernel table of a pass —
  ``regless``: regions and mean instructions per region (RegLess Table 2 analog, static);
  ``greener``: fraction of operand-cycles ON / SLEEP / OFF over a run of the kernel with the
  states enforced (registers OFF hold poison, so the run also checks the pass);
  ``compression``: physical registers per thread before and after slice allocation
  (the static compression paper's Table 1 / Fig. 9 analog);
- the runs behind them: :func:`operand_cycles` (GReEneR), :func:`run_compressed` and the
  quality-driven precision search :func:`tune_precision` (static data compression, as
  :mod:`gpurf.sim.passes.compression.compile_pass` describes it).

Each pass returns an object with ``listing()`` (the PTX with its annotations, like the RegLess
paper's Fig. 3a) and ``to_json()``.
"""

from collections.abc import Callable

from gpurf.hw.greener.layouts import PowerState
from gpurf.sim.kernels import one_per_kernel
from gpurf.sim.passes.compression.compile_pass import CompressionPass, compression_pass
from gpurf.sim.passes.compression.precision import quality_error, table3_formats
from gpurf.sim.passes.compression.ranges import LaunchRanges
from gpurf.sim.passes.greener.power_pass import DEFAULT_THRESHOLD, PowerPass, power_pass
from gpurf.sim.passes.regless.regions import invalidation_summary, regless_pass
from gpurf.sim.ptx import PtxError
from gpurf.sim.sm.launch import LaunchError
from gpurf.sim.sm.poison import run_enforced
from gpurf.sim.sm.run import KernelRun, load_workload
from gpurf.sim.sm.workload import UnknownKernelError

__all__ = ["PASSES", "compile_workload", "compress_workload", "invalidation_table",
           "launch_ranges", "operand_cycles", "pass_table", "pressure_table", "region_table",
           "run_compressed", "table_markdown", "tune_precision"]

PASSES = ("regless", "greener", "compression")


def compile_workload(workload: str, pass_name: str, *, threshold: int = DEFAULT_THRESHOLD):
    """The annotations of pass ``pass_name`` on ``workload``'s kernel."""
    kernel = load_workload(workload)[1].kernel
    if pass_name == "regless":
        return regless_pass(kernel)
    if pass_name == "greener":
        return power_pass(kernel, threshold)
    if pass_name == "compression":
        return compress_workload(workload)
    raise LookupError(f"unknown pass {pass_name!r}; known: {', '.join(PASSES)}")


def _greener_row(workload: str, threshold: int, size: str) -> dict:
    kernel = load_workload(workload)[1].kernel
    run, fractions = operand_cycles(power_pass(kernel, threshold), workload, size)
    return {"workload": workload.partition("/")[0], "threshold": threshold,
            **{f"{state} %": round(100 * fractions[state], 1) for state in ("ON", "SLEEP", "OFF")},
            "outputs": "PASS" if run.passed else "FAIL"}


def pass_table(pass_name: str, *, threshold: int = DEFAULT_THRESHOLD, size: str = "test",
               progress: Callable = iter) -> list[dict]:
    """One row per kernel of pass ``pass_name``'s figures (see the module docstring). A
    kernel that cannot be loaded (a broken launch file, PTX the front end rejects) gets a
    row ``{"workload": ..., "error": message}`` and the table goes on."""
    rows = {"regless": lambda name: region_table([name])[0],
            "greener": lambda name: _greener_row(name, threshold, size),
            "compression": lambda name: pressure_table([name])[0]}
    if pass_name not in rows:
        raise LookupError(f"unknown pass {pass_name!r}; known: {', '.join(PASSES)}")
    return [_row_or_error(rows[pass_name], name) for name in progress(one_per_kernel())]


def _row_or_error(row: Callable[[str], dict], name: str) -> dict:
    try:
        return row(name)
    except (LaunchError, PtxError, UnknownKernelError) as error:
        return {"workload": name.partition("/")[0], "error": str(error)}


def _cell(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def table_markdown(rows: list[dict]) -> str:
    """``rows`` as a Markdown table (columns: every key in order of appearance; ``-`` where a
    row lacks one, as an error row does)."""
    if not rows:
        return ""
    keys = list(dict.fromkeys(k for row in rows for k in row))
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(_cell(row.get(k, "-")) for k in keys) + " |" for row in rows]
    return "\n".join(lines)


# -- RegLess --------------------------------------------------------------------------------
def region_table(workloads=None, **config) -> list[dict]:
    """:meth:`~gpurf.sim.passes.regless.regions.RegionPass.summary` of every workload's kernel
    (the paper's Table 2 analog, static), once per distinct kernel file; keyword arguments
    are :class:`~gpurf.sim.passes.regless.regions.RegionConfig`'s."""
    rows = []
    for name in one_per_kernel(workloads):
        folder = name.partition("/")[0]
        rows.append({"workload": folder,
                     **regless_pass(load_workload(name)[1].kernel, **config).summary()})
    return rows


def invalidation_table(workloads=None, **config) -> list[dict]:
    """Per kernel (once per kernel file), the invalidations placed with each placement
    (:func:`~gpurf.sim.passes.regless.regions.invalidation_summary`)."""
    return [{"workload": name.partition("/")[0],
             **invalidation_summary(load_workload(name)[1].kernel, **config)}
            for name in one_per_kernel(workloads)]


# -- GReEneR --------------------------------------------------------------------------------
def operand_cycles(power: PowerPass, workload: str, size: str = "test") -> tuple:
    """Run ``workload`` with ``power`` enforced and count, after every warp instruction,
    the warp's allocated 32-bit registers in each state (registers start ON; predicates are
    left out). Returns ``(run, {"ON": fraction, "SLEEP": ..., "OFF": ...})``."""
    regs = {k for keys in power.flow.keys.values() for k in keys if k.startswith("R")}
    after = [[(k, s) for k, s in power.after(pc).items() if k in regs]
             for pc in range(len(power.operands))]
    warps, totals = {}, dict.fromkeys(PowerState, 0)

    def observe(block, step):
        state, count = warps.setdefault((block, step.warp),
                                        ({}, {**dict.fromkeys(PowerState, 0),
                                              PowerState.ON: len(regs)}))
        for key, new in after[step.pc]:
            old = state.get(key, PowerState.ON)
            if old is not new:
                count[old] -= 1
                count[new] += 1
                state[key] = new
        for s, n in count.items():
            totals[s] += n

    run, _ = run_enforced(workload, power.enforcement(), size, on_step=observe)
    total = max(1, sum(totals.values()))
    return run, {s.name: totals[s] / total for s in PowerState}


# -- static data compression ----------------------------------------------------------------
def launch_ranges(workload: str, size: str = "test") -> LaunchRanges:
    """The ranges of ``workload``'s launch at ``size`` (its dims and scalar params)."""
    spec, program, variant = load_workload(workload)
    return LaunchRanges.from_launch(spec.make(size, variant), program.kernel)


def compress_workload(workload: str, *, size: str = "paper", ints: bool = True,
                      floats=None) -> CompressionPass:
    """:func:`~gpurf.sim.passes.compression.compile_pass.compression_pass` of ``workload``'s
    kernel, the range analysis assuming its launch at ``size`` (``"paper"``: the deployed
    launch; ``gpurf compile KERNEL --pass compression``)."""
    return compression_pass(load_workload(workload)[1].kernel,
                            launch=launch_ranges(workload, size), ints=ints, floats=floats)


def run_compressed(workload: str, cp: CompressionPass, size: str = "test", *,
                   check: bool = True, emulate: bool = True) -> tuple[KernelRun, float]:
    """Run ``workload`` with ``cp`` enforced; return ``(run, quality error)``."""
    run, _ = run_enforced(workload, cp.enforcement(check=check, emulate=emulate), size)
    return run, quality_error(run.outputs, run.expected)


def tune_precision(workload: str, threshold: float = 0.0, *, size: str = "test",
                   per_register: bool = False) -> dict:
    """The float formats of ``workload`` meeting ``threshold`` (the quality metric of
    :mod:`gpurf.sim.passes.compression.precision`) on its ``size`` input: register -> format
    (the search: :mod:`gpurf.sim.passes.compression.compile_pass`)."""
    kernel = load_workload(workload)[1].kernel
    written = {d for ins in kernel.instructions for d in ins.dests}
    registers = [v for v, d in kernel.regs.items() if d.type == "f32" and v in written]
    if not registers:
        return {}
    formats = table3_formats()

    def passes(floats) -> bool:
        _, error = run_compressed(workload, compress_workload(workload, size=size, ints=False,
                                                              floats=floats),
                                  size, emulate=False)
        return error <= threshold

    lo, hi = 0, len(formats) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if passes(formats[mid]):
            hi = mid
        else:
            lo = mid + 1
    chosen = dict.fromkeys(registers, formats[lo])
    if per_register:
        for vreg in sorted(chosen):
            index = formats.index(chosen[vreg])
            while index > 0 and passes({**chosen, vreg: formats[index - 1]}):
                index -= 1
                chosen[vreg] = formats[index]
    return chosen


def pressure_table(workloads=None, *, size: str = "paper", threshold: float = 0.1,
                   per_register: bool = False) -> list[dict]:
    """Registers per thread before and after, per kernel (the paper's Table 1 / Fig. 9
    analog): ``before`` (uncompressed allocator), ``slices_full`` (the slice allocator at
    declared widths), ``ints`` (integers narrowed, launch of ``size``), ``floats_perfect``
    / ``floats_high`` (floats only, tuned on the ``test`` input for quality 0 /
    ``threshold``), ``both_perfect`` / ``both_high``, and the formats chosen."""
    rows = []
    for name in one_per_kernel(workloads):
        folder = name.partition("/")[0]
        perfect = tune_precision(name, 0.0, per_register=per_register)
        high = tune_precision(name, threshold, per_register=per_register)

        def after(ints, floats, name=name):
            return compress_workload(name, size=size, ints=ints, floats=floats).after

        base = compress_workload(name, size=size, ints=False)
        rows.append({
            "workload": folder, "before": base.before, "slices_full": base.after,
            "ints": after(True, None), "floats_perfect": after(False, perfect),
            "floats_high": after(False, high), "both_perfect": after(True, perfect),
            "both_high": after(True, high),
            "format_perfect": _summary(perfect), "format_high": _summary(high)})
    return rows


def _summary(formats: dict) -> str:
    names = sorted({str(f) for f in formats.values()})
    return "/".join(names) if names else "-"
