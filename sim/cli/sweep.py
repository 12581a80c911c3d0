"""``gpurf sweep SPEC.toml`` and ``gpurf stats DIR``: design-space sweeps on Dask and one CSV
of their records."""

import sys
from pathlib import Path

import click

from .common import BadInput, cli

__all__ = ["stats", "sweep"]


@cli.command()
@click.argument("spec_file", metavar="SPEC.toml",
                type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--scheduler", "address", metavar="ADDRESS",
              help="Run on an existing Dask scheduler (tcp://host:8786).")
@click.option("--workers", type=click.IntRange(1), default=None,
              help="Worker processes of the local cluster  [default: one per core]")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Records folder  [default: sweeps/<SPEC name>]")
def sweep(spec_file, address, workers, out):
    """Run the grid of SPEC.toml on Dask (docs/sweeps.md): one JSON record per point under
    --out, finished points skipped; exit 1 if a point failed."""
    from gpurf.sim import sweep as engine

    try:
        plan = engine.load_spec(spec_file)
    except engine.SpecError as error:
        raise BadInput(str(error)) from None
    _check_options(plan.cluster.kind, address, workers)
    out = out or Path("sweeps") / spec_file.stem
    where = address or (f"a {plan.cluster.kind} cluster ({plan.cluster.jobs} jobs)"
                        if plan.cluster.kind != "local" else "a local cluster")
    click.echo(f"{len(plan.points)} points from {spec_file} on {where}; records in {out}")
    if not engine.pending(plan.points, out)[0]:
        _summary(engine.run_points(plan.points, out), out)
        return
    try:
        client, cluster = engine.connect(plan.cluster, address=address, workers=workers)
    except engine.MissingExtraError as error:
        raise BadInput(str(error)) from None
    except OSError as error:
        raise BadInput(f"cannot reach the Dask scheduler {address}: {error}") from None
    try:
        outcome = engine.run_points(plan.points, out, client=client, on_record=_echo_record)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    _summary(outcome, out)


def _check_options(kind: str, address: str | None, workers: int | None) -> None:
    if address and workers:
        raise BadInput("--workers sizes the local cluster; with --scheduler the scheduler's "
                       "workers run the points")
    if workers and kind != "local":
        raise BadInput(f"--workers sizes the local cluster; the spec asks for a {kind} "
                       f"cluster ([cluster] jobs and options)")


def _echo_record(record: dict) -> None:
    axes = " ".join(f"{k}={v}" for k, v in record["axes"].items())
    verdict = "ok  " if record["status"] == "ok" else "FAIL"
    line = f"{verdict} {record['kind']:5} {axes}  {record['seconds']:.1f} s  {record['key']}"
    click.echo(line + (f"\n     {record['error']}" if record["error"] else ""))


def _summary(outcome, out: Path) -> None:
    failed = outcome.failed
    click.echo(f"{len(outcome.records)} run, {len(outcome.skipped)} skipped (finished), "
               f"{len(failed)} failed; `gpurf stats {out}` gathers them into one CSV")
    if failed:
        for record in failed:
            click.echo(f"failed: {record['key']} {record['kind']} "
                       f"{record['axes']}: {record['error']}", err=True)
        sys.exit(1)


@cli.command()
@click.argument("folder", metavar="DIR",
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--csv", "csv_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the CSV to this file instead of printing it.")
def stats(folder, csv_file):
    """Every sweep record under DIR as one CSV (one row per point: axes, then statistics);
    exit 1 if a file named record.json is not a sweep record."""
    from gpurf.sim.sweep.stats import gather, to_csv

    found = gather(folder)
    if not found.records and not found.bad:
        raise BadInput(f"{folder}: no sweep records (record.json) under it")
    text = to_csv(found.records)
    if csv_file is None:
        click.echo(text, nl=False)
    else:
        csv_file.write_text(text)
        click.echo(f"{len(found.records)} rows -> {csv_file}", err=True)
    for message in found.bad:
        click.echo(f"gpurf: {message}", err=True)
    if found.bad:
        sys.exit(1)
