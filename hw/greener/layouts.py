"""Packed structures and encodings of the GReEneR blocks, shared by hw, golden models and benches.

Field order follows ``StructLayout``: the first field sits in the least significant bits.
"""

from amaranth.lib import data, enum

__all__ = [
    "PowerState",
    "correction_entry_layout",
    "correction_insert_layout",
    "correction_query_layout",
    "correction_remove_layout",
    "correction_row_layout",
    "head_layout",
    "head_operand_layout",
    "keep_on_layout",
    "scoreboard_check_layout",
    "scoreboard_release_layout",
    "scoreboard_reserve_layout",
    "set_state_layout",
]


class PowerState(enum.Enum, shape=2):
    """Power state of one warp register (spec interpretation: 10 is reserved, read as ON)."""

    OFF = 0b00
    SLEEP = 0b01
    ON = 0b11


def correction_entry_layout(*, pc_bits: int, reg_bits: int, entry_regs: int) -> data.StructLayout:
    """One entry of the run-time correction table (paper 3.4, Label 6): an in-flight decoded
    instruction's ``pc`` and its operand registers ``reg[k]``.

    The all-ones ``pc`` marks an empty entry; unused register fields repeat the first
    register (spec interpretations), so an entry is exactly ``pc_bits + entry_regs * log2(R)``
    bits as in the paper's size formula.
    """
    return data.StructLayout({"pc": pc_bits, "reg": data.ArrayLayout(reg_bits, entry_regs)})


def correction_row_layout(*, entries: int, pc_bits: int, reg_bits: int,
                          entry_regs: int) -> data.ArrayLayout:
    """One warp's row of the correction table: ``entries`` entries, entry 0 first."""
    entry = correction_entry_layout(pc_bits=pc_bits, reg_bits=reg_bits, entry_regs=entry_regs)
    return data.ArrayLayout(entry, entries)


def correction_insert_layout(*, warp_bits: int, pc_bits: int, reg_bits: int,
                             entry_regs: int) -> data.StructLayout:
    """A decoded instruction inserted into the correction table: its warp, ``pc``, the mask
    ``valid`` of the register fields it uses (bit ``k`` = ``reg[k]``) and the registers."""
    return data.StructLayout({
        "warp": warp_bits,
        "pc": pc_bits,
        "valid": entry_regs,
        "reg": data.ArrayLayout(reg_bits, entry_regs),
    })


def correction_remove_layout(*, warp_bits: int, pc_bits: int) -> data.StructLayout:
    """An instruction leaving the correction table at writeback: its warp and ``pc``."""
    return data.StructLayout({"warp": warp_bits, "pc": pc_bits})


def correction_query_layout(*, warp_bits: int, pc_bits: int,
                            reg_bits: int) -> data.StructLayout:
    """A set-state query: register ``reg`` of ``warp`` goes to SLEEP/OFF on behalf of the
    instruction at ``pc``; ``valid``: the query is made this cycle."""
    return data.StructLayout({"valid": 1, "warp": warp_bits, "pc": pc_bits, "reg": reg_bits})


def scoreboard_reserve_layout(*, warp_bits: int, reg_bits: int,
                              sources: int) -> data.StructLayout:
    """An issued instruction's source registers to reserve: its warp, the mask ``valid`` of
    its source operands (bit ``k`` = ``reg[k]``) and their registers."""
    return data.StructLayout({
        "warp": warp_bits,
        "valid": sources,
        "reg": data.ArrayLayout(reg_bits, sources),
    })


def scoreboard_release_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """A source register whose new power state has been applied (the power controller's
    source set-state port): ``valid``, ``warp``, ``reg``."""
    return data.StructLayout({"valid": 1, "warp": warp_bits, "reg": reg_bits})


def scoreboard_check_layout(*, warp_bits: int, reg_bits: int, sources: int,
                            dests: int) -> data.StructLayout:
    """An issue candidate checked against the reserved sources: ``valid``, ``warp``, the
    source operands (mask ``src_valid``, registers ``src``) and the destination operands
    (mask ``dst_valid``, registers ``dst``)."""
    return data.StructLayout({
        "valid": 1,
        "warp": warp_bits,
        "src_valid": sources,
        "src": data.ArrayLayout(reg_bits, sources),
        "dst_valid": dests,
        "dst": data.ArrayLayout(reg_bits, dests),
    })


def set_state_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """A set-state request to the power controller (read-operand stage or writeback):
    ``valid``, register ``reg`` of ``warp`` and its new ``state`` (a :class:`PowerState`
    code, plain 2 bits so the reserved code ``10`` stays representable; read as ON)."""
    return data.StructLayout({"valid": 1, "warp": warp_bits, "reg": reg_bits, "state": 2})


def keep_on_layout(*, sources: int, dests: int) -> data.StructLayout:
    """The correction table's keep-ON bits of the power controller's set-state ports:
    bit ``k`` of ``src`` for source port ``k``, bit ``k`` of ``dst`` for destination port ``k``."""
    return data.StructLayout({"src": sources, "dst": dests})


def head_operand_layout(*, reg_bits: int) -> data.StructLayout:
    """One operand register of a decoded instruction: ``valid`` (the operand exists), ``reg``."""
    return data.StructLayout({"valid": 1, "reg": reg_bits})


def head_layout(*, reg_bits: int, operands: int) -> data.StructLayout:
    """The decoded instruction at the head of a warp's instruction buffer: ``valid`` and its
    operand registers, the sources first (``operand[0..S-1]``), then the destinations."""
    return data.StructLayout({
        "valid": 1,
        "operand": data.ArrayLayout(head_operand_layout(reg_bits=reg_bits), operands),
    })
