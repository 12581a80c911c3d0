"""Every block's cocotb bench on every simulator, and on Amaranth's simulator.

The Amaranth tier runs the same stimulus generators as the cocotb benches (their
``STIMULI`` tuple) and is the fast one; the cocotb tiers check the generated Verilog: every
block's defaults on Verilator, its small test sets on Icarus (every set on both with
``--every-set``; see :func:`tests.blocks.cosim_configs`).
"""

import importlib

import pytest

from gpurf.hw.registry import get_block
from gpurf.sim.runner import run_bench
from gpurf.sim.toolchain import missing_simulator
from gpurf.tb.harness import simulate_amaranth

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
                                f"(seed {seed}): {result.failures}; see {result.log}")


@pytest.mark.parametrize(("block", "params"), block_configs(amaranth=True))
def test_amaranth_sim(block, params, seed):
    stimuli = importlib.import_module(block.tb_module).STIMULI
    assert stimuli, f"{block.tb_module} declares no stimuli"
    for stimulus in stimuli:
        compared = simulate_amaranth(block.build(params), block.golden(params), stimulus,
                                     block.resolve(params), seed, 400,
                                     label=f"{block.qualname}/{stimulus.__name__}")
        assert compared > 0


@pytest.mark.parametrize(("name", "index", "sim", "seed", "testcase"), [
    pytest.param("wir.register_alloc", 1, "icarus", 2036195225, "test_random_stream",
                 id="icarus-runs-processes-at-time-0"),
])
def test_seed_that_once_failed(name, index, sim, seed, testcase, cycles):
    """Seeds that found a bug, on the simulator that showed it.
    ``icarus-runs-processes-at-time-0``: under SystemVerilog rules Icarus never ran the case
    statement of ``hw.gates.select`` while the VSB's valid bits and index kept their initial
    values, so the first lookup of value 0 read X (see ``sim.runner._ICARUS_ARGS``)."""
    reason = missing_simulator(sim)
    if reason:
        pytest.skip(reason)
    block = get_block(name)
    params = ({}, *block.test_params)[index]
    result = run_bench(block, params, sim=sim, seed=seed, cycles=cycles, testcase=testcase)
    assert (result.tests, result.failed) == (1, 0), f"{result.failures}; see {result.log}"
