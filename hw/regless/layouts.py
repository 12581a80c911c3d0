"""Packed structures of the RegLess blocks, shared by hw, golden models and benches.

Field order follows ``StructLayout``: the first field sits in the least significant bits.
"""

from amaranth.lib import data, enum

__all__ = [
    "CompressorOp",
    "L1Op",
    "PatternState",
    "RegionWord",
    "TransferPhase",
    "WarpState",
    "banked_rf_write_layout",
    "cm_issue_layout",
    "cm_region_word_layout",
    "cm_want_layout",
    "cm_written_layout",
    "compressed_line_layout",
    "compressor_l1_request_layout",
    "compressor_request_layout",
    "compressor_response_layout",
    "osu_ack_layout",
    "osu_fetch_layout",
    "osu_fill_layout",
    "osu_line_layout",
    "osu_preload_layout",
    "osu_ref_layout",
    "osu_release_layout",
    "osu_reserve_layout",
    "osu_reserved_layout",
    "osu_write_layout",
    "osu_writeback_layout",
    "shard_l1_request_layout",
    "slot_layout",
    "warp_value_layout",
]


def warp_value_layout(*, lanes: int, data_width: int) -> data.ArrayLayout:
    """A warp register value: lane ``l`` in bits ``[data_width*l + data_width-1 :
    data_width*l]`` (also one L1 line: 32 x 32 bits = 128 bytes by default)."""
    return data.ArrayLayout(data_width, lanes)


# --- part A: compressor -----------------------------------------------------------------


class PatternState(enum.Enum, shape=3):
    """The 3-bit state of a compressed register (paper 5.3: five patterns + uncompressed),
    in the spec's priority order (the lowest matching code wins)."""

    NONE = 0
    CONSTANT = 1
    STRIDE1 = 2
    STRIDE4 = 3
    HALF_STRIDE1 = 4
    HALF_STRIDE4 = 5


class CompressorOp(enum.Enum, shape=2):
    """A compressor request: ``PRELOAD`` (the OSU missed: is the register compressed?),
    ``EVICT`` (a value leaving the OSU), ``INVALIDATE`` (the register is dead);
    ``RESERVED`` acts as ``INVALIDATE``."""

    PRELOAD = 0
    EVICT = 1
    INVALIDATE = 2
    RESERVED = 3


def slot_layout(*, data_width: int) -> data.StructLayout:
    """The bases of one compressed register (8 bytes by default): ``b0`` (lane 0, or the
    whole warp's base) and ``b1`` (the second half-warp's base, 0 for full-warp patterns)."""
    return data.StructLayout({"b0": data_width, "b1": data_width})


def compressed_line_layout(*, lanes: int, data_width: int, slots: int) -> data.StructLayout:
    """A compressed line, one L1 line wide: ``slots`` bases, then ``slots`` 3-bit states
    (:class:`PatternState` codes; plain bits, since a line fetched from L1 may hold any
    code), then ``unused`` padding (15 x 64 + 15 x 3 = 1005 of 1024 bits by default)."""
    used = slots * (2 * data_width + 3)
    fields = {"base": data.ArrayLayout(slot_layout(data_width=data_width), slots),
              "state": data.ArrayLayout(3, slots)}
    if lanes * data_width > used:
        fields["unused"] = lanes * data_width - used
    return data.StructLayout(fields)


def compressor_request_layout(*, warp_bits: int, reg_bits: int, lanes: int,
                              data_width: int) -> data.StructLayout:
    """A request to the compressor: ``op``, the register ``warp`` (shard-local) and ``reg``,
    and the evicted ``value`` (ignored unless ``op`` is ``EVICT``)."""
    return data.StructLayout({
        "op": CompressorOp,
        "warp": warp_bits,
        "reg": reg_bits,
        "value": warp_value_layout(lanes=lanes, data_width=data_width),
    })


def compressor_response_layout(*, lanes: int, data_width: int) -> data.StructLayout:
    """The compressor's answer: ``compressed`` and a ``value``. Preload: compressed ->
    the decompressed value; not compressed -> 0 (the OSU asks L1). Evict: compressed ->
    stored, 0; not compressed -> the value handed back for a full-line L1 write.
    Invalidate: 0, 0."""
    return data.StructLayout({
        "compressed": 1,
        "value": warp_value_layout(lanes=lanes, data_width=data_width),
    })


def compressor_l1_request_layout(*, line_bits: int, lanes: int,
                                 data_width: int) -> data.StructLayout:
    """A compressor's L1 access: ``write`` (a write-back of a changed line; else a fetch),
    the compressed ``line`` number in the shard's compressed space, and ``data`` (the line
    for a write, 0 for a fetch)."""
    return data.StructLayout({
        "write": 1,
        "line": line_bits,
        "data": warp_value_layout(lanes=lanes, data_width=data_width),
    })


# --- part B: OSU bank and OSU -----------------------------------------------------------


def osu_ref_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """A register of the shard: ``warp`` (shard-local) and ``reg``; also one tag of an OSU
    bank (its valid bit is the complement of the line's free bit)."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits})


def osu_reserve_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """``reserve(warp, reg, last_use)``: a line for the later write of ``reg``."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "last_use": 1})


def osu_reserved_layout(*, line_shape) -> data.StructLayout:
    """The answer to a reserve: the ``line`` and the request's ``last_use`` (it rides with
    the write, paper 5.2.2)."""
    return data.StructLayout({"line": line_shape, "last_use": 1})


def osu_write_layout(*, line_shape, lanes: int, data_width: int) -> data.StructLayout:
    """``write(line, data, last_use)`` from the writeback units."""
    return data.StructLayout({"line": line_shape,
                              "data": warp_value_layout(lanes=lanes, data_width=data_width),
                              "last_use": 1})


def osu_preload_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """A CM queue entry for a bank: ``preload(warp, reg)``, or with ``invalidate`` set an
    invalidation forwarded to L1 and the compressor."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "invalidate": 1})


def osu_release_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """``evict(warp, reg)`` (``erase`` clear: the line goes to the clean or dirty list) or
    ``erase(warp, reg)`` (``erase`` set: the line goes to the free list)."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "erase": 1})


def osu_fetch_layout(*, warp_bits: int, reg_bits: int, line_shape) -> data.StructLayout:
    """A request from a bank to the compressor / L1: fetch ``(warp, reg)`` into ``line``
    (answered by a fill), or, with ``invalidate``, drop the register (``line`` 0)."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "line": line_shape,
                              "invalidate": 1})


def osu_fill_layout(*, line_shape, lanes: int, data_width: int) -> data.StructLayout:
    """The value of a preload miss arriving for ``line``."""
    return data.StructLayout({"line": line_shape,
                              "data": warp_value_layout(lanes=lanes, data_width=data_width)})


def osu_writeback_layout(*, warp_bits: int, reg_bits: int, line_shape, lanes: int,
                         data_width: int) -> data.StructLayout:
    """A dirty value leaving a bank for the compressor / L1: register, ``line`` and
    ``data``."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "line": line_shape,
                              "data": warp_value_layout(lanes=lanes, data_width=data_width)})


def osu_ack_layout(*, warp_bits: int) -> data.StructLayout:
    """A completed preload or invalidation of ``warp`` (``valid`` high), for the CM."""
    return data.StructLayout({"valid": 1, "warp": warp_bits})


def osu_line_layout(*, line_bits: int, bank_bits: int) -> data.StructLayout:
    """A line of the OSU: ``line`` within ``bank`` (the packed value is the global line
    number ``bank * lines_per_bank + line`` when ``lines_per_bank`` is a power of two)."""
    return data.StructLayout({"line": line_bits, "bank": bank_bits})


# --- baseline: banked register file --------------------------------------------------------


def banked_rf_write_layout(*, warp_bits: int, reg_bits: int, lanes: int,
                           data_width: int) -> data.StructLayout:
    """A write of the baseline banked register file: register ``warp``, ``reg`` and its
    ``data``."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits,
                              "data": warp_value_layout(lanes=lanes, data_width=data_width)})


# --- capacity manager -----------------------------------------------------------------------


class WarpState(enum.Enum, shape=2):
    """The capacity manager's state of a warp (paper 5.1, Fig. 9)."""

    INACTIVE = 0
    PRELOADING = 1
    ACTIVE = 2
    DRAINING = 3


class RegionWord(enum.Enum, shape=2):
    """The kind of a region descriptor word: the region's ``HEADER``, then its entries,
    each a ``PRELOAD`` or an ``INVALIDATE``; code 3 is not used (taken as ``PRELOAD``)."""

    HEADER = 0
    PRELOAD = 1
    INVALIDATE = 2


def cm_region_word_layout(*, warp_bits: int, reg_bits: int, entry_bits: int,
                          count_bits: int, banks: int) -> data.StructLayout:
    """One word of the region descriptor stream (spec "Region descriptor"; one layout for
    every kind, fields a kind does not use are 0):

    - ``HEADER``: ``warp``, ``n_entries`` (the entry words that follow), ``bank_usage``
      (lines the region needs per bank) and ``done`` (the warp has no more regions: it
      exits; the other fields are then 0);
    - ``PRELOAD`` / ``INVALIDATE``: ``reg`` (the region's warp is the header's; ``warp``
      is 0).
    """
    return data.StructLayout({
        "kind": RegionWord,
        "warp": warp_bits,
        "reg": reg_bits,
        "n_entries": entry_bits,
        "bank_usage": data.ArrayLayout(count_bits, banks),
        "done": 1,
    })


def cm_want_layout(*, warp_bits: int) -> data.StructLayout:
    """The warp on top of the capacity manager's stack, whose next region it asks for."""
    return data.StructLayout({"warp": warp_bits})


def cm_issue_layout(*, warp_bits: int, bank_bits: int) -> data.StructLayout:
    """An instruction the scheduler issued for ``warp``: ``has_dst`` (it writes a register
    of bank ``dst_bank``) and ``last`` (the region's last instruction)."""
    return data.StructLayout({"warp": warp_bits, "has_dst": 1, "dst_bank": bank_bits,
                              "last": 1})


def cm_written_layout(*, warp_bits: int, bank_bits: int) -> data.StructLayout:
    """A write of ``warp`` that reached the OSU in ``bank``."""
    return data.StructLayout({"warp": warp_bits, "bank": bank_bits})


# --- shard: the path between the OSU, the compressor and L1 --------------------------------


class L1Op(enum.Enum, shape=2):
    """A shard's L1 access: ``READ`` a line (answered on ``l1_response``), ``WRITE`` a line
    (posted), ``INVALIDATE`` a register's line (posted; its value is dead)."""

    READ = 0
    WRITE = 1
    INVALIDATE = 2


class TransferPhase(enum.Enum, shape=2):
    """Where the L1 stage of the shard's transfer unit is with the request it holds
    (``IDLE``: it holds none)."""

    IDLE = 0
    L1 = 1
    L1_WAIT = 2
    FILL = 3


def shard_l1_request_layout(*, addr_bits: int, lanes: int, data_width: int) -> data.StructLayout:
    """A shard's L1 request: ``op``; ``compressed`` names the address space (set: a compressed
    line of the compressor, ``addr`` its number; clear: a register line, ``addr`` the packed
    ``osu_ref_layout`` ``{warp, reg}``); ``data`` for a ``WRITE`` (else 0)."""
    return data.StructLayout({"op": L1Op, "compressed": 1, "addr": addr_bits,
                              "data": warp_value_layout(lanes=lanes, data_width=data_width)})
