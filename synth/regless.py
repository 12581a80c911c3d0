"""RegLess's Fig. 11: area of OSU capacities normalized to a 2048-entry register file;
``gpurf cost regless``.

:func:`cost_report` synthesizes (:func:`gpurf.synth.flow.synthesize`) the OSU of one shard at
32, 64, 96, 128, 256 and 512 lines (128 ... 2048 registers per SM, 4 shards, 8 banks), the
baseline banked register file of one shard at 512 entries (2048 per SM) and the compressor
at its defaults, and prints the figures per SM (one shard's x 4), each also as a ratio to the
register file's. Memories stay unmapped and count 6 transistors per bit (``shared/spec``);
"logic cells" are the cells of the ``abc -g cmos2`` netlist without the memories.

The paper (6.2) gives Fig. 11 only as a plot; its text says that logic and storage area
grow with capacity and that 512 registers is its design. No numbers to compare against.
"""

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpurf.hw.registry import get_block

from .costs import CostReport, table
from .flow import SynthReport, synthesize
from .papers import paper_values

__all__ = ["FIG11", "PAPER_STATEMENT", "Fig11Row", "Fig11Setup", "cost_data", "cost_markdown",
           "cost_report", "fig11_data", "fig11_report", "fig11_rows", "fig11_table",
           "format_report"]

PAPER_STATEMENT = (
    "Paper (6.2, Fig. 11 \"Area for RegLess configurations, normalized to 2048-entry "
    "baseline RF\"): \"Both logic and storage area scales with the capacity, as more logic "
    "is needed for tags and decoding.\" \"Because of the added tag and compressor logic, the "
    "RegLess designs require slightly more energy and power than the baseline register file "
    "scaled to their capacity.\" The 512-register version is the design used in the rest of "
    "the paper. Fig. 11 is given only as a plot: the paper states no numbers.")


@dataclass(frozen=True)
class Fig11Setup:
    """What the report synthesizes: OSU line counts per shard, the register file's entries
    per shard, the shard count, the design point (lines per shard), and parameter overrides
    shared by the OSU and the register file (``common``) and of the compressor (so tests can
    run tiny configurations)."""

    osu_lines: tuple[int, ...] = (32, 64, 96, 128, 256, 512)
    rf_entries: int = 512
    shards: int = 4
    design_lines: int = 128
    common: dict[str, Any] = field(default_factory=dict)
    """Overrides of ``lanes``, ``data_width``, ``warps`` (and ``banks``) for both designs."""
    osu: dict[str, Any] = field(default_factory=dict)
    """Further overrides of the OSU only (e.g. ``regs``)."""
    compressor: dict[str, Any] = field(default_factory=dict)


FIG11 = Fig11Setup()
"""The paper's configurations: 4 shards of 16 warps, 32 x 32-bit registers, 8 banks."""


@dataclass(frozen=True)
class Fig11Row:
    """One design's figures for one shard, with its capacity and synthesis time."""

    label: str
    registers: int
    """Registers (OSU lines, register-file entries) of one shard; 0 for the compressor."""
    report: SynthReport
    seconds: float

    @property
    def logic_cells(self) -> int:
        return self.report.cells - sum(n for cell, n in self.report.cells_by_type.items()
                                       if cell.startswith("$mem"))

    def figures(self, shards: int) -> dict[str, int]:
        """Logic cells, logic transistors, ff bits, memory bits and total transistors of
        ``shards`` instances."""
        r = self.report
        return {"logic cells": shards * self.logic_cells,
                "logic transistors": shards * r.logic_transistors,
                "ff bits": shards * r.ff_bits,
                "memory bits": shards * r.memory_bits,
                "total transistors": shards * r.transistors}


def fig11_rows(setup: Fig11Setup = FIG11, root: Path | None = None,
               synth: Callable[..., SynthReport] = synthesize) -> Iterator[Fig11Row]:
    """Synthesize the register file, the compressor, then the OSU capacities (smallest
    first), yielding each row as soon as it is measured."""
    jobs = [("register file", "regless.banked_rf", setup.rf_entries,
             {**setup.common, "entries": setup.rf_entries}),
            ("compressor", "regless.compressor", 0, dict(setup.compressor))]
    jobs += [(f"OSU {lines} lines", "regless.osu", lines,
              {**setup.common, **setup.osu, "lines": lines}) for lines in setup.osu_lines]
    for label, name, registers, params in jobs:
        start = time.monotonic()
        report = synth(get_block(name), params, root=root)
        yield Fig11Row(label, registers, report, time.monotonic() - start)


_FIGURES = {"logic cells": "cells", "logic transistors": "transistors", "ff bits": "bits",
            "memory bits": "bits", "total transistors": "transistors"}
"""Each row's figures (per SM) and their units."""


def _cell(value: int, base: int) -> str:
    return f"{value:,} ({value / base:.2f})" if base else f"{value:,}"


def _fig11_units() -> dict[str, str]:
    ratios = {f"{name} ratio": "" for name in _FIGURES}
    return {"design": "", "role": "", "registers per shard": "registers",
            "registers per SM": "registers", **_FIGURES, **ratios, "synthesis s": "s"}


def _role(row: Fig11Row, setup: Fig11Setup) -> str:
    if row.label.startswith("OSU"):
        return "design" if row.registers == setup.design_lines else "osu"
    return "baseline" if row.label == "register file" else row.label


def fig11_data(rows: list[Fig11Row], setup: Fig11Setup = FIG11) -> list[dict]:
    """``rows`` as data: per SM (one shard's figures x ``setup.shards``), each figure's ratio
    to the register file's, the row's role (``baseline``, ``compressor``, ``osu`` or the
    paper's ``design``)."""
    n = setup.shards
    base = next(row for row in rows if row.label == "register file").figures(n)
    out = []
    for row in rows:
        figures = row.figures(n)
        out.append({"design": row.label, "role": _role(row, setup),
                    "registers per shard": row.registers, "registers per SM": n * row.registers,
                    **figures,
                    **{f"{k} ratio": round(figures[k] / base[k], 4) if base[k] else None
                       for k in _FIGURES},
                    "synthesis s": round(row.seconds, 1)})
    return out


def fig11_table(rows: list[Fig11Row], setup: Fig11Setup = FIG11) -> list[str]:
    """The Markdown table of ``rows`` (one shard's figures x ``setup.shards``), every figure
    with its ratio to the register file's in parentheses."""
    return _fig11_lines(fig11_data(rows, setup))


def _fig11_lines(data: list[dict]) -> list[str]:
    base = next(row for row in data if row["role"] == "baseline")
    names = list(_FIGURES)
    lines = ["| design | registers per SM | " + " | ".join(names) + " | synthesis s |",
             "|---|---|" + "---|" * len(names) + "---|"]
    for row in data:
        label = row["design"]
        if row["role"] == "design":
            label = f"**{label} (paper's design)**"
        elif row["role"] == "baseline":
            label = f"{label} {row['registers per shard']} entries (baseline)"
        registers = f"{row['registers per SM']:,}" if row["registers per SM"] else "-"
        lines.append(f"| {label} | {registers} | "
                     + " | ".join(_cell(row[k], base[k]) for k in names)
                     + f" | {row['synthesis s']:.0f} |")
    return lines


def cost_data(root: Path | None = None, setup: Fig11Setup = FIG11) -> CostReport:
    """``gpurf cost regless`` as data (minutes: the large OSUs take long in ABC)."""
    return fig11_report(list(fig11_rows(setup, root)), setup)


def fig11_report(rows: list[Fig11Row], setup: Fig11Setup = FIG11) -> CostReport:
    """The report of measured ``rows``."""
    compressor = next(row for row in rows if row.label == "compressor")
    return CostReport(
        mechanism="regless",
        tables={"fig11": table("fig11", _fig11_units(), fig11_data(rows, setup))},
        papers=paper_values("regless"),
        figures={"shards": {"value": setup.shards, "unit": "shards per SM"},
                 "register file entries": {"value": setup.shards * setup.rf_entries,
                                           "unit": "registers per SM"},
                 **{f"compressor {k}": {"value": v, "unit": _FIGURES[k]}
                    for k, v in compressor.figures(1).items()}})


def cost_markdown(report: CostReport) -> str:
    """The Markdown of ``gpurf cost regless``."""
    shards = report.figures["shards"]["value"]
    one = {k: report.figures[f"compressor {k}"]["value"] for k in _FIGURES}
    return "\n".join([
        f"## Fig. 11: area per SM ({shards} shards), normalized to the "
        f"{report.figures['register file entries']['value']}-entry register file",
        "",
        f"Each figure is one shard's synthesis x {shards}; in parentheses its ratio to "
        "the register file's. Total transistors = logic (`stat -tech cmos`, flip-flops "
        "included) + 6 per memory bit.",
        "",
        *_fig11_lines(report.rows("fig11")),
        "",
        f"The compressor of one shard alone: {one['logic cells']:,} logic cells, "
        f"{one['logic transistors']:,} logic transistors, {one['ff bits']:,} ff bits, "
        f"{one['memory bits']:,} memory bits, {one['total transistors']:,} transistors. "
        "The paper's RegLess area includes the \"tag and compressor logic\": an OSU row "
        "plus the compressor row is a RegLess configuration.",
        "",
        PAPER_STATEMENT,
    ])


def cost_report(root: Path | None = None, setup: Fig11Setup = FIG11) -> str:
    """The Markdown report of ``gpurf cost regless``."""
    return cost_markdown(cost_data(root, setup))


def format_report(rows: list[Fig11Row], setup: Fig11Setup = FIG11) -> str:
    """The report's Markdown from measured ``rows``."""
    return cost_markdown(fig11_report(rows, setup))
