"""The README's synthesis figures against a fresh synthesis with the installed tools.

The README says its figures are exact for the pinned tool versions (``constraints.txt``);
these tests re-synthesize every figure it quotes: each number of a ``gpurf cost`` table must
appear in that command's report, and each figure quoted in prose must equal the synthesis
field it names. A README that drifts from the RTL, or a yosys that maps differently, fails
here.
"""

import re
from pathlib import Path

import pytest

from gpurf.hw.registry import get_block
from gpurf.synth.costs import cost_report
from gpurf.synth.flow import synthesize

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()

NUMBER = re.compile(r"(?<![\w.])[+-]?\d[\d,]*(?:\.\d+)?%?")


PROSE_TEXT = " ".join(README.split())
"""The README with its line breaks undone, so a quoted phrase may wrap."""


def _quoted_table(command: str) -> list[str]:
    """The body rows of the first Markdown table after the paragraph opening with
    ``command``."""
    lines = README.split(f"`{command}` —", 1)[1].splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("|"))
    table = []
    for line in lines[first:]:
        if not line.startswith("|"):
            break
        table.append(line)
    return table[2:]


def _unreported(row: str, report: str) -> list[str]:
    """The numbers of a README table row (after its first cell) that ``report`` lacks."""
    reported = set(NUMBER.findall(report))
    return [n for n in NUMBER.findall(row.split("|", 2)[2]) if n not in reported]


@pytest.fixture(scope="module")
def reports():
    return {}


def _report(reports, mechanism):
    if mechanism not in reports:
        reports[mechanism] = cost_report(mechanism)
    return reports[mechanism]


@pytest.mark.parametrize("mechanism", ["subcore", "compression"])
def test_cost_table_numbers_come_from_the_cost_report(reports, mechanism):
    rows = _quoted_table(f"gpurf cost {mechanism}")
    assert rows, f"README quotes no table of `gpurf cost {mechanism}`"
    for row in rows:
        missing = _unreported(row, _report(reports, mechanism))
        assert not missing, f"README row {row!r}: {missing} not in `gpurf cost {mechanism}`"


def test_a_drifted_table_figure_is_caught(reports):
    row = _quoted_table("gpurf cost subcore")[0]
    assert _unreported(row, _report(reports, "subcore")) == []
    assert _unreported(row.replace("54,787", "54,788"), _report(reports, "subcore")) == \
        ["54,788"]


PROSE = [
    ("subcore.warp_selector", {}, "logic_depth", "its depth is {} gate levels under RBA"),
    ("subcore.warp_selector", {"policy": "gto"}, "logic_depth", "and {} under GTO"),
    ("greener.correction_table", {}, "memory_bits", "run-time correction table {} memory bits"),
    ("greener.scoreboard_ext", {}, "memory_bits", "scoreboard extension {} bits"),
    ("greener.power_controller", {"warps": 2}, "transistors", "{} logic transistors at 2 warps"),
    ("greener.power_controller", {"warps": 4}, "transistors", "transistors at 2 warps, {} at 4"),
]
"""Figures the README quotes in prose: block, parameters, synthesis field, the phrase."""


@pytest.mark.parametrize(("name", "params", "field", "phrase"), PROSE,
                         ids=[f"{n}-{f}-{'-'.join(map(str, p.values())) or 'defaults'}"
                              for n, p, f, _ in PROSE])
def test_prose_figure_equals_a_fresh_synthesis(name, params, field, phrase):
    value = synthesize(get_block(name), params).as_dict()[field]
    assert phrase.format(f"{value:,}") in PROSE_TEXT, (
        f"README should quote {field} = {value:,} of {name} {params} as {phrase!r}")
