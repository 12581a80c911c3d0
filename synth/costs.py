"""Paper-comparison reports: one per mechanism in ``synth/<mechanism>.py``.

A mechanism's module gives ``cost_data(root)``, the report as data (:class:`CostReport`:
tables of rows, each column's unit, the paper's values with their references), and
``cost_markdown(report)``, its Markdown (``gpurf cost MECHANISM``); :meth:`CostReport.as_json`
is ``gpurf cost MECHANISM --json`` (with :func:`~gpurf.sim.provenance.provenance`). A new
mechanism may start with a Markdown ``cost_report()`` alone; it then has no ``--json``.
"""

import importlib
import importlib.util
from dataclasses import dataclass, field
from typing import Any

from gpurf.hw.registry import all_blocks
from gpurf.sim.provenance import provenance

from .papers import Papers

__all__ = ["CostReport", "CostTable", "cost_data", "cost_json", "cost_report",
           "has_cost_report", "table"]


@dataclass(frozen=True)
class CostTable:
    """One table of a report: its rows (column -> value) and each column's unit (``""``:
    a label or a dimensionless figure)."""

    name: str
    units: dict[str, str]
    rows: list[dict[str, Any]]

    def as_dict(self) -> dict:
        return {"name": self.name, "units": self.units, "rows": self.rows}


@dataclass(frozen=True)
class CostReport:
    """A mechanism's cost report as data: tables, figures outside tables, paper values."""

    mechanism: str
    tables: dict[str, CostTable]
    papers: Papers
    figures: dict[str, Any] = field(default_factory=dict)
    """Single figures (name -> ``{"value": ..., "unit": ...}``)."""

    def rows(self, table: str) -> list[dict[str, Any]]:
        return self.tables[table].rows

    def as_json(self) -> dict:
        """The JSON of ``gpurf cost MECHANISM --json`` (schema: docs/results.md)."""
        return {"mechanism": self.mechanism, "kind": "cost",
                "tables": [table.as_dict() for table in self.tables.values()],
                "figures": self.figures, "paper": self.papers.as_dict(),
                "provenance": provenance()}


def table(name: str, units: dict[str, str], rows: list[dict[str, Any]]) -> CostTable:
    """A :class:`CostTable` whose rows hold exactly the ``units``' columns, in their order."""
    for row in rows:
        if list(row) != list(units):
            raise ValueError(f"table {name}: row columns {list(row)} are not {list(units)}")
    return CostTable(name, units, rows)


def has_cost_report(mechanism: str) -> bool:
    """Whether ``mechanism`` is a registered mechanism with a ``synth/<mechanism>.py``
    (so ``flow`` or ``costs``, modules but not mechanisms, have none)."""
    registered = {block.mechanism for block in all_blocks()}
    return (mechanism in registered
            and importlib.util.find_spec(f"gpurf.synth.{mechanism}") is not None)


def _module(mechanism: str):
    if not has_cost_report(mechanism):
        known = sorted({b.mechanism for b in all_blocks() if has_cost_report(b.mechanism)})
        raise LookupError(f"no cost report for mechanism {mechanism!r}; "
                          f"reports exist for: {', '.join(known)}")
    return importlib.import_module(f"gpurf.synth.{mechanism}")


def cost_data(mechanism: str) -> CostReport:
    """The cost report of ``mechanism`` as data; :class:`LookupError` if it has none or
    only a Markdown one (a module with ``cost_report()`` alone)."""
    module = _module(mechanism)
    if not hasattr(module, "cost_data"):
        raise LookupError(f"the cost report of {mechanism!r} has no data form: "
                          f"synth/{mechanism}.py gives cost_report() but no cost_data()")
    return module.cost_data()


def cost_report(mechanism: str) -> str:
    """The Markdown cost report of ``mechanism``; :class:`LookupError` if it has none. A
    module may give ``cost_report()`` alone, without the data form."""
    module = _module(mechanism)
    if hasattr(module, "cost_data"):
        return module.cost_markdown(module.cost_data())
    return module.cost_report()


def cost_json(mechanism: str) -> dict:
    """The JSON cost report of ``mechanism``; :class:`LookupError` if it has none."""
    return cost_data(mechanism).as_json()
