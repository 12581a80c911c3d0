"""The main job (``gpurf run``): parallel workers, lines as blocks finish, failures that do
not stop the job, the results folder, the cache across runs, run folders of their own, and
signals that leave nothing running."""

import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from gpurf.hw.registry import get_block
from gpurf.sim import toolchain, verilog
from gpurf.sim.cli import main
from gpurf.sim.flow.pool import StoppedError, WorkerPool, group_members
from gpurf.sim.flow.report import markdown, synthesis_line, verdict_cell
from gpurf.sim.runner import STAMP, build_model, run_bench

GPURF = Path(sys.executable).parent / "gpurf"
TOY = Path(__file__).parent / "toy_mechanism"
SMALL = "subcore.subcore_assigner"

BROKEN_BLOCK = '''

class Broken(ConfiguredComponent, config=CounterConfig):
    """A counter that cannot be elaborated: a deliberately broken block.

    Attributes
    ----------
    enable : In(1)
    count : Out(width)
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        raise RuntimeError("deliberately broken")


BLOCKS = (*BLOCKS, Block("toy", "broken", Broken, summary="fails to elaborate"))
'''


@pytest.fixture
def env(tmp_path):
    """Fresh cache and build folders; the toy mechanism with a second, broken block."""
    root = tmp_path / "mechanisms"
    shutil.copytree(TOY, root)
    with (root / "hw" / "toy" / "__init__.py").open("a") as init:
        init.write(BROKEN_BLOCK)
    return {**os.environ, "GPURF_PATH": str(root), "GPURF_CACHE": str(tmp_path / "cache"),
            "GPURF_BUILD": str(tmp_path / "build")}


def _gpurf(args, env, cwd):
    return subprocess.run([GPURF, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=900)


def _golden(env) -> Path:
    return Path(env["GPURF_PATH"]) / "golden" / "toy" / "counter.py"


def test_failures_are_reported_and_the_job_goes_on(env, tmp_path):
    """A failing bench (the counter's golden model counts by two) and a block that cannot
    be elaborated: each is reported on its line and at the end, everything else still runs,
    exit 1."""
    golden = _golden(env)
    golden.write_text(golden.read_text().replace("self.count + 1", "self.count + 2"))
    run = _gpurf(["run", "toy", "--sim", "verilator", "-j", "2", "--cycles", "50"], env,
                 tmp_path)
    assert run.returncode == 1, run.stderr
    out = run.stdout
    assert re.search(r"^toy\.counter +verilator FAIL 0/1 \(\d+ s\)$", out, re.M), out
    # The cost report, which starts first, synthesizes the counter: its synthesis is cached.
    assert re.search(r"^toy\.counter +synth \d+ cells, .* \((\d+ s|cached)\)$", out, re.M), out
    assert re.search(r"^toy\.broken +verilator ERROR RuntimeError: deliberately broken$", out,
                     re.M), out
    assert re.search(r"^toy\.broken +synth ERROR RuntimeError: deliberately broken$", out,
                     re.M), out
    assert re.search(r"^cost toy +done", out, re.M), out
    results = tmp_path / "gpurf-results"
    report = json.loads((results / "report.json").read_text())
    counter, broken = report["blocks"]["toy.counter"], report["blocks"]["toy.broken"]
    assert counter["cosim"]["verilator"]["status"] == "fail"
    assert "port count" in counter["cosim"]["verilator"]["failures"][0]
    assert counter["synth"]["status"] == "ok" and counter["synth"]["cells"] > 0
    assert broken["synth"]["status"] == broken["cosim"]["verilator"]["status"] == "error"
    assert report["cost_reports"]["toy"]["status"] == "ok" and not report["passed"]
    assert report["units"]["logic_depth"] == "gate levels"
    assert report["provenance"]["versions"]["amaranth"]
    text = (results / "report.md").read_text()
    assert "| toy.counter | FAIL 0/1 |" in text and "## Failures" in text
    assert (results / "figures").is_dir() and list((results / "logs").glob("worker-*.log"))


def test_a_second_run_takes_what_did_not_change_from_the_cache(env, tmp_path):
    """Run, run again (everything cached), edit the golden model (its bench runs again, the
    synthesis stays cached); with --json the lines go to stderr and stdout is the report."""
    args = ["run", "toy", "--sim", "verilator", "--cycles", "50", "--out", "results"]
    first = _gpurf(args, env, tmp_path)
    assert re.search(r"^toy\.counter +verilator PASS 1/1 \(\d+ s\)$", first.stdout, re.M)
    second = _gpurf(args, env, tmp_path)
    assert re.search(r"^toy\.counter +verilator PASS 1/1 \(cached\)$", second.stdout, re.M)
    assert re.search(r"^toy\.counter +synth .*\(cached\)$", second.stdout, re.M)
    golden = _golden(env)
    golden.write_text(golden.read_text() + "\n# an edit\n")
    third = _gpurf([*args, "--json"], env, tmp_path)
    assert re.search(r"^toy\.counter +verilator PASS 1/1 \(\d+ s\)$", third.stderr, re.M)
    report = json.loads(third.stdout)
    assert not report["blocks"]["toy.counter"]["cosim"]["verilator"]["cached"]
    assert report["blocks"]["toy.counter"]["synth"]["cached"]


def _descendants(pid: int) -> dict[int, int]:
    """``pid -> process group`` of every running process below ``pid``."""
    parents, groups = {}, {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        state, parent, group = text[text.rindex(")") + 2:].split()[:3]
        if state != "Z":
            parents[int(stat.parent.name)], groups[int(stat.parent.name)] = int(parent), int(group)
    found, frontier = {}, [pid]
    while frontier:
        below = [p for p, parent in parents.items() if parent in frontier]
        found.update({p: groups[p] for p in below})
        frontier = below
    return found


def _first_line(process, timeout: float) -> str:
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        assert selector.select(timeout), "no line from gpurf run"
        return process.stdout.readline()


@pytest.mark.parametrize(("number", "status", "message"), [
    (signal.SIGTERM, 143, "gpurf: stopped by SIGTERM; workers stopped"),
    (signal.SIGINT, 130, "gpurf: stopped by SIGINT; workers stopped"),
])
def test_a_signal_stops_every_process_the_job_started(tmp_path, number, status, message):
    """While a block's line has already come through the pipe and a simulator build is
    running, SIGTERM or SIGINT (Ctrl-C) ends the job and every process it started."""
    env = {**os.environ, "GPURF_CACHE": str(tmp_path / "cache"),
           "GPURF_BUILD": str(tmp_path / "build")}
    job = subprocess.Popen([GPURF, "run", "subcore", "--sim", "verilator", "-j", "2"],
                           cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        line = _first_line(job, timeout=600)
        assert line.startswith("subcore.") and job.poll() is None, line
        deadline = time.monotonic() + 600
        while not any(p != g for p, g in _descendants(job.pid).items()):
            assert time.monotonic() < deadline and job.poll() is None, "no tool started"
            time.sleep(0.1)
        started = _descendants(job.pid)
        job.send_signal(number)
        assert job.wait(timeout=60) == status
        assert job.stderr.read().strip().splitlines()[-1] == message
    finally:
        if job.poll() is None:
            job.kill()
    assert all(group_members(group) == [] for group in set(started.values())), started


def test_a_signal_inside_the_pool_stops_it_at_its_select_loop(tmp_path):
    """SIGINT while a worker is busy: the pool raises StoppedError from its loop, the
    worker's process group is gone and the handler from before is back (the pool handles
    SIGINT even where it was ignored, as in a job started in the background)."""
    task = {"kind": "cosim", "block": SMALL, "sim": "verilator", "cycles": 10**7, "seed": 1}
    before = signal.getsignal(signal.SIGINT)
    groups = []
    with pytest.raises(StoppedError) as stopped, WorkerPool(1, tmp_path / "logs") as pool:
        def interrupt():
            while not pool.workers:
                time.sleep(0.05)
            groups.append(pool.workers[0].process.pid)
            time.sleep(1)
            os.kill(os.getpid(), signal.SIGINT)

        threading.Thread(target=interrupt, daemon=True).start()
        list(pool.run([task]))
    assert stopped.value.signal == signal.SIGINT
    assert groups and group_members(groups[0]) == []
    assert signal.getsignal(signal.SIGINT) is before


def test_a_worker_that_dies_fails_its_task_only(tmp_path):
    """A worker killed in the middle of a task: that task is an error record, the next task
    runs on a new worker."""
    tasks = [{"kind": "cosim", "block": SMALL, "sim": "verilator", "cycles": 10**7, "seed": 1},
             {"kind": "synth", "block": "no.such_block"}]
    with WorkerPool(1, tmp_path / "logs") as pool:
        def kill_first():
            while not pool.workers:
                time.sleep(0.05)
            time.sleep(1)
            os.killpg(pool.workers[0].process.pid, signal.SIGKILL)

        threading.Thread(target=kill_first, daemon=True).start()
        records = [record for _task, record in pool.run(tasks)]
    assert records[0]["status"] == "error" and records[0]["error"].startswith("worker died")
    assert records[1]["status"] == "error"
    assert records[1]["error"].startswith("BlockError: unknown block 'no.such_block'")
    assert "Traceback" in (tmp_path / "logs" / "worker-1.log").read_text()


@pytest.fixture
def build_root(tmp_path, monkeypatch):
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(verilog, "BUILD_ROOT", tmp_path / "build")
    return tmp_path / "build"


def test_each_run_has_its_own_folder_and_shares_the_model(build_root):
    block = get_block(SMALL)
    runs = [run_bench(block, sim="verilator", cycles=50, seed=seed) for seed in (1, 2, 2)]
    folders = [r.results_xml.parent for r in runs]
    assert all(r.passed for r in runs) and len(set(folders)) == 3
    assert [f.name.split("-")[:2] for f in folders] == [["verilator", "s1"], ["verilator", "s2"],
                                                        ["verilator", "s2"]]
    assert len(list(folders[0].parent.glob("build-verilator-*/" + STAMP))) == 1


def test_a_killed_build_is_rebuilt_never_run(build_root):
    """A model folder without its stamp (its build was killed) holds an executable that
    would leave a mark if it ran; the next run builds again and passes."""
    block = get_block(SMALL)
    params = block.resolve()
    source = verilog.write_verilog(block, params)
    model = build_model(block, params, sim="verilator", waves=False, source=source)
    (model / STAMP).unlink()
    mark = build_root / "executed"
    executable = model / block.toplevel
    executable.write_text(f"#!/bin/sh\ntouch {mark}\n")
    result = run_bench(block, sim="verilator", cycles=50)
    assert result.passed and not mark.exists() and (model / STAMP).exists()


def test_two_runs_of_one_block_at_once(tmp_path):
    """Two ``gpurf test`` of one block started together: one builds the model (the other
    waits on the lock), each runs in its own folder, both pass."""
    env = {**os.environ, "GPURF_CACHE": str(tmp_path / "cache"),
           "GPURF_BUILD": str(tmp_path / "build")}
    runs = [subprocess.Popen([GPURF, "test", SMALL, "--sim", "verilator", "--cycles", "50",
                              "--seed", str(seed)], env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True) for seed in (1, 2)]
    outputs = [run.communicate(timeout=600)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    [tag] = (tmp_path / "build" / SMALL).iterdir()
    assert len(list(tag.glob("build-verilator-*/" + STAMP))) == 1
    assert sorted(f.name.split("-")[1] for f in tag.glob("verilator-s*")) == ["s1", "s2"]


def test_verdict_cells_and_lines():
    passed = {"status": "pass", "tests": 4, "failed": 0, "cached": False, "seconds": 12.4}
    assert verdict_cell(passed) == "PASS 4/4 (12 s)"
    assert verdict_cell({**passed, "cached": True}) == "PASS 4/4 (cached)"
    assert verdict_cell({**passed, "status": "fail", "failed": 1}, timing=False) == "FAIL 3/4"
    assert verdict_cell({"status": "error", "error": "BenchBuildError: x"}) == \
        "ERROR BenchBuildError: x"
    assert verdict_cell({"status": "skipped", "reason": "icarus_defaults=False"}) == \
        "skipped (icarus_defaults=False)"
    figures = {"status": "ok", "cells": 1234, "transistors": 5678, "ff_bits": 9,
               "memory_bits": 0, "logic_depth": 7, "cached": True}
    assert synthesis_line("a.b", figures) == ("a.b" + " " * 32 + "synth 1,234 cells, 5,678 "
                                              "transistors, 9 ff bits, 0 memory bits, depth 7 "
                                              "(cached)")


def test_the_markdown_report_lists_every_failure():
    report = {
        "settings": {"seed": 1, "cycles": 10, "simulators": ["verilator"]},
        "blocks": {"a.b": {"cosim": {"verilator": {"status": "error", "error": "E: x",
                                                    "message": "x\nsee log"}},
                           "synth": {"status": "error", "error": "E: y", "message": "y"}}},
        "cost_reports": {"a": {"status": "error", "error": "E: z", "message": "z"}},
    }
    text = markdown(report)
    assert "| a.b | ERROR E: x |" in text
    assert text.split("## Failures\n\n")[1].splitlines() == [
        "- a.b on verilator: x", "  see log", "- a.b synthesis: y", "- cost report a: z"]


def test_a_simulator_that_is_not_installed_is_bad_input(capsys, monkeypatch):
    monkeypatch.setattr(toolchain, "missing_simulator",
                        lambda sim: "iverilog not found: install it" if sim == "icarus" else None)
    with pytest.raises(SystemExit) as done:
        main(["run", "subcore", "--sim", "icarus"])
    assert done.value.code == 2
    assert capsys.readouterr().err == "gpurf: --sim icarus: iverilog not found: install it\n"
