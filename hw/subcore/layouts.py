"""Packed structures of the sub-core blocks, shared by hw, golden models and benches.

Field order follows ``StructLayout``: the first field sits in the least significant bits.
"""

from amaranth.lib import data

__all__ = [
    "dispatch_layout",
    "hash_entry_layout",
    "issue_layout",
    "issued_operand_layout",
    "queue_len_layout",
    "rba_operands_layout",
    "register_address_layout",
    "score_vector_layout",
    "source_operand_layout",
    "warp_register_layout",
    "warp_slot_layout",
]


def warp_slot_layout(*, age_bits: int, score_width: int) -> data.StructLayout:
    """One warp slot of a sub-core scheduler as the warp selector sees it.

    ``valid``: a warp occupies the slot; ``ready``: its next instruction may issue;
    ``age``: rank in assignment order, larger = older; ``score``: stored RBA score.
    """
    return data.StructLayout({
        "valid": 1,
        "ready": 1,
        "age": age_bits,
        "score": score_width,
    })


def source_operand_layout(*, bank_bits: int) -> data.StructLayout:
    """One source operand of a warp instruction as the RBA scorer sees it.

    ``valid``: the instruction has this operand; ``bank``: register-file bank it reads.
    """
    return data.StructLayout({"valid": 1, "bank": bank_bits})


def rba_operands_layout(*, operands: int, bank_bits: int) -> data.ArrayLayout:
    """The source operands of one warp slot's next instruction, operand 0 first."""
    return data.ArrayLayout(source_operand_layout(bank_bits=bank_bits), operands)


def queue_len_layout(*, banks: int, bits: int) -> data.ArrayLayout:
    """Per-bank request-queue lengths from the operand collector, bank 0 first."""
    return data.ArrayLayout(bits, banks)


def score_vector_layout(*, slots: int, score_width: int) -> data.ArrayLayout:
    """Per-slot RBA scores, slot 0 first (the warp PC table's score column)."""
    return data.ArrayLayout(score_width, slots)


def issued_operand_layout(*, reg_bits: int) -> data.StructLayout:
    """One source operand of an issued instruction: ``valid`` (the operand exists), ``reg``."""
    return data.StructLayout({"valid": 1, "reg": reg_bits})


def issue_layout(*, warp_bits: int, reg_bits: int, operands: int) -> data.StructLayout:
    """An instruction the scheduler issues to the operand collector: its warp slot and the
    source operands (operand ``i`` in ``operand[i]``)."""
    return data.StructLayout({
        "warp": warp_bits,
        "operand": data.ArrayLayout(issued_operand_layout(reg_bits=reg_bits), operands),
    })


def warp_register_layout(*, lanes: int, data_width: int) -> data.ArrayLayout:
    """A warp register: lane ``l`` in bits ``[data_width*l + data_width-1 : data_width*l]``."""
    return data.ArrayLayout(data_width, lanes)


def register_address_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """A register-file bank read address: warp slot and register id."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits})


def dispatch_layout(*, warp_width: int, operands: int, lanes: int,
                    data_width: int) -> data.StructLayout:
    """A collected instruction toward the execution unit: warp slot, the mask of valid
    source operands (bit ``i`` = operand ``i``) and each operand's warp register (zero
    for an operand that is not valid). ``warp_width`` keeps its old name: the Fig. 13
    composition (:mod:`gpurf.synth.subcore`) passes it by keyword."""
    return data.StructLayout({
        "warp": warp_width,
        "valid": operands,
        "data": data.ArrayLayout(warp_register_layout(lanes=lanes, data_width=data_width),
                                 operands),
    })


def hash_entry_layout() -> data.StructLayout:
    """One byte of the hashed sub-core assignment table (Fig. 7): 4 consecutive warps.

    The lower nibble ``sel1`` drives select line 1, the upper nibble ``sel0`` select
    line 0. Warp ``j`` (0..3) of the entry's group uses element ``3 - j`` of each, so the
    first warp takes bits 7 and 3 (spec: ``sel0 = (e >> (7-j)) & 1``,
    ``sel1 = (e >> (3-j)) & 1``); its sub-core is ``2*sel1 + sel0``.
    """
    return data.StructLayout({
        "sel1": data.ArrayLayout(1, 4),
        "sel0": data.ArrayLayout(1, 4),
    })
