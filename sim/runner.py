"""Build and run a block's cocotb bench on Icarus Verilog or Verilator (cocotb's Python runner).

Folders, under the block's build folder (:func:`gpurf.sim.verilog.build_dir`):

- ``build-<sim>[-waves]-<hash>/``: the simulator's model of the Verilog, named by the hash of
  what it is built from (Verilog text, simulator, arguments, tool versions), built under a
  file lock (``.lock`` beside it) and finished by a stamp, ``built``, written last. A model
  without its stamp (a build that was killed) is removed and built again, never run; runs of
  the same model share it.
- ``<sim>[-waves]-s<seed>-<run id>/``: one run's own folder (results, log, waves), so that
  two runs of one block never overwrite each other's files.
"""

import shutil
import uuid
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from filelock import FileLock

from gpurf.hw.registry import Block
from gpurf.tb.harness import BenchConfig, port_map

from .cache import cache_key, text_digest, tool_key
from .toolchain import SIMULATORS, activate, missing_simulator, verilator_build_args
from .verilog import build_dir, write_verilog

__all__ = ["BenchBuildError", "BenchRunError", "CosimResult", "SimulatorMissingError",
           "available_simulators", "build_model", "run_bench"]


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


def _public_ports(block: Block, params: dict[str, Any]) -> str:
    """A Verilator configuration file making the top-level ports (and only them) VPI
    read-writable for cocotb."""
    names = ["clk", "rst", *port_map(block.build(params))]
    lines = ["`verilator_config"]
    lines += [f'public_flat_rw -module "{block.toplevel}" -var "{name}"' for name in names]
    return "\n".join(lines) + "\n"


STAMP = "built"
"""The file a model's build folder gets last, when the simulator built it."""


def build_model(block: Block, params: dict[str, Any], *, sim: str, waves: bool,
                source: Path, root: Path | None = None) -> Path:
    """The folder holding ``sim``'s model of ``source``: built now, under a file lock, unless
    a finished build (with its stamp) is there."""
    from cocotb_tools.runner import get_runner

    config = _public_ports(block, params) if sim == "verilator" else ""
    args = (list(_ICARUS_ARGS) if sim == "icarus" else
            [*_VERILATOR_ARGS, *verilator_build_args(block.qualname)])
    digest = cache_key(text_digest(source.read_bytes()), sim, waves, args, config, tool_key())
    mode = f"{sim}-waves" if waves else sim
    folder = build_dir(block, params, root) / f"build-{mode}-{digest[:12]}"
    with FileLock(folder.with_name(folder.name + ".lock")):
        if (folder / STAMP).exists():
            return folder
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if config:
            (folder / "public_ports.vlt").write_text(config)
            args.append(str(folder / "public_ports.vlt"))
        try:
            get_runner(sim).build(sources=[source], hdl_toplevel=block.toplevel,
                                  build_dir=folder, waves=waves, timescale=("1ns", "1ps"),
                                  log_file=folder / "build.log", build_args=args)
        except (RuntimeError, SystemExit) as error:
            raise BenchBuildError(f"{sim} could not build {block.qualname} ({error}); "
                                  f"see {folder / 'build.log'}") from None
        (folder / STAMP).write_text(digest + "\n")
    return folder


def run_bench(block: Block, params: dict[str, Any] | None = None, *, sim: str = "icarus",
              cycles: int = 2000, seed: int = 1, waves: bool = False,
              testcase: str | None = None, root: Path | None = None,
              stop_at: int = 0) -> CosimResult:
    """Generate the block's Verilog, build it for ``sim`` and run ``tb/<mech>/test_<block>.py``.

    ``seed`` and ``cycles`` reach the bench through :class:`gpurf.tb.harness.BenchConfig`;
    ``waves`` dumps an FST (Icarus) or VCD (Verilator) into the run's folder; ``stop_at``
    (if not 0) ends the comparison after that many cycles, where the stimulus would go on.
    """
    from cocotb_tools.runner import get_results, get_runner

    reason = missing_simulator(sim)
    if reason:
        raise SimulatorMissingError(reason)
    activate()
    params = block.resolve(params)
    source = write_verilog(block, params, root)
    model = build_model(block, params, sim=sim, waves=waves, source=source, root=root)
    mode = f"{sim}-waves" if waves else sim
    work = build_dir(block, params, root) / f"{mode}-s{seed}-{uuid.uuid4().hex[:8]}"
    work.mkdir()
    plusargs = [f"+dumpfile_path={work / (block.toplevel + '.fst')}"] if waves else []
    config = BenchConfig(block=block.qualname, params=params, seed=seed, cycles=cycles,
                         stop_at=stop_at)
    results = work / "results.xml"
    try:
        get_runner(sim).test(test_module=block.tb_module, hdl_toplevel=block.toplevel,
                             hdl_toplevel_lang="verilog", build_dir=model, test_dir=work,
                             seed=seed, waves=waves,
                             testcase=testcase, extra_env=config.to_env(), plusargs=plusargs,
                             results_xml=str(results),
                             log_file=work / "test.log")
    except SystemExit:
        # cocotb's runner exits when the simulator failed or, under pytest, when a test
        # failed; the results file says which.
        if not results.exists():
            raise BenchRunError(f"{sim} run of {block.qualname} ended without results; "
                                f"see {work / 'test.log'}") from None
    tests, failed = get_results(results)
    return CosimResult(block.qualname, sim, tests, failed, results)


def available_simulators() -> list[str]:
    """Simulators that can run here, in the order the suite uses them."""
    return [sim for sim in SIMULATORS if missing_simulator(sim) is None]

