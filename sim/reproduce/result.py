"""What ``gpurf reproduce`` produces: tables, plots and comparisons with the paper, as
Markdown and as JSON (schema: ``docs/results.md``, checked by :mod:`.schema`)."""

from dataclasses import dataclass, field
from typing import Any

from gpurf.sim.provenance import provenance
from gpurf.synth.papers import Papers

__all__ = ["SCHEMA_ID", "Comparison", "Plot", "Result", "Series", "Table"]

SCHEMA_ID = "gpurf.reproduce/1"


@dataclass(frozen=True)
class Table:
    """Rows (column -> value) with each column's unit (``""``: a label or a ratio)."""

    name: str
    title: str
    units: dict[str, str]
    rows: list[dict[str, Any]]
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        for row in self.rows:
            if list(row) != list(self.units):
                raise ValueError(f"table {self.name}: row columns {list(row)} are not "
                                 f"{list(self.units)}")

    def as_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "units": self.units,
                "rows": self.rows, "notes": self.notes}

    def markdown(self) -> list[str]:
        header = [f"{c} ({u})" if u and u.lower() not in c.lower() else c
                  for c, u in self.units.items()]
        lines = [f"## {self.title}", "", "| " + " | ".join(header) + " |",
                 "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(_cell(row[c]) for c in self.units) + " |"
                  for row in self.rows]
        return [*lines, "", *self.notes] if self.notes else lines


@dataclass(frozen=True)
class Series:
    """One bar series of a plot: gpurf's values or the paper's (``None`` where the paper
    gives no number for that category)."""

    label: str
    source: str
    values: list[float | None]

    def as_dict(self) -> dict:
        return {"label": self.label, "source": self.source, "values": self.values}


@dataclass(frozen=True)
class Plot:
    """A grouped bar chart: categories on x, one bar per series; ``lines`` are horizontal
    reference values (a paper's average, labelled)."""

    name: str
    title: str
    unit: str
    categories: list[str]
    series: list[Series]
    lines: dict[str, float] = field(default_factory=dict)
    log: bool = False

    def __post_init__(self):
        for series in self.series:
            if len(series.values) != len(self.categories):
                raise ValueError(f"plot {self.name}: series {series.label!r} has "
                                 f"{len(series.values)} values for "
                                 f"{len(self.categories)} categories")

    def as_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "unit": self.unit,
                "categories": self.categories,
                "series": [s.as_dict() for s in self.series],
                "lines": [{"label": k, "value": v, "source": "paper"}
                          for k, v in self.lines.items()],
                "files": [f"{self.name}.png", f"{self.name}.svg"]}


@dataclass(frozen=True)
class Comparison:
    """gpurf's figure beside the paper's value ``key``: equal within ``tolerance`` (in the
    value's unit) or not, and if not, ``why``."""

    key: str
    gpurf: float
    paper: float
    unit: str
    tolerance: float
    why: str

    @property
    def matches(self) -> bool:
        return abs(self.gpurf - self.paper) <= self.tolerance

    def as_dict(self, papers: Papers) -> dict:
        return {"key": self.key, "what": papers[self.key].what,
                "reference": papers[self.key].reference, "gpurf": self.gpurf,
                "paper": self.paper, "unit": self.unit,
                "difference": round(self.gpurf - self.paper, 6),
                "tolerance": self.tolerance, "matches": self.matches,
                "why": None if self.matches else self.why}


@dataclass(frozen=True)
class Result:
    """One mechanism's reproduction at one size."""

    mechanism: str
    size: str
    papers: Papers
    tables: list[Table]
    plots: list[Plot]
    comparisons: list[Comparison]
    notes: list[str] = field(default_factory=list)

    def __post_init__(self):
        for comparison in self.comparisons:
            if comparison.key not in self.papers.values:
                raise ValueError(f"{self.mechanism}: comparison {comparison.key!r} is not a "
                                 f"value of synth/papers/{self.mechanism}.toml")

    def as_json(self) -> dict:
        return {"schema": SCHEMA_ID, "mechanism": self.mechanism, "size": self.size,
                "paper": self.papers.as_dict(),
                "tables": [t.as_dict() for t in self.tables],
                "figures": [p.as_dict() for p in self.plots],
                "comparisons": [c.as_dict(self.papers) for c in self.comparisons],
                "notes": self.notes, "provenance": provenance()}

    def markdown(self) -> str:
        lines = [f"# {self.mechanism}: {self.papers.paper} (size {self.size})", ""]
        lines += [*self.notes, ""] if self.notes else []
        for table in self.tables:
            lines += [*table.markdown(), ""]
        lines += self._comparison_lines()
        return "\n".join(lines).rstrip() + "\n"

    def _comparison_lines(self) -> list[str]:
        if not self.comparisons:
            return []
        lines = ["## Beside the paper", "",
                 "| figure | paper | gpurf | difference | verdict | reference |",
                 "|---|---|---|---|---|---|"]
        for c in self.comparisons:
            verdict = (f"**differs**: {c.why}" if not c.matches else
                       f"matches (within ±{_cell(c.tolerance)})" if c.tolerance else "matches")
            within = f" ± {_cell(c.tolerance)}" if c.tolerance else ""
            lines.append(f"| {self.papers[c.key].what} | {_cell(c.paper)} {c.unit} | "
                         f"{_cell(c.gpurf)}{within} {c.unit} | {_cell(c.gpurf - c.paper)} | "
                         f"{verdict} | {self.papers[c.key].reference} |")
        return lines


def _cell(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 1000 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, list):
        return " / ".join(_cell(v) for v in value)
    return str(value)
