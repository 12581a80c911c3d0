"""Register leakage energy and slowdown of GReEneR, its parts and Sleep-Reg in the golden SM.

Every run is a kernel on the timing model (:class:`~gpurf.sim.sm.timing.TimingSM`) with
the paper's configuration (:data:`CONFIG`: the ``k20x`` preset, Table 2) and, except for
the always-ON baseline, a :class:`~gpurf.sim.sm.power.RegisterPower` riding on it: the
compiler pass's states applied at the read-operand and writeback stages, wake-ups at issue
costing cycles, the golden correction table and scoreboard extension in the loop. Each
run's outputs are checked against numpy (a mismatch raises).

Energy (:func:`gpurf.golden.greener.energy.register_energy`): per-state register-cycles
times the state's leakage plus Table 4's transition energies, in joules, at the two ends
of the leakage ranges (:data:`gpurf.golden.greener.energy.ENDS`). The baseline is every warp
register of the power domains ON for the baseline's own cycles.
"""

import time
from dataclasses import asdict, dataclass
from math import exp, log

from gpurf.golden.greener.energy import ENDS, always_on_energy, register_energy
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.power import POLICIES, PowerSettings, RegisterPower
from gpurf.sim.sm.recording import shared_functional_runs
from gpurf.sim.sm.run import run_kernel

__all__ = ["CONFIG", "LATENCIES", "PolicyRun", "compare", "gmean_ratio", "run_policy",
           "sm_run_greener"]

CONFIG = load_config(preset="k20x")
"""The paper's configuration (Table 2): LRR, 4 schedulers, 32 banks, 16 blocks, 64 warps."""
LATENCIES = (1, 2, 3, 4)
"""SLEEP->ON wake-up cycles X (OFF->ON: 2X): 1 is the paper's default, 2-4 Section 5.7."""


class OutputMismatchError(RuntimeError):
    """A kernel's outputs differ from numpy under a power policy."""


@dataclass
class PolicyRun:
    """One timing run: its cycles and, with power states, the controllers' counters."""

    kernel: str
    policy: str
    latency: int
    wake_at: str
    cycles: int
    warp_registers: int = 0
    counters: dict | None = None
    wakeup_stalls: int = 0
    warp_instructions: int = 0

    def energy(self, end: str) -> float:
        """Register leakage energy in joules at ``end`` (leakage + transitions)."""
        return register_energy(self.counters, end).total(1.0)


def run_policy(kernel: str, size: str = "test", policy: str | None = None, *,
               latency: int = 1, wake_at: str = "issue", threshold: int = 3,
               config=CONFIG, states=None) -> PolicyRun:
    """Run ``kernel`` with ``policy`` (one of :data:`~gpurf.sim.sm.power.POLICIES`, or
    ``None`` for the always-ON baseline); raise :class:`OutputMismatchError` if its outputs
    differ from numpy."""
    settings = None
    if policy is not None:
        settings = PowerSettings(policy, wake_at, latency, 2 * latency, threshold, states)
    launches: list[RegisterPower] = []

    def power(sm) -> RegisterPower:
        """A fresh power state for each launch of a host loop (each launch is one SM run)."""
        launches.append(RegisterPower(settings))
        return launches[-1](sm)

    run = run_kernel(kernel, size, timing=config, power=power if settings else None)
    name = policy or "always_on"
    if not run.passed:
        raise OutputMismatchError(f"{kernel} ({size}, {name}): outputs differ from numpy: "
                                  f"{run.mismatches()}")
    cycles = run.stats["timing"].cycles
    if settings is None:
        return PolicyRun(kernel, name, latency, wake_at, cycles,
                         warp_instructions=run.stats["warp_instructions"])
    counters: dict[str, int] = {}
    for launch in launches:
        launch.finish(launch.sm.now)
        for key, value in launch.counters().items():
            counters[key] = counters.get(key, 0) + value
    return PolicyRun(kernel, name, latency, wake_at, cycles, launches[0].warp_registers,
                     counters, sum(launch.wakeup_stalls for launch in launches),
                     run.stats["warp_instructions"])


def compare(kernel: str, size: str = "test", *, policies=POLICIES, latencies=(1,),
            sweep=("greener", "sleep_reg"), wake_at: str = "issue",
            threshold: int = 3) -> dict:
    """The baseline and every policy at latency 1 (``latencies[0]``), and ``sweep``'s
    policies at the other ``latencies``: per run cycles, slowdown against the baseline (%)
    and the register leakage energy's reduction against it (%) at both ends; the kernel's
    warp instructions and the CPU seconds of all its runs (which share one functional pass,
    :func:`~gpurf.sim.sm.recording.shared_functional_runs`)."""
    start = time.process_time()
    with shared_functional_runs():
        base = run_policy(kernel, size)
        runs = []
        for latency in latencies:
            for policy in policies if latency == latencies[0] else sweep:
                runs.append(run_policy(kernel, size, policy, latency=latency,
                                       wake_at=wake_at, threshold=threshold))
    registers = runs[0].warp_registers
    rows = [_row(run, base, registers) for run in runs]
    return {"kernel": kernel, "size": size, "baseline_cycles": base.cycles,
            "warp_instructions": base.warp_instructions, "warp_registers": registers,
            "wake_at": wake_at, "threshold": threshold, "runs": rows,
            "cpu_seconds": round(time.process_time() - start, 2)}


def _row(run: PolicyRun, base: PolicyRun, registers: int) -> dict:
    row = {k: v for k, v in asdict(run).items() if k != "kernel"}
    row["slowdown"] = 100 * (run.cycles / base.cycles - 1)
    for end in ENDS:
        reference = always_on_energy(run.counters, leak_on=ENDS[end][0],
                                     register_cycles=registers * base.cycles)
        row[f"energy_{end}"] = run.energy(end)
        row[f"baseline_{end}"] = reference
        row[f"reduction_{end}"] = 100 * (1 - run.energy(end) / reference)
    return row


def gmean_ratio(ratios) -> float:
    """Geometric mean of positive ratios (e.g. energy or cycles against the baseline)."""
    ratios = list(ratios)
    return exp(sum(log(r) for r in ratios) / len(ratios))


def sm_run_greener(kernel: str, size: str = "test", *, policy: str = "greener",
                   wake_at: str = "issue", latency: int = 1, threshold: int = 3) -> str:
    """What ``gpurf sm run KERNEL --mechanism greener`` prints: the run against the
    always-ON baseline (cycles, state occupancy, transitions, energy at both ends)."""
    result = compare(kernel, size, policies=(policy,), latencies=(latency,),
                     wake_at=wake_at, threshold=threshold)
    run = result["runs"][0]
    counters = run["counters"]
    total = sum(counters[f"cycles_{s}"] for s in ("on", "sleep", "off"))
    lines = [f"{kernel} ({size}), k20x, {policy}, wake at {wake_at}, SLEEP->ON {latency} / "
             f"OFF->ON {2 * latency} cycles, W = {threshold}", "",
             "| | always-ON | " + policy + " |", "|---|---|---|",
             f"| cycles | {result['baseline_cycles']:,} | {run['cycles']:,} "
             f"({run['slowdown']:+.2f} %) |",
             f"| warp registers | {result['warp_registers']:,} | "
             f"{result['warp_registers']:,} |"]
    for state in ("on", "sleep", "off"):
        share = 100 * counters[f"cycles_{state}"] / total
        always = "100 %" if state == "on" else "0 %"
        lines.append(f"| {state.upper()} register-cycles | {always} | {share:.1f} % |")
    moves = ", ".join(f"{k} {v:,}" for k, v in counters.items() if not k.startswith("cycles"))
    lines.append(f"| transitions | 0 | {moves} |")
    for end in ENDS:
        lines.append(f"| energy, {end} end (nJ) | {run[f'baseline_{end}'] * 1e9:,.1f} | "
                     f"{run[f'energy_{end}'] * 1e9:,.1f} ({-run[f'reduction_{end}']:+.1f} %) |")
    lines += ["", f"PASS {kernel} ({size}): outputs equal the numpy reference under "
              "always-ON and " + policy]
    return "\n".join(lines)


def record_traces(kernel: str, folder, size: str = "test", *, policy: str = "greener",
                  subcore: int = 0, latency: int = 1) -> list:
    """Run ``kernel`` with ``policy`` and record the port traffic of sub-core ``subcore``'s
    power controller, scoreboard extension and correction table (if the policy has one),
    every cycle of the run, as traces in ``folder`` (``docs/traces.md``; replay them with
    ``gpurf replay FOLDER``). Returns the trace paths."""
    from pathlib import Path

    from gpurf.golden.trace import Recorder, TraceWriter, layout_of
    from gpurf.hw.registry import get_block

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    writers = []

    def recorder(index):
        if index != subcore:
            return None

        def wrap(qualname, params, model):
            block = get_block(qualname)
            params = block.resolve(params)
            path = folder / f"{qualname}-{kernel.replace('/', '_')}-{size}-{policy}.trace"
            header = {"block": qualname, "params": params, "seed": 0,
                      "sm": {k: v for k, v in vars(CONFIG).items()}, "unmodeled": [],
                      "source": {"kind": "kernel", "kernel": kernel, "size": size,
                                 "policy": policy, "subcore": subcore, "latency": latency}}
            writer = TraceWriter(path, layout_of(block.build(params)), header)
            writers.append(writer)
            return Recorder(model, writer)
        return wrap

    power = RegisterPower(PowerSettings(policy, "issue", latency, 2 * latency),
                          record=recorder)
    try:
        run = run_kernel(kernel, size, timing=CONFIG, power=power)
        if not run.passed:
            raise OutputMismatchError(f"{kernel} ({size}, {policy}): outputs differ from numpy")
        power.finish(run.stats["timing"].cycles)
    finally:
        for writer in writers:
            writer.close()
    return [w.path for w in writers]
