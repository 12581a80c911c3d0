"""The kernel suite's figures: per kernel, its launches, blocks, warp instructions and
whether it equals its reference, functionally and on the timing model (cycles, IPC, how busy
the register-file banks are, bank conflicts).

``python -m gpurf.sim.sm.suite [--size test|paper] [--no-timing] [KERNEL ...]`` prints the
markdown table of docs/kernels.md (default: the register-bound suite at size ``test``, with
timing on the default :class:`~gpurf.sim.sm.config.SMConfig`), then the total CPU time.
"""

import time

import click

from .config import SMConfig
from .run import run_kernel

__all__ = ["SUITE", "bank_utilisation", "suite_table"]

SUITE = ("backprop_forward", "backprop_adjust", "bfs", "gaussian", "kmeans", "lud", "nw",
         "pathfinder", "srad", "spmv", "histogram", "scan", "imgvf", "ffma_imad")
"""The register-bound suite of issue 15 item 4, in the order of docs/kernels.md."""


def suite_row(name: str, size: str, timing: bool) -> str:
    """One table row: launches, blocks, warp instructions, functional result; with
    ``timing``, cycles, IPC and the timed run's result."""
    run = run_kernel(name, size)
    cells = [name, f"{run.stats['launches']:,}", f"{run.stats['blocks']:,}",
             f"{run.stats['warp_instructions']:,}", _verdict(run)]
    if timing:
        timed = run_kernel(name, size, timing=SMConfig())
        stats = timed.stats["timing"]
        cells += [f"{stats.cycles:,}", f"{stats.ipc:.2f}", f"{bank_utilisation(stats):.2f}",
                  f"{stats.bank_conflicts:,}", _verdict(timed)]
    return "| " + " | ".join(cells) + " |"


def bank_utilisation(stats) -> float:
    """Register-file bank reads per bank and cycle (1.0: every bank read every cycle)."""
    banks = stats.config["subcores"] * stats.config["banks"]
    return stats.register_reads / max(1, stats.cycles * banks)


def _verdict(run) -> str:
    bad = {k: v for k, v in run.mismatches().items() if v}
    return "equal" if not bad else "DIFFERS " + ", ".join(f"{k}: {v}" for k, v in bad.items())


def suite_table(names=SUITE, size: str = "test", timing: bool = True) -> str:
    """The markdown table of ``names`` at ``size``."""
    head = ["kernel", "launches", "blocks", "warp instructions", "functional vs numpy"]
    if timing:
        head += ["cycles (V100 preset)", "IPC", "bank reads / bank-cycle", "bank conflicts",
                 "timing vs numpy"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += [suite_row(name, size, timing) for name in names]
    return "\n".join(lines)


@click.command(help=__doc__.splitlines()[0])
@click.argument("kernels", nargs=-1)
@click.option("--size", type=click.Choice(["test", "paper"]), default="test")
@click.option("--no-timing", is_flag=True, help="Functional runs only.")
def main(kernels, size, no_timing) -> None:
    start = time.process_time()
    click.echo(suite_table(kernels or SUITE, size, not no_timing))
    click.echo(f"\nCPU time: {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
