"""The JSON schema of ``gpurf reproduce`` (``docs/results.md``) and a checker for it.

A schema is a Python value: a type (or tuple of types) the value must be, a ``dict`` of
required keys and their schemas, a one-element ``list`` (every item), :class:`MapOf` (any
keys, every value) or :class:`OneOf` (one of some constants). :func:`problems` lists where a
document departs from it, by path (``tables[0].rows[2]``), plus the cross-field rules
(row columns are the table's units; a series has a value per category).
"""

from dataclasses import dataclass
from typing import Any

from .result import SCHEMA_ID

__all__ = ["SCHEMA", "MapOf", "OneOf", "problems"]


@dataclass(frozen=True)
class MapOf:
    value: Any


@dataclass(frozen=True)
class OneOf:
    choices: tuple


NUMBER = (int, float)
SCALAR = (str, int, float, bool, list, type(None))
OPTIONAL_NUMBER = (int, float, type(None))

_PAPER_VALUE = {"key": str, "value": NUMBER, "unit": str, "what": str, "ref": str,
                "section": str, "approximate": bool, "reference": str}

SCHEMA = {
    "schema": OneOf((SCHEMA_ID,)),
    "mechanism": str,
    "size": OneOf(("test", "paper")),
    "paper": {"paper": str, "source": str, "values": MapOf(_PAPER_VALUE)},
    "tables": [{"name": str, "title": str, "units": MapOf(str), "rows": [MapOf(SCALAR)],
                "notes": [str]}],
    "figures": [{"name": str, "title": str, "unit": str, "categories": [str],
                 "series": [{"label": str, "source": OneOf(("gpurf", "paper")),
                             "values": [OPTIONAL_NUMBER]}],
                 "lines": [{"label": str, "value": NUMBER, "source": OneOf(("paper",))}],
                 "files": [str]}],
    "comparisons": [{"key": str, "what": str, "reference": str, "gpurf": NUMBER,
                     "paper": NUMBER, "unit": str, "difference": NUMBER,
                     "tolerance": NUMBER, "matches": bool, "why": (str, type(None))}],
    "notes": [str],
    "provenance": {"versions": MapOf((str, type(None))), "date": str},
}


def problems(document: Any, schema: Any = None) -> list[str]:
    """Every place ``document`` departs from ``schema`` (default :data:`SCHEMA`, with the
    cross-field rules); empty when it conforms."""
    if schema is None:
        return _check(document, SCHEMA, "") or _cross_fields(document)
    return _check(document, schema, "")


def _check(value: Any, schema: Any, path: str) -> list[str]:
    where = path or "document"
    if isinstance(schema, dict):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        missing = [f"{where}: missing key {key!r}" for key in schema if key not in value]
        extra = [f"{where}: unexpected key {key!r}" for key in value if key not in schema]
        nested = [p for key, sub in schema.items() if key in value
                  for p in _check(value[key], sub, f"{path}.{key}" if path else key)]
        return missing + extra + nested
    if isinstance(schema, list):
        if not isinstance(value, list):
            return [f"{where}: expected a list, got {type(value).__name__}"]
        return [p for i, item in enumerate(value) for p in _check(item, schema[0],
                                                                  f"{path}[{i}]")]
    if isinstance(schema, MapOf):
        if not isinstance(value, dict):
            return [f"{where}: expected an object, got {type(value).__name__}"]
        return [p for key, item in value.items() for p in _check(item, schema.value,
                                                                 f"{path}.{key}")]
    if isinstance(schema, OneOf):
        return [] if value in schema.choices else [
            f"{where}: expected one of {', '.join(map(repr, schema.choices))}, got {value!r}"]
    kinds = schema if isinstance(schema, tuple) else (schema,)
    is_bool = isinstance(value, bool)
    if not isinstance(value, kinds) or (is_bool and bool not in kinds):
        names = " or ".join(k.__name__ for k in kinds)
        return [f"{where}: expected {names}, got {type(value).__name__}"]
    return []


def _cross_fields(document: dict) -> list[str]:
    out = []
    for i, table in enumerate(document["tables"]):
        for j, row in enumerate(table["rows"]):
            if list(row) != list(table["units"]):
                out.append(f"tables[{i}].rows[{j}]: columns {list(row)} are not the "
                           f"table's units {list(table['units'])}")
    for i, figure in enumerate(document["figures"]):
        for j, series in enumerate(figure["series"]):
            if len(series["values"]) != len(figure["categories"]):
                out.append(f"figures[{i}].series[{j}]: {len(series['values'])} values for "
                           f"{len(figure['categories'])} categories")
    keys = document["paper"]["values"]
    out += [f"comparisons[{i}]: key {c['key']!r} is not a paper value"
            for i, c in enumerate(document["comparisons"]) if c["key"] not in keys]
    return out
