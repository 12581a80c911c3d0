"""``gpurf sweep``: design-space sweeps on Dask (issue 20, item 5; ``docs/sweeps.md``).

A specification (:mod:`.spec`) expands into points; :func:`run_points` skips the finished
ones and runs the rest, serially or as Dask tasks (:mod:`.cluster`), each writing its own
record (:mod:`.records`); :mod:`.stats` gathers the records into one CSV.
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gpurf.sim.provenance import tool_versions

from .cluster import ClusterSpec, MissingExtraError, connect
from .records import execute, failure_record, finished, point_key, record_path, write_record
from .spec import Point, SpecError, Sweep, load_spec

__all__ = ["ClusterSpec", "MissingExtraError", "Outcome", "Point", "SpecError", "Sweep",
           "connect", "load_spec", "pending", "run_points"]


@dataclass
class Outcome:
    """What a sweep did: the records it wrote and the points it skipped."""

    records: list[dict] = field(default_factory=list)
    skipped: list[Point] = field(default_factory=list)

    @property
    def failed(self) -> list[dict]:
        return [r for r in self.records if r["status"] != "ok"]


def pending(points: Iterable[Point], out: Path) -> tuple[list[tuple[Point, str]], list[Point]]:
    """``(point, key)`` of the points to run, and the points whose record says ``ok``
    (repeated points are run once)."""
    todo, done, seen = [], [], set()
    versions = tool_versions()
    for point in points:
        key = point_key(point, versions)
        if key in seen:
            continue
        seen.add(key)
        if finished(record_path(out, key)):
            done.append(point)
        else:
            todo.append((point, key))
    return todo, done


def run_points(points: Iterable[Point], out: Path, *, client=None,
               on_record: Callable[[dict], None] = lambda record: None) -> Outcome:
    """Run the unfinished ``points``, each writing its record under ``out``.

    With a Dask ``client`` every point is a task (records are written by the workers, so
    ``out`` must be a folder they share, at the same path); without one they run here, one
    after another.
    ``on_record`` sees each record as its point finishes.
    """
    out = Path(out).absolute()  # the workers' working folder is not ours
    todo, skipped = pending(points, out)
    outcome = Outcome(skipped=skipped)
    versions = tool_versions()
    for record in (_on_dask(todo, out, client, versions) if client
                   else _serial(todo, out, versions)):
        outcome.records.append(record)
        on_record(record)
    return outcome


def _serial(todo, out, versions):
    for point, key in todo:
        yield execute(point, key, out, versions)


def _on_dask(todo, out, client, versions):
    from distributed import as_completed

    futures = {client.submit(execute, point, key, out, versions, key=f"gpurf-point-{key}",
                             pure=False): (point, key) for point, key in todo}
    for future in as_completed(futures):
        point, key = futures[future]
        try:
            yield future.result()
        except Exception as error:  # a worker lost (killed, out of memory): record it here
            record = failure_record(point, key, f"{type(error).__name__}: {error}")
            write_record(record_path(out, key), record)
            yield record
