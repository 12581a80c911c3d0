"""Static data compression report: the paper's Section 6.4 transistor estimates beside ours.

Each row synthesizes gpurf's RTL at the paper's unit: thread-level units (extractor,
converter, truncator) as one-lane blocks (``lanes=1``, so the shared select/format logic is
charged to the one thread: an upper bound; the 32-lane warp unit divided by 32 is given
beside it for the extractor), the indirection table as 6T SRAM bits (its arbiter and result
registers, which the paper does not count, in a separate row), and the CU extension as its
shared OR-merge datapath plus 35 bits of fields per operand (the fields are flip-flops in
gpurf; the paper counts them as SRAM: ``35 x 3 x 6``).

The SM total counts the paper's units (16 warp extractors, 6 warp converters, 3 warp
truncators, 2 tables, 16 CUs) with the select and format logic a warp unit's lanes share
counted once per warp unit, not once per lane: each warp unit is synthesized as one
32-lane block (``lanes=32``; minutes of synthesis the first time, cached after).
"""

from dataclasses import dataclass
from pathlib import Path

from gpurf.hw.compression.collector_ext import CollectorExtConfig, OperandMerge
from gpurf.hw.compression.indirection_table import DESTINATION, IndirectionTable
from gpurf.hw.compression.layouts import THREAD_BITS
from gpurf.hw.compression.value_converter import ValueConverter
from gpurf.hw.compression.value_extractor import ThreadValueExtractor, ValueExtractor
from gpurf.hw.compression.value_truncator import ValueTruncator
from gpurf.sim.verilog import BUILD_ROOT

from .costs import CostReport, table
from .flow import SRAM_TRANSISTORS_PER_BIT, SynthReport, synthesize_design
from .papers import paper_values

__all__ = ["PAPER", "PAPER_KEYS", "SM_COUNTS", "Row", "cost_data", "cost_markdown", "cost_report",
           "rows"]

LANES = 32

PAPER_KEYS = ("extractor", "converter", "truncator", "table", "cu", "total")
"""Section 6.4's estimates in ``synth/papers/compression.toml``: TVE 1,536 (8 x 9:1 mux x 4
bits) + 24 (2:1 pad mux); converter ~1,300; truncator 1 x 1,300 + 2 x 2,048 = 5,396; table
256 x 32 x 6T; CU 1024 x 6 + 35 x 3 x 6; about 1.8 M per SM."""

PAPER = {key: int(paper_values("compression")[key].value) for key in PAPER_KEYS}
"""The estimates by key, in transistors."""

SM_COUNTS = {"extractor": 16 * LANES, "converter": 6 * LANES, "truncator": 3 * LANES,
             "table": 2, "cu": 16}
"""Units per SM (Section 6.4): thread units per warp unit x warp units, tables, CUs."""


@dataclass(frozen=True)
class Row:
    """One structure: our transistors per paper unit, the paper's, and how we got ours."""

    key: str
    label: str
    ours: int
    paper: int | None
    note: str
    per_sm: int = 0
    """gpurf's transistors per SM (shared logic once per warp unit)."""


def _synth(design, name: str, root: Path | None) -> SynthReport:
    folder = (root or BUILD_ROOT).resolve() / "reports" / "compression" / name
    return synthesize_design(design, name=f"compression.{name}", top=f"compression_{name}",
                             folder=folder)


def rows(root: Path | None = None) -> tuple[list[Row], dict[str, SynthReport]]:
    """The comparison rows and the synthesis reports behind them."""
    reports = {
        "extractor": _synth(ValueExtractor(lanes=1), "value_extractor_1", root),
        "extractor_warp": _synth(ValueExtractor(lanes=LANES), "value_extractor_32", root),
        "tve": _synth(ThreadValueExtractor(), "thread_value_extractor", root),
        "converter": _synth(ValueConverter(lanes=1), "value_converter_1", root),
        "converter_warp": _synth(ValueConverter(lanes=LANES), "value_converter_32", root),
        "truncator": _synth(ValueTruncator(lanes=1), "value_truncator_1", root),
        "truncator_warp": _synth(ValueTruncator(lanes=LANES), "value_truncator_32", root),
        "table": _synth(IndirectionTable(), "indirection_table_source", root),
        "table_dst": _synth(IndirectionTable(**DESTINATION), "indirection_table_dest", root),
        "merge": _synth(OperandMerge(LANES), "operand_merge", root),
    }
    config = CollectorExtConfig(operands=3, lanes=LANES)
    field_bits = config.operands * config.field_bits
    r = reports
    warp = {key: r[f"{key}_warp"].logic_transistors
            for key in ("extractor", "converter", "truncator")}
    cu = r["merge"].logic_transistors + field_bits * SRAM_TRANSISTORS_PER_BIT
    warp_units = {key: SM_COUNTS[key] // LANES for key in warp}
    out = [
        Row("extractor", "thread value extractor (lanes=1, incl. select logic)",
            r["extractor"].logic_transistors, PAPER["extractor"],
            f"warp unit / 32 = {r['extractor_warp'].logic_transistors / LANES:,.0f}; "
            f"TVE muxes alone {r['tve'].logic_transistors:,}",
            warp["extractor"] * warp_units["extractor"]),
        Row("converter", "thread value converter (lanes=1, all Table 3 formats)",
            r["converter"].logic_transistors, PAPER["converter"],
            f"RNE, NaN payloads kept; warp unit {warp['converter']:,}",
            warp["converter"] * warp_units["converter"]),
        Row("truncator", "thread value truncator (lanes=1, all Table 3 formats)",
            r["truncator"].logic_transistors, PAPER["truncator"],
            f"with 2 slice scatters; warp unit {warp['truncator']:,}",
            warp["truncator"] * warp_units["truncator"]),
        Row("table", "indirection table storage (256 x 32 bits, 6T)",
            r["table"].sram_transistors, PAPER["table"],
            f"{r['table'].memory_bits:,} memory bits in {r['table'].memories['count']} banks",
            r["table"].sram_transistors * SM_COUNTS["table"]),
        Row("cu", "CU extension (OR merge + sign fill + 3 x 35 field bits as 6T)",
            cu, PAPER["cu"],
            f"merge datapath {r['merge'].logic_transistors:,} + {field_bits} bits x 6",
            cu * SM_COUNTS["cu"]),
    ]
    return out, reports


_UNIT_UNITS = {"key": "", "structure": "", "gpurf": "transistors", "paper": "transistors",
               "gpurf / paper": "", "per SM": "units", "gpurf per SM": "transistors",
               "paper per SM": "transistors", "note": ""}


def _unit_rows(table_rows: list[Row]) -> list[dict]:
    return [{"key": row.key, "structure": row.label, "gpurf": row.ours, "paper": row.paper,
             "gpurf / paper": round(row.ours / row.paper, 4), "per SM": SM_COUNTS[row.key],
             "gpurf per SM": row.per_sm,
             "paper per SM": row.paper * SM_COUNTS[row.key], "note": row.note}
            for row in table_rows]


def _uncounted_rows(reports: dict[str, SynthReport]) -> list[dict]:
    r = reports
    return [
        {"structure": "source table arbiter, result registers (16 ports)",
         "logic transistors": r["table"].logic_transistors, "ff bits": r["table"].ff_bits,
         "note": "tag_width 8"},
        {"structure": "destination table logic incl. conflict buffer (3 ports x 1 entry)",
         "logic transistors": r["table_dst"].logic_transistors,
         "ff bits": r["table_dst"].ff_bits,
         "note": f"tag_width 8; the paper's buffer entry would carry a "
                 f"{LANES * THREAD_BITS}-bit warp register"},
    ]


def cost_data(root: Path | None = None) -> CostReport:
    """``gpurf cost compression`` as data."""
    table_rows, reports = rows(root)
    r = reports
    return CostReport(
        mechanism="compression",
        tables={"units": table("units", _UNIT_UNITS, _unit_rows(table_rows)),
                "uncounted": table("uncounted", {"structure": "",
                                                 "logic transistors": "transistors",
                                                 "ff bits": "bits", "note": ""},
                                   _uncounted_rows(reports))},
        papers=paper_values("compression"),
        figures={"tve logic depth": {"value": r["tve"].logic_depth, "unit": "gate levels"},
                 "extractor logic depth": {"value": r["extractor"].logic_depth,
                                           "unit": "gate levels"},
                 "warp extractor logic depth": {"value": r["extractor_warp"].logic_depth,
                                                "unit": "gate levels"}})


def cost_markdown(report: CostReport) -> str:
    """The Markdown of ``gpurf cost compression``."""
    units = report.rows("units")
    lines = [
        "## Section 6.4: transistors per unit (`stat -tech cmos`; SRAM = 6T per bit)",
        "",
        "| structure | gpurf | paper | gpurf / paper | per SM (count) | gpurf per SM "
        "| paper per SM | note |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in units:
        lines.append(f"| {row['structure']} | {row['gpurf']:,} | {row['paper']:,} | "
                     f"{row['gpurf'] / row['paper']:.2f} | {row['per SM']} | "
                     f"{row['gpurf per SM']:,} | {row['paper per SM']:,} | {row['note']} |")
    total = sum(row["gpurf per SM"] for row in units)
    paper_total = sum(row["paper per SM"] for row in units)
    lines.append(f"| **total per SM** | | | {total / paper_total:.2f} | | **{total:,}** | "
                 f"**{paper_total:,}** (paper: ~{int(report.papers['total'].value):,}) | |")
    figures = {name: figure["value"] for name, figure in report.figures.items()}
    lines += [
        "",
        "## Not counted by the paper (separate rows)",
        "",
        "| structure | logic transistors | ff bits | note |",
        "|---|---|---|---|",
        *(f"| {row['structure']} | {row['logic transistors']:,} | {row['ff bits']} | "
          f"{row['note']} |" for row in report.rows("uncounted")),
        "",
        "## Value extractor logic depth (paper: one multiplexer level)",
        "",
        f"- TVE alone (select lines as inputs): {figures['tve logic depth']} gate levels "
        "(`AND,NAND,OR,NOR,XOR,XNOR,MUX` mapping): the data path is one 9:1 AND-OR "
        "multiplexer; the sign path adds the top-bit select and the pad mux",
        f"- extractor incl. the mask decode (lanes=1): {figures['extractor logic depth']} "
        f"levels; warp unit (lanes=32): {figures['warp extractor logic depth']} levels",
    ]
    return "\n".join(lines)


def cost_report(root: Path | None = None) -> str:
    """The Markdown report of ``gpurf cost compression``."""
    return cost_markdown(cost_data(root))
