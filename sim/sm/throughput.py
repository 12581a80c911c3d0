"""Throughput of the timing model per scheduler: ``python -m gpurf.sim.sm.throughput``.

Runs each workload at a size on the timing model under each scheduler (V100 preset) and
each path (``--path``: ``compiled``, the compiled core of :mod:`gpurf.sim.sm.timing_core`;
``fast``, the Python ``_SubCore.fast_cycle``; ``generic``, the golden blocks' methods called
one by one; ``auto``, what a run takes by default) and prints, per run, the timing loop that
ran, the warp instructions, wall and process CPU seconds of the whole run (functional cohorts
included, as ``gpurf sm bench`` counts them), the seconds of the timing loop alone
(``TimingStats.seconds``), warp instructions per wall and per CPU second, the cycles and
whether the outputs equal the numpy reference. Figures depend on the machine's load: run
``uptime`` beside them.
"""

import click

from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.config import load_config

__all__ = ["measure"]


PATHS = {"auto": {}, "compiled": {"core": "compiled"}, "fast": {"core": "python"},
         "generic": {"core": "python", "fast": False}}
"""``--path`` -> :class:`~gpurf.sim.sm.timing.TimingSM`'s options."""


def measure(name: str, size: str, scheduler: str, path: str = "auto") -> dict:
    """One timed run of ``name`` at ``size`` under ``scheduler`` on ``path``
    (:data:`PATHS`): its figures as a dict."""
    run = run_kernel(name, size, timing=load_config(scheduler=scheduler),
                     mechanism=lambda program: (program, PATHS[path]))
    stats, timing = run.stats, run.stats["timing"]
    instructions = stats["warp_instructions"]
    return {"kernel": name, "size": size, "scheduler": scheduler, "path": path,
            "warp_instructions": instructions, "seconds": stats["seconds"],
            "cpu_seconds": stats["cpu_seconds"], "timing_loop_seconds": timing.seconds,
            "per_second": instructions / stats["seconds"],
            "per_cpu_second": instructions / stats["cpu_seconds"],
            "cycles": timing.cycles, "passed": run.passed, "core": stats["timing_core"]}


@click.command()
@click.argument("kernels", nargs=-1, required=True)
@click.option("--size", type=click.Choice(["test", "paper"]), default="paper",
              show_default=True)
@click.option("--scheduler", "schedulers", multiple=True, default=("gto", "rba"),
              show_default=True, help="Repeatable.")
@click.option("--path", "paths", multiple=True, type=click.Choice(list(PATHS)),
              default=("auto",), show_default=True,
              help="Repeatable: the paths alternate per kernel and scheduler.")
def main(kernels, size, schedulers, paths):
    """Warp instructions per second of KERNELS on the timing model, per scheduler and
    path (compiled, Python fast, generic)."""
    click.echo("| kernel | scheduler | path | timing core | warp instructions | wall s (CPU s) "
               "| timing loop s | warp-instr/s wall (per CPU s) | cycles | reference |\n"
               "|---|---|---|---|---|---|---|---|---|---|")
    for name in kernels:
        for scheduler in schedulers:
            for path in paths:
                _row(measure(name, size, scheduler, path))


def _row(r: dict) -> None:
    click.echo(f"| {r['kernel']} | {r['scheduler']} | {r['path']} | {r['core']} | "
               f"{r['warp_instructions']:,} | "
               f"{r['seconds']:.2f} ({r['cpu_seconds']:.2f}) | "
               f"{r['timing_loop_seconds']:.2f} | {r['per_second']:,.0f} "
               f"({r['per_cpu_second']:,.0f}) | {r['cycles']:,} | "
               f"{'PASS' if r['passed'] else 'FAIL'} |")


if __name__ == "__main__":
    main()
