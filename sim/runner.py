"""Build and run a block's cocotb bench on Icarus Verilog or Verilator (cocotb's Python runner)."""

import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gpurf.hw.registry import Block
from gpurf.tb.harness import BenchConfig, port_map

from .toolchain import SIMULATORS, activate, missing_simulator
from .verilog import build_dir, write_verilog

__all__ = ["BenchBuildError", "BenchRunError", "CosimResult", "SimulatorMissingError", "run_bench"]


class SimulatorMissingError(RuntimeError):
    """The simulator asked for is not installed here."""


class BenchBuildError(RuntimeError):
    """The simulator could not build the generated Verilog; the message names the log."""


class BenchRunError(RuntimeError):
    """The simulator stopped without writing a results file; the message names the log."""


@dataclass(frozen=True)
class CosimResult:
    """What a bench run reported."""

    block: str
    simulator: str
    tests: int
    failed: int
    results_xml: Path

    @property
    def waves(self) -> list[Path]:
        """Wave dumps the run left (with ``waves=True``)."""
        folder = self.results_xml.parent
        return sorted([*folder.glob("*.fst"), *folder.glob("*.vcd")])

    @property
    def log(self) -> Path:
        """The simulator's output (cocotb's log) of the run."""
        return self.results_xml.parent / "test.log"

    @property
    def passed(self) -> bool:
        return self.tests > 0 and self.failed == 0

    @property
    def failures(self) -> list[str]:
        """``test: message`` of every failed cocotb test (from the results file)."""
        tree = ElementTree.parse(self.results_xml)
        return [f"{case.get('name')}: {problem.get('message')}"
                for case in tree.iter("testcase")
                for problem in (*case.findall("failure"), *case.findall("error"))]


_ICARUS_ARGS = ("-g2005",)
"""Verilog-2005 semantics (after cocotb's ``-g2012``; the last one counts): yosys writes
every combinational process as ``always @*`` with a trigger register initialised in its
declaration, an event at time 0 only under Verilog-2005. Under SystemVerilog rules a process
whose inputs keep their initial values never runs and its output stays X (seed 2036195225
of ``wir.register_alloc``)."""

_VERILATOR_ARGS = ("-Wno-fatal", "--x-assign", "0", "--x-initial", "0", "--no-public-flat-rw")
"""cocotb's runner makes every signal VPI-writable (``--public-flat-rw``), which keeps every
Amaranth-named wire alive and multiplies the C++ Verilator compiles; the benches only touch
the top-level ports, so only those are made public (:func:`_public_ports`)."""


def _public_ports(block: Block, params: dict[str, Any], work: Path) -> Path:
    """A Verilator configuration file making the top-level ports (and only them) VPI
    read-writable for cocotb."""
    names = ["clk", "rst", *port_map(block.build(params))]
    lines = ["`verilator_config"]
    lines += [f'public_flat_rw -module "{block.toplevel}" -var "{name}"' for name in names]
    work.mkdir(parents=True, exist_ok=True)
    path = work / "public_ports.vlt"
    path.write_text("\n".join(lines) + "\n")
    return path


def run_bench(block: Block, params: dict[str, Any] | None = None, *, sim: str = "icarus",
              cycles: int = 2000, seed: int = 1, waves: bool = False,
              testcase: str | None = None, root: Path | None = None) -> CosimResult:
    """Generate the block's Verilog, build it for ``sim`` and run ``tb/<mech>/test_<block>.py``.

    ``seed`` and ``cycles`` reach the bench through :class:`gpurf.tb.harness.BenchConfig`;
    ``waves`` dumps an FST (Verilator) or VCD/FST (Icarus) into the build folder.
    """
    from cocotb_tools.runner import get_results, get_runner

    reason = missing_simulator(sim)
    if reason:
        raise SimulatorMissingError(reason)
    activate()
    params = block.resolve(params)
    source = write_verilog(block, params, root)
    work = build_dir(block, params, root) / (f"{sim}-waves" if waves else sim)
    runner = get_runner(sim)
    build_args = (list(_ICARUS_ARGS) if sim == "icarus" else
                  [*_VERILATOR_ARGS, str(_public_ports(block, params, work))])
    try:
        runner.build(sources=[source], hdl_toplevel=block.toplevel, build_dir=work,
                     waves=waves, timescale=("1ns", "1ps"), log_file=work / "build.log",
                     build_args=build_args)
    except RuntimeError as error:
        raise BenchBuildError(f"{sim} could not build {block.qualname} ({error}); "
                              f"see {work / 'build.log'}") from None
    config = BenchConfig(block=block.qualname, params=params, seed=seed, cycles=cycles)
    results = work / "results.xml"
    results.unlink(missing_ok=True)
    try:
        runner.test(test_module=block.tb_module, hdl_toplevel=block.toplevel,
                    build_dir=work, test_dir=work, seed=seed, waves=waves,
                    testcase=testcase, extra_env=config.to_env(),
                    results_xml=str(results), log_file=work / "test.log")
    except SystemExit:
        # Under pytest, cocotb's runner exits when a test failed; the results file says which.
        if not results.exists():
            raise BenchRunError(f"{sim} run of {block.qualname} ended without results; "
                                f"see {work / 'test.log'}") from None
    tests, failed = get_results(results)
    return CosimResult(block.qualname, sim, tests, failed, results)


def available_simulators() -> list[str]:
    """Simulators that can run here, in the order the suite uses them."""
    return [sim for sim in SIMULATORS if missing_simulator(sim) is None]

