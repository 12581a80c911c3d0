"""Replay of recorded golden runs on the RTL (``gpurf.sim.replay``, docs/traces.md).

One trace of ``subcore.subcore_assigner`` (clocked, reset, masked outputs) replays clean on
Verilator and Icarus; the same trace on a mutant of the block's Verilog (one comparison
flipped) must fail at the cycle and port where cocotb's lock-step cosimulation of the same
mutant, stimulus and seed first fails. Three Verilator builds in all (clean, mutant, mutant
with waves), all of the 8-port default configuration.
"""

import contextlib
import importlib
import re

import pytest

from gpurf.golden.trace import Trace
from gpurf.hw.registry import get_block
from gpurf.sim.cli import main
from gpurf.sim.replay import CONTEXT_CYCLES, WAVE_BEFORE, record, replay
from gpurf.sim.runner import CosimResult
from gpurf.sim.toolchain import activate, missing_simulator
from gpurf.sim.verilog import verilog_text
from gpurf.tb.harness import BenchConfig

BLOCK = get_block("subcore.subcore_assigner")
CYCLES = 1500

SIMULATORS = [pytest.param(sim, marks=pytest.mark.skipif(missing_simulator(sim) is not None,
                                                         reason=str(missing_simulator(sim))))
              for sim in ("verilator", "icarus")]

_NEGATION = {"==": "!=", "!=": "==", "<": ">=", ">=": "<", ">": "<=", "<=": ">"}
_COMPARISON = re.compile(r"^(\s*assign \S+\s+= \S+ )(==|!=|<=|>=|<|>)( \S+;)$", re.MULTILINE)


def flip_first_comparison(text: str) -> str:
    """The Verilog ``text`` with its first comparison (``a == b`` etc.) negated."""
    match = _COMPARISON.search(text)
    assert match, "the block's Verilog has no comparison to flip"
    flipped = match.group(1) + _NEGATION[match.group(2)] + match.group(3)
    return text[:match.start()] + flipped + text[match.end():]


@pytest.fixture(scope="module")
def trace(tmp_path_factory, seed) -> Trace:
    folder = tmp_path_factory.mktemp("traces")
    return Trace(record(BLOCK, seed=seed, cycles=CYCLES, folder=folder).path)


@pytest.fixture(scope="module")
def mutant(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("mutant") / f"{BLOCK.toplevel}.v"
    path.write_text(flip_first_comparison(verilog_text(BLOCK)))
    return path


@pytest.fixture(scope="module")
def lock_step_failure(tmp_path_factory, mutant, seed) -> tuple[int, str]:
    """``(cycle, port)`` of the first mismatch of the harness's cocotb cosimulation of the
    mutant (Icarus), the same stimulus and seed: the truth the replay must report."""
    from cocotb_tools.runner import get_runner

    if missing_simulator("icarus"):
        pytest.skip(missing_simulator("icarus"))
    activate()
    work = tmp_path_factory.mktemp("cocotb")
    runner = get_runner("icarus")
    runner.build(sources=[mutant], hdl_toplevel=BLOCK.toplevel, build_dir=work,
                 timescale=("1ns", "1ps"), build_args=["-g2005"], log_file=work / "build.log")
    stimulus = importlib.import_module(BLOCK.tb_module).STIMULI[0]
    config = BenchConfig(BLOCK.qualname, BLOCK.resolve(), seed, CYCLES)
    results = work / "results.xml"
    with contextlib.suppress(SystemExit):       # cocotb's runner exits on a failed test
        runner.test(test_module=BLOCK.tb_module, hdl_toplevel=BLOCK.toplevel, build_dir=work,
                    test_dir=work, seed=seed, testcase=f"test_{stimulus.__name__}",
                    extra_env=config.to_env(), results_xml=str(results),
                    log_file=work / "test.log")
    (failure,) = CosimResult(BLOCK.qualname, "icarus", 1, 1, results).failures
    found = re.search(r"cycle (\d+), port (\w+):", failure)
    assert found, f"the mutant passed lock-step cosimulation: {failure}"
    return int(found.group(1)), found.group(2)


def test_mutant_really_differs():
    text = verilog_text(BLOCK)
    mutated = flip_first_comparison(text)
    assert mutated != text
    assert len(mutated.splitlines()) == len(text.splitlines())


@pytest.mark.parametrize("sim", SIMULATORS)
def test_recorded_trace_replays_clean(trace, sim):
    result = replay(trace, sim=sim)
    assert result.passed, result.summary()
    assert result.cycles == trace.cycles == CYCLES
    assert result.seconds > 0


@pytest.mark.parametrize("sim", SIMULATORS)
def test_mutant_fails_at_the_lock_step_cycle_and_port(trace, mutant, lock_step_failure, sim):
    cycle, port = lock_step_failure
    result = replay(trace, sim=sim, verilog=mutant)
    assert not result.passed
    divergence = result.divergence
    assert divergence.cycle == cycle
    assert port in [p.port for p in divergence.ports]
    assert result.cycles == cycle + 1
    for mismatch in divergence.ports:
        assert mismatch.expected == trace.rows(cycle, cycle + 1)[0][2][mismatch.port]
        assert mismatch.actual != mismatch.expected
    assert [row[0] for row in divergence.context] == list(
        range(max(0, cycle - CONTEXT_CYCLES), cycle + 1))
    assert f"first divergence at cycle {cycle}:" in result.summary()


def test_waves_around_the_divergence(trace, mutant, lock_step_failure):
    if missing_simulator("verilator"):
        pytest.skip(missing_simulator("verilator"))
    result = replay(trace, sim="verilator", verilog=mutant, waves=True)
    assert result.divergence.cycle == lock_step_failure[0]
    assert result.waves is not None and result.waves.stat().st_size > 0
    assert result.waves.suffix in (".fst", ".vcd")
    if result.waves.suffix == ".vcd":
        times = [int(line[1:]) for line in result.waves.read_text().splitlines()
                 if line.startswith("#")]
        first = max(0, lock_step_failure[0] - WAVE_BEFORE)
        assert min(times) == 10 * (first + 1)


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.mark.skipif(missing_simulator("icarus") is not None,
                    reason=str(missing_simulator("icarus")))
def test_cli_records_and_replays(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "test", "subcore.warp_selector", "-p", "slots=4",
                           "-p", "policy=gto", "--replay", "--sim", "icarus", "--cycles", 200,
                           "--record", tmp_path)
    assert code == 0, out
    assert re.search(r"^recorded 200 cycles of subcore\.warp_selector \(seed 1\) in ", out,
                     re.MULTILINE)
    assert re.search(r"^PASS subcore\.warp_selector p\w+ replay on icarus: 200 cycles", out,
                     re.MULTILINE)
    code, out, _ = run_cli(capsys, "replay", tmp_path, "--sim", "icarus")
    assert code == 0
    assert out.count("PASS") == 1


def test_cli_records_without_a_simulator(capsys, tmp_path):
    code, out, _ = run_cli(capsys, "test", "subcore.subcore_assigner", "--record", tmp_path,
                           "--cycles", 50, "--seed", 4)
    assert code == 0
    (path,) = tmp_path.glob("*.trace")
    assert out.strip().endswith(str(path))
    assert Trace(path).cycles == 50 and Trace(path).seed == 4


@pytest.mark.parametrize(("argv", "message"), [
    (["test", "subcore.subcore_assigner", "--record", "{tmp}", "--waves"],
     r"--waves needs a simulation"),
    (["test", "subcore.subcore_assigner", "--record", "{tmp}", "--sim", "icarus"],
     r"--sim needs a simulation"),
    (["replay", "{tmp}"], r"no \*\.trace files in the folder"),
    (["replay", "{tmp}/none.trace"], r"none\.trace: no such file or folder"),
    (["bench", "--replay", "{tmp}", "--golden"],
     r"--golden, --replay and --per-cycle are separate measurements"),
])
def test_cli_bad_input(capsys, tmp_path, argv, message):
    code, _, err = run_cli(capsys, *(a.format(tmp=tmp_path) for a in argv))
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err)


@pytest.mark.skipif(missing_simulator("verilator") is not None,
                    reason=str(missing_simulator("verilator")))
def test_cli_bench_replay_table(capsys, monkeypatch, trace):
    """The table's plumbing; cocotb's rate and the synthesis are stand-ins here (their own
    tests run them), the replay and the golden run are real."""
    from gpurf.sim import bench
    from gpurf.synth import flow

    monkeypatch.setattr(bench, "_cocotb", lambda block, sim, cycles, seed, params:
                        bench.Throughput(block.qualname, sim, cycles, 2.0))
    monkeypatch.setattr(flow, "synthesize", lambda block, params: type("R", (), {"cells": 123}))
    code, out, _ = run_cli(capsys, "bench", "--replay", trace.path, "--cycles", 100)
    assert code == 0, out
    row = re.search(r"^\| subcore\.subcore_assigner \| defaults \| 1,500 \| ([\d,]+) \| "
                    r"([\d,]+) \| 50 \| ([\d,]+)x \| 123 \|$", out, re.MULTILINE)
    assert row, out
    assert int(row.group(1).replace(",", "")) > 0
