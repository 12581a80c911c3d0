"""Packed structures of the static data compression blocks, shared by hw, golden models and
benches.

Field order follows ``StructLayout``: the first field sits in the least significant bits.
Thread registers are 8 slices of 4 bits; slice ``s`` is bits ``[4s+3 : 4s]``.
"""

from amaranth.lib import data

__all__ = [
    "SLICES",
    "SLICE_BITS",
    "THREAD_BITS",
    "collector_fetch_layout",
    "collector_operand_layout",
    "float_layout",
    "indirection_entry_layout",
    "lookup_layout",
    "lookup_result_layout",
    "read_request_layout",
    "read_result_layout",
    "register_write_layout",
    "slice_layout",
    "table_load_layout",
    "warp_register_layout",
    "write_request_layout",
]

SLICES = 8
"""Slices of a thread register."""

SLICE_BITS = 4
"""Bits of a slice."""

THREAD_BITS = SLICES * SLICE_BITS
"""Bits of a thread register."""


def slice_layout() -> data.ArrayLayout:
    """A thread register as its slices, slice 0 in the least significant bits."""
    return data.ArrayLayout(SLICE_BITS, SLICES)


def warp_register_layout(*, lanes: int) -> data.ArrayLayout:
    """A warp register: lane ``l`` in bits ``[32l+31 : 32l]``."""
    return data.ArrayLayout(THREAD_BITS, lanes)


def indirection_entry_layout() -> data.StructLayout:
    """One indirection-table entry ``{r0, m0, r1, m1}`` (spec 3.2.2): ``r0`` in bits 31:24,
    ``m0`` in 23:16, ``r1`` in 15:8, ``m1`` in 7:0 (spec field order, so ``m1`` is the
    first, least significant field). The operand's data slices fill the set bits of ``m0``
    of physical register ``r0``, then those of ``m1`` of ``r1``; ``m1 = 0``: not split."""
    return data.StructLayout({"m1": SLICES, "r1": 8, "m0": SLICES, "r0": 8})


def lookup_layout(*, reg_bits: int, tag_width: int) -> data.StructLayout:
    """A lookup request to an indirection table: the architectural register ``reg`` and an
    opaque ``tag`` returned with the result (e.g. the writeback's warp and data)."""
    return data.StructLayout({"reg": reg_bits, "tag": tag_width})


def lookup_result_layout(*, tag_width: int) -> data.StructLayout:
    """A lookup result: the register's ``entry`` and the request's ``tag``."""
    return data.StructLayout({"entry": indirection_entry_layout(), "tag": tag_width})


def table_load_layout(*, reg_bits: int) -> data.StructLayout:
    """One write of a kernel's table contents: ``entry`` for architectural register ``reg``."""
    return data.StructLayout({"reg": reg_bits, "entry": indirection_entry_layout()})


def collector_operand_layout() -> data.StructLayout:
    """Per-operand annotation given to an extended collector unit at allocation:
    ``signed`` (a signed integer: sign-extend), ``convert`` (a narrow float the value
    converter widens)."""
    return data.StructLayout({"signed": 1, "convert": 1})


def collector_fetch_layout(*, operand_bits: int, lanes: int) -> data.StructLayout:
    """One extracted part arriving at an extended collector unit: the ``operand`` it
    belongs to and its aligned, padded ``data`` (the value extractor's output)."""
    return data.StructLayout({"operand": operand_bits,
                              "data": warp_register_layout(lanes=lanes)})


def float_layout(*, exponent: int, mantissa: int) -> data.StructLayout:
    """A float of ``1 + exponent + mantissa`` bits (Table 3 formats, IEEE-754-like):
    ``mantissa`` in the least significant bits, then ``exponent``, then ``sign``."""
    return data.StructLayout({"mantissa": mantissa, "exponent": exponent, "sign": 1})


def register_write_layout(*, lanes: int) -> data.StructLayout:
    """One register-file write of the value truncator: physical register ``reg``, the
    per-slice write ``mask`` (bit ``s`` enables slice ``s`` of every lane; 0 = no write)
    and the warp register ``data`` (zero outside the mask)."""
    return data.StructLayout({"reg": 8, "mask": SLICES,
                              "data": warp_register_layout(lanes=lanes)})


def read_request_layout(*, reg_bits: int, tag_width: int) -> data.StructLayout:
    """An operand read of the composed read path: architectural register ``reg``, the
    instruction's per-operand ``signed`` and ``convert`` flags, and a ``tag`` returned with
    the operand (e.g. the collector unit and operand slot)."""
    return data.StructLayout({"reg": reg_bits, "signed": 1, "convert": 1, "tag": tag_width})


def read_result_layout(*, lanes: int, tag_width: int) -> data.StructLayout:
    """A collected operand: the warp register ``data`` (aligned, merged, widened) and the
    request's ``tag``."""
    return data.StructLayout({"data": warp_register_layout(lanes=lanes), "tag": tag_width})


def write_request_layout(*, reg_bits: int, lanes: int) -> data.StructLayout:
    """A result to write back through the composed write path: architectural register
    ``reg``, ``float`` (an fp32 result the value truncator narrows) and the warp register
    ``data``."""
    return data.StructLayout({"reg": reg_bits, "float": 1,
                              "data": warp_register_layout(lanes=lanes)})
