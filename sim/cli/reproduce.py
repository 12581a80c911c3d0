"""The papers' results: ``gpurf cost MECHANISM`` (hardware cost beside the paper's) and
``gpurf reproduce MECHANISM`` (results from runs, as tables, JSON and figures)."""

import click

from .common import BadInput, cli

__all__ = []


@cli.command()
@click.argument("mechanism")
def cost(mechanism):
    """Synthesize the paper's hardware-cost comparison of MECHANISM and print it."""
    from gpurf.synth.costs import cost_report

    try:
        click.echo(cost_report(mechanism))
    except LookupError as error:
        raise BadInput(str(error)) from None
