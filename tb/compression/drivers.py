"""Stimulus drivers shared by the static data compression benches and tests: legal
indirection entries (:func:`random_entry` for reads, :func:`random_writeback_entry` for the
truncator's writebacks, which may place both parts in one register), the paper's Fig. 3
entry, edge encodings of a float format, and fp32 values at the edges of narrowing into it
(ties, overflow, underflow, NaN payloads). Python floats compute the edge values; packing
goes through the layouts' codecs."""

import struct
from functools import cache

import numpy as np

from gpurf.hw.compression.formats import FP32, FloatFormat
from gpurf.hw.compression.layouts import SLICES
from gpurf.hw.ports import codec

__all__ = ["FIG3_ENTRY", "FP32_SPECIALS", "fp32_edges", "narrow_edges", "random_entry",
           "random_fp32", "random_fp32_lanes", "random_mask", "random_narrow",
           "random_writeback_entry"]

FIG3_ENTRY = {"r0": 0x05, "m0": 0b1000_0000, "r1": 0x09, "m1": 0b0100_1100}
"""The paper's Fig. 3 example: a 16-bit float with data slice 0 in slice 7 of ``r0`` and
data slices 1, 2, 3 in slices 2, 3, 6 of ``r1`` (register numbers are ours)."""


def random_mask(rng, count: int) -> int:
    """A mask of ``count`` random slices."""
    mask = 0
    for s in rng.sample(range(SLICES), count):
        mask |= 1 << s
    return mask


def random_entry(rng, *, width: int | None = None, split: bool | None = None,
                 registers: int = 256) -> dict:
    """A legal indirection entry of ``width`` slices (1..8, random if ``None``), split over
    two different registers below ``registers`` or not (random if ``None``; a 1-slice
    operand is never split)."""
    width = rng.randint(1, SLICES) if width is None else width
    split = rng.random() < 0.5 if split is None else split
    split = split and width > 1
    r0, r1 = rng.sample(range(registers), 2)
    if not split:
        return {"r0": r0, "m0": random_mask(rng, width), "r1": rng.randrange(registers),
                "m1": 0}
    first = rng.randint(1, width - 1)
    return {"r0": r0, "m0": random_mask(rng, first), "r1": r1,
            "m1": random_mask(rng, width - first)}


FP32_SPECIALS = (
    0x00000000, 0x80000000, 0x00000001, 0x807FFFFF, 0x00800000, 0x7F7FFFFF, 0xFF7FFFFF,
    0x7F800000, 0xFF800000, 0x7F800001, 0xFF800001, 0x7FC00000, 0xFFC00000, 0x7FFFFFFF,
    0x7F801FFF, 0x7F802000, 0x7FBFFFFF, 0x3F800000, 0xBF800000,
)
"""fp32 zeros, subnormals, extremes, infinities and NaNs (signalling, quiet, payloads that
vanish or survive in narrow formats)."""


@cache
def _fields(fmt: FloatFormat):
    return codec(fmt.layout)


def _code(fmt: FloatFormat, sign: int, exponent: int, mantissa: int) -> int:
    return _fields(fmt).pack({"sign": sign, "exponent": exponent, "mantissa": mantissa})


@cache
def narrow_edges(fmt: FloatFormat) -> tuple[int, ...]:
    """Encodings of ``fmt`` at its edges, both signs: zero, smallest and largest
    subnormal, smallest normal, one, largest finite, infinity, NaNs (payload 1, quiet bit,
    all ones)."""
    top, ones = fmt.max_exponent, (1 << fmt.mantissa) - 1
    fields = [(0, 0), (0, 1), (0, ones), (1, 0), (1, 1), (fmt.bias, 0), (fmt.bias, ones),
              (top - 1, 0), (top - 1, ones), (top, 0), (top, 1), (top, 1 << (fmt.mantissa - 1)),
              (top, ones)]
    return tuple(_code(fmt, sign, e, mant) for sign in (0, 1) for e, mant in fields)


def _f32_bits(value: float) -> int:
    return struct.unpack("<I", struct.pack("<f", value))[0]


def _narrow_value(fmt: FloatFormat, exponent: int, mantissa: int) -> float:
    """The value of a positive finite ``fmt`` float, as a Python float (exact)."""
    if exponent == 0:
        return mantissa * 2.0 ** (1 - fmt.bias - fmt.mantissa)
    return (1 + mantissa / (1 << fmt.mantissa)) * 2.0 ** (exponent - fmt.bias)


@cache
def fp32_edges(fmt: FloatFormat) -> tuple[int, ...]:
    """fp32 values where narrowing into ``fmt`` is delicate, both signs: the midpoints
    (ties) between neighbouring ``fmt`` values at zero, in the subnormals, across the
    subnormal/normal border, at one (even and odd neighbours) and at the top (where the
    tie overflows to infinity), each also one fp32 step below and above; values one and two
    binades above the largest finite value; and :data:`FP32_SPECIALS`."""
    top, ones = fmt.max_exponent, (1 << fmt.mantissa) - 1
    pairs = [((0, 0), (0, 1)), ((0, 1), (0, 2)), ((0, ones), (1, 0)), ((1, 0), (1, 1)),
             ((fmt.bias, 0), (fmt.bias, 1)), ((fmt.bias, 1), (fmt.bias, 2)),
             ((top - 1, ones - 1), (top - 1, ones))]
    points = []
    for low, high in pairs:
        points.append((_narrow_value(fmt, *low) + _narrow_value(fmt, *high)) / 2)
    largest = _narrow_value(fmt, top - 1, ones)
    points.append(largest + (largest - _narrow_value(fmt, top - 1, ones - 1)) / 2)
    points += [2 * largest, 3 * largest, 4 * largest]
    edges = set(FP32_SPECIALS)
    if fmt.mantissa < FP32.mantissa and fmt.exponent < FP32.exponent:
        for point in points:
            bits = _f32_bits(point)
            edges.update({bits - 1, bits, bits + 1})
    return tuple(sorted(edges | {b | 0x80000000 for b in edges if b < 0x80000000}))


def random_narrow(rng, fmt: FloatFormat, *, garbage: bool = True) -> int:
    """A ``fmt`` encoding in a 32-bit lane: an edge (1 in 4) or random fields, with random
    bits above the format when ``garbage`` (the converter ignores them)."""
    code = (rng.choice(narrow_edges(fmt)) if rng.random() < 0.25
            else rng.randrange(1 << fmt.width))
    if garbage and fmt.width < 32 and rng.random() < 0.5:
        code |= rng.randrange(1 << (32 - fmt.width)) << fmt.width
    return code


def random_fp32(rng, fmt: FloatFormat | None) -> int:
    """An fp32 bit pattern for narrowing into ``fmt``: an edge (1 in 8), any pattern (1 in
    8), else a value whose exponent lies around ``fmt``'s range (from below its smallest
    subnormal to above its largest finite), a third of them exact ties."""
    draw = rng.random()
    if fmt is None or draw < 0.125:
        return rng.randrange(1 << 32)
    if draw < 0.25:
        return rng.choice(fp32_edges(fmt))
    low = FP32.bias + 1 - fmt.bias - fmt.mantissa - 3
    high = FP32.bias + fmt.max_exponent - fmt.bias + 1
    exponent = min(max(rng.randrange(low, high + 1), 0), FP32.max_exponent)
    mantissa = rng.randrange(1 << FP32.mantissa)
    drop = FP32.mantissa - fmt.mantissa
    if drop and rng.random() < 1 / 3:
        mantissa = (mantissa >> drop << drop) | (1 << (drop - 1))
    return _code(FP32, rng.randrange(2), exponent, mantissa)


def random_fp32_lanes(generator, fmt: FloatFormat, count: int) -> np.ndarray:
    """``count`` draws of :func:`random_fp32` at once, from a numpy ``generator``: the same
    mix (an edge 1 in 8, any pattern 1 in 8, else a value around ``fmt``'s range, a third
    of those exact ties), as a ``uint32`` array. Four raw 64-bit words per lane give every
    choice (a choice among ``n`` by a remainder: its bias is below ``n / 2^64``)."""
    raw = generator.bit_generator.random_raw(4 * count).reshape(4, count)
    kind, choice, fields, tie = raw
    edges = np.array(fp32_edges(fmt), np.uint64)
    edge = edges[choice % np.uint64(len(edges))]
    low = FP32.bias + 1 - fmt.bias - fmt.mantissa - 3
    high = FP32.bias + fmt.max_exponent - fmt.bias + 1
    exponent = np.clip((choice % np.uint64(high - low + 1)).astype(np.int64) + low, 0,
                       FP32.max_exponent).astype(np.uint64)
    mantissa = fields & np.uint64((1 << FP32.mantissa) - 1)
    drop = FP32.mantissa - fmt.mantissa
    if drop:
        tied = (mantissa >> np.uint64(drop) << np.uint64(drop)) | np.uint64(1 << (drop - 1))
        mantissa = np.where(tie % np.uint64(3) == 0, tied, mantissa)
    sign = (fields >> np.uint64(32)) & np.uint64(1)
    ranged = (sign << np.uint64(31)) | (exponent << np.uint64(23)) | mantissa
    anything = fields >> np.uint64(32)
    eighth = kind & np.uint64(7)
    return np.where(eighth == 0, anything, np.where(eighth == 1, edge, ranged)
                    ).astype(np.uint32)


def random_writeback_entry(rng, slices: int, *, split: bool | None = None) -> dict[str, int]:
    """A legal indirection entry of ``slices`` (1..8) data slices at random places: split
    over two registers (``split``, random when ``None``; only if ``slices >= 2``) or not;
    when split, sometimes ``r1 == r0`` with disjoint masks."""
    if split is None:
        split = slices >= 2 and rng.random() < 0.5
    first = rng.randrange(1, slices) if split else slices
    r0 = rng.randrange(256)
    m0 = _random_mask(rng, first, 0)
    if not split:
        return {"r0": r0, "m0": m0, "r1": rng.randrange(256), "m1": 0}
    same = rng.random() < 0.2
    r1 = r0 if same else _other_register(rng, r0)
    m1 = _random_mask(rng, slices - first, m0 if same else 0)
    return {"r0": r0, "m0": m0, "r1": r1, "m1": m1}


def _other_register(rng, r0: int) -> int:
    """A random register other than ``r0`` (the draw of ``rng.choice`` over the 255 others,
    without building their list)."""
    r = rng.randrange(255)
    return r + (r >= r0)


def _random_mask(rng, count: int, taken: int) -> int:
    free = [s for s in range(SLICES) if not (taken >> s) & 1]
    return sum(1 << s for s in rng.sample(free, count))

