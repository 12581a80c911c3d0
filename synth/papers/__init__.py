"""The papers' own numbers, one TOML file per mechanism (``<mechanism>.toml`` here).

Each file names its paper and holds one table per value::

    paper = "Mitigating GPU Core Partitioning Performance Effects"
    source = "subcore-partitioning-rba.md"

    [value.fig13_rba_area]
    value = 1.0
    unit = "%"
    what = "area of (b) RBA, 2 CUs over (a) GTO, 2 CUs"
    ref = "Fig. 13"
    section = "VI-B2"
    approximate = false   # optional: true when read off a plot

``ref`` is the table or figure, ``section`` where the paper states it (the papers as given
to the project carry no page numbers); ``approximate = true`` marks a number read off a plot
(its ``what`` then says so). :func:`paper_values` loads a file and checks every table; a
broken file is a :class:`PaperDataError` naming the file, the line and what was expected.
"""

import tomllib
from dataclasses import asdict, dataclass
from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["PaperDataError", "PaperValue", "Papers", "load_papers", "paper_values"]

_REQUIRED = {"value": (int, float), "unit": str, "what": str, "ref": str, "section": str}
_TYPE_NAMES = {str: "a string", (int, float): "a number", bool: "true or false"}


class PaperDataError(ValueError):
    """A paper data file that does not follow the format: ``FILE:LINE: what was expected``."""


@dataclass(frozen=True)
class PaperValue:
    """One number the paper states, with where it states it."""

    key: str
    value: float
    unit: str
    what: str
    ref: str
    section: str
    approximate: bool = False

    @property
    def reference(self) -> str:
        """``Fig. 13, Section VI-B2`` (``, read off the plot, approximate`` if so)."""
        read = ", read off the plot, approximate" if self.approximate else ""
        return f"{self.ref}, Section {self.section}{read}"

    def as_dict(self) -> dict:
        return {**asdict(self), "reference": self.reference}


@dataclass(frozen=True)
class Papers:
    """A mechanism's paper and its values by key."""

    paper: str
    source: str
    values: dict[str, PaperValue]

    def __getitem__(self, key: str) -> PaperValue:
        return self.values[key]

    def as_dict(self) -> dict:
        return {"paper": self.paper, "source": self.source,
                "values": {key: v.as_dict() for key, v in self.values.items()}}


def paper_values(mechanism: str) -> Papers:
    """The paper values of ``mechanism`` (:class:`LookupError` if it has no data file)."""
    path = resources.files(__name__) / f"{mechanism}.toml"
    if not path.is_file():
        raise LookupError(f"no paper data for mechanism {mechanism!r}")
    return _cached(str(path))


@cache
def _cached(path: str) -> Papers:
    return load_papers(Path(path))


def load_papers(path: Path) -> Papers:
    """Load and check one paper data file."""
    text = path.read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise PaperDataError(f"{path}: {error}") from None
    for key in ("paper", "source"):
        if not isinstance(data.get(key), str):
            raise PaperDataError(f"{path}:1: expected a top-level string {key} = \"...\"")
    tables = data.get("value")
    if not isinstance(tables, dict) or not tables:
        raise PaperDataError(f"{path}:1: expected one or more [value.KEY] tables")
    values = {key: _value(path, text, key, table) for key, table in tables.items()}
    return Papers(paper=data["paper"], source=data["source"], values=values)


def _value(path: Path, text: str, key: str, table) -> PaperValue:
    where = f"{path}:{_line_of(text, key)}: [value.{key}]"
    if not isinstance(table, dict):
        raise PaperDataError(f"{where}: expected a table")
    for name, kind in (*_REQUIRED.items(), ("approximate", bool)):
        if name not in table:
            if name == "approximate":
                continue
            raise PaperDataError(f"{where}: expected {name} = {_TYPE_NAMES[kind]}")
        value = table[name]
        wrong_bool = isinstance(value, bool) and kind is not bool
        if wrong_bool or not isinstance(value, kind):
            raise PaperDataError(f"{where}: {name} must be {_TYPE_NAMES[kind]}, "
                                 f"not {value!r}")
    unknown = sorted(set(table) - {*_REQUIRED, "approximate"})
    if unknown:
        raise PaperDataError(f"{where}: unknown key {unknown[0]!r}; expected "
                             f"{', '.join([*_REQUIRED, 'approximate'])}")
    return PaperValue(key=key, **table)


def _line_of(text: str, key: str) -> int:
    """The line of the ``[value.KEY]`` header (1 if the table is written another way)."""
    header = f"[value.{key}]"
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip().replace(" ", "") == header:
            return number
    return 1
