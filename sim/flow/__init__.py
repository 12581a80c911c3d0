"""The main job: every block generated, cosimulated on each simulator, synthesized, reported.

The work is split into tasks (:mod:`.tasks`) — a block's cosimulation on one simulator, a
block's synthesis, a mechanism's cost report — run by ``jobs`` worker processes
(:mod:`.pool`). A block's verdict line and its synthesis line are given out as soon as
they are known, a failure is a record like any other (the job goes on), and the results go
to a folder: ``report.md``, ``report.json`` (with :func:`~gpurf.sim.provenance.provenance`
and the figures' units), ``figures/`` (for plots) and ``logs/`` (the workers' output).
"""

import json
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpurf.hw.registry import Block
from gpurf.synth.costs import has_cost_report

from ..cache import default_cache
from ..provenance import provenance
from .pool import StoppedError, WorkerPool
from .report import UNITS, cost_line, failures, markdown, synthesis_line, verdict_line

__all__ = ["MainJob", "StoppedError"]


@dataclass
class MainJob:
    """The main job over ``blocks`` on ``simulators``; :meth:`run` does it."""

    blocks: Sequence[Block]
    simulators: Sequence[str]
    cycles: int
    seed: int
    jobs: int
    out: Path
    mechanism: str | None = None
    report: dict[str, Any] = field(init=False)

    def __post_init__(self):
        self.report = {
            "provenance": provenance(),
            "settings": {"mechanism": self.mechanism, "cycles": self.cycles, "seed": self.seed,
                         "simulators": list(self.simulators), "jobs": self.jobs,
                         "cache": _cache_folder()},
            "units": UNITS,
            "blocks": {b.qualname: {"cosim": {}, "synth": None} for b in self.blocks},
            "cost_reports": {m: None for m in self.mechanisms},
        }

    @property
    def mechanisms(self) -> list[str]:
        """Mechanisms of the job's blocks that have a cost report."""
        return [m for m in dict.fromkeys(b.mechanism for b in self.blocks) if has_cost_report(m)]

    def tasks(self) -> list[dict]:
        """Every task, in the order they start: the cost reports first, then each block's
        cosimulations and synthesis.

        Longest first, as far as it is known before a run: a cost report synthesizes
        compositions and sizes beside the blocks' defaults, in one task (RegLess's Fig. 11
        took 8 of the cold run's 23 minutes), so started last it would leave the other
        workers idle. The blocks' syntheses it shares are computed once either way (the
        synthesis cache's lock makes the second asker wait for the first's figures).
        """
        tasks = [{"kind": "cost", "mechanism": m} for m in self.mechanisms]
        for block in self.blocks:
            for sim in self.simulators:
                if sim != "icarus" or block.icarus_defaults:
                    tasks.append({"kind": "cosim", "block": block.qualname, "sim": sim,
                                  "cycles": self.cycles, "seed": self.seed})
            tasks.append({"kind": "synth", "block": block.qualname})
        return tasks

    def run(self, progress=None) -> Iterator[str]:
        """Run every task; give a line out for each block's verdicts, each block's synthesis
        and each cost report as soon as it is known; write the results folder at the end.

        ``progress`` (optional) is called once per finished task.
        """
        start = time.monotonic()
        self._skip_icarus()
        self.out.mkdir(parents=True, exist_ok=True)
        (self.out / "figures").mkdir(exist_ok=True)
        with WorkerPool(self.jobs, self.out / "logs") as pool:
            for task, record in pool.run(self.tasks()):
                line = self._record(task, record)
                if progress is not None:
                    progress()
                if line:
                    yield line
        self.report["seconds"] = round(time.monotonic() - start, 3)
        self.report["failures"] = failures(self.report)
        self.report["passed"] = not self.report["failures"]
        (self.out / "report.json").write_text(json.dumps(self.report, indent=1) + "\n")
        (self.out / "report.md").write_text(self.markdown())

    @property
    def passed(self) -> bool:
        return self.report.get("passed", False)

    def markdown(self) -> str:
        return markdown(self.report)

    def _skip_icarus(self) -> None:
        for block in self.blocks:
            if "icarus" in self.simulators and not block.icarus_defaults:
                self.report["blocks"][block.qualname]["cosim"]["icarus"] = {
                    "status": "skipped", "reason": "icarus_defaults=False"}

    def _record(self, task: dict, record: dict) -> str | None:
        """File ``record`` in the report; the line to give out when it completes a block's
        verdicts, its synthesis or a cost report."""
        if task["kind"] == "cost":
            self.report["cost_reports"][task["mechanism"]] = record
            return cost_line(task["mechanism"], record)
        result = self.report["blocks"][task["block"]]
        if task["kind"] == "synth":
            result["synth"] = record
            return synthesis_line(task["block"], record)
        result["cosim"][task["sim"]] = record
        if len(result["cosim"]) < len(self.simulators):
            return None
        ordered = {sim: result["cosim"][sim] for sim in self.simulators}
        result["cosim"] = ordered
        return verdict_line(task["block"], ordered)


def _cache_folder() -> str | None:
    cache = default_cache()
    return str(cache.root) if cache.enabled else None
