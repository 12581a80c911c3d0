"""Markdown tables of synthesis reports."""

from collections.abc import Sequence

from .flow import SynthReport

__all__ = ["markdown_table"]

_COLUMNS = ("design", "cells", "logic transistors", "ff bits", "memory bits",
            "SRAM transistors (6T)", "transistors", "logic depth")


def markdown_table(reports: Sequence[SynthReport]) -> str:
    """One row per report, in the order given."""
    rows = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    for r in reports:
        design = r.design
        if r.overrides:
            design += " (" + ", ".join(f"{k}={v}" for k, v in r.overrides.items()) + ")"
        cells = (design, r.cells, r.logic_transistors, r.ff_bits, r.memory_bits,
                 r.sram_transistors, r.transistors, r.logic_depth)
        rows.append("| " + " | ".join(f"{c:,}" if isinstance(c, int) else c for c in cells)
                    + " |")
    return "\n".join(rows)
