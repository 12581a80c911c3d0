"""Static data compression: registers per thread saved per kernel by the compression pass
(the paper's Table 1 / Fig. 9 analog, ``gpurf compile --table --pass compression``) and
Section 6.4's transistor estimates beside gpurf's synthesis (``gpurf cost compression``)."""

from collections.abc import Callable

from gpurf.sim.compile import pressure_table
from gpurf.synth.costs import cost_data
from gpurf.synth.papers import paper_values

from .result import Comparison, Plot, Result, Series, Table

__all__ = ["TOLERANCE", "reproduce"]

TOLERANCE = 0.25
"""A synthesized unit matches the paper's hand estimate within this fraction of it."""

_REGISTER_UNITS = {"kernel": "", "before": "registers", "ints": "registers",
                   "both perfect": "registers", "both high": "registers",
                   "saved, perfect": "registers", "saved, high": "registers",
                   "format, high": ""}


def _register_rows(size: str, say, kernels) -> list[dict]:
    say(f"compression: the compression pass over the kernels ({size})")
    rows = []
    for row in pressure_table(kernels, size=size):
        rows.append({"kernel": row["workload"], "before": row["before"], "ints": row["ints"],
                     "both perfect": row["both_perfect"], "both high": row["both_high"],
                     "saved, perfect": row["before"] - row["both_perfect"],
                     "saved, high": row["before"] - row["both_high"],
                     "format, high": row["format_high"]})
    return rows


def _register_plot(rows: list[dict], papers) -> Plot:
    """gpurf's kernels, then the paper's IMGVF (Table 1) as the paper's series."""
    columns = ("before", "both perfect", "both high")
    paper = {"before": papers["imgvf_before"].value,
             "both perfect": papers["imgvf_both_perfect"].value}
    gpurf = [Series(column, "gpurf", [row[column] for row in rows] + [None])
             for column in columns]
    return Plot("registers", "Registers per thread before and after compression", "registers",
                [row["kernel"] for row in rows] + ["IMGVF (paper, Table 1)"],
                [*gpurf, *(Series(f"paper: {column}", "paper",
                                  [None] * len(rows) + [paper[column]])
                           for column in paper)])


def _units(papers) -> tuple[Table, Plot, list[Comparison]]:
    report = cost_data("compression")
    rows = report.rows("units")
    plot = Plot("section_6_4", "Section 6.4: transistors per unit", "transistors",
                [row["key"] for row in rows],
                [Series("gpurf", "gpurf", [row["gpurf"] for row in rows]),
                 Series("paper", "paper", [row["paper"] for row in rows])], log=True)
    comparisons = [Comparison(row["key"], row["gpurf"], row["paper"], "transistors",
                              round(TOLERANCE * row["paper"]),
                              f"gpurf synthesizes its RTL ({row['note']}); the paper's "
                              "figure is a hand estimate") for row in rows]
    total = sum(row["gpurf per SM"] for row in rows)
    comparisons.append(Comparison("total", total, papers["total"].value, "transistors per SM",
                                  round(TOLERANCE * papers["total"].value),
                                  "the sum of the units' differences"))
    table = Table("section_6_4", "Section 6.4: transistors per unit", report.tables["units"].units,
                  rows, notes=["From `gpurf cost compression` (JSON: `gpurf cost compression "
                               "--json`)."])
    return table, plot, comparisons


def reproduce(size: str, *, say: Callable[[str], None] = lambda _: None,
              kernels: list[str] | None = None) -> Result:
    """The pass over every kernel at launch size ``size`` (range analysis), and Section
    6.4's synthesis (the same at both sizes)."""
    papers = paper_values("compression")
    rows = _register_rows(size, say, kernels)
    say("compression: Section 6.4 synthesis (gpurf cost compression)")
    units_table, units_plot, comparisons = _units(papers)
    registers = Table("registers", "Registers per thread saved by the compression pass",
                      _REGISTER_UNITS, rows,
                      notes=[f"`gpurf compile --table --pass compression` (its launch size is "
                             f"paper; here {size}). perfect: no output change; high: within "
                             "10 %. The paper's kernels are not gpurf's: its one stated pair "
                             "(IMGVF, Table 1: 52 -> 29 registers) is drawn beside, not "
                             "compared."])
    return Result("compression", size, papers, [registers, units_table],
                  [_register_plot(rows, papers), units_plot], comparisons)
