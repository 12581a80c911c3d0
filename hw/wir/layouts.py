"""Packed structures of the WIR blocks, shared by hw, golden models and benches.

Field order follows ``StructLayout``: the first field sits in the least significant bits.
"""

from amaranth.lib import data, enum

__all__ = [
    "AllocKind",
    "LoadKind",
    "Outcome",
    "alloc_request_layout",
    "alloc_result_layout",
    "alloc_stage_layout",
    "load_answer_layout",
    "load_block_layout",
    "load_query_layout",
    "load_store_layout",
    "pipeline_reg_layout",
    "pipeline_result_layout",
    "pipeline_retired_layout",
    "pipeline_reuse_layout",
    "preg_ref_layout",
    "refcount_merge_layout",
    "rename_entry_layout",
    "rename_issue_layout",
    "rename_renamed_layout",
    "rename_retire_layout",
    "rename_reuse_issue_layout",
    "rename_reuse_out_layout",
    "rename_reuse_ticket_layout",
    "rename_row_layout",
    "reuse_entry_layout",
    "reuse_fill_layout",
    "reuse_lookup_layout",
    "reuse_opcode_layout",
    "reuse_response_layout",
    "reuse_row_layout",
    "reuse_tag_layout",
    "verify_fill_layout",
    "verify_result_layout",
    "vsb_entry_layout",
    "vsb_install_layout",
    "vsb_result_layout",
    "warp_value_layout",
]


# --- part A: H3 hash, value signature buffer, verify cache, rename table ---------------


def warp_value_layout(*, lanes: int, data_width: int) -> data.ArrayLayout:
    """A warp register value: lane ``l`` in bits ``[data_width*l + data_width-1 :
    data_width*l]`` (the hash input and the verify cache's data)."""
    return data.ArrayLayout(data_width, lanes)


def vsb_entry_layout(*, hash_width: int, preg_bits: int) -> data.StructLayout:
    """The memory word of a value signature buffer entry: the full result ``hash`` and the
    physical register ``preg`` holding that value (the entry's valid bit is a flip-flop)."""
    return data.StructLayout({"hash": hash_width, "preg": preg_bits})


def vsb_result_layout(*, preg_bits: int) -> data.StructLayout:
    """A VSB lookup answer: ``hit`` (valid entry with an equal hash) and its ``preg``
    (0 on a miss)."""
    return data.StructLayout({"hit": 1, "preg": preg_bits})


def vsb_install_layout(*, hash_width: int, preg_bits: int) -> data.StructLayout:
    """A VSB install: the result's ``hash``, the register ``preg`` now holding the value, and
    ``divergent`` (a divergent result is never installed)."""
    return data.StructLayout({"hash": hash_width, "preg": preg_bits, "divergent": 1})


def verify_fill_layout(*, preg_bits: int, lanes: int, data_width: int) -> data.StructLayout:
    """A verify-cache fill after a bank read: the register ``preg`` and its ``value``."""
    return data.StructLayout({
        "preg": preg_bits,
        "value": warp_value_layout(lanes=lanes, data_width=data_width),
    })


def verify_result_layout(*, lanes: int, data_width: int) -> data.StructLayout:
    """A verify-cache answer: ``hit`` and the cached ``value`` (zero on a miss)."""
    return data.StructLayout({
        "hit": 1,
        "value": warp_value_layout(lanes=lanes, data_width=data_width),
    })


def rename_entry_layout(*, preg_bits: int) -> data.StructLayout:
    """A rename-table entry (paper V-B): physical register, valid, pin (12 bits by default)."""
    return data.StructLayout({"preg": preg_bits, "valid": 1, "pin": 1})


def rename_row_layout(*, regs: int, preg_bits: int) -> data.ArrayLayout:
    """One warp's rename table, logical register ``r`` in element ``r`` (one memory row)."""
    return data.ArrayLayout(rename_entry_layout(preg_bits=preg_bits), regs)


def rename_issue_layout(*, warp_bits: int, reg_bits: int, sources: int) -> data.StructLayout:
    """An issued instruction to rename: its ``warp``, logical ``src`` registers and the
    logical ``dst`` whose entry (pin bit, current mapping) is read too."""
    return data.StructLayout({
        "warp": warp_bits,
        "src": data.ArrayLayout(reg_bits, sources),
        "dst": reg_bits,
    })


def rename_renamed_layout(*, preg_bits: int, sources: int) -> data.StructLayout:
    """The rename answer: the entries of the sources and of the destination."""
    entry = rename_entry_layout(preg_bits=preg_bits)
    return data.StructLayout({"src": data.ArrayLayout(entry, sources), "dst": entry})


def rename_retire_layout(*, warp_bits: int, reg_bits: int,
                         preg_bits: int) -> data.StructLayout:
    """A retiring instruction's new mapping: ``warp``, logical ``reg`` -> ``preg``, and
    ``divergent`` (which becomes the entry's pin bit)."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "preg": preg_bits,
                              "divergent": 1})


# --- part B: reuse buffer, pending-retry queue, load filter ----------------------------



def reuse_opcode_layout(*, opcode_bits: int) -> data.StructLayout:
    """The reuse buffer's opcode code (spec: one code per operation and operand kinds):
    the operation ``op`` and ``regs``, bit ``k`` set when operand ``k`` is a physical register
    (clear: an immediate, or an unused operand stored as 0)."""
    return data.StructLayout({"op": opcode_bits - 3, "regs": 3})


def reuse_tag_layout(*, opcode_bits: int, preg_bits: int, tbid_bits: int,
                     barrier_bits: int) -> data.StructLayout:
    """The tag of a reuse-buffer entry (paper Fig. 9): opcode, three operand fields
    (physical register ids or immediates), thread-block id (all ones = null) and barrier
    count."""
    return data.StructLayout({
        "opcode": reuse_opcode_layout(opcode_bits=opcode_bits),
        "operand": data.ArrayLayout(preg_bits, 3),
        "tbid": tbid_bits,
        "barrier": barrier_bits,
    })


def reuse_row_layout(*, opcode_bits: int, preg_bits: int, tbid_bits: int,
                     barrier_bits: int) -> data.StructLayout:
    """The memory word of a reuse-buffer entry: tag, result register and pending bit (the
    entry's valid bit is a flip-flop)."""
    return data.StructLayout({
        "tag": reuse_tag_layout(opcode_bits=opcode_bits, preg_bits=preg_bits,
                                tbid_bits=tbid_bits, barrier_bits=barrier_bits),
        "result": preg_bits,
        "pending": 1,
    })


def reuse_entry_layout(*, opcode_bits: int, preg_bits: int, tbid_bits: int,
                       barrier_bits: int) -> data.StructLayout:
    """A whole reuse-buffer entry in the paper's field order (Fig. 9; 59 bits by default):
    valid, opcode, operands 1..3, thread-block id, barrier count, result register, pending."""
    row = reuse_row_layout(opcode_bits=opcode_bits, preg_bits=preg_bits, tbid_bits=tbid_bits,
                           barrier_bits=barrier_bits)
    return data.StructLayout({"valid": 1, **{name: field.shape for name, field in row}})


def reuse_lookup_layout(*, opcode_bits: int, imm_bits: int, tbid_bits: int,
                        barrier_bits: int) -> data.StructLayout:
    """A renamed instruction looking up the reuse buffer: ``opcode``, the three ``operand``
    values (register ids or immediates up to ``imm_bits`` wide), the ``tbid`` and ``barrier``
    tag fields (from the load filter), ``divergent`` and ``bypass`` (skip the buffer)."""
    return data.StructLayout({
        "opcode": reuse_opcode_layout(opcode_bits=opcode_bits),
        "operand": data.ArrayLayout(imm_bits, 3),
        "tbid": tbid_bits,
        "barrier": barrier_bits,
        "divergent": 1,
        "bypass": 1,
    })


def reuse_response_layout(*, index_bits: int, preg_bits: int) -> data.StructLayout:
    """A lookup's answer: ``hit`` (reuse ``result``), ``pending`` (pending hit: to the
    pending-retry queue), ``reserved`` (a miss that reserved entry ``index``: fill it at
    retire), the ``index`` travelling with the instruction, and ``result`` (0 unless
    ``hit``). All flags low: execute normally, no fill."""
    return data.StructLayout({"hit": 1, "pending": 1, "reserved": 1, "index": index_bits,
                              "result": preg_bits})


def reuse_fill_layout(*, index_bits: int, opcode_bits: int, preg_bits: int, tbid_bits: int,
                      barrier_bits: int) -> data.StructLayout:
    """A retiring instruction that reserved an entry: its ``index``, its ``tag`` and the
    ``result`` register now holding its value."""
    return data.StructLayout({
        "index": index_bits,
        "tag": reuse_tag_layout(opcode_bits=opcode_bits, preg_bits=preg_bits,
                                tbid_bits=tbid_bits, barrier_bits=barrier_bits),
        "result": preg_bits,
    })


class LoadKind(enum.Enum, shape=2):
    """What the load filter needs to know of an instruction: ``OTHER`` (arithmetic,
    read-only loads: no hazard), ``SHARED`` (scratchpad load), ``GLOBAL`` (global load);
    ``RESERVED`` answers as ``OTHER``."""

    OTHER = 0
    SHARED = 1
    GLOBAL = 2
    RESERVED = 3


def load_store_layout(*, warp_bits: int) -> data.StructLayout:
    """A renamed store of ``warp``: ``shared`` and/or ``global`` set the warp's flags."""
    return data.StructLayout({"warp": warp_bits, "shared": 1, "global_": 1})


def load_block_layout(*, warps: int, tb_bits: int) -> data.StructLayout:
    """A thread-block event (barrier release or launch): the block slot ``tb`` and its
    ``warps`` (bit ``w`` = warp ``w`` belongs to the block)."""
    return data.StructLayout({"tb": tb_bits, "warps": warps})


def load_query_layout(*, warp_bits: int, tb_bits: int) -> data.StructLayout:
    """An instruction at the reuse stage: its ``warp``, block slot ``tb`` and ``kind``."""
    return data.StructLayout({"warp": warp_bits, "tb": tb_bits, "kind": LoadKind})


def load_answer_layout(*, tbid_bits: int, barrier_bits: int) -> data.StructLayout:
    """The load filter's answer: ``reuse`` (may look up the buffer) and the ``tbid`` and
    ``barrier`` tag fields the instruction looks up (and reserves) with."""
    return data.StructLayout({"reuse": 1, "tbid": tbid_bits, "barrier": barrier_bits})


# --- part C: register pool (free pool + reference counters) ----------------------------


def preg_ref_layout(*, preg_bits: int) -> data.StructLayout:
    """One reference-count event on a physical register: ``valid`` and the register
    ``preg`` (an increment or decrement port of ``wir.register_pool``; the blocks that
    cause reference changes emit arrays of these)."""
    return data.StructLayout({"valid": 1, "preg": preg_bits})


def refcount_merge_layout(*, preg_bits: int, delta_shape) -> data.StructLayout:
    """One slot of the register pool's merge register: ``leader`` (the slot carries the
    merged update of ``preg``; at most one slot per register) and the net change ``delta``
    (increments minus decrements naming ``preg`` in that cycle, signed)."""
    return data.StructLayout({"leader": 1, "preg": preg_bits, "delta": delta_shape})


# --- part D: pipeline compositions (rename + reuse, register allocation) ----------------


def rename_reuse_issue_layout(*, warp_bits: int, tb_bits: int, opcode_bits: int,
                              reg_bits: int, imm_bits: int) -> data.StructLayout:
    """An issued instruction entering the rename stage: its ``warp`` and thread-block slot
    ``tb``, the reuse ``opcode`` code (``regs`` bit ``k``: operand ``k`` is a register),
    ``operand[k]`` (the logical register in the low ``reg_bits`` bits when ``regs[k]``,
    else the immediate), the logical ``dst``, ``divergent``, the load ``kind`` (for the load
    filter), ``store_shared`` / ``store_global`` (a store: sets the warp's store flag) and
    ``bypass`` (never reusable: stores, control flow)."""
    return data.StructLayout({
        "warp": warp_bits,
        "tb": tb_bits,
        "opcode": reuse_opcode_layout(opcode_bits=opcode_bits),
        "operand": data.ArrayLayout(imm_bits, 3),
        "dst": reg_bits,
        "divergent": 1,
        "kind": LoadKind,
        "store_shared": 1,
        "store_global": 1,
        "bypass": 1,
    })


def rename_reuse_ticket_layout(*, warp_bits: int, reg_bits: int, preg_bits: int,
                               opcode_bits: int, tbid_bits: int,
                               barrier_bits: int) -> data.StructLayout:
    """A pending hit waiting in the pending-retry queue: ``warp``, logical ``dst``, the
    destination's rename entry ``dst_entry`` and the reuse ``tag`` it re-checks with."""
    return data.StructLayout({
        "warp": warp_bits,
        "dst": reg_bits,
        "dst_entry": rename_entry_layout(preg_bits=preg_bits),
        "tag": reuse_tag_layout(opcode_bits=opcode_bits, preg_bits=preg_bits,
                                tbid_bits=tbid_bits, barrier_bits=barrier_bits),
    })


def rename_reuse_out_layout(*, warp_bits: int, reg_bits: int, preg_bits: int,
                            opcode_bits: int, imm_bits: int, tbid_bits: int,
                            barrier_bits: int, index_bits: int) -> data.StructLayout:
    """An instruction leaving the reuse stage: ``warp``, ``dst``, ``dst_entry``, the
    ``lookup`` it made (physical source ids and immediates, tag fields, flags), the
    ``response`` (``hit``: skip read/execute, result ``result``; ``pending``: went to the
    pending-retry queue; otherwise execute, ``reserved`` entry ``index`` to fill at retire)
    and ``retried`` (the answer of a re-check from the queue)."""
    return data.StructLayout({
        "warp": warp_bits,
        "dst": reg_bits,
        "dst_entry": rename_entry_layout(preg_bits=preg_bits),
        "lookup": reuse_lookup_layout(opcode_bits=opcode_bits, imm_bits=imm_bits,
                                      tbid_bits=tbid_bits, barrier_bits=barrier_bits),
        "response": reuse_response_layout(index_bits=index_bits, preg_bits=preg_bits),
        "retried": 1,
    })


class AllocKind(enum.Enum, shape=2):
    """What the register-allocation stage asks for a result: ``ALLOCATE`` a new register
    (and, for a convergent result, install ``{hash, new}`` in the VSB), ``VERIFY`` the VSB
    hit's register (verify-read), or write the ``PINNED`` register of a divergent result in
    place. ``RESERVED`` is never produced."""

    ALLOCATE = 0
    VERIFY = 1
    PINNED = 2
    RESERVED = 3


def alloc_result_layout(*, lanes: int, data_width: int, preg_bits: int,
                        ticket_bits: int) -> data.StructLayout:
    """A completed instruction's result entering register allocation: the ``value``,
    ``divergent``, the destination's rename entry ``dst`` (pin bit and register, read at
    rename) and an opaque ``ticket`` (whatever retire needs) that travels along."""
    return data.StructLayout({
        "value": warp_value_layout(lanes=lanes, data_width=data_width),
        "divergent": 1,
        "dst": rename_entry_layout(preg_bits=preg_bits),
        "ticket": ticket_bits,
    })


def alloc_request_layout(*, hash_width: int, preg_bits: int,
                         ticket_bits: int) -> data.StructLayout:
    """The register-allocation stage's answer: ``kind``, the register ``preg`` it names
    (``VERIFY``: the VSB hit; ``PINNED``: the pinned register; ``ALLOCATE``: 0), the result's
    ``hash`` (to install), ``divergent`` and the ``ticket``."""
    return data.StructLayout({"kind": AllocKind, "preg": preg_bits, "hash": hash_width,
                              "divergent": 1, "ticket": ticket_bits})


def alloc_stage_layout(*, hash_width: int, preg_bits: int,
                       ticket_bits: int) -> data.StructLayout:
    """One pipeline register of the register-allocation stage: ``valid``, the result's
    ``hash`` and its carried ``divergent``, ``dst`` and ``ticket``."""
    return data.StructLayout({"valid": 1, "hash": hash_width, "divergent": 1,
                              "dst": rename_entry_layout(preg_bits=preg_bits),
                              "ticket": ticket_bits})


# --- part E: the composed allocation pipeline ---------------------------------------------


class Outcome(enum.Enum, shape=3):
    """How ``wir.pipeline`` retired a result: ``SHARED`` (a VSB hit whose verify-read
    matched: the destination maps to the existing register, no write), ``ALLOCATED`` (a VSB
    miss, or a hit on a saturated or just rewritten entry: new register, written, installed
    unless low-register), ``VERIFY_FAILED`` (a hit whose verify-read mismatched: a hash
    collision, then as ``ALLOCATED``), ``PINNED`` (a divergent result written in place into
    its pinned register), ``DUMMY_MOV`` (a divergent result into a new pinned register, the
    other lanes copied from the old one), ``REUSED`` (a reuse hit's register transferred
    to the mapping)."""

    SHARED = 0
    ALLOCATED = 1
    VERIFY_FAILED = 2
    PINNED = 3
    DUMMY_MOV = 4
    REUSED = 5


def pipeline_reg_layout(*, warp_bits: int, reg_bits: int) -> data.StructLayout:
    """A logical register: ``warp`` and ``reg``."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits})


def pipeline_result_layout(*, warp_bits: int, reg_bits: int, lanes: int,
                           data_width: int) -> data.StructLayout:
    """A completed instruction's result: destination ``warp``/``reg``, ``value`` and the
    active-lane ``mask`` (divergent unless every lane is active)."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits,
                              "value": warp_value_layout(lanes=lanes, data_width=data_width),
                              "mask": lanes})


def pipeline_reuse_layout(*, warp_bits: int, reg_bits: int,
                          preg_bits: int) -> data.StructLayout:
    """A reuse hit retiring: destination ``warp``/``reg`` and the hit's register ``preg``,
    whose in-flight reference (taken through ``hold``) the mapping takes over."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "preg": preg_bits})


def pipeline_retired_layout(*, warp_bits: int, reg_bits: int,
                            preg_bits: int) -> data.StructLayout:
    """A retirement: ``warp``/``reg``, the register ``preg`` it now maps to and the
    ``outcome``."""
    return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "preg": preg_bits,
                              "outcome": Outcome})
