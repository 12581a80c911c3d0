"""Floating-point helpers the model and the numpy references share.

numpy has no fused multiply-add. :func:`fma_f32` computes ``a * b + c`` for float32 with a
single rounding, exactly as ``fma.rn.f32``: the product of two float32 values is exact in
float64, the float64 sum is made *round-to-odd* (TwoSum gives its exact error; an inexact
result with an even last bit moves one ulp towards the exact sum), and rounding a
round-to-odd value with 53 >= 2 * 24 + 2 bits to float32 is correctly rounded (Boldo and
Melquiond, "Emulation of FMA and correctly rounded sums: proved algorithms using rounding
to odd", IEEE TC 2008).
"""

import numpy as np

__all__ = ["fma_f32", "fma_f64", "ftz"]


_MIDPOINT_MASK = np.uint64((1 << 29) - 1)
_MIDPOINT = np.uint64(1 << 28)
_TINY = np.finfo(np.float32).tiny


def fma_f32(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once to float32 (round to nearest even).

    Fast path: the float64 sum ``s`` rounds to the correct float32 unless it landed exactly
    on a float32 midpoint (its low 29 bits are ``1 << 28``) or is below float32's normal
    range (where the midpoints move); only then is the round-to-odd correction computed.
    """
    p = np.asarray(a, np.float32).astype(np.float64) * np.asarray(b, np.float32)
    c = np.asarray(c, np.float32).astype(np.float64)
    s = p + c
    if not ((np.asarray(s).view(np.uint64) & _MIDPOINT_MASK) == _MIDPOINT).any() and (
            np.abs(s) >= _TINY).all():
        return np.asarray(s).astype(np.float32)
    v = s - p
    err = (p - (s - v)) + (c - v)
    bits = s.view(np.uint64) if s.ndim else np.array(s).view(np.uint64)
    even_inexact = (err != 0) & ((bits & 1) == 0) & np.isfinite(s)
    if np.any(even_inexact):
        away = (err > 0) == (s > 0)
        step = np.where(away, np.uint64(1), np.uint64(0xFFFF_FFFF_FFFF_FFFF))
        bits = np.where(even_inexact, bits + step, bits)
        s = bits.view(np.float64)
    return np.asarray(s).astype(np.float32)


def fma_f64(a, b, c) -> np.ndarray:
    """``a * b + c`` in float64. Rounded twice (product, then sum): may differ from a
    fused result in the last bit; no kernel of the project uses ``fma.rn.f64``."""
    return np.asarray(a, np.float64) * b + c


def ftz(x: np.ndarray) -> np.ndarray:
    """``x`` with subnormals flushed to zero of the same sign (the ``.ftz`` modifier)."""
    tiny = np.finfo(x.dtype).tiny
    return np.where(np.abs(x) < tiny, np.copysign(np.zeros_like(x), x), x)
