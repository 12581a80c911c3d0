"""WIR: reuse, speedup and energy of every kernel of the suite under the paper's
configurations (the golden SM, :mod:`gpurf.sim.sm.wir`), and storage per structure beside
Section VII-E's (at ``--size paper`` synthesized, ``gpurf cost wir``; at ``--size test`` the
blocks' entry layouts only, which need no synthesis)."""

from collections.abc import Callable
from functools import partial
from pathlib import Path
from statistics import fmean, geometric_mean

import gpurf.sim.kernels
from gpurf.hw.registry import get_block
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.recording import shared_functional_runs
from gpurf.sim.sm.wir import CONFIGS, TABLE_III_PJ, run_wir
from gpurf.synth.papers import paper_values
from gpurf.synth.wir import PAPER_BITS

from .parts import WrongOutputsError, baseline_cycles, measure_kernels, to_stderr
from .result import Comparison, Plot, Result, Series, Table

__all__ = ["measure", "reproduce", "suite"]

_WHY_BITS = "gpurf's entry layout differs from the paper's for this structure"
_WHY_DEPTH = ("gpurf's hash is a balanced XOR2 tree per output bit (its depth: the widest "
              "bit's inputs, log2); the paper counts 13 XOR2 in its critical path without "
              "saying how its gates are arranged")
_WHY_REUSE = ("gpurf runs its own kernel suite (PTX from nvcc, not the paper's 48 "
              "PTXplus benchmarks); 64-bit results, guarded instructions and predicate or "
              "special-register sources bypass the buffer (see docs/wir.md)")
_WHY_ENERGY = ("gpurf's energy covers the backend it models (register file, functional units, "
               "L1/shared accesses of loads, Horowitz's 45 nm figures) and WIR's structures "
               "(Table III); the paper's SM energy (GPUWattch) also holds the front end, "
               "scheduler, static power and the rest, which reuse does not reduce")
_WHY_DUMMY = ("gpurf counts a dummy MOV per first divergent write of a logical register on its "
              "own suite (bfs, gaussian, backprop_forward diverge most); the paper averages "
              "its 48 benchmarks")
PJ_KEYS = {"rename table": "rename_table_pj", "reuse buffer": "reuse_buffer_pj",
           "hash generation": "hash_pj", "value signature buffer": "vsb_pj",
           "register allocator": "register_allocator_pj",
           "reference count": "reference_count_pj", "verify cache": "verify_cache_pj"}
"""The keys of ``synth/papers/wir.toml`` holding Table III's energies."""


def suite() -> list[str]:
    """The shipped kernels (a folder with a launch description)."""
    root = Path(gpurf.sim.kernels.__file__).parent
    return sorted(p.name for p in root.iterdir() if (p / "launch.toml").is_file())


def reproduce(size: str, *, say: Callable[[str], None] = lambda _: None,
              kernels: list[str] | None = None, jobs: int = 1) -> Result:
    """Every kernel at ``size`` under every configuration (value check on), on ``jobs``
    worker processes, and storage."""
    papers = paper_values("wir")
    runs, failed = _runs(kernels or suite(), size, say, jobs)
    names = [k for k in (kernels or suite()) if k not in failed]
    tables, plots, comparisons = _sm_results(names, runs, papers)
    storage, storage_plot, storage_comparisons = _storage(size, papers, say)
    notes = [f"Kernels at size {size!r} on the fermi preset with WIR's 4 added backend "
             "cycles; every register access checked against the functional run and every "
             "output against numpy (a false reuse stops the run); reference counts checked "
             "after every run. Command: `gpurf reproduce wir --size "
             f"{size}`; one run: `python -c \"from gpurf.sim.sm.wir import run_wir; "
             "print(run_wir('matmul', 'RLPV'))\"`."]
    notes += [f"**{kernel} did not run** (left out of every table): {error}"
              for kernel, error in failed.items()]
    return Result("wir", size, papers, [*tables, *storage], [*plots, storage_plot],
                  comparisons + storage_comparisons, notes)


def measure(kernel: str, size: str, say: Callable[[str], None] = to_stderr) -> dict:
    """One kernel at ``size``: ``{"baseline": cycles, "runs": {config: statistics}}``
    (:func:`run_wir`'s, with ``speedup``), or ``{"failed": error}`` when the baseline does
    not run. A wrong output or value under WIR raises: it is WIR's failure, never left out.
    The runs share one functional pass (:func:`~gpurf.sim.sm.recording.shared_functional_runs`)."""
    sm = load_config(preset="fermi")
    with shared_functional_runs():
        try:
            cycles = baseline_cycles("wir", kernel, size, sm, say)
        except WrongOutputsError:
            raise
        except Exception as error:  # the baseline's failure, reported in the notes
            return {"failed": f"baseline: {type(error).__name__}: {error}"}
        runs = {}
        for config in CONFIGS:
            say(f"wir: {kernel} {config}")
            stats = run_wir(kernel, config, size, sm=sm, baseline=False)
            if not stats["passed"]:
                raise WrongOutputsError(f"wir: {kernel} {config}: outputs differ from numpy")
            runs[config] = {**stats, "speedup": cycles / stats["cycles"]}
    return {"baseline": cycles, "runs": runs}


def _runs(names, size, say, jobs) -> tuple[dict, dict]:
    """``(kernel, config)`` -> :func:`measure`'s statistics (``(kernel, None)``: the
    baseline cycles), and the kernels whose baseline does not run -> the error; each kernel
    on one of ``jobs`` worker processes and cached (:func:`~.parts.measure_kernels`)."""
    progress = say if jobs == 1 else to_stderr
    parts = measure_kernels("wir", size, names, partial(measure, size=size, say=progress),
                            jobs=jobs, say=say)
    runs, failed = {}, {}
    for kernel, part in zip(names, parts, strict=True):
        if "failed" in part:
            failed[kernel] = part["failed"]
            say(f"wir: {kernel}: {failed[kernel]}")
            continue
        runs[(kernel, None)] = part["baseline"]
        runs.update({(kernel, config): part["runs"][config] for config in CONFIGS})
    return runs, failed


def _pct(x: float) -> float:
    return round(100 * x, 2)


def _sm_results(names, runs, papers):
    configs = list(CONFIGS)
    reuse_units = {"kernel": "", **{c: "%" for c in configs}}
    reuse_rows = [{"kernel": k, **{c: _pct(runs[(k, c)]["reuse_rate"]) for c in configs}}
                  for k in names]
    speed_rows = [{"kernel": k, **{c: round(runs[(k, c)]["speedup"], 3) for c in configs}}
                  for k in names]
    energy_rows = [{"kernel": k, **{c: _pct(runs[(k, c)]["energy"]["saving"])
                                    for c in configs}} for k in names]
    detail_units = {"kernel": "", "warp instructions": "instructions", "reused": "%",
                    "pending-retry gain": "%", "VSB hit rate": "%", "verify failures": "",
                    "verify-cache hits": "", "dummy MOVs": "",
                    "baseline registers (mean)": "", "registers in use (mean)": "",
                    "registers in use (peak)": "", "baseline cycles": "cycles",
                    "cycles": "cycles", "added energy": "%"}
    detail_rows = []
    for k in names:
        s = runs[(k, "RLPV")]
        e = s["energy"]
        detail_rows.append({
            "kernel": k, "warp instructions": s["issued"], "reused": _pct(s["reuse_rate"]),
            "pending-retry gain": _pct(s["retry_gain"]),
            "VSB hit rate": _pct(s["vsb_hit_rate"]), "verify failures": s["verify_failures"],
            "verify-cache hits": s["verify_cache_hits"], "dummy MOVs": s["dummy_movs"],
            "baseline registers (mean)": round(s["baseline_in_use_mean"], 1),
            "registers in use (mean)": round(s["in_use_mean"], 1),
            "registers in use (peak)": s["in_use_peak"],
            "baseline cycles": runs[(k, None)], "cycles": s["cycles"],
            "added energy": _pct(e["added_pj"] / e["baseline_pj"])})
    mean_units = {"configuration": "", "reused (mean)": "%", "speedup (geomean)": "x",
                  "backend energy saved (mean)": "%", "pending-retry gain (mean)": "%",
                  "verify failures": ""}
    mean_rows = [{"configuration": c,
                  "reused (mean)": _pct(fmean(runs[(k, c)]["reuse_rate"] for k in names)),
                  "speedup (geomean)": round(geometric_mean(
                      runs[(k, c)]["speedup"] for k in names), 3),
                  "backend energy saved (mean)": _pct(fmean(
                      runs[(k, c)]["energy"]["saving"] for k in names)),
                  "pending-retry gain (mean)": _pct(fmean(
                      runs[(k, c)]["retry_gain"] for k in names)),
                  "verify failures": sum(runs[(k, c)]["verify_failures"] for k in names)}
                 for c in configs]
    added_units = {"structure": "", "pJ per access": "pJ", "energy (all kernels, RLPV)": "pJ",
                   "share of baseline backend": "%"}
    base_total = sum(runs[(k, "RLPV")]["energy"]["baseline_pj"] for k in names)
    added_rows = [{"structure": n, "pJ per access": pj,
                   "energy (all kernels, RLPV)": round(sum(
                       runs[(k, "RLPV")]["energy"]["added"][n] for k in names)),
                   "share of baseline backend": _pct(sum(
                       runs[(k, "RLPV")]["energy"]["added"][n] for k in names) / base_total)}
                  for n, pj in TABLE_III_PJ.items()]
    tables = [
        Table("means", "Per configuration, over the kernels", mean_units, mean_rows),
        Table("reuse", "Reused warp instructions (% of dynamic)", reuse_units, reuse_rows),
        Table("speedup", "Speedup over the baseline (fermi, no WIR)",
              {"kernel": "", **{c: "x" for c in configs}}, speed_rows),
        Table("energy", "Backend energy saved (% of the baseline's)", reuse_units,
              energy_rows, notes=[
                  "Baseline: every instruction reads and writes its registers (1,024-bit "
                  "warp register = 16 x 10 pJ 64-bit accesses of an 8 KB SRAM) and runs its "
                  "32 lanes (Horowitz, ISSCC 2014, 45 nm: int add 0.1, int mult 3.1, fp add "
                  "0.9, fp mult 3.7 pJ); loads one 128-byte L1 line (160 pJ). WIR: the reads, "
                  "writes and verify-reads made, the executed instructions, and Table III's "
                  "structures per access. Not the paper's SM energy: see docs/wir.md."]),
        Table("rlpv", "RLPV per kernel", detail_units, detail_rows),
        Table("added", "WIR's added structures (Table III)", added_units, added_rows),
    ]
    plots = [
        Plot("reuse", "Reused warp instructions", "%", list(names),
             [Series(c, "gpurf", [row[c] for row in reuse_rows]) for c in configs],
             lines={"paper RLPV mean": papers["reuse_rate_rlpv"].value}),
        Plot("speedup", "Speedup over the baseline", "x", list(names),
             [Series(c, "gpurf", [row[c] for row in speed_rows]) for c in configs]),
        Plot("energy", "Backend energy saved", "%", list(names),
             [Series(c, "gpurf", [row[c] for row in energy_rows]) for c in ("RPV", "RLPV")],
             lines={"paper RLPV SM": papers["sm_energy_saving_rlpv"].value}),
    ]
    rlpv = next(r for r in mean_rows if r["configuration"] == "RLPV")
    dummy = _pct(sum(runs[(k, "RLPV")]["dummy_movs"] for k in names)
                 / sum(runs[(k, "RLPV")]["issued"] for k in names))
    comparisons = [
        Comparison("reuse_rate_rlpv", rlpv["reused (mean)"],
                   papers["reuse_rate_rlpv"].value, "%", 0, _WHY_REUSE),
        Comparison("sm_energy_saving_rlpv", rlpv["backend energy saved (mean)"],
                   papers["sm_energy_saving_rlpv"].value, "%", 0, _WHY_ENERGY),
        Comparison("dummy_mov_increase", dummy, papers["dummy_mov_increase"].value, "%", 0,
                   _WHY_DUMMY),
    ]
    return tables, plots, comparisons


def _storage(size, papers, say):
    """Storage per structure: synthesized at ``paper`` size, entry layouts at ``test``."""
    if size == "paper":
        return _synthesized(papers, say)
    rows = []
    for name, key in PAPER_BITS.items():
        ours = get_block(name).golden().config.storage_bits
        rows.append({"structure": papers[key].what.split(":")[0], "block": name,
                     "paper": int(papers[key].value), "gpurf": ours})
    units = {"structure": "", "block": "", "paper": "bits", "gpurf": "bits"}
    plot = Plot("storage", "Storage per SM (Section VII-E)", "bits",
                [r["structure"] for r in rows],
                [Series("gpurf entries", "gpurf", [r["gpurf"] for r in rows]),
                 Series("paper", "paper", [r["paper"] for r in rows])])
    comparisons = [Comparison(PAPER_BITS[r["block"]], r["gpurf"], r["paper"], "bits", 0,
                              _WHY_BITS) for r in rows]
    table = Table("storage", "Storage at the paper's SM (Section VII-E), entry layouts",
                  units, rows, notes=["Synthesized bits: `gpurf reproduce wir --size paper` "
                                      "or `gpurf cost wir`."])
    return [table], plot, comparisons


def _synthesized(papers, say):
    from gpurf.synth.costs import cost_data

    say("wir: synthesis of every WIR block (gpurf cost wir)")
    report = cost_data("wir")
    storage = report.tables["storage"]
    rows = storage.rows
    plot = Plot("storage", "Storage per SM (Section VII-E)", "bits",
                [row["structure"] for row in rows],
                [Series("gpurf entries", "gpurf", [row["gpurf"] for row in rows]),
                 Series("gpurf synthesized memory + ff bits", "gpurf",
                        [row["memory bits"] + row["ff bits"] for row in rows]),
                 Series("paper", "paper", [row["paper"] for row in rows])])
    comparisons = [Comparison(PAPER_BITS[row["block"]], row["gpurf"], row["paper"], "bits", 0,
                              _WHY_BITS) for row in rows]
    total_kb = sum(row["gpurf"] for row in rows) / 8 / 1024
    comparisons += [
        Comparison("total_kb", round(total_kb, 2), papers["total_kb"].value, "KB", 0.05,
                   "the paper rounds its KB figures; see the rows"),
        Comparison("xor_depth", report.figures["xor depth"]["value"],
                   papers["xor_depth"].value, "XOR2 gates", 0, _WHY_DEPTH),
    ]
    uncounted = report.tables["uncounted"]
    tables = [Table("storage", "Storage at the paper's SM (Section VII-E)", storage.units, rows,
                    notes=["From `gpurf cost wir` (JSON: `gpurf cost wir --json`)."]),
              Table("uncounted", "Not counted by the paper", uncounted.units, uncounted.rows)]
    return tables, plot, comparisons
