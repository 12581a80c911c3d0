"""What one point computes: a kernel on the SM's timing model, a block's synthesis, or its
cosimulation. Each returns ``(results, units, error)``: ``error`` is ``None`` when the point
passed its check, else one line saying what failed (the results are kept either way).

Wall and CPU times are left out of the results (the record holds the point's ``seconds``),
so two runs of one point give equal results.
"""

from pathlib import Path

__all__ = ["COMPUTE", "UNITS"]

UNITS = {
    "sm": {"cycles": "cycles", "instructions": "warp instructions",
           "warp_instructions": "warp instructions", "thread_instructions": "thread instructions",
           "ipc": "warp instructions per cycle", "issued": "warp instructions",
           "bank_conflicts": "request-cycles", "register_reads": "bank reads",
           "dispatch_stalls": "cycles", "stalls": "sub-core cycles",
           "l1_queue_cycles": "request-cycles", "l1_requests": "requests", "l1_hits": "requests",
           "l1_misses": "requests", "simd_efficiency": "fraction", "cv": "ratio",
           "mismatches": "elements", "seconds": "s"},
    "synth": {"cells": "cells", "cells_by_type": "cells", "logic_transistors": "transistors",
              "sram_transistors": "transistors", "transistors": "transistors",
              "memory_bits": "bits", "ff_bits": "bits", "memories": "bits",
              "logic_depth": "gate levels", "seconds": "s"},
    "cosim": {"tests": "cocotb tests", "failed": "cocotb tests", "cycles": "cycles",
              "seconds": "s"},
}
"""Units of the results of each kind of point, by statistic name."""


def _sm(inputs: dict, work: Path):
    from gpurf.sim.sm import run_kernel
    from gpurf.sim.sm.config import SMConfig

    run = run_kernel(inputs["kernel"], inputs["size"], timing=SMConfig(**inputs["config"]))
    stats = {k: v for k, v in run.stats.items()
             if k not in ("seconds", "cpu_seconds", "timing")}
    timing = {k: v for k, v in run.stats["timing"].as_dict().items()
              if k not in ("seconds", "config")}
    mismatches = run.mismatches()
    results = {"passed": run.passed, "mismatches": mismatches, **stats, "timing": timing}
    wrong = [f"{name} ({count} elements)" for name, count in mismatches.items() if count]
    error = f"outputs differ from the numpy reference: {', '.join(wrong)}" if wrong else None
    return results, UNITS["sm"], error


def _synth(inputs: dict, work: Path):
    from gpurf.hw.registry import get_block
    from gpurf.synth.flow import synthesize

    report = synthesize(get_block(inputs["block"]), inputs["params"], root=work)
    results = {k: v for k, v in report.as_dict().items()
               if k not in ("design", "params", "overrides")}
    return results, UNITS["synth"], None


def _cosim(inputs: dict, work: Path):
    from gpurf.hw.registry import get_block
    from gpurf.sim.runner import run_bench

    run = run_bench(get_block(inputs["block"]), inputs["params"], sim=inputs["sim"],
                    cycles=inputs["cycles"], seed=inputs["seed"], root=work)
    results = {"tests": run.tests, "failed": run.failed, "passed": run.passed}
    error = None if run.passed else "; ".join(run.failures) or f"{run.failed} tests failed"
    return results, UNITS["cosim"], error


COMPUTE = {"sm": _sm, "synth": _synth, "cosim": _cosim}
"""The computation of each kind of point: ``(inputs, work folder) -> (results, units,
error)``."""
