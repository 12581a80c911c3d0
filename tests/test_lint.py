"""Generated Verilog of every registered block passes Verilator's lint, and the lint can fail:
a dead input port and an unread register are findings."""

import pytest
from amaranth import Module, Signal
from amaranth.back import verilog
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gpurf.sim.lint import UNUSED_PORTS, WAIVED, lint, unused_state
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


class _DeadLogic(wiring.Component):
    """An input nobody reads (``ignored``) and a register nobody reads (``shadow``)."""

    def __init__(self):
        super().__init__({"used": In(4), "ignored": In(4), "out": Out(4)})

    def elaborate(self, platform):
        m = Module()
        shadow = Signal(4)
        m.d.sync += [self.out.eq(self.used + 1), shadow.eq(self.used)]
        return m


@pytest.mark.skipif(missing_simulator("verilator") is not None,
                    reason=str(missing_simulator("verilator")))
def test_dead_input_port_and_unread_register_are_findings(tmp_path):
    path = tmp_path / "dead_logic.v"
    path.write_text(verilog.convert(_DeadLogic(), name="dead_logic", emit_src=False))
    result = lint(path)
    assert result.findings == ["UNUSEDSIGNAL dead_logic.ignored",
                               "UNUSEDSIGNAL dead_logic.shadow"], result.output


def test_a_waived_port_is_not_a_finding():
    verilog_text = "module subcore_warp_selector(greedy);\n  input [3:0] greedy;\nendmodule\n"
    warning = ("%Warning-UNUSEDSIGNAL: x.v:2:15: Signal is not used: 'greedy'\n")
    assert "greedy" in UNUSED_PORTS[("subcore_warp_selector", "greedy")]
    assert unused_state(verilog_text, warning) == []
    assert unused_state(verilog_text.replace("subcore_warp_selector", "other"), warning) == [
        "UNUSEDSIGNAL other.greedy"]
