"""Golden model of ``compression.value_truncator`` (paper 3.2.6, Fig. 5): fp32 -> narrow
float, then the operand's data slices scattered to their slices of ``r0``/``r1``.

Public functions (the round-trip tests of the other blocks use them): :func:`narrow`,
:func:`scatter`, :func:`truncate`, :func:`check_entry`, :func:`operand_slices`.
"""

from collections.abc import Mapping
from functools import cache

from gpurf.golden.model import PortModel
from gpurf.hw.compression.configs import ValueTruncatorConfig
from gpurf.hw.compression.formats import FP32, FloatFormat
from gpurf.hw.compression.layouts import SLICE_BITS, SLICES, THREAD_BITS, slice_layout
from gpurf.hw.ports import codec

from .formats import decode, encode, encode_nan, pack
from .lanes import from_lanes, narrow_lanes, to_lanes
from .value_extractor import entry_fields

__all__ = ["ValueTruncator", "check_entry", "narrow", "operand_slices", "scatter",
           "scatter_lanes", "truncate"]

_SLICES = codec(slice_layout())


def narrow(bits: int, fmt: FloatFormat) -> int:
    """The ``fmt`` bits of the fp32 ``bits``: round to nearest, ties to even; overflow to
    infinity; tiny values to subnormal or zero; a NaN keeps its sign and the top bits of
    its payload, lowest bit set if they are all zero, not quieted (numpy's float16 rule)."""
    value = decode(bits, FP32)
    if value.kind == "nan":
        return encode_nan(value.sign, value.payload, FP32, fmt)
    if value.kind == "inf":
        return pack(fmt, value.sign, fmt.max_exponent, 0)
    return encode(value.sign, value.significand, value.scale, fmt)


def operand_slices(m0: int, m1: int) -> int:
    """Data slices of an operand with masks ``m0``, ``m1``: ``popcount(m0) + popcount(m1)``."""
    return m0.bit_count() + m1.bit_count()


def scatter(value: int, m0: int, m1: int) -> tuple[int, int]:
    """The thread-register contents written to ``r0`` and ``r1``: data slice ``k`` of
    ``value`` (its bits ``4k+3:4k``) goes to the ``k``-th set bit of ``m0`` in increasing
    slice order, then the remaining ones to the set bits of ``m1`` (spec, Fig. 3). Slices
    outside the masks are 0 (they are not written)."""
    data = _SLICES.unpack(value)
    parts = ([0] * SLICES, [0] * SLICES)
    for k, (part, s) in enumerate(_targets(m0, m1)):
        parts[part][s] = data[k]
    return _SLICES.pack(parts[0]), _SLICES.pack(parts[1]) if m1 else 0


@cache
def _targets(m0: int, m1: int) -> tuple[tuple[int, int], ...]:
    """``(part, slice)`` receiving data slice 0, 1, ...: the set bits of ``m0``, then
    those of ``m1``."""
    return tuple((part, s) for part, mask in enumerate((m0, m1)) for s in range(SLICES)
                 if (mask >> s) & 1)


def truncate(operand: int, m0: int, m1: int, fmt: FloatFormat | None = None
             ) -> tuple[int, int]:
    """One thread's writeback: ``operand`` (fp32 when ``fmt`` is given, else an integer
    whose low ``4 x slices`` bits are kept) narrowed to ``fmt`` and scattered by
    :func:`scatter`. Returns the ``r0`` and ``r1`` thread-register contents."""
    value = operand if fmt is None else narrow(operand, fmt)
    return scatter(value, m0, m1)


def check_entry(entry: Mapping[str, int], *, is_float: bool,
                config: ValueTruncatorConfig | None = None) -> FloatFormat | None:
    """The input protocol of a truncation; raises ``ValueError`` if it is broken, else
    returns the float format (``None`` for an integer).

    ``m0`` is non-zero; the operand has at most 8 data slices; when ``r0 == r1`` the masks
    do not overlap (one register's slices are not written twice); a float has a format
    (Table 3 of ``4 x slices`` bits, or the configured fixed format's slice count).
    """
    r0, m0, r1, m1 = entry["r0"], entry["m0"], entry["r1"], entry["m1"]
    slices = operand_slices(m0, m1)
    if m0 == 0:
        raise ValueError("indirection entry with m0 = 0: the operand has no slice in r0")
    if slices > SLICES:
        raise ValueError(f"masks m0={m0:#04x} m1={m1:#04x} give {slices} slices, more than "
                         f"{SLICES}")
    if r0 == r1 and m0 & m1:
        raise ValueError(f"masks m0={m0:#04x} m1={m1:#04x} overlap in register r{r0}")
    if not is_float:
        return None
    config = config or ValueTruncatorConfig(lanes=1, width=0, exponent=0, mantissa=0)
    fmt = config.format_for(slices)
    if fmt is None:
        raise ValueError(f"a float of {slices} slices has no format "
                         f"({', '.join(map(str, config.formats))})")
    return fmt


def scatter_lanes(warp: int, lanes: int, m0: int, m1: int) -> tuple[int, int]:
    """:func:`scatter` of every lane of the packed warp register ``warp`` at once: the
    packed ``r0`` and ``r1`` warp registers. Data slice ``k`` of every lane moves to slice
    ``s`` in one shift of the whole register, masked to one nibble per lane."""
    nibbles = _lane_nibbles(lanes)
    parts = [0, 0]
    for k, (part, s) in enumerate(_targets(m0, m1)):
        parts[part] |= ((warp >> (SLICE_BITS * k)) & nibbles) << (SLICE_BITS * s)
    return parts[0], parts[1] if m1 else 0


@cache
def _lane_nibbles(lanes: int) -> int:
    """The packed warp register with slice 0 of every lane set (``0xF`` per lane)."""
    return sum(0xF << (THREAD_BITS * lane) for lane in range(lanes))


class ValueTruncator(PortModel, config=ValueTruncatorConfig):
    """Port-level model: per lane, :func:`truncate` with the entry's masks; the two writes
    carry the entry's registers and masks. Combinational. A broken input protocol (see
    :func:`check_entry`) raises ``ValueError``. Every lane is handled at once
    (:func:`~.lanes.narrow_lanes`, :func:`scatter_lanes`)."""

    def reset(self):
        self._last = None

    def step(self, inputs: dict) -> dict:
        entry = self.ports["entry"].unpack(inputs["entry"])
        fmt = check_entry(entry_fields(entry), is_float=bool(inputs["is_float"]),
                          config=self.config)
        operand, lanes = inputs["operand"], self.config.lanes
        if fmt is not None:
            operand = from_lanes(narrow_lanes(to_lanes(operand, lanes), fmt))
        words = scatter_lanes(operand, lanes, entry.m0, entry.m1)
        writes = [{"reg": entry.r0, "mask": entry.m0, "data": words[0]},
                  {"reg": entry.r1, "mask": entry.m1, "data": words[1]}]
        low = (1 << THREAD_BITS) - 1
        self._last = fmt, entry, inputs["operand"] & low, (words[0] & low, words[1] & low)
        return {"write": self.ports["write"].pack(writes)}

    def line_trace(self) -> str:
        if self._last is None:
            return "value_truncator: -"
        fmt, entry, operand, (part0, part1) = self._last
        return (f"value_truncator: {fmt or 'int'} r0={entry.r0} m0={entry.m0:08b} "
                f"r1={entry.r1} m1={entry.m1:08b} lane0 {operand:#010x} -> "
                f"{part0:#010x} {part1:#010x}")
