"""A reproduction's per-kernel parts, cached by content and run on several processes, and kept
in a folder of parts that outlives the machine.

A paper-size reproduction runs each kernel for many CPU minutes. :func:`measure_kernels`
stores each kernel's measurement in the result cache (:mod:`gpurf.sim.cache`, kind
``reproduce``) under the hash of the mechanism, size, kernel, options, the sources of the
reproduction module and everything it imports, and the tool versions. An interrupted run
therefore resumes where it stopped; runs of disjoint ``--kernels`` sets, in turn or at
once, fill one cache that the whole suite's command then reads; editing any source the
measurement may execute recomputes it. ``jobs > 1`` measures the missing kernels on a
local Dask cluster of that many worker processes (one thread each: the SM holds the GIL).

A paper-size reproduction outlasts one session, and a session's machine (with its cache)
may not come back. Inside :func:`keeping_parts` (``gpurf reproduce ... --parts DIR``) every
part found in ``DIR`` is first put into the cache under its own key, and each kernel's part
is written to ``DIR`` as soon as it is measured or read: one JSON file per kernel
(``MECHANISM-SIZE-KERNEL.json``) holding the cache entry (key, SHA-256, value) with the
revision and date it was measured. Committed, such a folder lets a later session, at the
same sources, finish the run where this one stopped; a part measured with other sources or
options has another key, so it is never used for them.
"""

import datetime
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

from gpurf.sim.cache import cache_key, default_cache, source_digest, tool_key, value_digest
from gpurf.sim.provenance import git_revision
from gpurf.sim.sm.run import run_kernel

__all__ = ["KIND", "PartsError", "WrongOutputsError", "baseline_cycles", "import_parts",
           "keeping_parts", "measure_kernels", "part_key", "to_stderr"]

KIND = "reproduce"
"""The result-cache kind of per-kernel parts."""


_PART_FIELDS = ("mechanism", "size", "kernel", "revision", "date", "key", "sha256", "value")
"""The keys of a part file, in the order they are written."""

_parts_folder: Path | None = None
"""The folder :func:`keeping_parts` set, else ``None``."""


class WrongOutputsError(RuntimeError):
    """A run's outputs differ from numpy: a failure to report, never a kernel to leave out."""


class PartsError(ValueError):
    """A part file that cannot be read: its path and what was expected."""


def baseline_cycles(mechanism: str, kernel: str, size: str, sm, say: Callable[[str], None]
                    ) -> int:
    """The cycles of ``kernel`` on the baseline SM ``sm`` (values through timing checked);
    :class:`WrongOutputsError` if its outputs differ from numpy."""
    say(f"{mechanism}: {kernel} baseline")
    base = run_kernel(kernel, size, timing=sm, values=True)
    if not base.passed:
        raise WrongOutputsError(f"{mechanism}: {kernel}: baseline outputs differ from numpy")
    return base.stats["timing"].cycles


def to_stderr(line: str) -> None:
    """Progress of a measurement on a worker process, on its standard error (picklable,
    unlike a command's own ``say``)."""
    print(f"gpurf: {line}", file=sys.stderr, flush=True)


def _as_json(value):
    """``value`` as the cache gives it back (e.g. dict keys as text), so a measured and a
    cached part read the same."""
    return json.loads(json.dumps(value))


def part_key(mechanism: str, size: str, kernel: str, options: dict) -> str:
    """The cache key of one kernel's measurement."""
    module = f"gpurf.sim.reproduce.{mechanism}"
    return cache_key(KIND, mechanism, size, kernel, options, source_digest([module]),
                     tool_key())


def _part_path(folder: Path, mechanism: str, size: str, kernel: str) -> Path:
    return folder / f"{mechanism}-{size}-{kernel.replace('/', '--')}.json"


def _read_part(path: Path) -> dict:
    """The part in ``path``; :class:`PartsError` naming the file if it is not one."""
    try:
        part = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise PartsError(f"{path}: expected a JSON part file ({error})") from None
    if not isinstance(part, dict) or sorted(part) != sorted(_PART_FIELDS):
        raise PartsError(f"{path}: expected an object with the keys "
                         f"{', '.join(_PART_FIELDS)}")
    if not (isinstance(part["key"], str) and len(part["key"]) == 64
            and all(c in "0123456789abcdef" for c in part["key"])):
        raise PartsError(f"{path}: expected key = a SHA-256 in hex (64 characters)")
    if part["sha256"] != value_digest(part["value"]):
        raise PartsError(f"{path}: the value does not match its sha256 (edited or truncated)")
    return part


def import_parts(folder: Path) -> int:
    """Put every part in ``folder`` into the result cache under its own key; how many."""
    parts = [_read_part(path) for path in sorted(folder.glob("*.json"))]
    cache = default_cache()
    for part in parts:
        cache.put(KIND, part["key"], part["value"])
    return len(parts)


def _write_part(mechanism: str, size: str, kernel: str, key: str, value) -> None:
    """Write ``kernel``'s part into the folder of :func:`keeping_parts`, if one is set and
    it does not hold this part already."""
    if _parts_folder is None:
        return
    path = _part_path(_parts_folder, mechanism, size, kernel)
    if path.exists() and _read_part(path)["key"] == key:
        return
    part = {"mechanism": mechanism, "size": size, "kernel": kernel,
            "revision": git_revision(),
            "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
            "key": key,
            "sha256": value_digest(value),
            "value": value}
    path.write_text(json.dumps(part, indent=1) + "\n")


@contextmanager
def keeping_parts(folder: Path) -> Iterator[int]:
    """Within the block, reproductions read their parts from ``folder`` (imported into the
    cache first; yields how many) and write each kernel's part there as it is measured."""
    global _parts_folder
    folder.mkdir(parents=True, exist_ok=True)
    found = import_parts(folder)
    _parts_folder = folder
    try:
        yield found
    finally:
        _parts_folder = None


def _on_workers(measure: Callable, kernels: list[str], jobs: int, keep: Callable, say) -> dict:
    """``kernel -> measure(kernel)`` for ``kernels`` on a local cluster of ``jobs``
    processes; each result is handed to ``keep(kernel, value)`` and announced as it
    finishes, so a run stopped later keeps every kernel finished before."""
    from distributed import Client, LocalCluster, as_completed

    # One thread per process: the SM holds the GIL. ":0": a free port for the dashboard.
    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                           dashboard_address=":0")
    client = Client(cluster)
    try:
        futures = {client.submit(measure, kernel, pure=False): kernel for kernel in kernels}
        done = {}
        for future in as_completed(futures):
            kernel = futures[future]
            done[kernel] = _as_json(future.result())
            keep(kernel, done[kernel])
            say(f"{kernel}: measured")
        return done
    finally:
        _shut_down(client, cluster)


def _shut_down(client, cluster) -> None:
    """Close ``client`` and ``cluster``. A close slower than a minute (a loaded machine)
    is not the run's error: it must not replace a measurement's own exception."""
    client.close()
    with suppress(TimeoutError):
        cluster.close(timeout=60)


def measure_kernels(mechanism: str, size: str, kernels: list[str], measure: Callable, *,
                    options: dict | None = None, jobs: int = 1,
                    say: Callable[[str], None] = lambda _: None) -> list:
    """``[measure(kernel) for kernel in kernels]``, each from the cache when present.

    ``measure`` takes a kernel name and returns a JSON value; with ``jobs > 1`` it must be
    picklable (a module-level function or a :func:`functools.partial` of one). ``options``
    are whatever else the measurement depends on (part of the key).
    """
    if jobs < 1:
        raise ValueError(f"jobs must be at least 1, not {jobs}")
    cache = default_cache()
    keys = {kernel: part_key(mechanism, size, kernel, options or {}) for kernel in kernels}
    found = {kernel: cache.get(KIND, key) for kernel, key in keys.items()}
    cached = {kernel: value for kernel, value in found.items() if value is not None}
    for kernel in cached:
        say(f"{mechanism}: {kernel}: from the result cache")
    missing = [kernel for kernel in kernels if kernel not in cached]

    def keep(kernel, value):
        cache.put(KIND, keys[kernel], value)
        _write_part(mechanism, size, kernel, keys[kernel], value)

    for kernel, value in cached.items():
        _write_part(mechanism, size, kernel, keys[kernel], value)

    if jobs > 1 and len(missing) > 1:
        measured = _on_workers(measure, missing, min(jobs, len(missing)), keep,
                               lambda line: say(f"{mechanism}: {line}"))
    else:
        measured = {}
        for kernel in missing:
            measured[kernel] = _as_json(measure(kernel))
            keep(kernel, measured[kernel])
    return [{**cached, **measured}[kernel] for kernel in kernels]
