"""The narrow float formats of the compressed register file (paper Table 3), in one place.

Every format has a sign bit, ``exponent`` exponent bits with bias ``2^(exponent-1) - 1`` and
``mantissa`` mantissa bits, IEEE-754-like: exponent field 0 holds zero and the subnormals,
the all-ones exponent field holds the infinities (mantissa 0) and NaNs. The 32-bit format is
IEEE binary32 and the 16-bit one IEEE binary16. A register operand of ``n`` data slices
(``n = popcount(m0) + popcount(m1)``) that is a narrow float uses the Table 3 format of
``4 n`` bits, so the format needs no field of its own (spec 3.2.4).
"""

from dataclasses import dataclass

from amaranth.lib import data

from gpurf.hw.params import check_int, check_int_choice

from .layouts import SLICE_BITS, float_layout

__all__ = ["FP32", "TABLE3", "TABLE3_WIDTHS", "FloatFormat", "resolve_formats",
           "table3_format"]


@dataclass(frozen=True)
class FloatFormat:
    """One float format: ``exponent`` and ``mantissa`` bits plus a sign bit."""

    exponent: int
    mantissa: int

    @property
    def width(self) -> int:
        return 1 + self.exponent + self.mantissa

    @property
    def bias(self) -> int:
        return (1 << (self.exponent - 1)) - 1

    @property
    def max_exponent(self) -> int:
        """The all-ones exponent field of infinities and NaNs."""
        return (1 << self.exponent) - 1

    @property
    def slices(self) -> int:
        """Register slices a value of this format occupies."""
        return -(-self.width // SLICE_BITS)

    @property
    def layout(self) -> data.StructLayout:
        """``{mantissa, exponent, sign}``, mantissa in the least significant bits."""
        return float_layout(exponent=self.exponent, mantissa=self.mantissa)

    def __str__(self) -> str:
        return f"fp{self.width}(e{self.exponent}m{self.mantissa})"


TABLE3: dict[int, FloatFormat] = {
    32: FloatFormat(8, 23),
    28: FloatFormat(7, 20),
    24: FloatFormat(6, 17),
    20: FloatFormat(5, 14),
    16: FloatFormat(5, 10),
    12: FloatFormat(4, 7),
    8: FloatFormat(3, 4),
}
"""Table 3: total bits -> format."""

TABLE3_WIDTHS: tuple[int, ...] = tuple(sorted(TABLE3))
"""The Table 3 widths, narrowest first: 8, 12, ..., 32."""

FP32 = TABLE3[32]
"""IEEE binary32, the execution units' format."""


def table3_format(slices: int) -> FloatFormat | None:
    """The Table 3 format of ``4 x slices`` bits, or ``None`` (no such format)."""
    return TABLE3.get(SLICE_BITS * slices)


def resolve_formats(*, width: int, exponent: int, mantissa: int) -> tuple[FloatFormat, ...]:
    """The formats a value converter or truncator handles, from its parameters.

    ``exponent = mantissa = 0`` (the default) selects Table 3: with ``width = 0`` every
    Table 3 format, chosen per operand at run time by its slice count; with ``width`` one
    of Table 3's widths, that format alone. Non-zero ``exponent`` (2..8) and ``mantissa``
    (1..23) give one custom format of ``1 + exponent + mantissa`` bits (at most 32);
    ``width`` is then 0 or that sum. Raises ``TypeError``/``ValueError`` naming the parameter.
    """
    custom = not (_is_zero(exponent) and _is_zero(mantissa))
    if not custom:
        check_int_choice("width", width, (0, *TABLE3_WIDTHS))
        return tuple(TABLE3[w] for w in TABLE3_WIDTHS) if width == 0 else (TABLE3[width],)
    check_int("exponent", exponent, 2, 8)
    check_int("mantissa", mantissa, 1, 23)
    fmt = FloatFormat(exponent, mantissa)
    check_int("width", width, 0, 32)
    if width not in (0, fmt.width):
        raise ValueError(f"width must be 0 or {fmt.width} (1 + exponent + mantissa), "
                         f"not {width}")
    return (fmt,)


def _is_zero(value) -> bool:
    return type(value) is int and value == 0
