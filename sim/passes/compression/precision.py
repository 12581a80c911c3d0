"""Float precision of the compressed register file: narrowing whole warp registers at once,
the quality metric, and the quality-driven search of paper Section 4.1.

:func:`narrow_lanes` / :func:`widen_lanes` (from :mod:`gpurf.golden.compression.lanes`,
where the golden models use them too) are
:func:`gpurf.golden.compression.value_truncator.narrow`
and :func:`gpurf.golden.compression.value_converter.widen` on numpy arrays (the enforced runs
narrow every float a kernel writes; the scalar models take microseconds per value).

Quality metric (stated, parameter ``threshold``): the largest absolute error of any output
element, relative to the largest magnitude of that output in the reference,
``max |got - want| / max |want|`` over every output buffer (0: bit-exact, the paper's
"perfect quality"; a NaN or infinity where the reference has a number counts as infinite
error). The paper's "% deviation" for its non-image kernels is of this kind; its "high
quality" allows 10 %.
"""

import numpy as np

from gpurf.golden.compression.lanes import narrow_lanes, widen_lanes
from gpurf.hw.compression.formats import TABLE3_WIDTHS, FloatFormat, table3_format
from gpurf.hw.compression.layouts import SLICE_BITS

__all__ = ["narrow_lanes", "quality_error", "round_trip", "table3_formats", "widen_lanes"]


def table3_formats() -> list[FloatFormat]:
    """The Table 3 formats, narrowest first."""
    return [table3_format(width // SLICE_BITS) for width in TABLE3_WIDTHS]


def round_trip(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """fp32 ``bits`` as stored in ``fmt`` and read back (what a kernel then computes with)."""
    return widen_lanes(narrow_lanes(bits, fmt), fmt)


def quality_error(outputs: dict, reference: dict) -> float:
    """The module's quality metric: ``max |got - want| / max |want|`` over all outputs."""
    worst = 0.0
    for name, want in reference.items():
        want = np.asarray(want, np.float64)
        got = np.asarray(outputs[name], np.float64)
        if np.array_equal(got, want, equal_nan=True):
            continue
        scale = float(np.max(np.abs(want[np.isfinite(want)]), initial=0.0)) or 1.0
        with np.errstate(invalid="ignore"):
            diff = np.abs(got - want)
        diff = np.where(np.isnan(got) & np.isnan(want), 0.0, diff)
        diff = np.where(got == want, 0.0, diff)
        worst = max(worst, float(np.max(np.nan_to_num(diff, nan=np.inf))) / scale)
    return worst
