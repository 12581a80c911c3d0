"""The main job's units of work, run by its workers: one cosimulation of a block on one
simulator, one block's synthesis, one mechanism's cost report.

Each task takes plain values and returns a JSON-able record; an exception is the worker's to
report. Cosimulation verdicts are cached by content (:mod:`gpurf.sim.cache`); synthesis
figures are cached by :func:`gpurf.synth.flow.synthesize` itself.
"""

from typing import Any

from gpurf.hw.registry import get_block
from gpurf.synth.costs import cost_report
from gpurf.synth.flow import synthesize

from ..cache import cache_key, default_cache, source_digest, text_digest, tool_key
from ..runner import run_bench
from ..verilog import write_verilog

__all__ = ["TASKS", "cosim_key", "cosimulate", "cost", "synth"]

RUNNER_MODULES = ("gpurf.sim.runner",)
"""The gpurf modules that run a bench, beside the bench and its golden model (this module
only decides whether to run it, so editing it keeps the verdicts)."""


def cosim_key(block_name: str, sim: str, cycles: int, seed: int) -> str:
    """The cache key of a block's cosimulation at its defaults: its Verilog text, the sources
    of its bench and golden model (and what they import), the runner's, the parameters,
    seed, cycles, simulator and tool versions."""
    block = get_block(block_name)
    params = block.resolve()
    verilog = text_digest(write_verilog(block, params).read_bytes())
    sources = source_digest([block.tb_module, block.golden_module, *RUNNER_MODULES])
    return cache_key("cosim", verilog, sources, params, seed, cycles, sim, tool_key())


def cosimulate(block: str, sim: str, cycles: int, seed: int) -> dict[str, Any]:
    """A block's verdict on ``sim`` at its defaults: ``status`` (``pass``, ``fail``),
    ``tests``, ``failed``, ``failures``, ``log``, ``cached``."""
    cache = default_cache()
    key = cosim_key(block, sim, cycles, seed)
    with cache.lock("cosim", key):
        verdict = cache.get("cosim", key)
        if verdict is not None:
            return {**verdict, "cached": True}
        result = run_bench(get_block(block), sim=sim, cycles=cycles, seed=seed)
        verdict = {"status": "pass" if result.passed else "fail", "tests": result.tests,
                   "failed": result.failed, "failures": result.failures, "log": str(result.log)}
        cache.put("cosim", key, verdict)
    return {**verdict, "cached": False}


def synth(block: str) -> dict[str, Any]:
    """A block's synthesis figures at its ``synth_params`` (:meth:`SynthReport.as_dict`)."""
    found = get_block(block)
    return {"status": "ok", **synthesize(found, found.synth_params).as_dict()}


def cost(mechanism: str) -> dict[str, Any]:
    """A mechanism's cost report (Markdown)."""
    return {"status": "ok", "markdown": cost_report(mechanism)}


TASKS = {"cosim": cosimulate, "synth": synth, "cost": cost}
"""Task kinds by name, as the job hands them to its workers."""
