"""The compiler passes of the papers, run on a workload's kernel (``gpurf compile``).

Each pass returns an object with ``listing()`` (the PTX with its annotations, like the RegLess
paper's Fig. 3a) and ``to_json()``; :func:`pass_table` gives the per-kernel table of a pass:

- ``regless``: regions and mean instructions per region (RegLess Table 2 analog, static);
- ``greener``: fraction of operand-cycles ON / SLEEP / OFF over a run of the kernel with the
  states enforced (registers OFF hold poison, so the run also checks the pass);
- ``compression``: physical registers per thread before and after slice allocation
  (the static compression paper's Table 1 / Fig. 9 analog).
"""

from collections.abc import Callable

from gpurf.golden.greener.power_pass import DEFAULT_THRESHOLD, operand_cycles, power_pass
from gpurf.golden.regless.regions import region_table, regless_pass
from gpurf.sim.kernels import one_per_kernel
from gpurf.sim.sm.run import load_workload

__all__ = ["PASSES", "compile_workload", "pass_table", "table_markdown"]

PASSES = ("regless", "greener", "compression")


def compile_workload(workload: str, pass_name: str, *, threshold: int = DEFAULT_THRESHOLD):
    """The annotations of pass ``pass_name`` on ``workload``'s kernel."""
    kernel = load_workload(workload)[1].kernel
    if pass_name == "regless":
        return regless_pass(kernel)
    if pass_name == "greener":
        return power_pass(kernel, threshold)
    if pass_name == "compression":
        from gpurf.golden.compression.compile_pass import compression_pass

        return compression_pass(workload)
    raise LookupError(f"unknown pass {pass_name!r}; known: {', '.join(PASSES)}")


def _greener_row(workload: str, threshold: int, size: str) -> dict:
    kernel = load_workload(workload)[1].kernel
    run, fractions = operand_cycles(power_pass(kernel, threshold), workload, size)
    return {"workload": workload.partition("/")[0], "threshold": threshold,
            **{f"{state} %": round(100 * fractions[state], 1) for state in ("ON", "SLEEP", "OFF")},
            "outputs": "PASS" if run.passed else "FAIL"}


def pass_table(pass_name: str, *, threshold: int = DEFAULT_THRESHOLD, size: str = "test",
               progress: Callable = iter) -> list[dict]:
    """One row per kernel of pass ``pass_name``'s figures (see the module docstring)."""
    if pass_name == "regless":
        return region_table()
    if pass_name == "greener":
        return [_greener_row(w, threshold, size) for w in progress(one_per_kernel())]
    if pass_name == "compression":
        from gpurf.golden.compression.compile_pass import pressure_table

        return pressure_table()
    raise LookupError(f"unknown pass {pass_name!r}; known: {', '.join(PASSES)}")


def _cell(value) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def table_markdown(rows: list[dict]) -> str:
    """``rows`` (dicts with the same keys) as a Markdown table."""
    if not rows:
        return ""
    keys = list(rows[0])
    lines = ["| " + " | ".join(keys) + " |", "|" + "---|" * len(keys)]
    lines += ["| " + " | ".join(_cell(row[k]) for k in keys) + " |" for row in rows]
    return "\n".join(lines)
