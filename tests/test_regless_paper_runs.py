"""``docs/examples/regless_paper_runs.py``, RegLess's paper-size parts one run at a time
(docs/measured/regless-paper/README.md): a part assembles from its eight kept runs as
``gpurf reproduce`` composes it, a run kept at other sources is refused with one line, and
``carry`` moves only a kernel without barriers, its values unchanged."""

import importlib.util
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from gpurf.sim.cache import default_cache
from gpurf.sim.reproduce import parts

SCRIPT = Path(__file__).resolve().parent.parent / "docs" / "examples" / "regless_paper_runs.py"
OLD_KEY = "0" * 64
"""A part key of other sources (an earlier pin)."""


@pytest.fixture
def runs(tmp_path, monkeypatch):
    """The script as a module, writing into ``tmp_path`` and a cache of its own."""
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    spec = importlib.util.spec_from_file_location("regless_paper_runs", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setattr(module, "FOLDER", tmp_path / "regless-paper")
    return module


def keep(runs, kernel: str, run: str, cycles: int, key: str | None = None) -> Path:
    """Write a kept run as :func:`keep_run` does, measured at revision ``abc1234``."""
    value = cycles if run == runs.BASELINE else {"cycles": cycles, "passed": True}
    path = runs.run_path(kernel, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"kernel": kernel, "run": run, "revision": "abc1234",
                                "date": "2026-11-30T00:00:00+00:00",
                                "key": key or runs.key(kernel), "cpu_seconds": 1.5,
                                "value": value}))
    return path


def keep_all(runs, kernel: str, key: str | None = None, step: int = 100) -> None:
    """All eight runs: the baseline 1,000 cycles, the configurations 1,000 + ``step``,
    1,000 + 2 ``step``, ..."""
    for index, run in enumerate(runs.RUNS):
        keep(runs, kernel, run, 1_000 + step * index, key)


def test_a_part_assembles_from_its_eight_runs_as_reproduce_reads_it(runs):
    keep_all(runs, "gaussian")
    assert runs.assemble("gaussian") == "gaussian: part written (12.0 CPU s in its eight runs)"
    path = parts._part_path(runs.FOLDER, "regless", "paper", "gaussian")
    part = parts._read_part(path)
    assert part["key"] == runs.key("gaussian")
    assert part["value"]["baseline"] == 1_000
    assert part["value"]["runs"]["512"] == {"cycles": 1_100, "passed": True, "runtime": 1.1}
    assert list(part["value"]["runs"]) == list(runs.RUNS[1:])
    assert parts.import_parts(runs.FOLDER) == 1
    assert default_cache().get(parts.KIND, runs.key("gaussian")) == part["value"]


def test_a_missing_run_leaves_the_part_unwritten(runs):
    keep_all(runs, "gaussian")
    runs.run_path("gaussian", "256").unlink()
    assert runs.assemble("gaussian") == "gaussian: not assembled, runs missing: 256"
    assert not list(runs.FOLDER.glob("*.json"))


def test_a_run_kept_at_other_sources_is_refused_in_one_line(runs):
    path = keep(runs, "gaussian", "512", 1_100, key=OLD_KEY)
    with pytest.raises(runs.RunsError, match="revision abc1234, whose key differs"):
        runs.read_run("gaussian", "512")
    result = CliRunner().invoke(runs.main, ["status", "gaussian"])
    assert result.exit_code == 2
    assert str(path) in result.output and len(result.output.strip().splitlines()) == 1


def test_a_file_that_is_not_a_kept_run_is_named(runs):
    path = runs.run_path("gaussian", "baseline")
    path.parent.mkdir(parents=True)
    path.write_text('{"kernel": "gaussian"')
    with pytest.raises(runs.RunsError, match=f"{path}: expected a kept run"):
        runs.read_run("gaussian", "baseline")


def test_only_measures_the_runs_named_in_order_skipping_those_another_process_kept(
        runs, monkeypatch):
    keep(runs, "gaussian", "baseline", 1_000)
    measured = []

    def measure(kernel, run):
        measured.append(run)
        if run == "1024":
            keep(runs, kernel, "768", 1_300)  # kept meanwhile by a second process
        return {"cycles": 1_200, "passed": True}

    monkeypatch.setattr(runs, "measure_run", measure)
    only = ("1024", "768", "baseline", "256")
    assert runs.keep_kernel("gaussian", only).startswith("gaussian: not assembled, ")
    assert measured == ["1024", "256"]
    assert runs.read_run("gaussian", "256")["value"]["cycles"] == 1_200


def test_only_names_runs_of_one_kernel_in_one_line(runs):
    result = CliRunner().invoke(runs.main, ["run", "--only", "256", "lud", "scan"])
    assert result.exit_code == 2
    assert result.output == "Error: --only names runs of one kernel; got 2 kernels\n"
    result = CliRunner().invoke(runs.main, ["run", "--only", "2048", "lud"])
    assert result.exit_code == 2 and "'2048' is not one of" in result.output


def test_carry_rekeys_a_kernel_without_barriers_values_unchanged(runs):
    keep_all(runs, "gaussian", key=OLD_KEY)
    before = {run: json.loads(runs.run_path("gaussian", run).read_text())["value"]
              for run in runs.RUNS}
    assert runs.carry("gaussian").startswith("gaussian: carried to ")
    for run in runs.RUNS:
        kept = runs.read_run("gaussian", run)
        assert kept["carried_from"] == "abc1234" and kept["value"] == before[run]
    assert runs.carry("gaussian").endswith(": nothing to carry")


def test_carry_rekeys_a_part_its_digest_still_valid(runs):
    keep_all(runs, "gaussian")
    runs.assemble("gaussian")
    path = parts._part_path(runs.FOLDER, "regless", "paper", "gaussian")
    part = json.loads(path.read_text())
    path.write_text(json.dumps({**part, "key": OLD_KEY}))
    assert path.name in runs.carry("gaussian")
    assert parts._read_part(path)["key"] == runs.key("gaussian")


def test_carry_refuses_a_kernel_with_barriers(runs):
    path = keep(runs, "lud", "512", 1_100, key=OLD_KEY)
    with pytest.raises(runs.RunsError, match="lud: has barriers"):
        runs.carry("lud")
    assert json.loads(path.read_text())["key"] == OLD_KEY


def test_means_are_geometric_over_the_assembled_parts_only(runs):
    assert runs.partial_means() == "0 of 14 kernels assembled"
    keep_all(runs, "gaussian")
    keep_all(runs, "lud", step=400)
    keep(runs, "scan", "baseline", 1_000)
    runs.assemble("gaussian")
    runs.assemble("lud")
    means = runs.partial_means()
    # 512: sqrt(1.1 * 1.4), not the arithmetic 1.250; 1,024: sqrt(1.7 * 3.8).
    assert means.startswith("2 of 14 kernels (gaussian, lud): 512 1.241x; ")
    assert means.endswith("; 1024 2.542x")
    assert CliRunner().invoke(runs.main, ["means"]).output == means + "\n"
