"""The sub-core paper: Fig. 13 (area of RBA and of 4 CUs over the GTO baseline, from
synthesis), the FMA microbenchmark's per-sub-core imbalance (Figs. 3-4) and RBA vs GTO
(Figs. 10 and 12) on the kernels with the timing model."""

from collections.abc import Callable
from statistics import geometric_mean, mean

from gpurf.sim.kernels import workload_names
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.config import load_config
from gpurf.synth.costs import cost_data
from gpurf.synth.flow import SRAM_TRANSISTORS_PER_BIT
from gpurf.synth.papers import paper_values

from .result import Comparison, Plot, Result, Series, Table

__all__ = ["FMA_RUNS", "rba_kernels", "reproduce"]

FMA_RUNS = (("fma_subcore/balanced", "rr"), ("fma_subcore/unbalanced", "rr"),
            ("fma_subcore/unbalanced", "srr"), ("fma_subcore/unbalanced", "shuffle"))
"""The FMA microbenchmark's variants and the sub-core assignments they run under."""



def rba_kernels() -> list[str]:
    """The kernels RBA and 4 CUs are compared on: every shipped workload but the FMA
    microbenchmark's layouts (which measure sub-core imbalance, Figs. 3-4)."""
    return [name for name in workload_names() if not name.startswith("fma_subcore")]

_WHY_AREA = ("the banks as 6T SRAM are {banks:.0%} of gpurf's transistors in (a) and the same "
             "in every design, so they dilute the logic's growth ({logic:+.1f} % in logic "
             "alone); the paper reports Genus area at 45 nm with OpenRAM banks, whose share "
             "it does not state")
_WHY_IMBALANCE = ("at size test each compute warp runs 64 FMAs, not 4,096, so the fixed "
                  "cycles of launch, barrier and the empty warps weigh more (size paper "
                  "runs the paper's 4,096)")
_WHY_CUS = ("with the calibrated collector (2-cycle turnaround, docs/sm.md) 2 CUs issue "
            "one instruction a cycle without conflicts, so 4 CUs help only where bank "
            "conflicts hold CUs (GTO's collector-full stalls: {full:.0f} % of sub-core "
            "cycles on average); the paper's 4.1 % is the average over its applications, "
            "the geometric mean here is over gpurf's {kernels} small kernels")
_WHY_SPEEDUP = ("gpurf's kernels are small and few are register-bank-bound; the paper's "
                "gains come from register-bound applications (cuGraph, Rodinia) gpurf does "
                "not have (docs/sm.md)")


def _fig13(papers) -> tuple[Table, Plot, list[Comparison]]:
    report = cost_data("subcore")
    rows = report.rows("fig13")
    units = report.tables["fig13"].units
    labels = [row["design"] for row in rows]
    plot = Plot("fig13", "Fig. 13: area over (a) GTO, 2 CUs", "% over (a)", labels,
                [Series(f"gpurf {what} transistors", "gpurf",
                        [row[f"{what} vs (a)"] for row in rows]) for what in ("total", "logic")]
                + [Series("paper area (Fig. 13)", "paper",
                          [row["paper (area)"] for row in rows])])
    banks = rows[0]["memory bits"] * SRAM_TRANSISTORS_PER_BIT / rows[0]["total transistors"]
    comparisons = [
        Comparison(key, round(row["total vs (a)"], 2), papers[key].value, "%", 0.5,
                   _WHY_AREA.format(banks=banks, logic=row["logic vs (a)"]))
        for key, row in (("fig13_rba_area", rows[1]), ("fig13_cus4_area", rows[2]))]
    table = Table("fig13", "Fig. 13: scheduler + operand collector + 2 RF banks per sub-core",
                  units, [{**row, "total vs (a)": round(row["total vs (a)"], 2),
                           "logic vs (a)": round(row["logic vs (a)"], 2)} for row in rows],
                  notes=["From `gpurf cost subcore` (its JSON: `gpurf cost subcore --json`)."])
    return table, plot, comparisons


def _timed(name: str, size: str, **config):
    run = run_kernel(name, size, timing=load_config(**config))
    if not run.passed:
        raise RuntimeError(f"{name} ({size}): outputs differ from the numpy reference")
    return run.stats["timing"]


def _fma(size: str, papers, say) -> tuple[Table, Plot, Comparison]:
    rows, base = [], None
    for name, assign in FMA_RUNS:
        say(f"subcore: {name} --assign {assign} ({size})")
        stats = _timed(name, size, assign=assign)
        base = base or stats.cycles
        rows.append({"variant": name.partition("/")[2], "assign": assign,
                     "cycles": stats.cycles, "IPC": round(stats.ipc, 3),
                     "issued per sub-core": list(stats.issued), "cv": round(stats.cv, 3),
                     "over balanced": round(stats.cycles / base, 3)})
    units = {"variant": "", "assign": "", "cycles": "", "IPC": "warp-instructions/cycle",
             "issued per sub-core": "warp instructions", "cv": "", "over balanced": "x"}
    labels = [f"{row['variant']} {row['assign']}" for row in rows]
    plot = Plot("fma_imbalance", f"FMA microbenchmark: warp instructions issued per sub-core "
                f"(V100 preset, GTO, size {size})", "warp instructions", labels,
                [Series(f"sub-core {i}", "gpurf",
                        [row["issued per sub-core"][i] for row in rows])
                 for i in range(len(rows[0]["issued per sub-core"]))])
    table = Table("fma_imbalance", "FMA microbenchmark: per-sub-core issue (Figs. 3-4)", units,
                  rows, notes=[f"`gpurf sm run fma_subcore/VARIANT --size {size} --assign A "
                               "--json` (stats.timing.issued)."])
    comparison = Comparison("fma_imbalance_a100", rows[1]["over balanced"],
                            papers["fma_imbalance_a100"].value, "x", 0.1, _WHY_IMBALANCE)
    return table, plot, comparison


def _speedup(rows, key) -> float:
    """Geometric-mean speedup in % of ``rows[key]`` (each a speedup in %)."""
    return round(100 * (geometric_mean(1 + r[key] / 100 for r in rows) - 1), 2)


def _rba(size: str, papers, say) -> tuple[Table, Plot, list[Comparison]]:
    rows, kernels = [], rba_kernels()
    for name in kernels:
        say(f"subcore: {name} GTO / RBA / GTO 4 CUs ({size})")
        stats = _timed(name, size, scheduler="gto")
        gto = stats.cycles
        rba = _timed(name, size, scheduler="rba").cycles
        cus4 = _timed(name, size, scheduler="gto", cus=4).cycles
        full = stats.stalls["collector_full"] / (gto * len(stats.issued))
        rows.append({"kernel": name, "GTO cycles": gto,
                     "GTO collector-full stalls": round(100 * full, 1), "RBA cycles": rba,
                     "RBA speedup": round(100 * (gto / rba - 1), 2),
                     "GTO 4 CUs cycles": cus4,
                     "4 CUs speedup": round(100 * (gto / cus4 - 1), 2)})
    units = {"kernel": "", "GTO cycles": "", "GTO collector-full stalls": "% of sub-core cycles",
             "RBA cycles": "", "RBA speedup": "%",
             "GTO 4 CUs cycles": "", "4 CUs speedup": "%"}
    plot = Plot("rba_vs_gto", f"Speedup over GTO, 2 CUs (V100 preset, size {size})", "%",
                kernels,
                [Series("RBA", "gpurf", [row["RBA speedup"] for row in rows]),
                 Series("GTO, 4 CUs", "gpurf", [row["4 CUs speedup"] for row in rows])],
                lines={"paper: RBA average (Fig. 10)": papers["rba_speedup"].value,
                       "paper: 4 CUs average (Fig. 12)": papers["cus4_speedup"].value})
    comparisons = [
        Comparison("rba_speedup", _speedup(rows, "RBA speedup"),
                   papers["rba_speedup"].value, "%", 1.0, _WHY_SPEEDUP),
        Comparison("cus4_speedup", _speedup(rows, "4 CUs speedup"),
                   papers["cus4_speedup"].value, "%", 1.0,
                   _WHY_CUS.format(full=mean(r["GTO collector-full stalls"] for r in rows),
                                   kernels=len(rows))),
    ]
    table = Table("rba_vs_gto", "RBA vs GTO (and GTO with 4 CUs) on the timing model", units,
                  rows, notes=[f"`gpurf sm run KERNEL --size {size} --scheduler gto|rba "
                               "[-p cus=4]`; speedup = GTO cycles / cycles - 1; averages "
                               "are geometric means of GTO cycles / cycles over the "
                               "kernels."])
    return table, plot, comparisons


def reproduce(size: str, *, say: Callable[[str], None] = lambda _: None) -> Result:
    """Fig. 13 (synthesis: the same at both sizes), then the kernels at ``size``."""
    papers = paper_values("subcore")
    say("subcore: Fig. 13 (synthesis of three issue stages)")
    fig13_table, fig13_plot, area = _fig13(papers)
    fma_table, fma_plot, imbalance = _fma(size, papers, say)
    rba_table, rba_plot, speedups = _rba(size, papers, say)
    return Result("subcore", size, papers, [fig13_table, fma_table, rba_table],
                  [fig13_plot, fma_plot, rba_plot], [*area, imbalance, *speedups])

