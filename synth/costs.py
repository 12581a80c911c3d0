"""Paper-comparison reports: one per mechanism, ``cost_report()`` in ``synth/<mechanism>.py``."""

import importlib
import importlib.util

from gpurf.hw.registry import all_blocks

__all__ = ["cost_report", "has_cost_report"]


def has_cost_report(mechanism: str) -> bool:
    return importlib.util.find_spec(f"gpurf.synth.{mechanism}") is not None


def cost_report(mechanism: str) -> str:
    """The Markdown cost report of ``mechanism``; :class:`LookupError` if it has none."""
    if not has_cost_report(mechanism):
        known = sorted({b.mechanism for b in all_blocks() if has_cost_report(b.mechanism)})
        raise LookupError(f"no cost report for mechanism {mechanism!r}; "
                          f"reports exist for: {', '.join(known)}")
    return importlib.import_module(f"gpurf.synth.{mechanism}").cost_report()
