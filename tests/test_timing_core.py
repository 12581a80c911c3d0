"""The compiled timing core (``sim/sm/timing_core.cpp``) against the Python timing loop it
replaces for the baseline SM: every ``TimingStats`` field but the seconds equal, on every
workload under GTO, RBA and LRR on the V100 and GTX 980 presets and on more configurations
of a few; deliberately broken builds caught; the fallbacks to the Python loop (no g++, a
failed build, ``GPURF_SM_CORE=python``, what the core does not cover) and their one line in
``gpurf sm bench``."""

import dataclasses
import shutil
import tomllib
from pathlib import Path

import pytest

from gpurf.sim.cli import main
from gpurf.sim.kernels import workload_names
from gpurf.sim.sm import run_kernel, timing_core
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.recording import shared_functional_runs
from gpurf.sim.sm.warp import ExecutionError

CONFIGS = [{"preset": preset, "scheduler": scheduler}
           for preset in ("v100", "gtx980") for scheduler in ("gto", "rba", "lrr")]
VARIANTS = [{"scheduler": "rba", "score_latency": 0}, {"scheduler": "rba", "score_latency": 3,
                                                        "cus": 3},
            {"scheduler": "rba", "rba_greedy": True}, {"assign": "srr"},
            {"scheduler": "rba", "assign": "shuffle"}, {"preset": "k20x"},
            {"preset": "fermi", "scheduler": "rba"}, {"bank_map": "modulo", "scheduler": "rba"},
            {"l1_bytes": 0}, {"scheduler": "rba", "read_latency": 2},
            {"l1_miss_latency": 5000}, {"subcores": 1, "max_warps": 64, "scheduler": "rba"}]
"""Beyond the presets: score latencies, greedy RBA, hashed assignment, other bank maps and
latencies, writebacks beyond the core's 4,096-cycle ring, one sub-core of 64 slots."""


@pytest.fixture(scope="module", autouse=True)
def compiled_core():
    """The core, built once (a missing g++ skips these tests; a failed build fails them)."""
    if shutil.which("g++") is None:
        pytest.skip("g++ not found: the compiled timing core cannot be built")
    lib, where = timing_core.load()
    assert lib is not None, where


def _figures(name: str, size: str, config: dict, core: str) -> tuple[dict, str, bool]:
    """Every ``TimingStats`` field but the seconds, the timing loop that ran, and whether
    the outputs equal the reference."""
    run = run_kernel(name, size, timing=load_config(**config),
                     mechanism=lambda program: (program, {"core": core}))
    figures = dataclasses.asdict(run.stats["timing"])
    del figures["seconds"]
    return figures, run.stats["timing_core"], run.passed


def _differences(name: str, size: str, configs: list[dict]) -> dict:
    """Per configuration (as text), the fields whose compiled and Python figures differ
    (the functional pass shared by all runs)."""
    found = {}
    with shared_functional_runs():
        for config in configs:
            python, _, passed = _figures(name, size, config, "python")
            compiled, core, compiled_passed = _figures(name, size, config, "compiled")
            assert (core, passed, compiled_passed) == ("compiled", True, True)
            differ = {k: (python[k], compiled[k]) for k in python if python[k] != compiled[k]}
            if differ:
                found[str(config)] = differ
    return found


@pytest.mark.parametrize("name", workload_names())
def test_the_compiled_core_equals_the_python_loop(name):
    assert _differences(name, "test", CONFIGS) == {}


@pytest.mark.parametrize("name", ["reduction", "matmul", "bfs"])
def test_the_compiled_core_equals_the_python_loop_on_more_configurations(name):
    assert _differences(name, "test", VARIANTS) == {}


@pytest.mark.paper_size
@pytest.mark.parametrize("name", ["saxpy", "fma_subcore/balanced"])
def test_the_compiled_core_equals_the_python_loop_at_paper_size(name):
    assert _differences(name, "paper", [{"scheduler": "gto"}, {"scheduler": "rba"}]) == {}


@pytest.mark.parametrize(("mutant", "scheduler"), [(1, "rba"), (2, "gto")])
def test_a_broken_compiled_core_is_caught(monkeypatch, mutant, scheduler):
    """Mutants built with ``-DGPURF_MUTANT``: 1, RBA's equal scores to the youngest warp;
    2, GTO without its greedy warp."""
    built = timing_core.load((f"GPURF_MUTANT={mutant}",))
    assert built[0] is not None, built[1]
    monkeypatch.setattr(timing_core, "load", lambda: built)
    assert _differences("reduction", "test", [{"scheduler": scheduler}]) != {}


@pytest.fixture
def fresh_load():
    """:func:`timing_core.load` forgets what it built, before and after the test."""
    timing_core.load.cache_clear()
    yield
    timing_core.load.cache_clear()


def test_without_gpp_the_python_loop_runs(monkeypatch, fresh_load):
    monkeypatch.setattr(timing_core.shutil, "which", lambda name: None)
    _, core, passed = _figures("saxpy", "test", {}, "auto")
    assert (core, passed) == ("python (g++ not found)", True)
    with pytest.raises(ExecutionError, match=r"compiled timing core cannot run: g\+\+ not found"):
        _figures("saxpy", "test", {}, "compiled")


def test_a_failed_build_falls_back_to_the_python_loop(monkeypatch, tmp_path, fresh_load):
    broken = tmp_path / "timing_core.cpp"
    broken.write_text("this is not C++\n")
    monkeypatch.setattr(timing_core, "SOURCE", broken)
    monkeypatch.setenv("GPURF_BUILD", str(tmp_path / "build"))
    lib, why = timing_core.load()
    assert lib is None and why.startswith("the build failed (")
    assert not list((tmp_path / "build" / "sm-timing-core").glob("*.so"))
    _, core, passed = _figures("saxpy", "test", {}, "auto")
    assert core == f"python ({why})" and passed


def test_the_build_is_kept_by_source_digest(monkeypatch, tmp_path, fresh_load):
    monkeypatch.setenv("GPURF_BUILD", str(tmp_path))
    lib, where = timing_core.load()
    assert lib is not None and Path(where).parent == tmp_path / "sm-timing-core"
    timing_core.load.cache_clear()
    built = Path(where).stat().st_mtime_ns
    assert timing_core.load()[1] == where and Path(where).stat().st_mtime_ns == built


def test_gpurf_sm_core_chooses_the_loop(monkeypatch):
    monkeypatch.setenv("GPURF_SM_CORE", "python")
    assert _figures("vecadd", "test", {}, None)[1] == "python (asked for)"
    monkeypatch.setenv("GPURF_SM_CORE", "compiled")
    assert _figures("vecadd", "test", {}, None)[1] == "compiled"
    monkeypatch.setenv("GPURF_SM_CORE", "fast")
    with pytest.raises(ValueError, match=r"GPURF_SM_CORE must be one of auto, python, "
                                         r"compiled, not 'fast'"):
        _figures("vecadd", "test", {}, None)


def test_what_the_core_does_not_cover_runs_in_python():
    assert _figures("vecadd", "test", {"scheduler": "two_level"}, "auto")[1] == (
        "python (the compiled core has no two_level scheduler)")
    run = run_kernel("vecadd", "test", timing=load_config(), values=True)
    assert run.stats["timing_core"] == "python (a mechanism rides on the SM)"
    with pytest.raises(ExecutionError, match="a mechanism rides on the SM"):
        run_kernel("vecadd", "test", timing=load_config(), values=True,
                   mechanism=lambda program: (program, {"core": "compiled"}))


@pytest.mark.parametrize("core", ["python", "compiled"])
def test_a_block_too_large_for_the_sm_is_the_same_error(core):
    with pytest.raises(ExecutionError, match=r"^a block of 4 warps does not fit the SM "
                                             r"\(64 warps, 1024 registers\)$"):
        _figures("saxpy", "test", {"registers": 1024}, core)


def test_sm_bench_says_which_timing_loop_ran(capsys):
    with pytest.raises(SystemExit) as done:
        main(["sm", "bench", "vecadd", "--scheduler", "gto", "--scheduler", "two_level"])
    assert done.value.code == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "timing core: gto: compiled; two_level: python (the compiled core has no two_level "
        "scheduler)")


def test_the_source_is_packaged():
    pyproject = tomllib.loads((Path(__file__).parents[1] / "pyproject.toml").read_text())
    assert "timing_core.cpp" in pyproject["tool"]["setuptools"]["package-data"]["gpurf.sim.sm"]
