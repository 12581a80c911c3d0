"""``gpurf reproduce MECHANISM``: a mechanism's paper results computed from runs, as
Markdown tables, JSON (schema: ``docs/results.md``) and figures (PNG and SVG).

Each mechanism with results has a module here whose ``reproduce(size, say=...)`` returns a
:class:`~.result.Result`; :func:`write_results` writes ``report.md``, ``result.json`` and
the figures into a folder.
"""

import importlib
import inspect
import json
from collections.abc import Callable
from pathlib import Path

from gpurf.hw.registry import all_blocks

from .figures import draw
from .result import Result
from .schema import problems

__all__ = ["MECHANISMS", "NoResultsError", "Result", "default_out", "reproduce",
           "takes_option", "write_results"]

MECHANISMS = ("compression", "greener", "regless", "subcore", "wir")
"""The mechanisms with results to reproduce (a module of the same name here)."""

SIZES = ("test", "paper")


class NoResultsError(LookupError):
    """An unknown mechanism, or one without paper results to reproduce."""


def _module(mechanism: str):
    if mechanism not in MECHANISMS:
        registered = {block.mechanism for block in all_blocks()}
        if mechanism in registered:
            raise NoResultsError(f"mechanism {mechanism!r} has no paper results to reproduce "
                                 f"yet; results exist for: {', '.join(MECHANISMS)}")
        raise NoResultsError(f"unknown mechanism {mechanism!r}; results exist for: "
                             f"{', '.join(MECHANISMS)}")
    return importlib.import_module(f"{__name__}.{mechanism}")


def reproduce(mechanism: str, size: str = "test", *,
              say: Callable[[str], None] = lambda _: None, **options) -> Result:
    """``mechanism``'s results at ``size`` (``options`` go to its module, e.g. ``kernels``
    for greener); :class:`NoResultsError` if it has none."""
    if size not in SIZES:
        raise ValueError(f"size must be one of {', '.join(SIZES)}, not {size!r}")
    return _module(mechanism).reproduce(size, say=say, **options)


def takes_option(mechanism: str, option: str) -> bool:
    """Whether ``mechanism``'s reproduction takes ``option`` (e.g. ``jobs``)."""
    return option in inspect.signature(_module(mechanism).reproduce).parameters


def default_out(mechanism: str) -> Path:
    """The results folder when ``--out`` is not given."""
    return Path("gpurf-results") / "reproduce" / mechanism


def write_results(result: Result, out: Path) -> dict:
    """Write ``report.md``, ``result.json`` and every figure into ``out``; return the JSON
    (checked against the schema first: a :class:`ValueError` names what departs from it)."""
    document = result.as_json()
    wrong = problems(document)
    if wrong:
        raise ValueError(f"{result.mechanism}: result departs from the schema: {wrong[0]}")
    out.mkdir(parents=True, exist_ok=True)
    for plot in result.plots:
        draw(plot, out)
    (out / "report.md").write_text(result.markdown())
    (out / "result.json").write_text(json.dumps(document, indent=1) + "\n")
    return document
