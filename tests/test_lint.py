"""Generated Verilog of every registered block passes Verilator's lint."""

import pytest

from gpurf.sim.lint import WAIVED, lint
from gpurf.sim.toolchain import missing_simulator
from gpurf.sim.verilog import write_verilog

from .blocks import block_configs


@pytest.mark.skipif(missing_simulator("verilator") is not None,
                    reason=str(missing_simulator("verilator")))
@pytest.mark.parametrize(("block", "params"), block_configs(lint=True))
def test_verilator_lint_clean(block, params):
    result = lint(write_verilog(block, params))
    assert not result.plain, f"--lint-only warnings:\n{result.output}"
    assert not result.findings, f"-Wall warnings outside {WAIVED}:\n{result.output}"
