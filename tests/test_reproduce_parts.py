"""A reproduction's per-kernel parts: cached by content, resumed, run on worker processes."""

import json
import time

import pytest

from gpurf.sim.cli import main
from gpurf.sim.reproduce.parts import PartsError, import_parts, keeping_parts, measure_kernels


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


def test_parts_kept_in_a_folder_finish_the_run_on_a_machine_with_an_empty_cache(
        tmp_path, monkeypatch):
    parts = tmp_path / "parts"
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "first-machine"))
    with keeping_parts(parts) as found:
        first = measure_kernels("compression", "paper", ["bfs", "srad"], _square_length)
    assert found == 0
    assert sorted(p.name for p in parts.iterdir()) == ["compression-paper-bfs.json",
                                                       "compression-paper-srad.json"]
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "second-machine"))
    calls = []
    with keeping_parts(parts) as found:
        again = measure_kernels("compression", "paper", ["srad", "bfs", "kmeans"],
                                _counting(calls))
    assert found == 2 and calls == ["kmeans"]
    assert again[:2] == first[::-1]
    assert (parts / "compression-paper-kmeans.json").exists()


def test_a_part_measured_with_other_options_is_not_used(tmp_path, monkeypatch):
    parts = tmp_path / "parts"
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "first-machine"))
    with keeping_parts(parts):
        measure_kernels("greener", "paper", ["bfs"], _square_length, options={"x": 1})
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "second-machine"))
    calls = []
    with keeping_parts(parts):
        measure_kernels("greener", "paper", ["bfs"], _counting(calls), options={"x": 2})
    assert calls == ["bfs"]


@pytest.mark.parametrize("damage", ["not json", '{"key": 1}', "edited value", "bad key"])
def test_a_damaged_part_is_named_with_what_was_expected(tmp_path, monkeypatch, damage):
    parts = tmp_path / "parts"
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    with keeping_parts(parts):
        measure_kernels("compression", "paper", ["bfs"], _square_length)
    path = parts / "compression-paper-bfs.json"
    if damage == "edited value":
        path.write_text(path.read_text().replace('"value": 9', '"value": 10'))
    elif damage == "bad key":
        part = json.loads(path.read_text())
        path.write_text(json.dumps({**part, "key": 12}))
    else:
        path.write_text(damage)
    with pytest.raises(PartsError, match=r"compression-paper-bfs\.json: "):
        import_parts(parts)


def test_cli_refuses_parts_for_a_reproduction_without_parts(capsys, tmp_path):
    with pytest.raises(SystemExit) as stopped:
        main(["reproduce", "subcore", "--parts", str(tmp_path)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "--parts does not apply to subcore" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_names_a_damaged_part_in_one_line(capsys, tmp_path):
    (tmp_path / "greener-paper-bfs.json").write_text("{")
    with pytest.raises(SystemExit) as stopped:
        main(["reproduce", "greener", "--parts", str(tmp_path), "--kernels", "bfs"])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and "greener-paper-bfs.json: expected a JSON part" in err
    assert len(err.strip().splitlines()) == 1
