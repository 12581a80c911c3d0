"""RegLess: run time on the golden SM (Figs. 13 and 16), where preloads are served
(Section 6.5), and Fig. 11, the area of OSU capacities normalized to the 2048-entry
register file (``gpurf cost regless``).

The run-time part runs the register-bound suite (:data:`gpurf.sim.sm.suite.SUITE`) on the
gtx980 preset with the register file (values checked) and on RegLess
(:func:`gpurf.sim.sm.regless.run_regless`, every operand read checked, outputs equal numpy):
512 entries per SM with and without the compressor and without the metadata cost, and the
capacity sweep of :data:`gpurf.sim.sm.regless.CAPACITIES`; the ``breakdown`` table says where
the time goes at region boundaries (:mod:`gpurf.sim.sm.regless_breakdown`). Energy (Figs.
14-15) is not reproduced yet.

Fig. 11 is given as a plot without numbers; its text says logic and storage grow with
capacity, which is checked here on gpurf's rows. Its synthesis results are cached
(``gpurf cost``'s cache); a cold cache adds the synthesis time (minutes per OSU)."""

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from itertools import pairwise
from statistics import geometric_mean

from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.recording import shared_functional_runs
from gpurf.sim.sm.regless import CAPACITIES, SOURCES, WAITS, ReglessConfig, run_regless
from gpurf.sim.sm.regless_breakdown import COLUMNS, breakdown_row
from gpurf.sim.sm.suite import SUITE
from gpurf.synth.papers import paper_values
from gpurf.synth.regless import FIG11, PAPER_STATEMENT, fig11_report, fig11_rows

from .parts import WrongOutputsError, baseline_cycles, measure_kernels, to_stderr
from .result import Comparison, Plot, Result, Series, Table

__all__ = ["CONFIGS", "SETUPS", "measure", "reproduce", "runtime_results"]

SETUPS = {"test": replace(FIG11, osu_lines=(32, 64, 128)), "paper": FIG11}
"""Per ``--size``: the OSU lines per shard synthesized. ``test`` keeps the design point
(128 lines per shard, 512 registers per SM) and two smaller capacities, leaving out the 256
and 512-line OSUs that take ABC the longest; ``paper`` is all six of Fig. 11."""

_RATIOS = ("total transistors", "logic transistors", "memory bits")
DESIGN = 512
_WHY_RUNTIME = (
    "the breakdown table says where: a region drains its global loads before the warp's next "
    "region may start (paper 5.1), waits the next instruction often would not have made "
    "(gaussian); the metadata instructions take issue cycles (the 'no metadata cost' "
    "column); srad, imgvf and kmeans spill registers past the OSU (stack and preload "
    "waits). gpurf's suite is 14 register-bound kernels at small sizes (test: few warps per "
    "scheduler to hide these); the paper ran Rodinia at full size in GPGPU-sim")
_WHY_PRELOADS = (
    "gpurf's kernels and sizes differ from the paper's Rodinia runs: the OSU per shard is 128 "
    "lines for up to 16 warps of 27-36 registers (kmeans, srad, imgvf), whose spilled "
    "registers overflow the 48 KB of L1 (Table 1) the register lines have: srad and imgvf "
    "make most of the L2 preloads")


def _grows(rows: list[dict], figure: str) -> bool:
    osu = sorted((row for row in rows if row["role"] in ("osu", "design")),
                 key=lambda row: row["registers per SM"])
    return all(a[figure] < b[figure] for a, b in pairwise(osu))


def reproduce(size: str, *, say: Callable[[str], None] = lambda _: None,
              kernels: list[str] | None = None, fig11: bool = True, jobs: int = 1) -> Result:
    """The run-time tables for ``size`` on ``kernels`` (default: the suite; ``[]``: none;
    each kernel on one of ``jobs`` worker processes) and Fig. 11's rows (:data:`SETUPS`,
    with ``fig11``), each said as it is measured."""
    papers = paper_values("regless")
    kernels = list(SUITE) if kernels is None else kernels
    tables, plots, comparisons, notes = (runtime_results(size, kernels, say, jobs) if kernels
                                         else ([], [], [], []))
    if fig11:
        table, plot, fig11_notes = _fig11(size, say)
        tables.append(table)
        plots.append(plot)
        notes += fig11_notes
    return Result("regless", size, papers, tables, plots, comparisons, notes=notes)


CONFIGS = (ReglessConfig(), ReglessConfig(compressor=False), ReglessConfig(metadata=False),
           *(ReglessConfig(capacity=c) for c in CAPACITIES if c != DESIGN))
"""The RegLess configurations each kernel runs: the design point, without the compressor,
without the metadata cost, and the other capacities of the sweep."""


def measure(kernel: str, size: str, say: Callable[[str], None] = to_stderr) -> dict:
    """One kernel at ``size``: ``{"baseline": cycles, "runs": {label: counters}}``, the
    counters :func:`run_regless` gives with ``runtime`` (cycles over the baseline's) for
    every configuration of :data:`CONFIGS`. Wrong outputs raise. The runs share one
    functional pass (:func:`~gpurf.sim.sm.recording.shared_functional_runs`)."""
    sm = load_config(preset="gtx980")
    with shared_functional_runs():
        cycles = baseline_cycles("regless", kernel, size, sm, say)
        runs = {}
        for config in CONFIGS:
            say(f"regless: {kernel} {_label(config)}")
            out = run_regless(kernel, size, config, sm=sm, baseline=False)
            if not out["passed"]:
                raise WrongOutputsError(f"regless: {kernel} {_label(config)}: outputs "
                                        "differ from numpy")
            runs[_label(config)] = {**out, "runtime": out["cycles"] / cycles}
    return {"baseline": cycles, "runs": runs}


def _runs(kernels, size, say, jobs) -> dict:
    """``(kernel, config)`` -> :func:`measure`'s counters (``(kernel, None)``: the
    baseline's cycles); each kernel on one of ``jobs`` worker processes and cached
    (:func:`~.parts.measure_kernels`)."""
    progress = say if jobs == 1 else to_stderr
    parts = measure_kernels("regless", size, kernels, partial(measure, size=size, say=progress),
                            jobs=jobs, say=say)
    runs = {}
    for kernel, part in zip(kernels, parts, strict=True):
        runs[(kernel, None)] = part["baseline"]
        runs.update({(kernel, config): part["runs"][_label(config)] for config in CONFIGS})
    return runs


def _label(config: ReglessConfig) -> str:
    return f"{config.capacity}" + ("" if config.compressor else " no compressor") + \
        ("" if config.metadata else " no metadata cost")


def runtime_results(size: str, kernels: list[str], say, jobs: int = 1
                    ) -> tuple[list, list, list, list]:
    """Tables, plots, comparisons and notes of the run-time part (``jobs``: worker
    processes)."""
    papers = paper_values("regless")
    runs = _runs(kernels, size, say, jobs)
    design, bare = ReglessConfig(), ReglessConfig(compressor=False)
    free_meta = ReglessConfig(metadata=False)
    sweep = [ReglessConfig(capacity=c) for c in CAPACITIES]

    def runtime(kernel, config):
        return round(runs[(kernel, config)]["runtime"], 3)

    fig16 = Table("fig16", "Fig. 16: run time over the register file (512 entries per SM)",
                  {"kernel": "", "baseline cycles": "cycles", "RegLess cycles": "cycles",
                   "RegLess": "x", "no compressor": "x", "no metadata cost": "x"},
                  [{"kernel": k, "baseline cycles": runs[(k, None)],
                    "RegLess cycles": runs[(k, design)]["cycles"],
                    "RegLess": runtime(k, design), "no compressor": runtime(k, bare),
                    "no metadata cost": runtime(k, free_meta)}
                   for k in kernels])
    geo = {config: round(geometric_mean(runs[(k, config)]["runtime"] for k in kernels), 3)
           for config in (bare, free_meta, *sweep)}
    fig16.rows.append({"kernel": "geomean", "baseline cycles": None, "RegLess cycles": None,
                       "RegLess": geo[design], "no compressor": geo[bare],
                       "no metadata cost": geo[free_meta]})
    fig13 = Table("fig13", "Fig. 13: run time over the register file per OSU capacity "
                  "(entries per SM, compressor on)",
                  {"kernel": "", **{str(c.capacity): "x" for c in sweep}},
                  [{"kernel": k, **{str(c.capacity): runtime(k, c) for c in sweep}}
                   for k in kernels])
    fig13.rows.append({"kernel": "geomean", **{str(c.capacity): geo[c] for c in sweep}})
    where = _where(kernels, runs, design)
    breakdown = Table("breakdown", "Where the time goes: mean cycles per region boundary "
                      "(512 entries, compressor on)", COLUMNS,
                      [breakdown_row(k, runs[(k, design)]) for k in kernels],
                      notes=[f"{name.replace('_', ' ')}: {text}" for name, text in
                             WAITS.items()] +
                      ["metadata: metadata instructions per boundary (an issue cycle each); "
                       "L1 wait: cycles a register request queued for the L1 port, per "
                       "request. Command: `python -m gpurf.sim.sm.regless_breakdown`."])
    plots = [Plot("fig16", "Fig. 16: run time over the register file (512 entries)", "x",
                  [*kernels, "geomean"],
                  [Series("RegLess", "gpurf", [r["RegLess"] for r in fig16.rows]),
                   Series("no compressor", "gpurf", [r["no compressor"] for r in fig16.rows])],
                  lines={"paper geomean": papers["runtime_geomean"].value,
                         "paper, no compressor": papers["runtime_no_compressor"].value}),
             Plot("fig13", "Fig. 13: geomean run time per OSU capacity", "x",
                  [str(c.capacity) for c in sweep],
                  [Series("RegLess", "gpurf", [geo[c] for c in sweep])]),
             Plot("fig17", "Fig. 17: where preloads are served (512 entries)", "%",
                  [*kernels, "all"],
                  [Series(source, "gpurf", [row[source] for row in where.rows])
                   for source in SOURCES])]
    total = where.rows[-1]
    comparisons = [
        Comparison("runtime_geomean", geo[design], papers["runtime_geomean"].value, "x",
                   0.05, _WHY_RUNTIME),
        Comparison("runtime_no_compressor", geo[bare],
                   papers["runtime_no_compressor"].value, "x", 0.05, _WHY_RUNTIME),
        Comparison("preloads_from_l1", total["l1"], papers["preloads_from_l1"].value, "%",
                   0.5, _WHY_PRELOADS),
        Comparison("preloads_beyond_l1", total["l2"], papers["preloads_beyond_l1"].value,
                   "%", 0.05, _WHY_PRELOADS)]
    notes = [f"Kernels at size {size!r} on the gtx980 preset; every RegLess run checks every "
             "operand read against the functional run and the outputs against numpy. "
             f"Command: `gpurf reproduce regless --size {size}`; one run: `gpurf sm run "
             "KERNEL --timing --preset gtx980 --mechanism regless:512`.",
             "Energy (Figs. 14-15) is not reproduced yet."]
    return [fig16, fig13, where, breakdown], plots, comparisons, notes


def _where(kernels, runs, design) -> Table:
    """Section 6.5 / Fig. 17: the share of preloads each source served."""
    units = {"kernel": "", "preloads": "preloads", **{s: "%" for s in SOURCES},
             "evictions": "lines", "compressed": "%"}

    def row(label, counters):
        total = max(1, counters["preloads"])
        return {"kernel": label, "preloads": counters["preloads"],
                **{s: round(100 * counters[f"preloads_{s}"] / total, 3) for s in SOURCES},
                "evictions": counters["evictions"],
                "compressed": round(100 * counters["evictions_compressed"]
                                    / max(1, counters["evictions"]), 1)}

    rows = [row(k, runs[(k, design)]) for k in kernels]
    keys = ("preloads", *(f"preloads_{s}" for s in SOURCES), "evictions",
            "evictions_compressed")
    rows.append(row("all", {key: sum(runs[(k, design)][key] for k in kernels)
                            for key in keys}))
    return Table("preloads", "Section 6.5: where preloads are served (512 entries, "
                 "compressor on)", units, rows)


def _fig11(size: str, say):
    setup = SETUPS[size]
    rows = []
    for row in fig11_rows(setup):
        say(f"regless: {row.label} synthesized ({row.seconds:.0f} s)")
        rows.append(row)
    report = fig11_report(rows, setup)
    data = report.rows("fig11")
    table = Table("fig11", f"Fig. 11: area per SM ({setup.shards} shards), normalized to the "
                  f"{setup.shards * setup.rf_entries}-entry register file",
                  report.tables["fig11"].units, data,
                  notes=["From `gpurf cost regless` (JSON: `gpurf cost regless --json`); "
                         "`synthesis s` is wall time on the machine that ran it."])
    plot = Plot("fig11", "Fig. 11: area per SM over the 2048-entry register file", "ratio",
                [row["design"] for row in data],
                [Series(figure, "gpurf", [row[f"{figure} ratio"] for row in data])
                 for figure in _RATIOS])
    grows = {figure: _grows(data, figure) for figure in ("logic transistors", "memory bits")}
    notes = [PAPER_STATEMENT,
             "In gpurf's rows, OSU logic transistors grow with capacity: "
             f"{'yes' if grows['logic transistors'] else '**no**'}; memory bits: "
             f"{'yes' if grows['memory bits'] else '**no**'}."]
    return table, plot, notes
