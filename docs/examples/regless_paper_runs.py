"""The paper-size RegLess parts one run at a time, so that no session loses a kernel it
could not finish (docs/measured/regless-paper/README.md, "Runs of a part").

``gpurf reproduce regless --size paper --parts DIR`` keeps a kernel's part only once its
eight runs (the register file's baseline and the seven :data:`CONFIGS`) are done; a kernel
longer than a session is never kept. This script, run with the pinned revision's gpurf
(the worktree of the folder's README), measures each ``(kernel, run)`` on its own, writes
it to ``DIR/runs/KERNEL/RUN.json`` as it finishes (with its key, revision, date and CPU
seconds), and assembles a kernel's part from its eight runs, the same value and key
:func:`gpurf.sim.reproduce.regless.measure` gives, so ``gpurf reproduce`` reads it::

    python docs/examples/regless_paper_runs.py run -j 2 KERNEL [KERNEL ...]
    python docs/examples/regless_paper_runs.py run KERNEL --only RUN [--only RUN ...]
    python docs/examples/regless_paper_runs.py assemble KERNEL [KERNEL ...]
    python docs/examples/regless_paper_runs.py status KERNEL [KERNEL ...]
    python docs/examples/regless_paper_runs.py row KERNEL [KERNEL ...]
    python docs/examples/regless_paper_runs.py means
    python docs/examples/regless_paper_runs.py carry KERNEL [KERNEL ...]

``run`` measures the runs not yet in the folder, a kernel's runs in turn on one of ``-j``
processes sharing one functional pass, and assembles each kernel whose runs are complete;
``--only`` picks one kernel's runs, so that two processes can share a long kernel.
A run whose key differs from the sources' (another revision) is an error, never mixed in.
``status`` lists a kernel's kept runs (CPU seconds, and each configuration's run time over
the baseline's once that is kept); ``row`` prints an assembled part's row of the folder
README's table; ``means`` the geometric mean of each configuration's run time over the
parts assembled so far (the suite's figure only once all 14 are in). ``carry`` moves a
kernel without barriers, measured at an earlier pin, to these sources' key (the folder
README's "Next: moving the pin"): its values unchanged, each run marked ``carried_from``.
"""

import datetime
import json
import resource
import sys
from pathlib import Path
from statistics import geometric_mean

import click

from gpurf.sim.provenance import git_revision
from gpurf.sim.reproduce import parts
from gpurf.sim.reproduce.regless import CONFIGS, _label
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.program import BAR
from gpurf.sim.sm.recording import shared_functional_runs
from gpurf.sim.sm.regless import run_regless
from gpurf.sim.sm.run import load_workload, run_kernel
from gpurf.sim.sm.suite import SUITE

FOLDER = Path(__file__).resolve().parent.parent / "measured" / "regless-paper"
SIZE = "paper"
BASELINE = "baseline"
RUNS = (BASELINE, *(_label(config) for config in CONFIGS))
"""A part's runs: the baseline and the seven configurations, in :func:`measure`'s order."""
CONFIG_OF = {_label(config): config for config in CONFIGS}


class RunsError(click.ClickException):
    """A kept run that cannot be used: one line naming the file, exit status 2."""

    exit_code = 2


def run_path(kernel: str, run: str) -> Path:
    """Where ``kernel``'s ``run`` is kept."""
    return FOLDER / "runs" / kernel / f"{run.replace(' ', '_')}.json"


def key(kernel: str) -> str:
    """The part key of ``kernel`` at these sources (:func:`~gpurf.sim.reproduce.parts.part_key`
    with the options :func:`~gpurf.sim.reproduce.regless.measure` is cached under)."""
    return parts.part_key("regless", SIZE, kernel, {})


def load_run(path: Path) -> dict:
    """The kept run in ``path``, whatever its key; :class:`RunsError` if it is not one."""
    try:
        kept = json.loads(path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as error:
        raise RunsError(f"{path}: expected a kept run (JSON with key and revision): "
                        f"{error}") from None
    if not isinstance(kept, dict) or not {"key", "revision"} <= kept.keys():
        raise RunsError(f"{path}: expected a kept run (JSON with key and revision)")
    return kept


def read_run(kernel: str, run: str) -> dict | None:
    """``kernel``'s kept ``run``, or ``None``; :class:`RunsError` if the file is not a kept
    run or was measured at other sources."""
    path = run_path(kernel, run)
    if not path.exists():
        return None
    kept = load_run(path)
    kept_key, revision = kept["key"], kept["revision"]
    if kept_key != key(kernel):
        raise RunsError(f"{path}: measured at revision {revision}, whose "
                                   "key differs from these sources'")
    return kept


def cpu_seconds() -> float:
    """The CPU time of this process and its children so far."""
    own, children = (resource.getrusage(who) for who in
                     (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure_run(kernel: str, run: str) -> dict:
    """One run of ``kernel``: the baseline's cycles, or a configuration's counters
    (``run_regless`` without its baseline); wrong outputs raise."""
    sm = load_config(preset="gtx980")
    if run == BASELINE:
        return parts.baseline_cycles("regless", kernel, SIZE, sm, parts.to_stderr)
    parts.to_stderr(f"regless: {kernel} {run}")
    out = run_regless(kernel, SIZE, CONFIG_OF[run], sm=sm, baseline=False)
    if not out["passed"]:
        raise parts.WrongOutputsError(f"regless: {kernel} {run}: outputs differ from numpy")
    return out


def keep_run(kernel: str, run: str) -> str:
    """Measure ``kernel``'s ``run`` and write it with its provenance; a line saying so."""
    start = cpu_seconds()
    value = measure_run(kernel, run)
    cpu = round(cpu_seconds() - start, 1)
    path = run_path(kernel, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    date = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
    kept = {"kernel": kernel, "run": run, "revision": git_revision(), "date": date,
            "key": key(kernel), "cpu_seconds": cpu, "value": value}
    path.write_text(json.dumps(kept, indent=1) + "\n")
    return f"{kernel} {run}: {cpu} CPU s, {date}"


def assemble(kernel: str) -> str:
    """Write ``kernel``'s part from its eight kept runs (as :func:`measure` composes it)."""
    kept = {run: read_run(kernel, run) for run in RUNS}
    missing = [run for run, value in kept.items() if value is None]
    if missing:
        return f"{kernel}: not assembled, runs missing: {', '.join(missing)}"
    cycles = kept[BASELINE]["value"]
    runs = {run: {**kept[run]["value"], "runtime": kept[run]["value"]["cycles"] / cycles}
            for run in RUNS[1:]}
    value = json.loads(json.dumps({"baseline": cycles, "runs": runs}))
    with parts.keeping_parts(FOLDER):
        parts._write_part("regless", SIZE, kernel, key(kernel), value)
    cpu = sum(run["cpu_seconds"] for run in kept.values())
    return f"{kernel}: part written ({cpu:.1f} CPU s in its eight runs)"


def keep_kernel(kernel: str, only: tuple[str, ...] = ()) -> str:
    """Measure ``kernel``'s missing runs (of ``only``, if given) in turn, each kept as it
    finishes, sharing one functional pass (as :func:`measure` does); then assemble its part.

    A run is looked up again just before it is measured, so two processes given one
    kernel's runs in different orders (``only``) never measure a run the other has kept."""
    with shared_functional_runs():
        for run in only or RUNS:
            if read_run(kernel, run) is None:
                parts.to_stderr(keep_run(kernel, run))
    return assemble(kernel)


def run_all(kernels: list[str], jobs: int) -> None:
    """:func:`keep_kernel` for ``kernels`` on ``jobs`` worker processes (Dask)."""
    from distributed import Client, LocalCluster, as_completed

    # One thread per process: the SM holds the GIL.
    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        futures = [client.submit(keep_kernel, kernel, pure=False) for kernel in kernels]
        for future in as_completed(futures):
            click.echo(future.result())
    finally:
        client.close()
        cluster.close(timeout=60)


def run_summary(kernel: str) -> str:
    """``kernel``'s kept runs: each one's CPU seconds, and for a configuration its cycles
    over the baseline's once the baseline is kept."""
    kept = {run: read_run(kernel, run) for run in RUNS}
    baseline = kept[BASELINE]["value"] if kept[BASELINE] else None
    done = []
    for run, value in kept.items():
        if value is None:
            continue
        ratio = (f" {value['value']['cycles'] / baseline:.3f}x"
                 if run != BASELINE and baseline else "")
        done.append(f"{run}{ratio} ({value['cpu_seconds']:,.1f} CPU s)")
    return f"{kernel}: {len(done)} of {len(RUNS)} runs kept: {'; '.join(done) or '-'}"


CAPACITIES = ("256", "384", "768", "1024")
"""The capacity runs of the folder README's ``256 / 384 / 768 / 1,024`` column."""


def part_row(kernel: str) -> str:
    """``kernel``'s row of the folder README's table: warp instructions (its functional
    run), cycles, run times over the baseline, its runs' CPU seconds (``-`` for a part
    measured whole, sessions 17-21, whose CPU a watcher logged) and the part's date."""
    path = parts._part_path(FOLDER, "regless", SIZE, kernel)
    if not path.exists():
        raise RunsError(f"{path}: no part yet ({run_summary(kernel)})")
    part = parts._read_part(path)
    runs = part["value"]["runs"]
    kept = [read_run(kernel, run) for run in RUNS]
    cpu = f"{sum(run['cpu_seconds'] for run in kept):,.1f}" if all(kept) else "-"
    instructions = run_kernel(kernel, SIZE).stats["warp_instructions"]
    cells = [kernel, f"{instructions:,}", f"{part['value']['baseline']:,}",
             f"{runs['512']['cycles']:,}", f"{runs['512']['runtime']:.3f}",
             f"{runs['512 no compressor']['runtime']:.3f}",
             " / ".join(f"{runs[run]['runtime']:.3f}" for run in CAPACITIES),
             cpu, part["date"]]
    return "| " + " | ".join(cells) + " |"


def partial_means() -> str:
    """The geometric mean over the assembled parts of each configuration's run time over
    the baseline, naming the kernels: a subset's figure, not the suite's, until every
    kernel of :data:`SUITE` has its part."""
    paths = {kernel: parts._part_path(FOLDER, "regless", SIZE, kernel) for kernel in SUITE}
    done = [kernel for kernel, path in paths.items() if path.exists()]
    if not done:
        return f"0 of {len(SUITE)} kernels assembled"
    runs = [parts._read_part(paths[kernel])["value"]["runs"] for kernel in done]
    means = "; ".join(f"{run} {geometric_mean(part[run]['runtime'] for part in runs):.3f}x"
                      for run in RUNS[1:])
    return f"{len(done)} of {len(SUITE)} kernels ({', '.join(done)}): {means}"


def carry(kernel: str) -> str:
    """Give ``kernel``'s part and kept runs, measured at an earlier pin, these sources' key
    and revision, their values unchanged (a run records the revision it was measured at in
    ``carried_from``). Only for a kernel without barriers, whose decisions the barrier hold
    of session 23 does not change; :class:`RunsError` for one with barriers."""
    if BAR in load_workload(kernel)[1].kinds:
        raise RunsError(f"{kernel}: has barriers, so its runs changed with the barrier "
                        "hold: measure it again at these sources")
    new_key, revision = key(kernel), git_revision()
    moved = []
    path = parts._part_path(FOLDER, "regless", SIZE, kernel)
    if path.exists() and (part := parts._read_part(path))["key"] != new_key:
        path.write_text(json.dumps({**part, "key": new_key, "revision": revision},
                                   indent=1) + "\n")
        moved.append(path.name)
    for run in RUNS:
        run_file = run_path(kernel, run)
        if not run_file.exists() or (kept := load_run(run_file))["key"] == new_key:
            continue
        kept.update(key=new_key, carried_from=kept["revision"], revision=revision)
        run_file.write_text(json.dumps(kept, indent=1) + "\n")
        moved.append(run_file.name)
    return f"{kernel}: carried to {revision}: {', '.join(moved) or 'nothing to carry'}"


KERNEL = click.Choice(list(SUITE))
"""A kernel of the register-bound suite (``gpurf.sim.sm.suite.SUITE``)."""


@click.group()
def main() -> None:
    """RegLess's paper-size parts, one run at a time."""


@main.command("run")
@click.option("-j", "--jobs", default=1, show_default=True, type=click.IntRange(1),
              help="Worker processes.")
@click.option("--only", multiple=True, type=click.Choice(RUNS), metavar="RUN",
              help="Measure only this run, in the order given (repeatable; one kernel): "
                   "to share a kernel's runs between processes.")
@click.argument("kernels", nargs=-1, required=True, type=KERNEL, metavar="KERNEL...")
def run_command(kernels: tuple[str, ...], jobs: int, only: tuple[str, ...]) -> None:
    """Measure the runs of KERNELS not yet kept (a kernel per process, in turn), then
    assemble their parts."""
    if only and len(kernels) > 1:
        raise RunsError(f"--only names runs of one kernel; got {len(kernels)} kernels")
    if jobs == 1 or len(kernels) == 1:
        for kernel in kernels:
            click.echo(keep_kernel(kernel, only))
    else:
        run_all(list(kernels), min(jobs, len(kernels)))


@main.command("assemble")
@click.argument("kernels", nargs=-1, required=True, type=KERNEL, metavar="KERNEL...")
def assemble_command(kernels: tuple[str, ...]) -> None:
    """Write the parts of KERNELS whose eight runs are kept."""
    for kernel in kernels:
        click.echo(assemble(kernel))


@main.command("status")
@click.argument("kernels", nargs=-1, required=True, type=KERNEL, metavar="KERNEL...")
def status_command(kernels: tuple[str, ...]) -> None:
    """Which runs of KERNELS are kept, with their CPU seconds and run times."""
    for kernel in kernels:
        click.echo(run_summary(kernel))


@main.command("carry")
@click.argument("kernels", nargs=-1, required=True, type=KERNEL, metavar="KERNEL...")
def carry_command(kernels: tuple[str, ...]) -> None:
    """Move the parts and kept runs of KERNELS (no barriers) to these sources' key."""
    for kernel in kernels:
        click.echo(carry(kernel))


@main.command("row")
@click.argument("kernels", nargs=-1, required=True, type=KERNEL, metavar="KERNEL...")
def row_command(kernels: tuple[str, ...]) -> None:
    """Print the folder README's table row of each assembled part of KERNELS."""
    for kernel in kernels:
        click.echo(part_row(kernel))


@main.command("means")
def means_command() -> None:
    """Print the geometric mean of each configuration's run time over the parts so far."""
    click.echo(partial_means())


if __name__ == "__main__":
    sys.exit(main())
