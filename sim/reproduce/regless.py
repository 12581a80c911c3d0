"""RegLess: Fig. 11, the area of OSU capacities normalized to the 2048-entry register file
(``gpurf cost regless``). The paper gives Fig. 11 as a plot without numbers; its text says
logic and storage grow with capacity, which is checked here on gpurf's rows."""

from collections.abc import Callable
from dataclasses import replace
from itertools import pairwise

from gpurf.synth.regless import FIG11, PAPER_STATEMENT, fig11_report, fig11_rows

from .result import Plot, Result, Series, Table

__all__ = ["SETUPS", "reproduce"]

SETUPS = {"test": replace(FIG11, osu_lines=(32, 64, 128)), "paper": FIG11}
"""Per ``--size``: the OSU lines per shard synthesized. ``test`` keeps the design point
(128 lines per shard, 512 registers per SM) and two smaller capacities, leaving out the 256
and 512-line OSUs that take ABC the longest; ``paper`` is all six of Fig. 11."""

_RATIOS = ("total transistors", "logic transistors", "memory bits")


def _grows(rows: list[dict], figure: str) -> bool:
    osu = sorted((row for row in rows if row["role"] in ("osu", "design")),
                 key=lambda row: row["registers per SM"])
    return all(a[figure] < b[figure] for a, b in pairwise(osu))


def reproduce(size: str, *, say: Callable[[str], None] = lambda _: None) -> Result:
    """Fig. 11's rows for ``size``'s capacities (:data:`SETUPS`), each said as it is
    synthesized."""
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
    return Result("regless", size, report.papers, [table], [plot], [], notes=notes)
