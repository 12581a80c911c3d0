"""The main job: ``gpurf run [MECHANISM]`` (and the old form ``gpurf run KERNEL``)."""

import os
import sys
from pathlib import Path

import click

from gpurf.hw.registry import all_blocks
from gpurf.sim.toolchain import SIMULATORS

from .common import BadInput, cli, echo_json
from .sm import sm_run

__all__ = []

_MAIN_JOB_ONLY = {"jobs": "-j", "out": "--out", "sims": "--sim", "cycles": "--cycles",
                  "seed": "--seed"}
"""Options of the main job that the old form ``gpurf run KERNEL`` must not take silently."""


@cli.command(context_settings={"ignore_unknown_options": True, "allow_extra_args": True})
@click.argument("mechanism", required=False, metavar="[MECHANISM]")
@click.option("--jobs", "-j", type=click.IntRange(1), default=None, metavar="N",
              help="Worker processes (default: the number of CPUs).")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("gpurf-results"), show_default=True,
              help="Results folder: report.md, report.json, figures/, logs/.")
@click.option("--json", "as_json", is_flag=True,
              help="Print report.json instead of the Markdown report (the lines of finished "
                   "blocks then go to stderr).")
@click.option("--sim", "sims", multiple=True, type=click.Choice(SIMULATORS),
              help="Cosimulate on this simulator only (repeatable; default: every installed "
                   "one).")
@click.option("--cycles", type=click.IntRange(1), default=1000, show_default=True,
              help="Cycles of each randomized stimulus.")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True,
              help="Seed of the randomized stimuli.")
@click.pass_context
def run(ctx, mechanism, jobs, out, as_json, sims, cycles, seed):
    """The main job: generate, cosimulate and synthesize every block (of MECHANISM) in
    parallel, print each block's lines as it finishes, then the report and the papers'
    hardware-cost comparisons; results under --out. Exit status 1 if anything failed.

    Results are cached by content (GPURF_CACHE, default ~/.cache/gpurf; GPURF_CACHE=off:
    none): a second run recomputes only what changed.

    `gpurf run KERNEL [options]` is the old form of `gpurf sm run KERNEL [options]`."""
    from gpurf.sim.kernels import workload_names

    if mechanism in workload_names():
        _old_kernel_run(mechanism, _kernel_args(ctx))
    if ctx.args:
        raise click.UsageError(f"gpurf run takes no {ctx.args[0]!r} (options of a kernel run "
                               "are `gpurf sm run`'s)")
    blocks = [b for b in all_blocks() if mechanism in (None, b.mechanism)]
    if not blocks:
        known = sorted({b.mechanism for b in all_blocks()})
        raise BadInput(f"unknown mechanism {mechanism!r}; known: {', '.join(known)} "
                       "(kernels run with `gpurf sm run`)")
    job = _main_job(blocks, mechanism, sims, jobs=jobs or os.cpu_count() or 1, out=out,
                    cycles=cycles, seed=seed)
    lines = sys.stderr if as_json else sys.stdout
    _run_job(job, lines)
    if as_json:
        echo_json(job.report)
    else:
        click.echo("\n" + job.markdown())
        click.echo(f"results: {out / 'report.md'}, {out / 'report.json'}")
    sys.exit(0 if job.passed else 1)


def _main_job(blocks, mechanism, sims, **settings):
    """The job on the simulators asked for (default: the installed ones; asking for one that
    is not installed is bad input)."""
    from gpurf.sim.flow import MainJob
    from gpurf.sim.toolchain import missing_simulator

    for sim in sims:
        if missing_simulator(sim):
            raise BadInput(f"--sim {sim}: {missing_simulator(sim)}")
    if not sims:
        sims = [sim for sim in SIMULATORS if not missing_simulator(sim)]
        for sim in SIMULATORS:
            if sim not in sims:
                click.echo(f"note: {sim} skipped: {missing_simulator(sim)}", err=True)
    return MainJob(blocks, list(dict.fromkeys(sims)), mechanism=mechanism, **settings)


def _run_job(job, lines) -> None:
    """Run ``job``, each finished block's line on ``lines`` at once (a tqdm bar on a
    terminal); a signal stops the workers and is one line on stderr, exit 128 + signal."""
    from tqdm import tqdm

    from gpurf.sim.flow import StoppedError

    bar = tqdm(total=len(job.tasks()), desc="tasks", unit="task", file=sys.stderr,
               leave=False, disable=not sys.stderr.isatty())
    try:
        for line in job.run(progress=bar.update):
            bar.write(line, file=lines)
            lines.flush()
    except StoppedError as stop:
        bar.close()
        click.echo(f"gpurf: {stop}; workers stopped", err=True)
        sys.exit(128 + stop.signal)
    bar.close()


def _kernel_args(ctx) -> list[str]:
    """The arguments of ``gpurf run KERNEL ...`` for ``gpurf sm run``: ``--json`` passed on,
    a main-job option given with a kernel is a usage error."""
    from click.core import ParameterSource

    for name, flag in _MAIN_JOB_ONLY.items():
        if ctx.get_parameter_source(name) is not ParameterSource.DEFAULT:
            raise click.UsageError(f"{flag} applies to the main job, not to a kernel run")
    return [*ctx.args, *(["--json"] if ctx.params["as_json"] else [])]


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
