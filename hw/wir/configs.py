"""Configurations of the WIR blocks: parameters declared once, widths derived once, and each
block's port signature.

Components, golden models and benches import these (with :mod:`.layouts`), never each other:
a component is ``XConfig(**params).signature()`` plus its ``elaborate``; a golden model reads
its ports through the codecs of the same signature (:attr:`BlockConfig.codecs`).
"""

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

from amaranth import Shape
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import (
    BlockConfig,
    Param,
    check_int,
    index_bits,
    index_width,
    layout_from,
    param,
)
from gpurf.hw.signatures import valid_only

from .layouts import (
    alloc_request_layout,
    alloc_result_layout,
    alloc_stage_layout,
    load_answer_layout,
    load_block_layout,
    load_query_layout,
    load_store_layout,
    pipeline_reg_layout,
    pipeline_result_layout,
    pipeline_retired_layout,
    pipeline_reuse_layout,
    preg_ref_layout,
    refcount_merge_layout,
    rename_entry_layout,
    rename_issue_layout,
    rename_renamed_layout,
    rename_retire_layout,
    rename_reuse_issue_layout,
    rename_reuse_out_layout,
    rename_reuse_ticket_layout,
    rename_row_layout,
    reuse_entry_layout,
    reuse_fill_layout,
    reuse_lookup_layout,
    reuse_response_layout,
    reuse_row_layout,
    reuse_tag_layout,
    verify_fill_layout,
    verify_result_layout,
    vsb_entry_layout,
    vsb_install_layout,
    vsb_result_layout,
    warp_value_layout,
)

__all__ = [
    "BACKEND_HEADROOM",
    "BACKEND_HITS",
    "DEC_PORTS",
    "INC_PORTS",
    "POLICIES",
    "SOURCES",
    "BackendConfig",
    "H3HashConfig",
    "LoadFilterConfig",
    "PendingRetryConfig",
    "PipelineConfig",
    "RegisterAllocConfig",
    "RegisterPoolConfig",
    "RenameReuseConfig",
    "RenameTableConfig",
    "ReuseBufferConfig",
    "ValueSignatureBufferConfig",
    "VerifyCacheConfig",
    "h3_matrix",
]

VSB_ENTRIES = tuple(1 << k for k in range(1, 13))
"""Entry counts of the value signature buffer: powers of two, 2..4096 (a direct index)."""

REUSE_ENTRIES = tuple(1 << k for k in range(1, 11))
"""Entry counts of the reuse buffer: powers of two, 2..1024 (a direct-mapped index)."""

RETRY_DEPTHS = (2, 4, 8, 16, 32, 64)
"""Pending-retry queue depths: powers of two, so the ring pointers wrap by themselves."""

POOL_PREGS = tuple(1 << k for k in range(2, 13))
"""Register-pool sizes: powers of two 4..4096, so the queue pointers wrap for free."""

POLICIES = ("max_register", "capped_register")
"""Allocation policies of the register pool."""

INC_PORTS = 5
"""Reuse-buffer increment events: three reserved register operands, the hit's result, the
fill's result."""

DEC_PORTS = 4
"""Reuse-buffer decrement events: the displaced entry's three register operands and its
result."""

SOURCES = 3
"""Source operands of an instruction in ``wir.rename_reuse`` (the reuse tag's three operand
fields)."""


# --- H3 hash ---------------------------------------------------------------------------


def h3_matrix(width_in: int, width_out: int, seed: int) -> tuple[int, ...]:
    """The H3 matrix ``Q`` as one mask per output bit: bit ``i`` of mask ``j`` is
    ``Q[i][j]``, so output bit ``j`` is the parity of ``value & mask[j]``.

    The one generator of the matrix, used by the RTL and the golden model alike: mask
    ``j`` is the ``j``-th ``getrandbits(width_in)`` of ``random.Random(seed)`` (a fixed,
    pseudo-random 0/1 matrix, stable across runs and Python versions).
    """
    rng = random.Random(seed)
    return tuple(rng.getrandbits(width_in) for _ in range(width_out))


@dataclass(frozen=True)
class _MatrixParam(Param):
    """An optional H3 matrix: ``None`` or ``width_out`` masks of ``width_in`` bits each.

    Its allowed values depend on two other parameters, so the per-field check lets every
    value through to the config's ``validate`` (which names the widths in its messages),
    and there are no values out of range or of a wrong type to generate tests from.
    """

    def check(self, name, value):
        return value

    @property
    def allowed(self) -> str:
        return "None or width_out masks of width_in bits"

    def extremes(self) -> tuple:
        return (None,)

    def outside(self) -> tuple:
        return ()

    def wrong_types(self) -> tuple:
        return ()


def _matrix_param(doc: str):
    return field(default=None, metadata={"param": _MatrixParam(doc=doc, kind=tuple)})


def _checked_matrix(matrix, width_in: int, width_out: int) -> tuple[int, ...]:
    """``matrix`` as a tuple of ``width_out`` masks in ``0..2**width_in - 1``."""
    if isinstance(matrix, str | bytes) or not isinstance(matrix, Sequence):
        raise TypeError(f"matrix must be None or a sequence of width_out = "
                        f"{width_out} integers, not {matrix!r}")
    if len(matrix) != width_out:
        raise ValueError(f"matrix must have width_out = {width_out} masks, "
                         f"not {len(matrix)}")
    top = (1 << width_in) - 1
    return tuple(check_int(f"matrix[{j}]", mask, 0, top) for j, mask in enumerate(matrix))


_MATRIX_DOC = ("A chosen matrix instead of the seeded one: ``width_out`` masks, mask ``j`` bit "
               "``i`` = ``Q[i][j]``, e.g. to force collisions (``None``: the seeded matrix).")


class H3HashConfig(BlockConfig):
    """The H3 hash's parameters and the matrix they select."""

    width_in: int = param(1024, "Input bits (1024: a warp register of 32 lanes x 32 bits).",
                          low=1, high=4096)
    width_out: int = param(32, "Hash bits.", low=1, high=64)
    seed: int = param(0, "Seed of the pseudo-random matrix; see :func:`h3_matrix`.",
                      low=0, high=2**32 - 1)
    matrix: tuple[int, ...] | None = _matrix_param(_MATRIX_DOC)

    def validate(self):
        if self.matrix is not None:
            object.__setattr__(self, "matrix",
                               _checked_matrix(self.matrix, self.width_in, self.width_out))

    @cached_property
    def masks(self) -> tuple[int, ...]:
        """The matrix in use: ``matrix`` if given, else :func:`h3_matrix` of the seed."""
        if self.matrix is not None:
            return self.matrix
        return h3_matrix(self.width_in, self.width_out, self.seed)

    @property
    def widest(self) -> int:
        """Inputs of the widest output bit (the most ones in one mask)."""
        return max(mask.bit_count() for mask in self.masks)

    @property
    def xor_levels(self) -> int:
        """XOR2 levels of a balanced tree over the widest output bit: ``ceil(log2(widest))``
        (0 for a bit of one input or none, so not :func:`index_bits`)."""
        return max(0, (self.widest - 1).bit_length())

    def signature(self) -> wiring.Signature:
        """``value`` in, ``hash`` out."""
        return wiring.Signature({"value": In(self.width_in), "hash": Out(self.width_out)})


# --- value signature buffer, verify cache ------------------------------------------------


class ValueSignatureBufferConfig(BlockConfig):
    """The VSB's parameters and the widths derived from them."""

    entries: int = param(256, "Entries, a power of two.", choices=VSB_ENTRIES)
    hash_width: int = param(32, "Hash bits stored per entry, at least ``log2(entries)``.",
                            low=1, high=64)
    pregs: int = param(1024, "Physical warp registers (1024: 10-bit ids).", low=2, high=4096)

    def validate(self):
        if self.index_bits > self.hash_width:
            raise ValueError(f"hash_width must be at least log2(entries) = {self.index_bits}, "
                             f"not {self.hash_width}")

    index_bits = index_width("entries")
    preg_bits = index_width("pregs")

    @property
    def entry_bits(self) -> int:
        """Bits of one entry as the paper counts it: valid + hash + preg (43 by default)."""
        return 1 + self.hash_width + self.preg_bits

    @property
    def storage_bits(self) -> int:
        """``entries x (1 + hash + preg)``: 256 x 43 = 11,008 bits by default."""
        return self.entries * self.entry_bits

    def index(self, hash_value: int) -> int:
        """The entry a hash selects: its low ``log2(entries)`` bits."""
        return hash_value & (self.entries - 1)

    entry_layout = layout_from(vsb_entry_layout, "hash_width", "preg_bits")

    result_layout = layout_from(vsb_result_layout, "preg_bits")

    install_layout = layout_from(vsb_install_layout, "hash_width", "preg_bits")

    def signature(self) -> wiring.Signature:
        """``lookup`` -> ``result``; ``install``, ``evict``; ``ref_inc``, ``ref_dec``."""
        ref = preg_ref_layout(preg_bits=self.preg_bits)
        return wiring.Signature({
            "lookup": In(valid_only(self.hash_width)),
            "result": Out(valid_only(self.result_layout)),
            "install": In(valid_only(self.install_layout)),
            "evict": In(stream.Signature(range(self.entries))),
            "ref_inc": Out(ref),
            "ref_dec": Out(ref),
        })


class VerifyCacheConfig(BlockConfig):
    """The verify cache's parameters and the widths derived from them."""

    entries: int = param(8, "Cache entries.", low=2, high=64)
    pregs: int = param(1024, "Physical warp registers (1024: 10-bit tags).", low=2, high=4096)
    lanes: int = param(32, "Lanes of a warp register.", low=1, high=32)
    data_width: int = param(32, "Bits per lane.", low=1, high=32)
    invalidate_ports: int = param(2, "Register writes per cycle (2: two warp instructions a "
                                     "cycle).", low=1, high=8)
    lookup_port: bool = param(True, "The registered ``lookup`` -> ``result`` port (off: a "
                                    "composition reads through ``VerifyCache.peek`` alone).")

    preg_bits = index_width("pregs")

    @property
    def value_bits(self) -> int:
        return self.lanes * self.data_width

    pointer_bits = index_width("entries")

    @property
    def entry_bits(self) -> int:
        """valid + preg tag + value: 1 + 10 + 1024 = 1035 bits by default."""
        return 1 + self.preg_bits + self.value_bits

    @property
    def storage_bits(self) -> int:
        """``entries x entry_bits``: 8 x 1035 = 8,280 bits by default."""
        return self.entries * self.entry_bits

    value_layout = layout_from(warp_value_layout, "lanes", "data_width")

    fill_layout = layout_from(verify_fill_layout, "preg_bits", "lanes", "data_width")

    result_layout = layout_from(verify_result_layout, "lanes", "data_width")

    def signature(self) -> wiring.Signature:
        """``lookup`` -> ``result`` (with ``lookup_port``); ``fill``; ``invalidate_valid``,
        ``invalidate_preg``."""
        ports = {
            "fill": In(valid_only(self.fill_layout)),
            "invalidate_valid": In(self.invalidate_ports),
            "invalidate_preg": In(data.ArrayLayout(self.preg_bits, self.invalidate_ports)),
        }
        if self.lookup_port:
            ports = {"lookup": In(valid_only(self.preg_bits)),
                     "result": Out(valid_only(self.result_layout)), **ports}
        return wiring.Signature(ports)


# --- rename tables ------------------------------------------------------------------------


class RenameTableConfig(BlockConfig):
    """The rename tables' parameters and the widths derived from them."""

    warps: int = param(48, "Warps of the SM.", low=1, high=64)
    regs: int = param(63, "Logical registers per warp.", low=1, high=255)
    pregs: int = param(1024, "Physical warp registers (1024: 10-bit ids).", low=2, high=4096)
    sources: int = param(3, "Source operands read per issue.", low=1, high=4)

    warp_bits = index_width("warps")
    reg_bits = index_width("regs")
    preg_bits = index_width("pregs")

    entry_layout = layout_from(rename_entry_layout, "preg_bits")

    row_layout = layout_from(rename_row_layout, "regs", "preg_bits")

    @property
    def storage_bits(self) -> int:
        """``warps x regs x (preg + valid + pin)``: 48 x 63 x 12 = 36,288 bits by default."""
        return self.warps * self.row_layout.size

    issue_layout = layout_from(rename_issue_layout, "warp_bits", "reg_bits", "sources")

    renamed_layout = layout_from(rename_renamed_layout, "preg_bits", "sources")

    retire_layout = layout_from(rename_retire_layout, "warp_bits", "reg_bits", "preg_bits")

    def signature(self) -> wiring.Signature:
        """``issue`` -> ``renamed``; ``retire``, ``exit``; ``ref_inc``, ``ref_dec``;
        ``ready``."""
        ref = preg_ref_layout(preg_bits=self.preg_bits)
        return wiring.Signature({
            "issue": In(stream.Signature(self.issue_layout)),
            "renamed": Out(valid_only(self.renamed_layout)),
            "retire": In(stream.Signature(self.retire_layout)),
            "exit": In(stream.Signature(self.warp_bits)),
            "ref_inc": Out(ref),
            "ref_dec": Out(ref),
            "ready": Out(1),
        })


# --- reuse buffer, pending-retry queue, load filter ---------------------------------------


class _ThreadBlockIds:
    """The reuse buffer's thread-block ids, for a configuration with ``blocks`` slots."""

    @property
    def tbid_bits(self) -> int:
        """Thread-block id field: the block slots plus the all-ones null value."""
        return self.blocks.bit_length()

    @property
    def null_tbid(self) -> int:
        """The thread-block id of everything but shared-memory loads (0xF by default)."""
        return (1 << self.tbid_bits) - 1


_TAG_FIELDS = ("opcode_bits", "preg_bits", "tbid_bits", "barrier_bits")
"""The reuse buffer's tag widths, which its tag, row, entry and fill layouts take."""


class ReuseBufferConfig(_ThreadBlockIds, BlockConfig):
    """The reuse buffer's parameters and the widths derived from them."""

    entries: int = param(256, "Buffer entries, a power of two.", choices=REUSE_ENTRIES)
    opcode_bits: int = param(8, "Opcode code width (the top three bits are the operand "
                                "kinds).", low=4, high=8)
    preg_bits: int = param(10, "Physical register id width, also the operand field width.",
                           low=2, high=12)
    imm_bits: int = param(32, "Width of an operand value at the lookup port.", low=1, high=32)
    blocks: int = param(8, "Thread-block slots of the SM (8: a 4-bit id with null 0xF).",
                        low=1, high=15)
    barrier_bits: int = param(5, "Barrier count field width.", low=1, high=8)

    index_bits = index_width("entries")

    tag_layout = layout_from(reuse_tag_layout, *_TAG_FIELDS)
    row_layout = layout_from(reuse_row_layout, *_TAG_FIELDS)
    entry_layout = layout_from(reuse_entry_layout, *_TAG_FIELDS)
    fill_layout = layout_from(reuse_fill_layout, "index_bits", *_TAG_FIELDS)

    lookup_layout = layout_from(reuse_lookup_layout, "opcode_bits", "imm_bits", "tbid_bits",
                                "barrier_bits")

    response_layout = layout_from(reuse_response_layout, "index_bits", "preg_bits")

    ref_layout = layout_from(preg_ref_layout, "preg_bits")

    @property
    def storage_bits(self) -> int:
        """The paper's size: ``entries x 59`` bits at the defaults (15,104)."""
        return self.entries * self.entry_layout.size

    def signature(self) -> wiring.Signature:
        """``lookup`` -> ``response`` (with the pool's answers); ``fill``; ``probe``;
        ``inc``, ``dec``."""
        return wiring.Signature({
            "lookup": In(valid_only(self.lookup_layout)),
            "result_saturated": In(1),
            "operand_saturated": In(1),
            "low_reg": In(1),
            "fill": In(valid_only(self.fill_layout)),
            "response": Out(valid_only(self.response_layout)),
            "probe": Out(self.preg_bits),
            "inc": Out(data.ArrayLayout(self.ref_layout, INC_PORTS)),
            "dec": Out(data.ArrayLayout(self.ref_layout, DEC_PORTS)),
        })


class PendingRetryConfig(BlockConfig):
    """The pending-retry queue's parameters and the widths derived from them."""

    depth: int = param(16, "Queue entries, a power of two.", choices=RETRY_DEPTHS)
    width: int = param(64, "Payload bits.", low=1, high=256)

    pointer_bits = index_width("depth")

    @property
    def storage_bits(self) -> int:
        """The ring memory (the paper leaves the queue out of its storage figure)."""
        return self.depth * self.width

    def signature(self) -> wiring.Signature:
        """``enq``; ``recheck`` with ``still_pending``; ``count``."""
        return wiring.Signature({
            "enq": In(stream.Signature(self.width)),
            "recheck": Out(stream.Signature(self.width)),
            "still_pending": In(1),
            "count": Out(range(self.depth + 1)),
        })


class LoadFilterConfig(_ThreadBlockIds, BlockConfig):
    """The load filter's parameters and the widths derived from them."""

    warps: int = param(48, "Warps per SM.", low=1, high=64)
    blocks: int = param(8, "Thread-block slots per SM.", low=1, high=15)
    barrier_bits: int = param(5, "Barrier counter width.", low=1, high=8)

    warp_bits = index_width("warps")
    tb_bits = index_width("blocks")

    @property
    def saturated(self) -> int:
        """The barrier count that disables load reuse for its block (31 by default)."""
        return (1 << self.barrier_bits) - 1

    store_layout = layout_from(load_store_layout, "warp_bits")

    block_layout = layout_from(load_block_layout, "warps", "tb_bits")

    query_layout = layout_from(load_query_layout, "warp_bits", "tb_bits")

    answer_layout = layout_from(load_answer_layout, "tbid_bits", "barrier_bits")

    @property
    def state_bits(self) -> int:
        """Flip-flops: two store flags per warp and one counter per block (136 by default;
        the paper leaves them out of its storage figure)."""
        return 2 * self.warps + self.blocks * self.barrier_bits

    def signature(self) -> wiring.Signature:
        """``store``, ``barrier``, ``launch``; ``query`` -> ``answer``."""
        return wiring.Signature({
            "store": In(valid_only(self.store_layout)),
            "barrier": In(valid_only(self.block_layout)),
            "launch": In(valid_only(self.block_layout)),
            "query": In(self.query_layout),
            "answer": Out(self.answer_layout),
        })


# --- register pool ------------------------------------------------------------------------


class RegisterPoolConfig(BlockConfig):
    """The register pool's parameters and the widths derived from them."""

    pregs: int = param(1024, "Physical warp registers, a power of two.", choices=POOL_PREGS)
    count_width: int = param(10, "Bits of a reference counter.", low=2, high=16)
    inc_ports: int = param(12, "Increment ports (paper VII-E).", low=1, high=16)
    dec_ports: int = param(12, "Decrement ports (paper VII-E).", low=1, high=16)
    query_ports: int = param(4, "Saturation queries (4: two reuse-buffer and two VSB hits a "
                                "cycle).", low=1, high=16)
    policy: str = param("max_register", "Allocation policy.", choices=POLICIES)
    low_water: int = param(0, "``low_register`` while at most this many ids are available; "
                              "below ``pregs``.", low=0, high=max(POOL_PREGS) - 1)
    headroom: int = param(0, "``saturated`` while the count is at least the maximum minus "
                             "this (a composition with several increments of one register "
                             "in a cycle: ``headroom`` = increments - 1).", low=0, high=64)

    def validate(self):
        check_int("low_water", self.low_water, 0, self.pregs - 1)
        check_int("headroom", self.headroom, 0, self.max_count - 1)

    @property
    def saturation(self) -> int:
        """The smallest saturated count: ``max_count - headroom``."""
        return self.max_count - self.headroom

    preg_bits = index_width("pregs", "Bits of a physical register id (10 for 1024 registers).")

    @property
    def max_count(self) -> int:
        """The saturated count ``2**count_width - 1``."""
        return (1 << self.count_width) - 1

    @property
    def slots(self) -> int:
        """Merge slots: the decrement ports first, then the increment ports."""
        return self.dec_ports + self.inc_ports

    @property
    def merge_terms(self) -> int:
        """One-bit terms of a merge slot's popcounts: ``max(inc_ports, dec_ports)`` rounded
        up to a power of two (1 for single ports, so not from :func:`index_bits`)."""
        return 1 << (max(self.inc_ports, self.dec_ports) - 1).bit_length()

    @property
    def release_terms(self) -> int:
        """One-bit terms of the count of released ids: ``dec_ports`` rounded up to a power
        of two."""
        return 1 << (self.dec_ports - 1).bit_length()

    @property
    def capped(self) -> bool:
        return self.policy == "capped_register"

    @property
    def delta_shape(self) -> Shape:
        """The net change of one register in one cycle: ``-dec_ports..inc_ports``."""
        return Shape.cast(range(-self.dec_ports, self.inc_ports + 1))

    @property
    def storage_bits(self) -> int:
        """The reference counters the paper counts: ``pregs x count_width`` (10,240)."""
        return self.pregs * self.count_width

    @property
    def queue_bits(self) -> int:
        """The free-pool queue the paper leaves out: ``pregs x preg_bits`` (10,240)."""
        return self.pregs * self.preg_bits

    ref_layout = layout_from(preg_ref_layout, "preg_bits")

    merge_layout = layout_from(refcount_merge_layout, "preg_bits", "delta_shape")

    def signature(self) -> wiring.Signature:
        """``alloc``; ``inc``, ``dec``; ``query`` -> ``saturated``; ``in_use``,
        ``low_register``; ``cap`` under the capped-register policy only."""
        ports = {
            "alloc": Out(stream.Signature(self.preg_bits)),
            "inc": In(data.ArrayLayout(self.ref_layout, self.inc_ports)),
            "dec": In(data.ArrayLayout(self.ref_layout, self.dec_ports)),
            "query": In(data.ArrayLayout(self.preg_bits, self.query_ports)),
            "saturated": Out(self.query_ports),
            "in_use": Out(range(self.pregs + 1)),
            "low_register": Out(1),
        }
        if self.capped:
            ports["cap"] = In(range(self.pregs + 1))
        return wiring.Signature(ports)


# --- pipeline compositions ----------------------------------------------------------------


class RenameReuseConfig(BlockConfig):
    """The rename + reuse composition's parameters, its parts' configs and its layouts.

    Attributes (built by :meth:`validate`): ``rename``, ``reuse``, ``loads``, ``retry`` (the
    parts' configs) and ``ticket_layout`` (a pending hit's entry in the pending-retry queue).
    """

    warps: int = param(48, "Warps of the SM.", low=1, high=64)
    regs: int = param(63, "Logical registers per warp.", low=1, high=255)
    pregs: int = param(1024, "Physical warp registers; the reuse buffer needs 3 or more "
                             "(2-bit ids).", low=2, high=4096)
    entries: int = param(256, "Reuse-buffer entries, a power of two.", choices=REUSE_ENTRIES)
    opcode_bits: int = param(8, "Opcode code width.", low=4, high=8)
    imm_bits: int = param(32, "Operand width at the issue port, at least ``log2(pregs)`` and "
                              "``log2(regs)``.", low=1, high=32)
    blocks: int = param(8, "Thread-block slots.", low=1, high=15)
    barrier_bits: int = param(5, "Barrier counter width.", low=1, high=8)
    retry_depth: int = param(16, "Pending-retry queue entries, a power of two.",
                             choices=RETRY_DEPTHS)

    def validate(self):
        """Build the parts' configs (each checks its own rules) and check ``imm_bits``
        against the register ids it must hold."""
        rename = RenameTableConfig(warps=self.warps, regs=self.regs, pregs=self.pregs,
                                   sources=SOURCES)
        check_int("imm_bits", self.imm_bits, max(rename.preg_bits, rename.reg_bits), 32)
        reuse = ReuseBufferConfig(entries=self.entries, opcode_bits=self.opcode_bits,
                                  preg_bits=rename.preg_bits, imm_bits=self.imm_bits,
                                  blocks=self.blocks, barrier_bits=self.barrier_bits)
        loads = LoadFilterConfig(warps=self.warps, blocks=self.blocks,
                                 barrier_bits=self.barrier_bits)
        ticket = rename_reuse_ticket_layout(
            warp_bits=rename.warp_bits, reg_bits=rename.reg_bits, preg_bits=rename.preg_bits,
            opcode_bits=self.opcode_bits, tbid_bits=reuse.tbid_bits,
            barrier_bits=self.barrier_bits)
        retry = PendingRetryConfig(depth=self.retry_depth, width=ticket.size)
        for name, value in (("rename", rename), ("reuse", reuse), ("loads", loads),
                            ("retry", retry), ("ticket_layout", ticket)):
            object.__setattr__(self, name, value)

    @property
    def preg_bits(self) -> int:
        return self.rename.preg_bits

    ref_layout = layout_from(preg_ref_layout, "preg_bits")

    @property
    def issue_layout(self) -> data.StructLayout:
        return rename_reuse_issue_layout(
            warp_bits=self.rename.warp_bits, tb_bits=self.loads.tb_bits,
            opcode_bits=self.opcode_bits, reg_bits=self.rename.reg_bits,
            imm_bits=self.imm_bits)

    @property
    def out_layout(self) -> data.StructLayout:
        return rename_reuse_out_layout(
            warp_bits=self.rename.warp_bits, reg_bits=self.rename.reg_bits,
            preg_bits=self.preg_bits, opcode_bits=self.opcode_bits, imm_bits=self.imm_bits,
            tbid_bits=self.reuse.tbid_bits, barrier_bits=self.barrier_bits,
            index_bits=self.reuse.index_bits)

    def signature(self) -> wiring.Signature:
        """The parts' outside ports: ``issue`` -> ``out``; ``retire``, ``exit``, ``barrier``,
        ``launch``, ``fill``; the pool's answers; ``probe``, ``query``, ``queued``; the
        reference events ``inc``, ``dec``; ``ready``."""
        ref = self.ref_layout
        return wiring.Signature({
            "issue": In(stream.Signature(self.issue_layout)),
            "retire": In(stream.Signature(self.rename.retire_layout)),
            "exit": In(stream.Signature(self.rename.warp_bits)),
            "barrier": In(valid_only(self.loads.block_layout)),
            "launch": In(valid_only(self.loads.block_layout)),
            "fill": In(valid_only(self.reuse.fill_layout)),
            "result_saturated": In(1),
            "operand_saturated": In(1),
            "low_reg": In(1),
            "out": Out(valid_only(self.out_layout)),
            "probe": Out(self.preg_bits),
            "query": Out(data.ArrayLayout(ref, SOURCES)),
            "queued": Out(range(self.retry_depth + 1)),
            "inc": Out(data.ArrayLayout(ref, 1 + INC_PORTS)),
            "dec": Out(data.ArrayLayout(ref, 1 + DEC_PORTS)),
            "ready": Out(1),
        })


class RegisterAllocConfig(BlockConfig):
    """The register-allocation stage's parameters and its parts' configs.

    Attributes (built by :meth:`validate`): ``hash`` and ``vsb``, the parts' configs.
    """

    lanes: int = param(32, "Lanes of the value (32 x 32 = 1024 bits).", low=1, high=32)
    data_width: int = param(32, "Bits per lane.", low=1, high=32)
    hash_width: int = param(32, "Hash bits, at least ``log2(entries)``.", low=1, high=64)
    seed: int = param(0, "Seed of the H3 matrix.", low=0, high=2**32 - 1)
    matrix: tuple[int, ...] | None = _matrix_param(_MATRIX_DOC)
    entries: int = param(256, "VSB entries, a power of two.", choices=VSB_ENTRIES)
    pregs: int = param(1024, "Physical warp registers.", low=2, high=4096)
    ticket_bits: int = param(32, "Bits of the opaque ``ticket`` carried along.",
                             low=1, high=256)

    def validate(self):
        """Build the parts' configs; each checks its own rules."""
        object.__setattr__(self, "hash", H3HashConfig(
            width_in=self.lanes * self.data_width, width_out=self.hash_width, seed=self.seed,
            matrix=self.matrix))
        object.__setattr__(self, "vsb", ValueSignatureBufferConfig(
            entries=self.entries, hash_width=self.hash_width, pregs=self.pregs))

    @property
    def preg_bits(self) -> int:
        return self.vsb.preg_bits

    value_layout = layout_from(warp_value_layout, "lanes", "data_width",
                               doc="A result's value, lane ``l`` in the ``l``-th "
                                   "``data_width`` bits of the hash input.")

    result_layout = layout_from(alloc_result_layout, "lanes", "data_width", "preg_bits",
                                "ticket_bits")

    request_layout = layout_from(alloc_request_layout, "hash_width", "preg_bits",
                                 "ticket_bits")

    stage_layout = layout_from(alloc_stage_layout, "hash_width", "preg_bits", "ticket_bits")

    def signature(self) -> wiring.Signature:
        """``result`` -> ``out``; ``probe`` / ``hit_saturated``; ``install``, ``evict``;
        the VSB's ``ref_inc``, ``ref_dec``."""
        ref = preg_ref_layout(preg_bits=self.preg_bits)
        return wiring.Signature({
            "result": In(valid_only(self.result_layout)),
            "out": Out(valid_only(self.request_layout)),
            "probe": Out(self.preg_bits),
            "hit_saturated": In(1),
            "install": In(valid_only(self.vsb.install_layout)),
            "evict": In(stream.Signature(range(self.entries))),
            "ref_inc": Out(ref),
            "ref_dec": Out(ref),
        })


class PipelineConfig(BlockConfig):
    """The composed allocation pipeline's parameters and its parts' configs.

    Attributes (built by :meth:`validate`): ``alloc`` (``wir.register_alloc``), ``pool``
    (``wir.register_pool``: 3 increment ports — verify hit, VSB install, hold — 4 decrement
    ports — old mapping, VSB, drop, unmap — and 2 saturation queries — the VSB hit, the
    hold) and ``cache`` (``wir.verify_cache`` with one invalidate port, the register file's
    one write; ``None`` when ``verify_cache`` is 0).
    """

    warps: int = param(2, "Warps (one mapping row each).", low=1, high=8)
    regs: int = param(4, "Logical registers per warp.", low=1, high=16)
    lanes: int = param(4, "Lanes of a value.", low=1, high=32)
    data_width: int = param(8, "Bits per lane.", low=1, high=32)
    hash_width: int = param(8, "Hash bits, at least ``log2(entries)``.", low=1, high=32)
    seed: int = param(0, "Seed of the H3 matrix.", low=0, high=2**32 - 1)
    entries: int = param(8, "VSB entries, a power of two.", choices=VSB_ENTRIES)
    pregs: int = param(16, "Physical registers, a power of two.", choices=POOL_PREGS)
    count_width: int = param(4, "Bits of a reference counter.", low=2, high=10)
    low_water: int = param(2, "Low-register mode while at most this many registers are "
                              "available; below ``pregs``.", low=0, high=max(POOL_PREGS) - 1)
    extra_inc: int = param(0, "Increment ports of the pool for a block in front (``inc``).",
                           low=0, high=12)
    extra_dec: int = param(0, "Decrement ports of the pool for a block in front (``dec``).",
                           low=0, high=12)
    extra_query: int = param(0, "Saturation queries of the pool for a block in front "
                                "(``query`` -> ``saturated``).", low=0, high=12)
    headroom: int = param(0, "The pool's ``headroom``: saturated below the maximum count.",
                          low=0, high=64)
    verify_cache: int = param(4, "Verify-cache entries (paper VI-C; 8 in its RLPV), at least "
                                 "2; 0: no verify cache (its RLP).", low=0, high=64)

    def validate(self):
        """Build the parts' configs (each checks its own rules)."""
        cache = None
        if self.verify_cache:
            cache = VerifyCacheConfig(entries=self.verify_cache, pregs=self.pregs,
                                      lanes=self.lanes, data_width=self.data_width,
                                      invalidate_ports=1, lookup_port=False)
        object.__setattr__(self, "cache", cache)
        ticket = self.ticket_layout_of(index_bits(self.warps), index_bits(self.regs))
        object.__setattr__(self, "alloc", RegisterAllocConfig(
            lanes=self.lanes, data_width=self.data_width, hash_width=self.hash_width,
            seed=self.seed, entries=self.entries, pregs=self.pregs, ticket_bits=ticket.size))
        object.__setattr__(self, "pool", RegisterPoolConfig(
            pregs=self.pregs, count_width=self.count_width, inc_ports=3 + self.extra_inc,
            dec_ports=4 + self.extra_dec, query_ports=2 + self.extra_query,
            low_water=self.low_water, headroom=self.headroom))

    def ticket_layout_of(self, warp_bits, reg_bits) -> data.StructLayout:
        """What travels through the register-allocation stage: ``warp``, ``reg``, ``mask``."""
        return data.StructLayout({"warp": warp_bits, "reg": reg_bits, "mask": self.lanes})

    warp_bits = index_width("warps")
    reg_bits = index_width("regs")
    preg_bits = index_width("pregs")

    @property
    def ticket_layout(self) -> data.StructLayout:
        return self.ticket_layout_of(self.warp_bits, self.reg_bits)

    @property
    def mappings(self) -> int:
        """Rename mappings: ``warps x regs``."""
        return self.warps * self.regs

    reg_layout = layout_from(pipeline_reg_layout, "warp_bits", "reg_bits")

    result_layout = layout_from(pipeline_result_layout, "warp_bits", "reg_bits", "lanes",
                                "data_width")

    reuse_layout = layout_from(pipeline_reuse_layout, "warp_bits", "reg_bits", "preg_bits")

    retired_layout = layout_from(pipeline_retired_layout, "warp_bits", "reg_bits", "preg_bits")

    entry_layout = layout_from(rename_entry_layout, "preg_bits")

    def signature(self) -> wiring.Signature:
        """``result`` -> ``retired``; ``reuse``; ``hold`` -> ``held``; ``drop``; ``unmap``;
        ``in_use``, ``low_register``, ``verify_cached``; the extra pool ports ``inc``,
        ``dec``, ``query`` -> ``saturated`` when configured."""
        ports = {
            "result": In(stream.Signature(self.result_layout)),
            "reuse": In(stream.Signature(self.reuse_layout)),
            "hold": In(stream.Signature(self.reg_layout)),
            "held": Out(valid_only(self.preg_bits)),
            "drop": In(valid_only(self.preg_bits)),
            "unmap": In(stream.Signature(self.reg_layout)),
            "retired": Out(valid_only(self.retired_layout)),
            "in_use": Out(range(self.pregs + 1)),
            "low_register": Out(1),
            "verify_cached": Out(1),
        }
        ref = preg_ref_layout(preg_bits=self.preg_bits)
        if self.extra_inc:
            ports["inc"] = In(data.ArrayLayout(ref, self.extra_inc))
        if self.extra_dec:
            ports["dec"] = In(data.ArrayLayout(ref, self.extra_dec))
        if self.extra_query:
            ports["query"] = In(data.ArrayLayout(self.preg_bits, self.extra_query))
            ports["saturated"] = Out(self.extra_query)
        return wiring.Signature(ports)


BACKEND_HITS = 4
"""Depth of ``wir.backend``'s queue of reuse hits waiting to retire: results are refused
while it holds one, and no pending-retry ticket is re-checked during an exit sweep, so it
never holds more than 3 (``tb/wir/formal_backend.py``'s ``hit_queue_at_most_3``, BMC 8;
``tests/test_wir_backend.py``'s retry bursts)."""

BACKEND_HEADROOM = 9
"""Increments one register can get in one cycle in ``wir.backend``, minus one, counted as
a verify hit (+1), the fill of its reuse-buffer entry (+1), a hold (+1), a reuse hit (+1),
a reservation naming it as all three operands (+3) and an issue naming it as all three
sources (+3). Each is refused while the count is at least ``max - 9``, so the ten together
cannot overflow it. Not all ten meet (session 17): the reuse stage's one lookup is a hit
or a reservation, and a hold is refused in the cycle of a verify hit on its register, so
at most 8 do (``tb/wir/formal_backend.py`` ``MOST_INCREMENTS``)."""


class BackendConfig(BlockConfig):
    """The composed WIR backend's parameters: ``front`` (``wir.rename_reuse``) and ``back``
    (``wir.pipeline`` with the pool ports the front needs) built from them."""

    warps: int = param(2, "Warps.", low=1, high=8)
    regs: int = param(4, "Logical registers per warp.", low=1, high=16)
    pregs: int = param(16, "Physical registers, a power of two.", choices=POOL_PREGS)
    lanes: int = param(4, "Lanes of a value.", low=1, high=32)
    data_width: int = param(8, "Bits per lane.", low=1, high=32)
    hash_width: int = param(8, "Hash bits, at least ``log2(entries)``.", low=1, high=32)
    seed: int = param(0, "Seed of the H3 matrix.", low=0, high=2**32 - 1)
    entries: int = param(8, "VSB entries, a power of two.", choices=VSB_ENTRIES)
    reuse_entries: int = param(8, "Reuse-buffer entries, a power of two.",
                               choices=REUSE_ENTRIES)
    opcode_bits: int = param(4, "Opcode code width.", low=4, high=8)
    imm_bits: int = param(6, "Operand width at the issue port.", low=1, high=32)
    blocks: int = param(2, "Thread-block slots.", low=1, high=15)
    barrier_bits: int = param(2, "Barrier counter width.", low=1, high=8)
    retry_depth: int = param(4, "Pending-retry queue entries.", choices=RETRY_DEPTHS)
    count_width: int = param(5, "Bits of a reference counter (``max - 9`` is saturated).",
                             low=5, high=10)
    low_water: int = param(2, "Low-register mode while at most this many registers are "
                              "available; below ``pregs``.", low=0, high=max(POOL_PREGS) - 1)
    verify_cache: int = param(4, "Verify-cache entries of the pipeline (0: none).",
                              low=0, high=64)

    def validate(self):
        """Build the parts' configs (each checks its own rules)."""
        front = RenameReuseConfig(
            warps=self.warps, regs=self.regs, pregs=self.pregs, entries=self.reuse_entries,
            opcode_bits=self.opcode_bits, imm_bits=self.imm_bits, blocks=self.blocks,
            barrier_bits=self.barrier_bits, retry_depth=self.retry_depth)
        back = PipelineConfig(
            warps=self.warps, regs=self.regs, lanes=self.lanes, data_width=self.data_width,
            hash_width=self.hash_width, seed=self.seed, entries=self.entries,
            pregs=self.pregs, count_width=self.count_width, low_water=self.low_water,
            extra_inc=INC_PORTS + SOURCES, extra_dec=DEC_PORTS + 2 * SOURCES,
            extra_query=1 + 2 * SOURCES, headroom=BACKEND_HEADROOM,
            verify_cache=self.verify_cache)
        object.__setattr__(self, "front", front)
        object.__setattr__(self, "back", back)

    warp_bits = index_width("warps")
    preg_bits = index_width("pregs")

    @property
    def hits(self) -> int:
        return BACKEND_HITS

    @property
    def result_layout(self) -> data.StructLayout:
        """An executed instruction's result: the pipeline's fields and, when its lookup
        reserved a reuse-buffer entry, ``reserved``, the entry's ``index`` and ``tag`` (the
        fill at retirement)."""
        reuse = self.front.reuse
        return data.StructLayout({
            **{name: field.shape for name, field in self.back.result_layout},
            "reserved": 1, "index": reuse.index_bits, "tag": reuse.tag_layout})

    @property
    def fill_layout(self) -> data.StructLayout:
        """What travels beside a result through the pipeline: the fill's fields."""
        reuse = self.front.reuse
        return data.StructLayout({"reserved": 1, "index": reuse.index_bits,
                                  "tag": reuse.tag_layout})

    def signature(self) -> wiring.Signature:
        """``issue`` -> ``out``, ``sources``; ``release``; ``barrier``, ``launch``;
        ``result`` -> ``retired``; ``hold`` -> ``held``, ``drop``; ``exit``; ``in_use``,
        ``low_register``, ``verify_cached``, ``hits``, ``ready``."""
        front, back = self.front, self.back
        ref = preg_ref_layout(preg_bits=self.preg_bits)
        return wiring.Signature({
            "issue": In(stream.Signature(front.issue_layout)),
            "barrier": In(valid_only(front.loads.block_layout)),
            "launch": In(valid_only(front.loads.block_layout)),
            "out": Out(valid_only(front.out_layout)),
            "result": In(stream.Signature(self.result_layout)),
            "hold": In(stream.Signature(back.reg_layout)),
            "held": Out(valid_only(self.preg_bits)),
            "drop": In(valid_only(self.preg_bits)),
            "exit": In(stream.Signature(self.warp_bits)),
            "sources": Out(data.ArrayLayout(ref, SOURCES)),
            "release": In(data.ArrayLayout(ref, SOURCES)),
            "retired": Out(valid_only(back.retired_layout)),
            "in_use": Out(range(self.pregs + 1)),
            "low_register": Out(1),
            "verify_cached": Out(1),
            "hits": Out(range(BACKEND_HITS + 1)),
            "ready": Out(1),
        })
