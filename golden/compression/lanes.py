"""Warp-wide float narrowing and widening on numpy arrays, and warp registers as arrays.

:func:`narrow_lanes` / :func:`widen_lanes` are
:func:`gpurf.golden.compression.value_truncator.narrow` and
:func:`gpurf.golden.compression.value_converter.widen` on a whole warp register at once (the
scalar functions, written from IEEE-754's definitions, take microseconds per value): they
follow the same definitions (round to nearest, ties to even; overflow to infinity; tiny
values to subnormals or zero; NaN payload kept at the top, lowest bit set if nothing is
left, never quieted). The golden models' ``step`` and the compressed SM use them;
tests/test_compression_lanes.py checks them bit for bit against the scalar functions
(every encoding of the formats of at most 16 bits, edges and random values of the others).

:func:`to_lanes` / :func:`from_lanes` convert a packed warp register
(:func:`~gpurf.hw.compression.layouts.warp_register_layout`: lane ``l`` in bits
``[32l+31 : 32l]``) to a ``uint32`` array and back, the layout's order as little-endian
words (checked against the layout's codec by the same tests).
"""

import numpy as np

from gpurf.hw.compression.formats import FP32, FloatFormat

__all__ = ["from_lanes", "narrow_lanes", "to_lanes", "widen_lanes"]


def to_lanes(value: int, lanes: int) -> np.ndarray:
    """The ``lanes`` 32-bit lanes of the packed warp register ``value`` (``uint32``)."""
    return np.frombuffer(value.to_bytes(4 * lanes, "little"), "<u4").astype(np.uint32)


def from_lanes(values: np.ndarray) -> int:
    """The packed warp register of the 32-bit lanes ``values``."""
    return int.from_bytes(np.asarray(values, "<u4").tobytes(), "little")


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
    """The fp32 bits (``uint32``) of every ``fmt`` float in the low ``fmt.width`` bits of
    ``bits`` (bits above are ignored); exact."""
    bits = np.asarray(bits, np.uint32).astype(np.int64) & ((1 << fmt.width) - 1)
    if fmt == FP32:
        return bits.astype(np.uint32)
    m = fmt.mantissa
    negative = (bits >> (fmt.width - 1)) & 1
    exp, man = (bits >> m) & fmt.max_exponent, bits & ((1 << m) - 1)
    special = (negative << 31) | (0xFF << 23)
    nan = special | (man << (23 - m))
    significand = np.where(exp > 0, man | (1 << m), man).astype(np.float64)
    value = np.ldexp(significand, (np.maximum(exp, 1) - fmt.bias - m).astype(np.int32))
    with np.errstate(over="ignore"):  # the all-ones exponent's lanes, replaced below
        value = np.where(negative == 1, -value, value).astype(np.float32).view(np.uint32)
    result = np.where(exp == fmt.max_exponent, np.where(man != 0, nan, special), value)
    return result.astype(np.uint32)
