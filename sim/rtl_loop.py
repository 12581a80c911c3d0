"""``gpurf sm run KERNEL --rtl BLOCK[,BLOCK...]``: the golden SM with RTL blocks in the loop.

:func:`run_with_rtl` generates one top module holding an instance of each chosen block's
Verilog per sub-core (each with its own ``clk`` and ``rst``, so every instance is clocked
only in the cycles the SM runs it, as the golden block is stepped), builds it with cocotb's
runner and runs :func:`rtl_loop` (this module's cocotb test) in the simulator. There the SM
runs in a thread of cocotb's :func:`~cocotb.bridge`; each adapter of
:mod:`gpurf.sim.sm.rtl` reaches its instance through a :class:`CocotbPort` whose calls
:func:`~cocotb.resume` into the simulator (write the inputs, wait 1 ns for the logic to
settle, read the outputs; a clock edge is two more steps). The SM gets the ports handed in;
it imports nothing of cocotb.

The parent process runs the same kernel all-golden with a recording
(:mod:`gpurf.sim.sm.record`) and compares: the outputs, every timing statistic (the cycle
count among them) and every block instance's port traffic cycle by cycle (the RTL run
writes what its instances saw and answered: issued warp and issue acceptance per
collector, dispatches, bank grants, scores, picks, sub-core choices).
"""

import contextlib
import dataclasses
import json
import os
import shutil
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from gpurf.golden.trace import Trace, layout_of
from gpurf.hw.registry import get_block
from gpurf.sim.sm.config import SMConfig
from gpurf.sim.sm.record import (
    TraceFolder,
    assigner_params,
    collector_params,
    record_run,
    scorer_params,
    selector_params,
    sm_header,
)
from gpurf.sim.sm.rtl import RTL_BLOCKS, RtlBlocks, instances

from .replay import has_port
from .toolchain import activate, missing_simulator
from .verilog import BUILD_ROOT, verilog_text

__all__ = ["TOP", "LoopResult", "rtl_loop", "run_with_rtl", "top_verilog"]

TOP = "gpurf_rtl_loop"
"""The generated top module."""

_PREFIX = {"operand_collector": "oc", "rba_scorer": "rs", "warp_selector": "ws",
           "subcore_assigner": "sa"}

_PARAMS = {"operand_collector": collector_params, "rba_scorer": scorer_params,
           "warp_selector": selector_params, "subcore_assigner": assigner_params}

_ENV = "GPURF_RTL_LOOP"
"""The environment variable that hands the cocotb test its job (a JSON file)."""


def _instance_ports(name: str, config: SMConfig):
    """``(block, params, Verilog text, clocked, [(port, direction, width)])``."""
    block = get_block(f"subcore.{name}")
    params = block.resolve(_PARAMS[name](config))
    text = verilog_text(block, params)
    layout = layout_of(block.build(params))
    ports = [(c.name, c.direction, c.width) for c in layout.columns]
    clocked = has_port(text, "clk")
    if clocked:
        ports = [("clk", "in", 1), ("rst", "in", 1), *ports]
    return block, params, text, clocked, ports


def top_verilog(rtl, config: SMConfig, verilog=None) -> tuple[str, list[str]]:
    """The top module (:data:`TOP`) with every instance of the blocks ``rtl``, and the
    blocks' own Verilog texts (``verilog``: block name -> a variant's text, same module and
    ports, e.g. a mutant). Instance ``<prefix><index>`` (``oc0``, ``ws3``, ``sa0``) has
    the ports ``<prefix><index>_<port>``."""
    declarations, bodies, texts = [], [], []
    for name in rtl:
        block, _, text, _, ports = _instance_ports(name, config)
        texts.append((verilog or {}).get(name, text))
        for index in range(instances(config, name)):
            instance = f"{_PREFIX[name]}{index}"
            connections = []
            for port, direction, width in ports:
                kind = "input" if direction == "in" else "output"
                bits = f"[{width - 1}:0] " if width > 1 else ""
                declarations.append(f"  {kind} {bits}{instance}_{port}")
                connections.append(f"    .{port}({instance}_{port})")
            bodies.append(f"  {block.toplevel} {instance} (\n" + ",\n".join(connections)
                          + "\n  );")
    top = (f"module {TOP} (\n" + ",\n".join(declarations) + "\n);\n"
           + "\n".join(bodies) + "\nendmodule\n")
    return top, texts


class CocotbPort:
    """A :class:`gpurf.sim.sm.rtl.Port` on instance ``prefix`` of the top module, driven
    from the SM's thread through :func:`cocotb.resume`."""

    def __init__(self, dut, prefix: str, inputs, outputs, clocked: bool, resume):
        self.inputs = {name: getattr(dut, f"{prefix}_{name}") for name in inputs}
        self.outputs = {name: getattr(dut, f"{prefix}_{name}") for name in outputs}
        self.clk = getattr(dut, f"{prefix}_clk") if clocked else None
        self.rst = getattr(dut, f"{prefix}_rst") if clocked else None
        self._evaluate = resume(self._evaluate_async)
        self._tick = resume(self._tick_async)
        self._reset = resume(self._reset_async)

    async def _evaluate_async(self, inputs):
        from cocotb.triggers import Timer

        for name, handle in self.inputs.items():
            handle.value = inputs.get(name, 0)
        await Timer(1, unit="ns")
        return {name: int(handle.value) for name, handle in self.outputs.items()}

    async def _tick_async(self):
        from cocotb.triggers import Timer

        self.clk.value = 1
        await Timer(1, unit="ns")
        self.clk.value = 0
        await Timer(1, unit="ns")

    async def _reset_async(self):
        from cocotb.triggers import Timer

        for handle in self.inputs.values():
            handle.value = 0
        if self.clk is not None:
            self.rst.value = 1
            await self._tick_async()
            self.rst.value = 0
        await Timer(1, unit="ns")

    def evaluate(self, inputs: dict[str, int]) -> dict[str, int]:
        return self._evaluate(inputs)

    def tick(self) -> None:
        if self.clk is not None:
            self._tick()

    def reset(self) -> None:
        self._reset()


def _bridge():
    try:
        from cocotb import bridge, resume
    except ImportError:      # cocotb 2.1 exports them lazily, inside a simulation only
        from cocotb._bridge import bridge, resume
    return bridge, resume


def _run_sm(dut, job: dict, resume) -> dict:
    """The SM's run inside the simulation (a bridge thread): results as JSON-able data."""
    from gpurf.sim.sm import run_kernel
    from gpurf.sim.sm.rtl import RtlDivergenceError

    config = SMConfig(**job["config"])
    shapes = {name: _instance_ports(name, config) for name in job["rtl"]}

    def ports(name, index):
        _, _, _, clocked, columns = shapes[name]
        inputs = [p for p, d, _ in columns if d == "in" and p not in ("clk", "rst")]
        outputs = [p for p, d, _ in columns if d == "out"]
        return CocotbPort(dut, f"{_PREFIX[name]}{index}", inputs, outputs, clocked, resume)

    traces = TraceFolder(job["traces"], source={"kind": "kernel", "kernel": job["kernel"],
                                                "size": job["size"], "rtl": job["rtl"]},
                         sm=sm_header(config))
    blocks = RtlBlocks(job["rtl"], ports, traces)
    start, cpu = time.perf_counter(), time.process_time()
    try:
        run = run_kernel(job["kernel"], job["size"], timing=config,
                         mechanism=lambda program: (program, {"blocks": blocks}))
    except RtlDivergenceError as error:
        traces.close()
        return {"divergence": str(error)}
    traces.close()
    stats = run.stats["timing"].as_dict()
    return {"passed": run.passed, "stats": stats, "seconds": time.perf_counter() - start,
            "cpu_seconds": time.process_time() - cpu}


def _cocotb_test():
    import cocotb

    @cocotb.test()
    async def rtl_loop(dut):
        """Run the job of ``$GPURF_RTL_LOOP`` with its blocks on this simulation's RTL."""
        bridge, resume = _bridge()
        job_file = Path(os.environ[_ENV])
        job = json.loads(job_file.read_text())
        result = await bridge(_run_sm)(dut, job, resume)
        Path(job["result"]).write_text(json.dumps(result))

    return rtl_loop


with contextlib.suppress(ImportError, RuntimeError):
    import cocotb as _cocotb

    if _cocotb.is_simulation:
        rtl_loop = _cocotb_test()


@dataclass
class LoopResult:
    """An RTL-in-the-loop run beside the all-golden run of the same kernel."""

    kernel: str
    rtl: list[str]
    sim: str
    passed: bool
    """Outputs equal numpy, statistics and every instance's traffic equal the golden run's."""
    golden_stats: dict
    rtl_stats: dict | None
    problems: list[str] = field(default_factory=list)
    seconds: float = 0.0
    cpu_seconds: float = 0.0
    build_seconds: float = 0.0
    cycles_compared: int = 0
    work: str = ""
    """The run's folder: sources, build and logs, both runs' traces (``golden/``, ``rtl/``)."""

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        cycles = self.golden_stats.get("cycles")
        text = (f"{verdict} {self.kernel} with RTL {','.join(self.rtl)} on {self.sim}: "
                f"{cycles:,} SM cycles; {self.cycles_compared:,} block-instance cycles equal "
                f"the golden run's; SM run {self.seconds:.1f} s (its CPU {self.cpu_seconds:.1f} "
                f"s), build {self.build_seconds:.1f} s; {self.work}")
        return "\n".join([text, *(f"  {p}" for p in self.problems)])


def _compare_traces(golden: Path, rtl: Path) -> tuple[int, list[str]]:
    """Cycles compared and the differences between each RTL instance's traffic and the
    golden run's (inputs exactly; outputs under the golden mask)."""
    problems, cycles = [], 0
    for path in sorted(rtl.glob("*.trace")):
        mine, theirs = Trace(path), Trace(golden / path.name)
        if mine.cycles != theirs.cycles:
            problems.append(f"{path.stem}: {mine.cycles} cycles, golden {theirs.cycles}")
        for (cycle, inputs, outputs), (_, want_in, want_out) in zip(
                mine.rows(), theirs.rows(), strict=False):
            wrong = [k for k, v in want_out.items() if v is not None and outputs[k] != v]
            wrong += [k for k, v in want_in.items() if inputs[k] != v]
            if wrong:
                problems.append(f"{path.stem}: cycle {cycle}, ports {', '.join(wrong)} differ")
                break
            cycles += 1
    return cycles, problems


def run_with_rtl(kernel: str, size: str, config: SMConfig, rtl, *, sim: str = "icarus",
                 work: Path | None = None, verilog=None) -> LoopResult:
    """Run ``kernel`` with the blocks ``rtl`` (names of :data:`RTL_BLOCKS`) on ``sim``'s
    RTL and all-golden; compare (see the module docstring). ``work``: the run's folder
    (default a new one under ``build/rtl_loop/``): sources, build, both runs' traces;
    ``verilog``: block name -> Verilog text to use in place of the block's own."""
    from cocotb_tools.runner import get_runner

    from gpurf.sim.sm import run_kernel

    rtl = [name for name in RTL_BLOCKS if name in rtl]
    reason = missing_simulator(sim)
    if reason:
        raise RuntimeError(reason)
    activate()
    work = Path(work or BUILD_ROOT / "rtl_loop" / uuid.uuid4().hex[:10]).resolve()
    shutil.rmtree(work, ignore_errors=True)
    golden_traces, mechanism = record_run(work / "golden", kernel, size, config)
    golden = run_kernel(kernel, size, timing=config, mechanism=mechanism)
    golden_traces.close()
    golden_stats = json.loads(json.dumps(golden.stats["timing"].as_dict()))
    top, texts = top_verilog(rtl, config, verilog)
    sources = []
    for index, text in enumerate([*texts, top]):
        sources.append(work / f"source{index}.v")
        sources[-1].write_text(text)
    build = work / f"build-{sim}"
    start = time.perf_counter()
    args = ["-g2005"] if sim == "icarus" else ["-Wno-fatal", "--x-assign", "0",
                                               "--x-initial", "0"]
    get_runner(sim).build(sources=sources, hdl_toplevel=TOP, build_dir=build,
                          timescale=("1ns", "1ps"), build_args=args,
                          log_file=work / "build.log")
    build_seconds = time.perf_counter() - start
    job = {"kernel": kernel, "size": size, "rtl": rtl,
           "config": dataclasses.asdict(config), "traces": str(work / "rtl"),
           "result": str(work / "result.json")}
    (work / "job.json").write_text(json.dumps(job))
    with contextlib.suppress(SystemExit):
        get_runner(sim).test(test_module="gpurf.sim.rtl_loop", hdl_toplevel=TOP,
                             build_dir=build, test_dir=work, testcase="rtl_loop",
                             hdl_toplevel_lang="verilog",
                             extra_env={_ENV: str(work / "job.json")},
                             results_xml=str(work / "results.xml"), log_file=work / "test.log")
    result_file = work / "result.json"
    if not result_file.exists():
        raise RuntimeError(f"the {sim} run ended without a result; see {work / 'test.log'}")
    answer = json.loads(result_file.read_text())
    problems = []
    if "divergence" in answer:
        problems.append(f"first divergence: {answer['divergence']}")
        return LoopResult(kernel, rtl, sim, False, golden_stats, None, problems,
                          build_seconds=build_seconds, work=str(work))
    stats = answer["stats"]
    if not answer["passed"]:
        problems.append("outputs differ from the numpy reference")
    for key in sorted(set(stats) | set(golden_stats)):
        if key != "seconds" and stats.get(key) != golden_stats.get(key):
            problems.append(f"statistic {key}: RTL {stats.get(key)}, golden "
                            f"{golden_stats.get(key)}")
    cycles, differences = _compare_traces(work / "golden", work / "rtl")
    problems += differences
    return LoopResult(kernel, rtl, sim, not problems, golden_stats, stats, problems,
                      answer["seconds"], answer["cpu_seconds"], build_seconds, cycles, str(work))
