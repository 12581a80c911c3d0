"""Recording a kernel's block traffic (``gpurf.sim.sm.record``, ``gpurf sm run --record``).

Two test-size kernels are recorded: ``fma_subcore/unbalanced`` on the default configuration
(GTO: collectors, warp selectors, the assigner) and ``bankconflict`` under RBA (scorers
too). Checked: recording leaves the run as it is (outputs, every statistic, so the SM's
inlined fast path and the blocks' methods agree); every trace steps clean through its
golden model's ``step`` (the recorded ports are exactly what ``step`` sees and returns);
the shortest trace of each block replays clean on Icarus (every trace, on Icarus and
Verilator, in the ``soak`` tier: Verilator's builds take minutes, Icarus runs the
collector at a few hundred cycles/s); mutants of the collector and the scorer fail the
replay at the cycle and port where Amaranth's own simulation of the same mutant on the
trace's inputs first differs.
"""

import json

import pytest
from amaranth.back import verilog

from gpurf.golden.trace import Trace
from gpurf.sim.cli import main
from gpurf.sim.replay import replay
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.record import record_run
from gpurf.sim.toolchain import activate, missing_simulator
from gpurf.tb.harness import MismatchError, simulate_amaranth
from gpurf.tb.subcore.mutants import InvalidOperandCounted, WriteIgnored

RUNS = {"fma_subcore/unbalanced": (), "bankconflict": ("scheduler=rba",)}


def _stats(run) -> dict:
    stats = run.stats["timing"].as_dict()
    stats.pop("seconds")
    return stats


@pytest.fixture(scope="module", params=list(RUNS))
def recorded(request, tmp_path_factory):
    """``(kernel, recorded run, plain run, trace paths)``."""
    kernel = request.param
    config = load_config(None, list(RUNS[kernel]))
    folder = tmp_path_factory.mktemp("traces")
    traces, mechanism = record_run(folder, kernel, "test", config)
    run = run_kernel(kernel, "test", timing=config, mechanism=mechanism)
    paths = traces.close()
    return kernel, run, run_kernel(kernel, "test", timing=config), paths


def test_recording_leaves_the_run_as_it_is(recorded):
    _, run, plain, _ = recorded
    assert run.passed
    assert _stats(run) == _stats(plain)


def test_one_trace_per_block_instance(recorded):
    kernel, _, _, paths = recorded
    blocks = sorted(Trace(p).block for p in paths)
    subcores = 4
    expected = ["subcore.operand_collector"] * subcores + ["subcore.subcore_assigner"]
    expected += ["subcore.warp_selector"] * subcores
    if kernel == "bankconflict":
        expected += ["subcore.rba_scorer"] * subcores
    assert blocks == sorted(expected)
    for path in paths:
        trace = Trace(path)
        trace.check_block()
        assert trace.cycles > 0
        assert trace.header["source"]["kernel"] == kernel
        assert trace.header["sm"]["subcores"] == subcores
        if trace.block == "subcore.operand_collector":
            assert trace.header["unmodeled"] == ["read__0__data", "read__1__data"]



def test_traces_step_clean_on_the_golden_models(recorded):
    """The traffic the SM sends through the blocks' methods (and, unrecorded, through its
    inlined fast path: same statistics above) is what the models' ``step`` answers."""
    for path in recorded[3]:
        assert Trace(path).golden_divergence() == -1, path


def _replay_all(paths, sim):
    if missing_simulator(sim):
        pytest.skip(missing_simulator(sim))
    for path in paths:
        result = replay(path, sim=sim)
        assert result.passed, result.summary()
        assert result.cycles == Trace(path).cycles


def _shortest_per_block(paths):
    shortest = {}
    for path in paths:
        trace = Trace(path)
        if trace.block not in shortest or trace.cycles < shortest[trace.block][0]:
            shortest[trace.block] = (trace.cycles, path)
    return [path for _, path in shortest.values()]


def test_shortest_traces_replay_clean_on_icarus(recorded):
    """One instance per block (the shortest trace: Icarus runs the collector at a few
    hundred cycles/s); every trace in the ``soak`` tier."""
    _replay_all(_shortest_per_block(recorded[3]), "icarus")


@pytest.mark.soak
@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_traces_replay_clean(recorded, sim):
    _replay_all(recorded[3], sim)


def _amaranth_divergence(component, trace: Trace) -> tuple[int, str]:
    """``(cycle, port)`` where Amaranth's simulation of ``component`` on the trace's inputs
    first differs from its recorded outputs (the truth a replay must report)."""
    rows = trace.rows()

    class Recorded:
        def reset(self):
            self.cycle = 0

        def step(self, inputs):
            outputs = rows[self.cycle][2]
            self.cycle += 1
            return outputs

        def line_trace(self):
            return "recorded outputs"

    def stimulus(params, rng, cycles):
        for _, inputs, _ in rows:
            yield inputs

    with pytest.raises(MismatchError) as failure:
        simulate_amaranth(component, Recorded(), stimulus, {}, 0, trace.cycles)
    cycle, port = str(failure.value).split("cycle ")[1].split(", port ")
    return int(cycle), port.split(":")[0]


MUTANTS = [("operand_collector", WriteIgnored), ("rba_scorer", InvalidOperandCounted)]


@pytest.mark.parametrize("sim", ["icarus", pytest.param("verilator", marks=pytest.mark.soak)])
@pytest.mark.parametrize(("instance", "mutant"), MUTANTS)
def test_mutant_fails_at_the_right_cycle_and_port(recorded, tmp_path, instance, mutant, sim):
    if recorded[0] != "bankconflict":
        pytest.skip("the scorer runs under RBA: bankconflict's recording")
    if missing_simulator(sim):
        pytest.skip(missing_simulator(sim))
    (path,) = [p for p in recorded[3] if p.name == f"launch000-{instance}-sc0.trace"]
    trace = Trace(path)
    block, params = trace.check_block()
    cycle, port = _amaranth_divergence(mutant(**params), trace)
    activate()
    source = tmp_path / f"{block.toplevel}.v"
    source.write_text(verilog.convert(mutant(**params), name=block.toplevel, emit_src=False))
    result = replay(trace, sim=sim, verilog=source)
    assert not result.passed
    assert result.divergence.cycle == cycle
    assert port in [p.port for p in result.divergence.ports]


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_cli_records(capsys, tmp_path):
    code, out, err = run_cli(capsys, "sm", "run", "saxpy", "--record", tmp_path / "t",
                             "--json")
    assert code == 0
    assert json.loads(out)["passed"]
    assert "recorded 9 traces into" in err
    assert len(list((tmp_path / "t").glob("*.trace"))) == 9


@pytest.mark.parametrize(("argv", "message"), [
    (["--no-timing"], "--record needs --timing"),
    (["--mechanism", "regless"], "of the mechanisms, compression, greener, wir"),
    (["--mechanism", "greener:always"], "unknown GReEneR policy 'always'"),
    (["--existing"], "already holds traces"),
])
def test_cli_record_bad_input(capsys, tmp_path, argv, message):
    folder = tmp_path / "t"
    if argv == ["--existing"]:
        folder.mkdir()
        (folder / "old.trace").write_bytes(b"")
        argv = []
    code, _, err = run_cli(capsys, "sm", "run", "saxpy", "--record", folder, *argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1



def test_cli_records_greener_blocks(capsys, tmp_path):
    """GReEneR's blocks of every sub-core join the recording (``mechanism_recorder``) and
    step clean through their golden models."""
    code, out, _ = run_cli(capsys, "sm", "run", "saxpy", "--mechanism", "greener",
                           "--record", tmp_path / "t")
    assert code == 0
    assert "recorded 17 traces" in out and "PASS saxpy" in out
    paths = sorted((tmp_path / "t").glob("*.trace"))
    blocks = sorted({Trace(p).block for p in paths})
    assert blocks == ["greener.correction_table", "greener.power_controller",
                      "greener.scoreboard_ext", "subcore.operand_collector",
                      "subcore.subcore_assigner"]
    for path in paths:
        assert Trace(path).header["source"]["mechanism"] == "greener:greener"
        assert Trace(path).golden_divergence() == -1, path
