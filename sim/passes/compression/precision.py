"""Float precision of the compressed register file: narrowing whole warp registers at once,
the quality metric, and the quality-driven search of paper Section 4.1.

:func:`narrow_lanes` / :func:`widen_lanes` are
:func:`gpurf.golden.compression.value_truncator.narrow`
and :func:`gpurf.golden.compression.value_converter.widen` on numpy arrays (the enforced runs
narrow every float a kernel writes; the scalar models take microseconds per value). They
follow the same definitions (round to nearest, ties to even; overflow to infinity; tiny
values to subnormals or zero; NaN payload kept at the top, lowest bit set if nothing is
left, never quieted) and tests/test_passes_compression.py checks them bit for bit against
the scalar models.

Quality metric (stated, parameter ``threshold``): the largest absolute error of any output
element, relative to the largest magnitude of that output in the reference,
``max |got - want| / max |want|`` over every output buffer (0: bit-exact, the paper's
"perfect quality"; a NaN or infinity where the reference has a number counts as infinite
error). The paper's "% deviation" for its non-image kernels is of this kind; its "high
quality" allows 10 %.
"""

import numpy as np

from gpurf.hw.compression.formats import FP32, TABLE3_WIDTHS, FloatFormat, table3_format
from gpurf.hw.compression.layouts import SLICE_BITS

__all__ = ["narrow_lanes", "quality_error", "round_trip", "table3_formats", "widen_lanes"]


def table3_formats() -> list[FloatFormat]:
    """The Table 3 formats, narrowest first."""
    return [table3_format(width // SLICE_BITS) for width in TABLE3_WIDTHS]


def _round_half_even(value: np.ndarray, shift: np.ndarray) -> np.ndarray:
    """``value / 2^shift`` to the nearest integer, ties to even (``int64`` arrays)."""
    up = np.maximum(-shift, 0)
    shift = np.clip(shift, 1, 40)
    quotient = value >> shift
    remainder = value & ((np.int64(1) << shift) - 1)
    half = np.int64(1) << (shift - 1)
    quotient = quotient + ((remainder > half) | ((remainder == half) & (quotient & 1 == 1)))
    return np.where(up > 0, value << up, np.where(shift > 0, quotient, value))


def narrow_lanes(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """The ``fmt`` bits (``uint32``) of every fp32 in ``bits`` (``uint32``)."""
    bits = np.asarray(bits, np.uint32).astype(np.int64)
    if fmt == FP32:
        return bits.astype(np.uint32)
    m = fmt.mantissa
    sign = (bits >> 31) << (fmt.width - 1)
    exp, man = (bits >> 23) & 0xFF, bits & 0x7FFFFF
    special = sign | (fmt.max_exponent << m)
    nan = special | np.maximum(man >> (23 - m), 1)
    significand = np.where(exp > 0, man | (1 << 23), man)
    scale = np.maximum(exp, 1) - 150
    top = np.frexp(np.maximum(significand, 1).astype(np.float64))[1] - 1 + scale
    exponent = np.maximum(top, 1 - fmt.bias)
    steps = _round_half_even(significand, exponent - m - scale)
    carry = steps == 2 << m
    exponent, steps = exponent + carry, np.where(carry, 1 << m, steps)
    normal = steps >= 1 << m
    finite = sign | np.where(normal, ((exponent + fmt.bias) << m) | (steps - (1 << m)), steps)
    finite = np.where(exponent + fmt.bias >= fmt.max_exponent, special, finite)
    result = np.where(exp == 0xFF, np.where(man != 0, nan, special), finite)
    return result.astype(np.uint32)


def widen_lanes(bits: np.ndarray, fmt: FloatFormat) -> np.ndarray:
    """The fp32 bits (``uint32``) of every ``fmt`` float in ``bits``; exact."""
    bits = np.asarray(bits, np.uint32).astype(np.int64)
    if fmt == FP32:
        return bits.astype(np.uint32)
    m = fmt.mantissa
    negative = (bits >> (fmt.width - 1)) & 1
    exp, man = (bits >> m) & fmt.max_exponent, bits & ((1 << m) - 1)
    special = (negative << 31) | (0xFF << 23)
    nan = special | (man << (23 - m))
    significand = np.where(exp > 0, man | (1 << m), man).astype(np.float64)
    value = np.ldexp(significand, (np.maximum(exp, 1) - fmt.bias - m).astype(np.int32))
    value = np.where(negative == 1, -value, value).astype(np.float32).view(np.uint32)
    result = np.where(exp == fmt.max_exponent, np.where(man != 0, nan, special), value)
    return result.astype(np.uint32)


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
