"""Cosimulation throughput: cycles per second of a block's random bench, per simulator.

The measured run is the first stimulus of the block's bench (by convention its random
stream) at default parameters: RTL and golden model stepped and compared every cycle.
Icarus and Verilator figures come from cocotb's ``results.xml`` (simulated time over the
10 ns clock period, divided by the test's wall time, build excluded); the Amaranth figure
times :func:`gpurf.tb.harness.simulate_amaranth` on the same stimulus. :func:`measure_golden`
times the golden model and its stimulus alone (:func:`gpurf.tb.harness.run_golden`).

:func:`measure_replay` puts a trace's replay on Verilator (:mod:`gpurf.sim.replay`; the
replay loop timed inside the binary, build excluded, best of three runs) beside the
golden-only and per-cycle cocotb rates of the same block configuration and its size in cells.

:func:`measure_per_cycle` splits the per-cycle cocotb path's cost in CPU time: the whole
lock-step loop, the golden model with its stimulus, and the rest (simulator, cocotb,
harness); CPU time because the wall time of a shared machine measures its load.

:func:`measure_kernel` times the SM model instead: warp instructions per second of a workload
of ``sim/kernels``, functional only and on the timing model (build of the program and
reference check excluded).
"""

import importlib
import resource
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from gpurf.hw.registry import Block
from gpurf.tb.harness import CLOCK_PERIOD_NS, run_golden, simulate_amaranth

from .replay import replay
from .runner import available_simulators, run_bench

__all__ = ["KernelThroughput", "PerCycleCost", "ReplayThroughput", "Throughput", "measure",
           "measure_golden", "measure_kernel", "measure_kernels", "measure_per_cycle",
           "measure_replay", "parameter_sets"]


@dataclass(frozen=True)
class Throughput:
    block: str
    simulator: str
    cycles: int
    seconds: float

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.seconds


def _random_stimulus(block: Block):
    return importlib.import_module(block.tb_module).STIMULI[0]


def _cocotb(block: Block, sim: str, cycles: int, seed: int,
            params: dict | None = None) -> Throughput:
    stimulus = _random_stimulus(block)
    # stop_at: a stimulus that runs its work to the end (the shard's regions) is timed over
    # the cycles asked for, like a random one.
    result = run_bench(block, params, sim=sim, cycles=cycles, seed=seed,
                       testcase=f"test_{stimulus.__name__}", stop_at=cycles)
    if not result.passed:
        raise RuntimeError(f"{block.qualname} failed on {sim}; see {result.log}")
    case = ET.parse(result.results_xml).find(".//testcase")
    props = {p.get("name"): p.get("value") for p in case.iter("property")}
    simulated = float(props["sim_time_duration"]) / CLOCK_PERIOD_NS
    return Throughput(block.qualname, sim, round(simulated), float(case.get("time")))


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


@dataclass(frozen=True)
class PerCycleCost:
    """Where a cycle of the per-cycle cocotb path goes, in process CPU seconds.

    ``cosim_cpu_seconds`` is the simulator process's CPU time of ``cycles`` lock-step
    cycles (RTL, cocotb, harness, golden model and stimulus); ``golden_cpu_seconds`` that of
    the golden model and its stimulus alone (:func:`gpurf.tb.harness.run_golden`) over the
    same cycles. The rest is the *cocotb side*: the simulator, cocotb's scheduler and the
    harness's port access and compare. ``wall`` is the rate ``gpurf bench`` reports (the
    test's wall time in cocotb's results), which on a loaded machine mostly measures the load.
    ``cells`` is the configuration's size after synthesis (``gpurf synth``), when asked for.
    """

    block: str
    params: dict
    cycles: int
    wall: float
    cosim_cpu_seconds: float
    golden_cpu_seconds: float
    cells: int | None = None
    label: str = "defaults"

    @property
    def cpu(self) -> float:
        """Lock-step cycles per CPU second."""
        return self.cycles / self.cosim_cpu_seconds

    @property
    def golden(self) -> float:
        """Golden model and stimulus alone: cycles per CPU second."""
        return self.cycles / self.golden_cpu_seconds

    @property
    def cocotb_side(self) -> float:
        """Cycles per CPU second of the lock-step path without the golden model and stimulus."""
        rest = self.cosim_cpu_seconds - self.golden_cpu_seconds
        return self.cycles / rest if rest > 0 else float("inf")

    def as_dict(self) -> dict:
        return {"block": self.block, "set": self.label, "params": self.params,
                "cycles": self.cycles,
                "cpu_seconds": self.cosim_cpu_seconds, "cells": self.cells,
                "wall_cycles_per_second": self.wall, "cpu_cycles_per_second": self.cpu,
                "golden_cycles_per_second": self.golden,
                "cocotb_side_cycles_per_second": self.cocotb_side}


PARAMETER_SETS = ("defaults", "test", "all")
"""What ``gpurf bench --per-cycle --sets`` measures: the defaults, the test sets, or both."""


def parameter_sets(block: Block, sets: str = "defaults") -> list[tuple[str, dict]]:
    """``(label, overrides)`` per configuration of ``block`` that ``sets`` names: ``defaults``
    (what the suite cosimulates on Verilator), ``test`` (the block's registered
    ``test_params``, what it cosimulates on Icarus, labelled ``test[i]``; a block without any
    gives its defaults) or ``all``."""
    if sets not in PARAMETER_SETS:
        raise ValueError(f"parameter sets are one of {', '.join(PARAMETER_SETS)}, not {sets!r}")
    tests = [(f"test[{index}]", dict(params)) for index, params in enumerate(block.test_params)]
    if sets == "test":
        return tests or [("defaults", {})]
    return [("defaults", {}), *tests] if sets == "all" else [("defaults", {})]


def measure_per_cycle(block: Block, *, cycles: int, seed: int, params: dict | None = None,
                      sim: str = "verilator", short: int = 200, cells: bool = False,
                      label: str = "defaults") -> PerCycleCost:
    """:class:`PerCycleCost` of the block's first stimulus at ``params`` on ``sim``.

    The simulator process's CPU time is read from this process's children's resource usage
    around two runs, of ``short`` and ``short + cycles`` cycles, and their difference
    counts: start-up (imports, model construction, elaboration) cancels out, and CPU time,
    unlike wall time, does not grow with the other jobs of a shared machine. The model is
    built before either run. With ``cells`` the configuration is synthesized (or its figures
    taken from the synthesis cache) for :attr:`PerCycleCost.cells`; ``label`` names the
    configuration in the result (see :func:`parameter_sets`).
    """
    params = block.resolve(params)
    _cocotb(block, sim, short, seed, params)
    before = _children_cpu_seconds()
    short_run = _cocotb(block, sim, short, seed, params)
    middle = _children_cpu_seconds()
    long_run = _cocotb(block, sim, short + cycles, seed, params)
    after = _children_cpu_seconds()
    counted = long_run.cycles - short_run.cycles
    if counted <= 0:
        named = block.qualname if label == "defaults" else f"{block.qualname} {label}"
        raise ValueError(f"{named}: its first stimulus ran {long_run.cycles} cycles "
                         f"when asked for {short + cycles}, as many as when asked for {short}: "
                         f"it ends on its own, so no difference of runs can be measured")
    model, start = block.golden(params), time.process_time()
    stepped = run_golden(model, _random_stimulus(block), params, seed, short + cycles)
    golden = (time.process_time() - start) * counted / stepped
    size = _cells(block, params) if cells else None
    return PerCycleCost(block.qualname, params, counted, long_run.cycles_per_second,
                        (after - middle) - (middle - before), golden, size, label)


def _cells(block: Block, params: dict) -> int:
    from gpurf.synth.flow import synthesize

    return synthesize(block, params).cells


def _amaranth(block: Block, cycles: int, seed: int) -> Throughput:
    start = time.perf_counter()
    compared = simulate_amaranth(block.build(), block.golden(), _random_stimulus(block),
                                 block.resolve(), seed, cycles)
    return Throughput(block.qualname, "amaranth", compared, time.perf_counter() - start)


def measure_golden(block: Block, *, cycles: int, seed: int) -> list[Throughput]:
    """Cycles/s of the golden model driven by the block's random stimulus alone (no
    simulator), at each of the block's test configurations (``simulator`` names the set:
    ``golden[i]`` for ``test_params[i]``; ``golden`` for a block without test sets)."""
    runs, stimulus = [], _random_stimulus(block)
    for index, params in enumerate(block.test_params or ({},)):
        label = f"golden[{index}]" if block.test_params else "golden"
        model = block.golden(params)
        start = time.perf_counter()
        compared = run_golden(model, stimulus, block.resolve(params), seed, cycles)
        runs.append(Throughput(block.qualname, label, compared, time.perf_counter() - start))
    return runs


def measure(block: Block, *, cycles: int, seed: int) -> list[Throughput]:
    """Throughput of ``block`` on every available simulator and on Amaranth's."""
    runs = [_cocotb(block, sim, cycles, seed) for sim in available_simulators()]
    return [*runs, _amaranth(block, cycles, seed)]


@dataclass(frozen=True)
class KernelThroughput:
    kernel: str
    size: str
    warp_instructions: int
    seconds: float
    passed: bool
    timing_seconds: float = 0.0
    timing_cpu_seconds: float = 0.0
    cycles: int = 0
    scheduler: str = "gto"
    timing_core: str = ""
    """Which timing loop ran (``"compiled"``, or ``"python (why)"``)."""

    @property
    def warp_instructions_per_second(self) -> float:
        return self.warp_instructions / self.seconds

    @property
    def timing_warp_instructions_per_second(self) -> float:
        return self.warp_instructions / self.timing_seconds if self.timing_seconds else 0.0


def measure_kernel(name: str, *, size: str = "test",
                   scheduler: str | None = None) -> KernelThroughput:
    """Throughput of workload ``name`` at ``size``: functional only, then on the timing
    model with the default configuration, or its ``scheduler`` (wall and process CPU
    seconds)."""
    return measure_kernels(name, size=size, schedulers=(scheduler,))[0]


def measure_kernels(name: str, *, size: str = "test",
                    schedulers=(None,)) -> list[KernelThroughput]:
    """:func:`measure_kernel` per scheduler (``None``: the default configuration's), the
    functional-only run made once."""
    from gpurf.sim.sm import run_kernel
    from gpurf.sim.sm.config import load_config

    run = run_kernel(name, size)
    results = []
    for scheduler in schedulers:
        config = load_config(scheduler=scheduler) if scheduler else load_config()
        timed = run_kernel(name, size, timing=config)
        results.append(KernelThroughput(
            name, size, run.stats["warp_instructions"], run.stats["seconds"],
            run.passed and timed.passed, timed.stats["seconds"], timed.stats["cpu_seconds"],
            timed.stats["timing"].cycles, config.scheduler, timed.stats["timing_core"]))
    return results


@dataclass(frozen=True)
class ReplayThroughput:
    """One trace's replay rate beside the golden-only and cocotb rates of its block."""

    block: str
    params: dict
    trace: str
    replay: Throughput
    golden: Throughput
    cocotb: Throughput
    cells: int
    passed: bool

    @property
    def speedup(self) -> float:
        """Replay cycles/s over cocotb's per-cycle lock-step cycles/s."""
        return self.replay.cycles_per_second / self.cocotb.cycles_per_second

    def as_dict(self) -> dict:
        rates = {f"{name}_cycles_per_second": getattr(self, name).cycles_per_second
                 for name in ("replay", "golden", "cocotb")}
        return {"block": self.block, "params": self.params, "trace": self.trace,
                "replay_cycles": self.replay.cycles, "golden_cycles": self.golden.cycles,
                "cocotb_cycles": self.cocotb.cycles, **rates, "speedup": self.speedup,
                "cells": self.cells, "passed": self.passed}


def measure_replay(trace, *, cycles: int, repeat: int = 3) -> ReplayThroughput:
    """Replay ``trace`` (an opened :class:`~gpurf.golden.trace.Trace`) on Verilator
    ``repeat`` times (the fastest counts, as ``timeit`` takes it: on a shared machine the
    others are the noise of other jobs); time the golden model alone and the cocotb bench on
    Verilator (lock-step, every cycle compared in Python) for ``cycles`` cycles of the same
    stimulus, parameters and seed; synthesize the configuration for its cell count."""
    block, params = trace.check_block()
    results = [replay(trace, sim="verilator") for _ in range(repeat)]
    result = min(results, key=lambda r: r.seconds)
    replayed = Throughput(block.qualname, "replay", result.cycles, result.seconds)
    seed = trace.seed if isinstance(trace.seed, int) else 1
    model = block.golden(params)
    start = time.perf_counter()
    compared = run_golden(model, _random_stimulus(block), params, seed, cycles)
    golden = Throughput(block.qualname, "golden", compared, time.perf_counter() - start)
    cocotb = _cocotb(block, "verilator", cycles, seed, params)
    cells = _cells(block, params)
    return ReplayThroughput(block.qualname, params, str(trace.path), replayed, golden, cocotb,
                            cells, result.passed)
