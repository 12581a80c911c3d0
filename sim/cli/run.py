"""The main job: ``gpurf run [MECHANISM]`` (and the old form ``gpurf run KERNEL``)."""

import sys

import click

from gpurf.hw.registry import all_blocks

from .common import BadInput, cli, progress
from .sm import sm_run

__all__ = []

@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("mechanism", required=False, metavar="[MECHANISM]")
@click.option("--cycles", type=click.IntRange(1), default=1000, show_default=True,
              help="Cycles of each randomized stimulus.")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True,
              help="Seed of the randomized stimuli.")
@click.pass_context
def run(ctx, mechanism, cycles, seed):
    """The main job: generate, cosimulate and synthesize every block (of MECHANISM), then
    print the report and the papers' hardware-cost comparisons.

    `gpurf run KERNEL [options]` is the old form of `gpurf sm run KERNEL [options]`."""
    from gpurf.sim.kernels import workload_names

    if mechanism in workload_names():
        _old_kernel_run(mechanism, ctx.args)
    if ctx.args:
        raise click.UsageError(f"gpurf run takes no {ctx.args[0]!r} (options of a kernel run "
                               "are `gpurf sm run`'s)")
    from gpurf.sim.flow import run_all

    blocks = [b for b in all_blocks() if mechanism in (None, b.mechanism)]
    if not blocks:
        known = sorted({b.mechanism for b in all_blocks()})
        raise BadInput(f"unknown mechanism {mechanism!r}; known: {', '.join(known)} "
                       "(kernels run with `gpurf sm run`)")
    ok = run_all(blocks, cycles=cycles, seed=seed, progress=progress, echo=click.echo)
    sys.exit(0 if ok else 1)


def _old_kernel_run(kernel: str, args: list[str]) -> None:
    """``gpurf run KERNEL ...``, the old form of ``gpurf sm run``: run, then say so (after
    the run, so that bad input stays one line)."""
    with sm_run.make_context("gpurf sm run", [kernel, *args]) as kernel_run:
        try:
            sm_run.invoke(kernel_run)
        finally:
            if sys.exc_info()[0] in (None, SystemExit):
                click.echo(f"note: `gpurf run {kernel}` is now `gpurf sm run {kernel}`",
                           err=True)
