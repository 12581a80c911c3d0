"""The papers' results: ``gpurf cost MECHANISM`` (hardware cost beside the paper's) and
``gpurf reproduce MECHANISM`` (results from runs, as tables, JSON and figures)."""

from pathlib import Path

import click

from .common import BadInput, cli, echo_json, errors_as, heartbeat, known_kernel

__all__ = []


@cli.command()
@click.argument("mechanism")
@click.option("--json", "as_json", is_flag=True,
              help="Print the report as JSON (rows, units, paper values, provenance).")
def cost(mechanism, as_json):
    """Synthesize the paper's hardware-cost comparison of MECHANISM and print it."""
    from gpurf.synth.costs import cost_json, cost_report

    with errors_as(LookupError):
        if as_json:
            echo_json(cost_json(mechanism))
        else:
            click.echo(cost_report(mechanism))


@cli.command()
@click.argument("mechanism")
@click.option("--size", type=click.Choice(["test", "paper"]), default="test", show_default=True,
              help="Kernel launch sizes and configurations (docs/results.md).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results folder [default: gpurf-results/reproduce/MECHANISM].")
@click.option("--kernels", default=None, metavar="K[,K...]",
              help="Only these kernels (greener, wir, compression, regless) [default: the "
                   "whole suite].")
@click.option("--wake-at", type=click.Choice(["issue", "decode"]), default=None,
              help="greener: where warps wake their registers [default: issue].")
@click.option("--no-fig11", is_flag=True,
              help="regless: only the run-time part, without Fig. 11's synthesis (minutes "
                   "per OSU when not cached).")
@click.option("-j", "--jobs", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Measure kernels on N worker processes (compression, greener, regless, wir) "
                   "[default: 1; greener 2]; each kernel's result is cached either way, so "
                   "a stopped run resumes.")
@click.option("--parts", type=click.Path(file_okay=False, path_type=Path), default=None,
              metavar="DIR",
              help="Read kernels' parts from DIR and write each kernel's part there as it is "
                   "measured, to finish the run in a later session or on another machine "
                   "(compression, greener, regless, wir; docs/results.md).")
def reproduce(mechanism, size, as_json, out, kernels, wake_at, no_fig11, jobs, parts):
    """MECHANISM's paper results computed from runs: Markdown tables (or JSON) on stdout,
    report.md, result.json and figures (PNG, SVG) under --out."""
    options = {}
    if kernels is not None:
        _only_where_taken(mechanism, "kernels", "--kernels does not apply to {}: its "
                          "reproduction runs a fixed set")
        options["kernels"] = [known_kernel(k) for k in kernels.split(",") if k] or None
        if options["kernels"] is None:
            raise BadInput("--kernels names no kernel")
    if wake_at is not None:
        _only_where_taken(mechanism, "wake_at", "--wake-at applies to greener, not {}")
        options["wake_at"] = wake_at
    if no_fig11:
        _only_where_taken(mechanism, "fig11", "--no-fig11 applies to regless, not {}")
        options["fig11"] = False
    if jobs is not None:
        _only_where_taken(mechanism, "jobs", "--jobs does not apply to {}: its reproduction "
                          "runs in one process")
        options["jobs"] = jobs
    if parts is None:
        reproduce_and_write(mechanism, size, as_json, out, **options)
        return
    from gpurf.sim.reproduce.parts import PartsError, keeping_parts

    _only_where_taken(mechanism, "jobs", "--parts does not apply to {}: its reproduction "
                      "has no per-kernel parts")
    with errors_as(PartsError, OSError), keeping_parts(parts) as found:
        click.echo(f"gpurf: {found} parts read from {parts}", err=True)
        reproduce_and_write(mechanism, size, as_json, out, **options)


def _only_where_taken(mechanism, option, message):
    """A usage error, ``message`` formatted with ``mechanism``, unless ``mechanism``'s
    reproduction takes the keyword ``option`` (an unknown mechanism is named instead)."""
    from gpurf.sim.reproduce import NoResultsError, takes_option

    with errors_as(NoResultsError):
        if not takes_option(mechanism, option):
            raise BadInput(message.format(mechanism))


def reproduce_and_write(mechanism, size, as_json, out, **options):
    """What ``gpurf reproduce`` does (``options`` go to the mechanism's module, e.g.
    ``kernels`` for greener: ``gpurf energy``)."""
    from gpurf.sim.reproduce import NoResultsError, default_out, write_results
    from gpurf.sim.reproduce import reproduce as run

    with errors_as(NoResultsError), heartbeat(f"reproducing {mechanism}"):
        result = run(mechanism, size, say=lambda line: click.echo(f"gpurf: {line}", err=True),
                     **options)
    folder = out or default_out(mechanism)
    document = write_results(result, folder)
    if as_json:
        echo_json(document)
    else:
        click.echo(result.markdown())
    click.echo(f"gpurf: wrote {folder}/report.md, result.json and "
               f"{2 * len(result.plots)} figures", err=True)
