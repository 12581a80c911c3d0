"""WIR: storage per structure beside Section VII-E's, and the H3 hash's XOR2 depth
(``gpurf cost wir``)."""

from collections.abc import Callable

from gpurf.synth.costs import cost_data
from gpurf.synth.wir import PAPER_BITS

from .result import Comparison, Plot, Result, Series, Table

__all__ = ["reproduce"]

_WHY_BITS = "gpurf's entry layout differs from the paper's for this structure"
_WHY_DEPTH = ("gpurf's hash is a balanced XOR2 tree per output bit (its depth: the widest "
              "bit's inputs, log2); the paper counts 13 XOR2 in its critical path without "
              "saying how its gates are arranged")


def reproduce(size: str, *, say: Callable[[str], None] = lambda _: None) -> Result:
    """Synthesis of every WIR block at its defaults (the same at both sizes)."""
    say("wir: synthesis of every WIR block (gpurf cost wir)")
    report = cost_data("wir")
    papers = report.papers
    storage = report.tables["storage"]
    rows = storage.rows
    labels = [row["structure"] for row in rows]
    plot = Plot("storage", "Storage per SM (Section VII-E)", "bits", labels,
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
    return Result("wir", size, papers, tables, [plot], comparisons)
