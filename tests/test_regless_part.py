"""``docs/examples/regless_part.py`` reads a kernel's paper-size runs from its part or,
before the part is assembled, from the runs kept one by one."""

import importlib.util
import json
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "examples" / "regless_part.py"


@pytest.fixture
def part(tmp_path, monkeypatch):
    """The script as a module, reading ``tmp_path``."""
    spec = importlib.util.spec_from_file_location("regless_part", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "PARTS", tmp_path)
    return module


def keep(folder: Path, name: str, value) -> None:
    path = folder / "runs" / "imgvf" / f"{name.replace(' ', '_')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"value": value}))


def test_kept_runs_stand_in_for_the_part_each_over_the_kept_baseline(part, tmp_path):
    keep(tmp_path, "baseline", 1_000)
    keep(tmp_path, "512", {"cycles": 5_000})
    assert part.paper_runs("imgvf") is None
    keep(tmp_path, "512 no compressor", {"cycles": 4_000})
    runs = part.paper_runs("imgvf")
    assert runs == {"512": {"cycles": 5_000, "runtime": 5.0},
                    "512 no compressor": {"cycles": 4_000, "runtime": 4.0}}
    (tmp_path / "regless-paper-imgvf.json").write_text(
        json.dumps({"value": {"runs": {"512": {"runtime": 2.0}}}}))
    assert part.paper_runs("imgvf") == {"512": {"runtime": 2.0}}


def test_a_kernel_with_nothing_measured_is_named_in_one_line(part, capsys):
    assert part.main(["imgvf"]) == 2
    assert capsys.readouterr().err.strip().endswith("no measured part or kept 512-entry "
                                                   "runs for 'imgvf'")


def test_capacity_rows_give_each_capacitys_run_time_and_preload_sources(part):
    def run(runtime, osu, l2):
        return {"runtime": runtime, "preloads": 2_000, "evictions": 7,
                "preloads_osu": osu, "preloads_compressor": 0,
                "preloads_l1": 2_000 - osu - l2, "preloads_l2": l2}

    rows = part.capacity_rows({"1024": run(1.5, 1_500, 100), "256": run(3.25, 500, 1_000),
                               "512 no compressor": run(9.0, 0, 0)})
    assert rows == [
        "256 entries: 3.250x, 2,000 preloads (%): {'osu': 25.0, 'compressor': 0.0, "
        "'l1': 25.0, 'l2': 50.0}, evictions 7",
        "1024 entries: 1.500x, 2,000 preloads (%): {'osu': 75.0, 'compressor': 0.0, "
        "'l1': 20.0, 'l2': 5.0}, evictions 7"]
