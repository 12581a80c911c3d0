"""Exact arithmetic on the Table 3 float formats, written from IEEE-754's definitions.

A float's bits decode to a sign and either an exact magnitude ``significand x 2^scale``
(integers), an infinity or a NaN payload; :func:`encode` rounds an exact magnitude into a
format (round to nearest, ties to even; overflow to infinity; tiny values to subnormals or
zero). Widening and narrowing are then the same two steps: decode in one format, encode in
the other. Fields are read and written through the port codecs of the formats'
``amaranth.lib.data`` layouts (:func:`gpurf.hw.ports.codec`, built once per format: the layout
accessors are too slow for the 10^5-value reference sweeps).
"""

from dataclasses import dataclass
from fractions import Fraction
from functools import cache

from gpurf.hw.compression.formats import FloatFormat
from gpurf.hw.ports import Codec
from gpurf.hw.ports import codec as layout_codec

__all__ = ["Decoded", "decode", "encode", "encode_nan", "pack", "unpack"]


@cache
def codec(fmt: FloatFormat) -> Codec:
    """The codec of ``fmt``'s layout (fields ``mantissa``, ``exponent``, ``sign``)."""
    return layout_codec(fmt.layout)


@dataclass(frozen=True)
class Decoded:
    """A decoded float: ``kind`` is ``"finite"`` (magnitude ``significand x 2^scale``),
    ``"inf"`` or ``"nan"`` (``payload`` = the mantissa field)."""

    sign: int
    kind: str
    significand: int = 0
    scale: int = 0
    payload: int = 0

    @property
    def magnitude(self) -> Fraction:
        return self.significand * Fraction(2) ** self.scale


def pack(fmt: FloatFormat, sign: int, exponent: int, mantissa: int) -> int:
    """The bits of a float of ``fmt`` with these fields."""
    return codec(fmt).pack({"sign": sign, "exponent": exponent, "mantissa": mantissa})


def unpack(bits: int, fmt: FloatFormat) -> dict[str, int]:
    """``{sign, exponent, mantissa}`` of the ``fmt.width``-bit float ``bits``."""
    return _fields(bits, fmt)._asdict()


def _fields(bits: int, fmt: FloatFormat):
    """The named tuple ``(mantissa, exponent, sign)`` of the ``fmt.width``-bit float
    ``bits``."""
    if not 0 <= bits < 1 << fmt.width:
        raise ValueError(f"{bits:#x} is not a {fmt.width}-bit value")
    return codec(fmt).unpack(bits)


def decode(bits: int, fmt: FloatFormat) -> Decoded:
    """The value of the ``fmt.width``-bit float ``bits``."""
    fields = _fields(bits, fmt)
    sign, exponent, mantissa = fields.sign, fields.exponent, fields.mantissa
    if exponent == fmt.max_exponent:
        if mantissa == 0:
            return Decoded(sign, "inf")
        return Decoded(sign, "nan", payload=mantissa)
    if exponent == 0:
        return Decoded(sign, "finite", mantissa, 1 - fmt.bias - fmt.mantissa)
    return Decoded(sign, "finite", (1 << fmt.mantissa) + mantissa,
                   exponent - fmt.bias - fmt.mantissa)


def encode(sign: int, significand: int, scale: int, fmt: FloatFormat) -> int:
    """The magnitude ``significand x 2^scale`` rounded into ``fmt``: to nearest, ties to
    even; a result above the largest finite value is infinity; below the normal range,
    subnormal or zero."""
    steps_per_binade = 1 << fmt.mantissa
    if significand == 0:
        return pack(fmt, sign, 0, 0)
    exponent = max(significand.bit_length() - 1 + scale, 1 - fmt.bias)
    steps = _round_half_even(significand, exponent - fmt.mantissa - scale)
    if steps == 2 * steps_per_binade:
        exponent, steps = exponent + 1, steps_per_binade
    if exponent + fmt.bias >= fmt.max_exponent:
        return pack(fmt, sign, fmt.max_exponent, 0)
    if steps < steps_per_binade:
        return pack(fmt, sign, 0, steps)
    return pack(fmt, sign, exponent + fmt.bias, steps - steps_per_binade)


def encode_nan(sign: int, payload: int, source: FloatFormat, target: FloatFormat) -> int:
    """A NaN of ``source`` with ``payload`` moved into ``target`` (spec): the payload is
    aligned at the top of the mantissa (shifted up when widening, its top bits kept when
    narrowing), never quieted; if nothing of it is left, the lowest bit is set so the
    result stays a NaN."""
    shift = target.mantissa - source.mantissa
    moved = payload * (1 << shift) if shift >= 0 else payload // (1 << -shift)
    return pack(target, sign, target.max_exponent, moved or 1)


def _round_half_even(value: int, shift: int) -> int:
    """``value / 2^shift`` rounded to the nearest integer, ties to even."""
    if shift <= 0:
        return value * (1 << -shift)
    quotient, remainder = divmod(value, 1 << shift)
    half = 1 << (shift - 1)
    if remainder > half or (remainder == half and quotient % 2):
        quotient += 1
    return quotient
