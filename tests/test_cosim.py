"""Every block's cocotb bench on every simulator, and on Amaranth's simulator.

The Amaranth tier runs the same stimulus generators as the cocotb benches (their
``STIMULI`` tuple) and is the fast one; the cocotb tiers check the generated Verilog: every
block's defaults on Verilator, its small test sets on Icarus (every set on both with
``--every-set``; see :func:`tests.blocks.cosim_configs`).
"""

import importlib

import pytest

from sim.runner import run_bench
from sim.toolchain import missing_simulator
from tb.harness import simulate_amaranth

from .blocks import block_configs, cosim_configs


def pytest_generate_tests(metafunc):
    if metafunc.definition.name == "test_cocotb":
        every_set = metafunc.config.getoption("--every-set")
        metafunc.parametrize(("block", "params", "sim"), cosim_configs(every_set=every_set))


def test_cocotb(block, params, sim, seed, cycles):
    reason = missing_simulator(sim)
    if reason:
        pytest.skip(reason)
    result = run_bench(block, params, sim=sim, seed=seed, cycles=cycles)
    stimuli = importlib.import_module(block.tb_module).STIMULI
    assert result.tests == len(stimuli), f"{block.tb_module}: {result.tests} cocotb tests ran"
    assert result.failed == 0, (f"{result.failed}/{result.tests} cocotb tests failed on {sim} "
                                f"(seed {seed}); see {result.results_xml.parent}")


@pytest.mark.parametrize(("block", "params"), block_configs(amaranth=True))
def test_amaranth_sim(block, params, seed):
    stimuli = importlib.import_module(block.tb_module).STIMULI
    assert stimuli, f"{block.tb_module} declares no stimuli"
    for stimulus in stimuli:
        compared = simulate_amaranth(block.build(params), block.golden(params), stimulus,
                                     block.resolve(params), seed, 400,
                                     label=f"{block.qualname}/{stimulus.__name__}")
        assert compared > 0
