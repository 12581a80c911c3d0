"""``gpurf cost regless`` (Fig. 11) on tiny configurations: the rows, their storage and the
normalization to the register file (the full report synthesizes for many minutes)."""

import re

import pytest

from gpurf.hw.regless.configs import BankedRfConfig, OsuConfig
from gpurf.synth.costs import has_cost_report
from gpurf.synth.regless import FIG11, Fig11Setup, fig11_rows, format_report

TINY = Fig11Setup(osu_lines=(4, 8), rf_entries=16, shards=4, design_lines=4,
                  common={"lanes": 2, "data_width": 4, "warps": 2, "banks": 2},
                  osu={"regs": 4},
                  compressor={"lanes": 4, "data_width": 8, "warps": 2, "regs": 4, "lines": 2})


@pytest.fixture(scope="module")
def rows():
    return list(fig11_rows(TINY))


def test_report_is_registered():
    assert has_cost_report("regless")


def test_paper_configurations():
    """128 ... 2048 OSU lines per SM over 4 shards of 8 banks; a 2048-entry register file;
    the design point is 512 registers per SM."""
    assert [FIG11.shards * lines for lines in FIG11.osu_lines] == [128, 256, 384, 512, 1024,
                                                                  2048]
    assert FIG11.shards * FIG11.rf_entries == 2048
    assert FIG11.shards * FIG11.design_lines == 512
    for lines in FIG11.osu_lines:
        OsuConfig(lines=lines, banks=8, warps=16, regs=64, lanes=32, data_width=32)


def test_storage_bits(rows):
    """Memory bits: lines (entries) x lanes x data_width; the OSU's tags (per line
    ``warp_bits + reg_bits``) are flip-flops, so its ff bits hold at least them."""
    by_label = {row.label: row for row in rows}
    rf = by_label["register file"].report
    assert rf.memory_bits == 16 * 2 * 4 == BankedRfConfig(
        entries=16, banks=2, warps=2, lanes=2, data_width=4).data_bits
    for lines in TINY.osu_lines:
        report = by_label[f"OSU {lines} lines"].report
        assert report.memory_bits == lines * 2 * 4
        assert report.ff_bits >= lines * (1 + 2)
    compressor = by_label["compressor"].report
    assert compressor.memory_bits == 2 * 4 * 8


def test_normalization(rows):
    """Every figure is one shard's x 4 with its ratio to the register file's; the register
    file's ratios are 1.00; the design row is marked."""
    text = format_report(rows, TINY)
    table = [line for line in text.splitlines() if line.startswith("| ")]
    header = [cell.strip() for cell in table[0].strip("|").split("|")]
    assert header[2:7] == ["logic cells", "logic transistors", "ff bits", "memory bits",
                           "total transistors"]
    base = rows[0].figures(1)
    for row, line in zip(rows, table[1:], strict=True):
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        for name, cell in zip(header[2:7], cells[2:7], strict=True):
            value, ratio = re.fullmatch(r"([\d,]+) \(([\d.]+)\)", cell).groups()
            assert int(value.replace(",", "")) == 4 * row.figures(1)[name]
            assert float(ratio) == pytest.approx(row.figures(1)[name] / base[name], abs=0.006)
        if row.label == "register file":
            assert cells[1] == "64"
            assert all(cell.endswith("(1.00)") for cell in cells[2:7])
    assert "**OSU 4 lines (paper's design)**" in text
    assert "only as a plot" in text and "Both logic and storage area scales" in text


def test_osu_grows_with_capacity(rows):
    """Fig. 11's statement holds in the tiny sweep: more lines, more logic and storage."""
    small, large = (row.report for row in rows if row.label.startswith("OSU"))
    assert large.logic_transistors > small.logic_transistors
    assert large.memory_bits == 2 * small.memory_bits
