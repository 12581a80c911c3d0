"""RTL in the loop (``gpurf.sim.sm.rtl``, ``gpurf.sim.rtl_loop``, ``gpurf sm run --rtl``).

The adapters are checked first without a simulator: a :class:`~gpurf.sim.sm.rtl.Port`
backed by the block's golden model must give the all-golden run (outputs, every statistic,
every instance's port traffic), and a broken one must stop the run at its first wrong output
with the instance, cycle and port. Then each block's Verilog runs in the loop under cocotb
(Icarus; Verilator in the ``soak`` tier) on a test-size kernel, compared with the all-golden
run by :func:`~gpurf.sim.rtl_loop.run_with_rtl`.
"""

import copy

import pytest

from gpurf.golden.trace import Trace
from gpurf.hw.registry import get_block
from gpurf.sim.cli import main
from gpurf.sim.rtl_loop import run_with_rtl
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.record import TraceFolder, record_run, sm_header
from gpurf.sim.sm.rtl import RTL_BLOCKS, RtlBlocks, RtlDivergenceError
from gpurf.sim.toolchain import missing_simulator

from .test_record import _amaranth_divergence, _stats


class GoldenPort:
    """A :class:`~gpurf.sim.sm.rtl.Port` on a golden model: ``evaluate`` steps a copy (no
    edge), ``tick`` steps the model with the inputs last applied."""

    def __init__(self, model):
        self.model, self.inputs = model, {}

    def reset(self):
        self.model.reset()

    def evaluate(self, inputs):
        self.inputs = dict(inputs)
        model = self.model
        shared = {id(getattr(model, name)): getattr(model, name)
                  for name in ("ports", "config", "_shared", "_read_ports", "_read_data")
                  if hasattr(model, name)}
        return copy.deepcopy(model, shared).step(self.inputs)

    def tick(self):
        self.model.step(self.inputs)


class NeverGrantsBank1(GoldenPort):
    """A collector whose bank 1 is never read: a broken RTL."""

    def evaluate(self, inputs):
        out = super().evaluate(inputs)
        out["read__1__valid"] = 0
        return out


def golden_ports(config, broken=None):
    from gpurf.sim.sm.record import (
        assigner_params,
        collector_params,
        scorer_params,
        selector_params,
    )

    params = {"operand_collector": collector_params, "rba_scorer": scorer_params,
              "warp_selector": selector_params, "subcore_assigner": assigner_params}

    def ports(name, index):
        model = get_block(f"subcore.{name}").golden(params[name](config))
        return (broken or GoldenPort)(model) if name == "operand_collector" else \
            GoldenPort(model)
    return ports


@pytest.mark.parametrize(("kernel", "pairs"), [("saxpy", ("scheduler=rba",))])
def test_golden_ports_give_the_golden_run(tmp_path, kernel, pairs):
    config = load_config(None, list(pairs))
    traces, mechanism = record_run(tmp_path / "golden", kernel, "test", config)
    golden = run_kernel(kernel, "test", timing=config, mechanism=mechanism)
    traces.close()
    mine = TraceFolder(tmp_path / "rtl", source={"kind": "kernel"}, sm=sm_header(config))
    blocks = RtlBlocks(RTL_BLOCKS, golden_ports(config), mine)
    run = run_kernel(kernel, "test", timing=config,
                     mechanism=lambda program: (program, {"blocks": blocks}))
    paths = mine.close()
    assert run.passed
    assert _stats(run) == _stats(golden)
    assert len(paths) == 13
    for path in paths:
        theirs = Trace(tmp_path / "golden" / path.name)
        for (cycle, inputs, outputs), (_, want_in, want_out) in zip(
                Trace(path).rows(), theirs.rows(), strict=True):
            assert inputs == want_in, (path.name, cycle)
            assert all(v is None or outputs[k] == v for k, v in want_out.items())


def test_a_broken_block_stops_the_run_where_it_goes_wrong():
    config = load_config(None, [])
    blocks = RtlBlocks(["operand_collector"], golden_ports(config, NeverGrantsBank1))
    with pytest.raises(RtlDivergenceError) as failure:
        run_kernel("bankconflict", "test", timing=config,
                   mechanism=lambda program: (program, {"blocks": blocks}))
    error = failure.value
    assert error.port == "read__1__valid"
    assert error.instance.startswith("launch000-operand_collector-sc")
    assert (error.expected, error.actual) == (1, 0)


def test_unknown_blocks_are_refused():
    with pytest.raises(ValueError, match="unknown RTL block"):
        RtlBlocks(["warp_picker"], golden_ports(load_config(None, [])))


BLOCK_RUNS = [("operand_collector", ()), ("warp_selector", ()), ("subcore_assigner", ()),
              ("rba_scorer", ("scheduler=rba",))]


def _loop(tmp_path, name, pairs, sim):
    if missing_simulator(sim):
        pytest.skip(missing_simulator(sim))
    result = run_with_rtl("saxpy", "test", load_config(None, list(pairs)), [name], sim=sim,
                          work=tmp_path)
    assert result.passed, result.summary()
    assert result.rtl_stats["cycles"] == result.golden_stats["cycles"]
    assert result.cycles_compared > 0


@pytest.mark.parametrize(("name", "pairs"), BLOCK_RUNS)
def test_block_in_the_loop_on_icarus(tmp_path, name, pairs):
    _loop(tmp_path, name, pairs, "icarus")


@pytest.mark.soak
@pytest.mark.parametrize(("name", "pairs"), BLOCK_RUNS)
def test_block_in_the_loop_on_verilator(tmp_path, name, pairs):
    _loop(tmp_path, name, pairs, "verilator")


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return done.value.code, out, err


@pytest.mark.parametrize(("argv", "message"), [
    (["--rtl", "warp_picker"], "unknown --rtl block warp_picker"),
    (["--sim", "icarus"], "--sim needs --rtl"),
    (["--rtl", "rba_scorer"], "the gto scheduler has no rba_scorer"),
    (["--rtl", "warp_selector", "--no-timing"], "--rtl needs --timing"),
    (["--rtl", "warp_selector", "--record", "x"], "--rtl needs --timing and no"),
])
def test_cli_rtl_bad_input(capsys, argv, message):
    code, _, err = run_cli(capsys, "sm", "run", "saxpy", *argv)
    assert code == 2
    assert message in err
    assert len(err.strip().splitlines()) == 1


def test_a_mutant_in_the_loop_is_reported_where_it_goes_wrong(tmp_path):
    """The RBA scorer counting invalid operands' queues (``tb.subcore.mutants``), in the
    loop on Icarus: the run stops at the scorer's first wrong score."""
    from amaranth.back import verilog

    from gpurf.sim.sm.record import scorer_params
    from gpurf.sim.toolchain import activate
    from gpurf.tb.subcore.mutants import InvalidOperandCounted

    if missing_simulator("icarus"):
        pytest.skip(missing_simulator("icarus"))
    activate()
    config = load_config(None, ["scheduler=rba"])
    block = get_block("subcore.rba_scorer")
    text = verilog.convert(InvalidOperandCounted(**block.resolve(scorer_params(config))),
                           name=block.toplevel, emit_src=False)
    result = run_with_rtl("saxpy", "test", config, ["rba_scorer"], sim="icarus",
                          work=tmp_path, verilog={"rba_scorer": text})
    assert not result.passed
    (problem,) = result.problems
    assert problem.startswith("first divergence: launch000-rba_scorer-sc")
    instance, rest = problem.removeprefix("first divergence: ").split(": cycle ")
    cycle, port = int(rest.split(",")[0]), rest.split("port ")[1].split(":")[0]
    golden = Trace(tmp_path / "golden" / f"{instance}.trace")
    mutant = InvalidOperandCounted(**block.resolve(scorer_params(config)))
    assert (cycle, port) == _amaranth_divergence(mutant, golden)
