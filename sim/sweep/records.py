"""One JSON record per point, in a folder named by the point's content address.

The address is a hash of the point's kind and inputs and of the tool versions
(:func:`~gpurf.sim.provenance.tool_versions`, the git revision among them): a point whose
record says ``ok`` is finished and is skipped on a re-run; a failed point is run again. A
record is written to a temporary file and renamed into place, so a point killed while
writing leaves no record and runs again.

A record holds ``schema``, ``key``, ``kind``, ``axes``, ``inputs``, ``status`` (``ok`` or
``failed``), ``results``, ``units``, ``error`` (one line, or ``null``), ``seconds`` (wall
time of the point) and ``provenance``.
"""

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from gpurf.sim.provenance import provenance, tool_versions

from .compute import COMPUTE
from .spec import Point

__all__ = ["RECORD", "SCHEMA", "BadRecordError", "execute", "failure_record", "finished",
           "point_key", "read_record", "record_path", "write_record"]

SCHEMA = "gpurf.sweep.record/1"
RECORD = "record.json"
_KEYS = ("schema", "key", "kind", "axes", "inputs", "status", "results", "units", "error",
         "seconds", "provenance")


class BadRecordError(ValueError):
    """A file that is not a sweep record; the message starts with its path."""


def point_key(point: Point, versions: dict | None = None) -> str:
    """The content address of ``point``: 16 hex digits of a SHA-256 of its kind, its
    inputs and the tool versions."""
    content = {"kind": point.kind, "inputs": point.inputs,
               "versions": tool_versions() if versions is None else versions}
    text = json.dumps(content, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def record_path(out: Path, key: str) -> Path:
    """``OUT/<key>/record.json``."""
    return Path(out) / key / RECORD


def _plain(value):
    """numpy scalars as Python numbers (``json.dumps``'s fallback)."""
    if hasattr(value, "item"):
        return value.item()
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


def write_record(path: Path, record: dict) -> None:
    """Write ``record`` to ``path`` atomically (a temporary file renamed into place)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = json.dumps(record, indent=1, default=_plain) + "\n"
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".record-", suffix=".tmp")
    try:
        with os.fdopen(handle, "w") as stream:
            stream.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_record(path: Path) -> dict:
    """The record at ``path``; :class:`BadRecordError` if it is not one."""
    try:
        record = json.loads(Path(path).read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise BadRecordError(f"{path}: not a sweep record ({error})") from None
    if not isinstance(record, dict) or record.get("schema") != SCHEMA:
        raise BadRecordError(f"{path}: not a sweep record (schema is not {SCHEMA})")
    missing = [key for key in _KEYS if key not in record]
    if missing:
        raise BadRecordError(f"{path}: sweep record without {', '.join(missing)}")
    if not isinstance(record["axes"], dict) or not isinstance(record["results"], dict):
        raise BadRecordError(f"{path}: sweep record whose axes or results are not tables")
    return record


def finished(path: Path) -> bool:
    """Whether ``path`` holds a record that says ``ok``."""
    try:
        return read_record(path)["status"] == "ok"
    except BadRecordError:
        return False


def _record(point: Point, key: str, **fields) -> dict:
    return {"schema": SCHEMA, "key": key, "kind": point.kind, "axes": point.axes,
            "inputs": point.inputs, **fields, "provenance": provenance()}


def failure_record(point: Point, key: str, error: str, seconds: float = 0.0) -> dict:
    """The record of a point that raised ``error`` (one line)."""
    return _record(point, key, status="failed", results={}, units={}, error=error,
                   seconds=seconds)


def _compute(point: Point, work: Path, versions: dict):
    """``(results, units, error)`` of ``point``; an exception is its error, and so are
    tools other than those its key was made with (``versions``)."""
    mine = tool_versions()
    if mine != versions:
        differ = ", ".join(f"{name} {mine.get(name)} here, {versions.get(name)} in the key"
                           for name in sorted(set(mine) | set(versions))
                           if mine.get(name) != versions.get(name))
        return {}, {}, f"this worker's tools differ from the sweep's: {differ}"
    try:
        return COMPUTE[point.kind](point.inputs, work)
    except Exception as exception:  # a point's failure is its record; the sweep goes on
        message = " ".join(str(exception).split()) or type(exception).__name__
        return {}, {}, f"{type(exception).__name__}: {message}"


def execute(point: Point, key: str, out: Path, versions: dict) -> dict:
    """Compute ``point``, write its record under ``out`` and return it.

    ``versions`` are the tool versions ``key`` was made with: a worker with other tools
    (another revision, an edited tree) records a failure instead of computing. The work
    folder (``OUT/<key>/work``: builds, logs) is removed when the point passes and kept,
    and named in the error, when it fails.
    """
    folder = Path(out) / key
    work = folder / "work"
    start = time.perf_counter()
    results, units, error = _compute(point, work, versions)
    if error is None:
        shutil.rmtree(work, ignore_errors=True)
    elif work.exists():
        error += f" (work folder {work})"
    record = _record(point, key, status="ok" if error is None else "failed",
                     results=results, units=units, error=error,
                     seconds=round(time.perf_counter() - start, 3))
    write_record(folder / RECORD, record)
    return record
