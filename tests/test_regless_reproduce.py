"""``gpurf reproduce regless``'s run-time part (sim/reproduce/regless.py) on one small
kernel: the tables, their columns and the breakdown of where the time goes."""

from gpurf.sim.reproduce.regless import runtime_results
from gpurf.sim.sm.regless_breakdown import COLUMNS


def test_runtime_tables_on_saxpy(tmp_path, monkeypatch):
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path))  # measured here, not read from a cache
    said = []
    tables, plots, comparisons, _ = runtime_results("test", ["saxpy"], said.append)
    by_name = {table.name: table for table in tables}
    assert set(by_name) == {"fig16", "fig13", "preloads", "breakdown"}
    fig16 = by_name["fig16"].rows
    assert [row["kernel"] for row in fig16] == ["saxpy", "geomean"]
    assert fig16[0]["RegLess"] == fig16[1]["RegLess"]
    (row,) = by_name["breakdown"].rows
    assert list(row) == list(COLUMNS) and row["kernel"] == "saxpy" and row["boundaries"] > 0
    assert "regless: saxpy 512 no metadata cost" in said
    assert {c.key for c in comparisons} >= {"runtime_geomean", "runtime_no_compressor"}
    assert {p.name for p in plots} == {"fig16", "fig13", "fig17"}
