"""``gpurf stats DIR``: every sweep record under a folder as one CSV, one row per point, as
Accel-Sim's ``get_stats.py`` gives its users.

Columns: ``key``, ``kind``, ``status``, then the axes (in the order the records name
them), then the results flattened (``timing.cycles``, ``timing.issued.0``,
``mismatches.y``), then ``seconds`` and ``error``. Rows are sorted by kind and axes.
"""

import csv
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

from .records import RECORD, BadRecordError, read_record

__all__ = ["Gathered", "flatten", "gather", "to_csv"]


@dataclass
class Gathered:
    """The records found under a folder and the files that were not records."""

    records: list[dict] = field(default_factory=list)
    bad: list[str] = field(default_factory=list)


def gather(folder: Path) -> Gathered:
    """Every ``record.json`` under ``folder``, read; the bad ones as messages."""
    found = Gathered()
    for path in sorted(Path(folder).rglob(RECORD)):
        try:
            found.records.append(read_record(path))
        except BadRecordError as error:
            found.bad.append(str(error))
    found.records.sort(key=_order)
    return found


def _order(record: dict) -> tuple:
    """Kind, then axes; numbers by value (8 before 16), other values as text."""
    return record["kind"], tuple((name, *_sortable(value))
                                 for name, value in record["axes"].items())


def _sortable(value) -> tuple:
    if isinstance(value, int | float):
        return 0, value, ""
    return 1, 0, json.dumps(value, default=str)


def flatten(value, prefix: str = "") -> dict:
    """Nested tables and lists as one level: ``{"a": {"b": [1, 2]}}`` gives ``a.b.0`` and
    ``a.b.1``."""
    if isinstance(value, dict):
        items = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return {prefix: value}
    flat = {}
    for key, item in items:
        flat.update(flatten(item, f"{prefix}.{key}" if prefix else str(key)))
    return flat


def _columns(rows: list[dict]) -> list[str]:
    """The keys of ``rows`` in the order first seen, those of one table together
    (``mismatches.y`` first seen in a later row still goes beside ``mismatches.out``)."""
    columns: list[str] = []
    for row in rows:
        columns += [name for name in row if name not in columns]
    tables = list(dict.fromkeys(name.split(".")[0] for name in columns))
    return sorted(columns, key=lambda name: tables.index(name.split(".")[0]))


def to_csv(records: list[dict]) -> str:
    """The CSV of ``records`` (see the module docstring for its columns)."""
    axes = _columns([r["axes"] for r in records])
    results = [flatten(r["results"]) for r in records]
    columns = ["key", "kind", "status", *axes,
               *[c for c in _columns(results) if c not in axes], "seconds", "error"]
    stream = io.StringIO()
    writer = csv.DictWriter(stream, columns, lineterminator="\n")
    writer.writeheader()
    for record, flat in zip(records, results, strict=True):
        writer.writerow({"key": record["key"], "kind": record["kind"],
                         "status": record["status"], **record["axes"], **flat,
                         "seconds": record["seconds"], "error": record["error"] or ""})
    return stream.getvalue()
