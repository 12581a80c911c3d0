"""``gpurf reproduce compression`` (sim/reproduce/compression.py): which kernels it runs, and
a one-kernel result that follows the schema, with its geometric means and its comparisons
beside the paper's Figs. 10-11 (Section 6.4's synthesis is stubbed: tests/test_compression_cost.py
and ``gpurf cost compression`` cover it)."""

import math

import pytest

from gpurf.sim.reproduce import compression, write_results
from gpurf.sim.reproduce.result import Plot, Series, Table
from gpurf.sim.reproduce.schema import problems


def test_register_bound_kernels_at_the_paper_size():
    chosen = [name.partition("/")[0] for name in
              compression.register_bound(compression.fermi(), "paper")]
    assert "imgvf" in chosen and "hotspot" in chosen
    assert "lud" not in chosen, "one-warp blocks are block-limited at 8 blocks per SM"
    assert "saxpy" not in chosen


def test_geometric_mean_gain():
    rows = [{"ipc": 1.0, "high": {"ipc": 2.0}}, {"ipc": 2.0, "high": {"ipc": 1.0}}]
    assert compression._geomean_gain(rows, "high") == 0.0
    rows = [{"ipc": 1.0, "high": {"ipc": 1.21}}, {"ipc": 1.0, "high": {"ipc": 1.0}}]
    assert compression._geomean_gain(rows, "high") == pytest.approx(10.0)


@pytest.fixture(scope="module")
def hotspot(tmp_path_factory):
    stub = (Table("section_6_4", "stub", {"key": ""}, [{"key": "x"}]),
            Plot("section_6_4", "stub", "transistors", ["x"], [Series("gpurf", "gpurf", [1])]),
            [])
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(compression, "_units", lambda papers: stub)
        result = compression.reproduce("test", kernels=["hotspot"])
    folder = tmp_path_factory.mktemp("compression")
    return result, write_results(result, folder)


def test_one_kernel_result_follows_the_schema(hotspot):
    _, document = hotspot
    assert problems(document) == []
    names = [t["name"] for t in document["tables"]]
    assert names[:4] == ["registers", "occupancy", "ipc", "writeback"]
    assert {f["name"] for f in document["figures"]} >= {"fig10_occupancy", "fig11_ipc",
                                                        "fig12_writeback"}


def test_one_kernel_figures_are_consistent(hotspot):
    result, _ = hotspot
    tables = {t.name: t for t in result.tables}
    (registers,) = tables["registers"].rows
    assert registers["high"] <= registers["before"]
    assert registers["high, launch known"] <= registers["high"]
    ipc = tables["ipc"].rows
    gain = 100 * (ipc[0]["high"] / ipc[0]["baseline"] - 1)
    assert math.isclose(ipc[-1]["gain, high"], gain, abs_tol=0.2)
    assert ipc[0]["quality met"] == "yes/yes"
    keys = {c.key for c in result.comparisons}
    assert {"ipc_gain_high", "ipc_gain_perfect"} <= keys
