"""A reproduction's per-kernel parts: cached by content, resumed, run on worker processes."""

import time

import pytest

from gpurf.sim.cli import main
from gpurf.sim.reproduce.parts import measure_kernels


def _square_length(kernel: str) -> dict:
    """A picklable stand-in measurement (module level, so Dask workers can run it)."""
    return {"kernel": kernel, "value": len(kernel) ** 2, "by_delay": {3: 1.5}}


def _srad_fails_late(kernel: str) -> dict:
    """A measurement whose ``srad`` fails after the other kernels have finished."""
    if kernel == "srad":
        time.sleep(2)
        raise RuntimeError("srad stopped")
    return _square_length(kernel)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _counting(calls: list):
    def measure(kernel):
        calls.append(kernel)
        return _square_length(kernel)
    return measure


def test_each_kernel_is_measured_once_then_read_from_the_cache(cache):
    calls = []
    first = measure_kernels("compression", "paper", ["bfs", "srad"], _counting(calls))
    again = measure_kernels("compression", "paper", ["srad", "bfs"], _counting(calls))
    assert calls == ["bfs", "srad"]
    assert again == first[::-1]


def test_a_stopped_run_resumes_with_only_the_missing_kernels(cache):
    calls = []
    measure_kernels("compression", "paper", ["bfs"], _counting(calls))
    measure_kernels("compression", "paper", ["bfs", "kmeans"], _counting(calls))
    assert calls == ["bfs", "kmeans"]


@pytest.mark.parametrize("other", [{"size": "test"}, {"mechanism": "wir"},
                                   {"options": {"wake_at": "decode"}}])
def test_size_mechanism_and_options_are_part_of_the_key(cache, other):
    calls = []
    chosen = {"mechanism": "compression", "size": "paper", "options": {}} | other
    measure_kernels("compression", "paper", ["bfs"], _counting(calls), options={})
    measure_kernels(chosen["mechanism"], chosen["size"], ["bfs"], _counting(calls),
                    options=chosen["options"])
    assert calls == ["bfs", "bfs"]


def test_measured_and_cached_parts_read_the_same(cache):
    fresh = measure_kernels("compression", "paper", ["bfs"], _square_length)
    cached = measure_kernels("compression", "paper", ["bfs"], _square_length)
    assert fresh == cached == [{"kernel": "bfs", "value": 9, "by_delay": {"3": 1.5}}]


def test_without_a_cache_every_run_measures(monkeypatch):
    monkeypatch.setenv("GPURF_CACHE", "off")
    calls = []
    for _ in range(2):
        measure_kernels("compression", "paper", ["bfs"], _counting(calls))
    assert calls == ["bfs", "bfs"]


def test_worker_processes_give_what_one_process_gives(cache, tmp_path, monkeypatch):
    on_workers = measure_kernels("compression", "test", ["bfs", "kmeans", "srad"],
                                 _square_length, jobs=2)
    monkeypatch.setenv("GPURF_CACHE", "off")
    assert on_workers == measure_kernels("compression", "test", ["bfs", "kmeans", "srad"],
                                         _square_length)


def test_a_kernel_finished_on_a_worker_is_kept_when_a_later_one_fails(cache):
    with pytest.raises(RuntimeError, match="srad stopped"):
        measure_kernels("compression", "test", ["bfs", "srad"], _srad_fails_late, jobs=2)
    calls = []
    measure_kernels("compression", "test", ["bfs", "srad"], _counting(calls))
    assert calls == ["srad"]


def test_jobs_below_one_is_refused(cache):
    with pytest.raises(ValueError, match="at least 1"):
        measure_kernels("compression", "test", ["bfs"], _square_length, jobs=0)


@pytest.mark.parametrize("args, message", [
    (["reproduce", "subcore", "--jobs", "2"], "--jobs does not apply to subcore"),
    (["reproduce", "compression", "--jobs", "0"], "0 is not in the range 1<=x<=256"),
])
def test_cli_refuses_a_bad_jobs_option_in_one_line(capsys, args, message):
    with pytest.raises(SystemExit) as stopped:
        main(args)
    err = capsys.readouterr().err
    assert stopped.value.code == 2
    assert message in err and len(err.strip().splitlines()) == 1


def test_wir_reads_a_measured_kernel_from_the_cache_with_the_same_tables(cache, monkeypatch):
    from gpurf.sim.reproduce import reproduce, wir

    first = reproduce("wir", "test", kernels=["vecadd"])

    def not_again(*args, **kwargs):
        raise AssertionError("the cached kernel was measured again")

    monkeypatch.setattr(wir, "run_wir", not_again)
    again = reproduce("wir", "test", kernels=["vecadd"])
    assert [t.rows for t in again.tables] == [t.rows for t in first.tables]
