"""Configurations of the sub-core blocks: parameters declared once, widths derived once, and
each block's port signature.

Components, golden models and benches import these (with :mod:`.layouts`), never each other:
a component is ``XConfig(**params).signature()`` plus its ``elaborate``; a golden model reads
its ports through :func:`gpurf.hw.ports.port_codecs` of the same signature.
"""

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import BlockConfig, index_width, param

from .layouts import (
    dispatch_layout,
    issue_layout,
    queue_len_layout,
    rba_operands_layout,
    register_address_layout,
    score_vector_layout,
    warp_register_layout,
    warp_slot_layout,
)

__all__ = [
    "BANK_MAPS",
    "DEPTHS",
    "MODE_HASHED",
    "MODE_ROUND_ROBIN",
    "POLICIES",
    "RR_ENTRY",
    "TABLE_SUBCORES",
    "WARPS_PER_ENTRY",
    "OperandCollectorConfig",
    "RbaScorerConfig",
    "SubcoreAssignerConfig",
    "WarpSelectorConfig",
    "bank_read_signature",
]

POLICIES = ("gto", "rba")
"""Warp selection policies: greedy then oldest, register-bank aware."""

BANK_MAPS = ("swizzle", "modulo")
"""Register-to-bank mappings of the operand collector."""

DEPTHS = (4, 8, 16)
"""Entries of the hashed sub-core assignment table."""

TABLE_SUBCORES = 4
"""Sub-cores the assignment table's two select lines encode."""

WARPS_PER_ENTRY = 4
"""Consecutive warps one table byte places."""

MODE_ROUND_ROBIN = 0
MODE_HASHED = 1

RR_ENTRY = 0b0101_0011
"""The table entry of round robin over 4 sub-cores: warps 0..3 go to sub-cores 0..3
(select line 0 = ``0101``, select line 1 = ``0011``); every entry holds it after reset."""


class RbaScorerConfig(BlockConfig):
    """The RBA scorer's parameters (the paper's values as defaults) and derived widths."""

    slots: int = param(16, "Warp slots of the scheduler (16: 64 warps over 4 sub-cores).",
                       low=1, high=64)
    operands: int = param(3, "Source operands per instruction.", low=1, high=4)
    banks: int = param(2, "Register-file banks of the sub-core.", low=1, high=8)
    cus: int = param(2, "Collector units; with ``operands`` it bounds a queue length at "
                        "``cus * operands`` and so sets the width of ``queue_len`` (2: "
                        "3-bit lengths up to 6).", low=1, high=8)
    score_width: int = param(5, "Width of a stored score (5: 3 x 6 = 18 < 32).", low=1, high=8)
    score_latency: int = param(1, "Cycles from a queue-length vector to the scores it "
                                  "produces.", low=0, high=20)

    bank_bits = index_width("banks")

    @property
    def queue_max(self) -> int:
        """Longest possible bank queue: one request per operand port of every CU."""
        return self.cus * self.operands

    @property
    def queue_bits(self) -> int:
        return self.queue_max.bit_length()

    @property
    def score_max(self) -> int:
        """The saturation value ``2**score_width - 1``."""
        return (1 << self.score_width) - 1

    @property
    def sum_bits(self) -> int:
        """Width of the unsaturated sum: every operand reads a full-scale queue length."""
        return (self.operands * ((1 << self.queue_bits) - 1)).bit_length()

    @property
    def saturates(self) -> bool:
        """The unsaturated sum can exceed ``score_max`` (else no saturation logic is built)."""
        return self.sum_bits > self.score_width

    @property
    def delay_stages(self) -> int:
        """Register stages on the queue-length vector before the stored score register."""
        return max(0, self.score_latency - 1)

    @property
    def score_ff_bits(self) -> int:
        """Flip-flops of the stored scores (the paper's 16 x 5 = 80 bits); 0 if combinational."""
        return self.slots * self.score_width if self.score_latency else 0

    @property
    def delay_ff_bits(self) -> int:
        """Flip-flops of the queue-length delay line."""
        return self.delay_stages * self.banks * self.queue_bits

    @property
    def operands_layout(self) -> data.ArrayLayout:
        return rba_operands_layout(operands=self.operands, bank_bits=self.bank_bits)

    @property
    def queue_layout(self) -> data.ArrayLayout:
        return queue_len_layout(banks=self.banks, bits=self.queue_bits)

    @property
    def score_layout(self) -> data.ArrayLayout:
        return score_vector_layout(slots=self.slots, score_width=self.score_width)

    def signature(self) -> wiring.Signature:
        """``slot`` (per slot, per operand: ``valid``, ``bank``), ``queue_len`` (per bank),
        ``score`` (per slot)."""
        return wiring.Signature({
            "slot": In(data.ArrayLayout(self.operands_layout, self.slots)),
            "queue_len": In(self.queue_layout),
            "score": Out(self.score_layout),
        })


class WarpSelectorConfig(BlockConfig):
    """The warp selector's parameters and derived widths."""

    slots: int = param(16, "Warp slots of the scheduler (16: 64 warps over 4 sub-cores).",
                       low=2, high=64)
    score_width: int = param(5, "Width of the stored RBA score.", low=1, high=8)
    policy: str = param("rba", '``"rba"`` (register-bank aware) or ``"gto"`` (greedy then '
                               'oldest).', choices=POLICIES)
    rba_greedy: bool = param(False, "Under RBA, keep the greedy warp first as GTO does (off: "
                                    "the paper describes the comparison key only).")

    age_bits = index_width("slots")

    @property
    def key_bits(self) -> int:
        """Width of a slot's comparison key: ``{score, ~age}`` under RBA, ``~age`` under GTO."""
        return self.age_bits + (self.score_width if self.policy == "rba" else 0)

    @property
    def stages(self) -> int:
        """Compare-select stages of the balanced tree: ``ceil(log2(slots))``."""
        return (self.slots - 1).bit_length()

    @property
    def uses_greedy(self) -> bool:
        """GTO, or RBA with ``rba_greedy``: the greedy slot goes first when ready."""
        return self.policy == "gto" or self.rba_greedy

    @property
    def slot_layout(self) -> data.StructLayout:
        return warp_slot_layout(age_bits=self.age_bits, score_width=self.score_width)

    def signature(self) -> wiring.Signature:
        """``slot`` (per slot: ``valid``, ``ready``, ``age``, ``score``), ``greedy`` and
        ``greedy_valid`` in; ``grant_valid`` and ``grant`` out."""
        return wiring.Signature({
            "slot": In(data.ArrayLayout(self.slot_layout, self.slots)),
            "greedy": In(range(self.slots)),
            "greedy_valid": In(1),
            "grant_valid": Out(1),
            "grant": Out(range(self.slots)),
        })


class OperandCollectorConfig(BlockConfig):
    """The operand collector's parameters and derived widths."""

    cus: int = param(2, "Collector units.", low=1, high=8)
    banks: int = param(2, "Register-file banks of the sub-core.", low=1, high=8)
    operands: int = param(3, "Source operands per instruction.", low=1, high=4)
    lanes: int = param(32, "Lanes of a warp register.", low=1, high=32)
    data_width: int = param(32, "Bits per lane.", low=1, high=32)
    slots: int = param(16, "Warp slots of the sub-core scheduler.", low=2, high=64)
    reg_bits: int = param(8, "Register id width.", low=1, high=8)
    read_latency: int = param(1, "Cycles from a bank grant to its data at ``read[b].data``.",
                              low=1, high=4)
    bank_map: str = param("swizzle", '``"swizzle"``: ``bank = (reg + warp) % banks`` '
                                     '(**interpretation**); ``"modulo"``: '
                                     '``bank = reg % banks``.', choices=BANK_MAPS)

    warp_bits = index_width("slots")
    bank_bits = index_width("banks")

    @property
    def requests(self) -> int:
        """Request ports of the arbitration unit: one per operand per CU."""
        return self.cus * self.operands

    @property
    def queue_bits(self) -> int:
        """Width of a queue length, 0..``cus * operands``."""
        return self.requests.bit_length()

    @property
    def issue_layout(self) -> data.StructLayout:
        return issue_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits,
                            operands=self.operands)

    @property
    def dispatch_layout(self) -> data.StructLayout:
        return dispatch_layout(warp_width=self.warp_bits, operands=self.operands,
                               lanes=self.lanes, data_width=self.data_width)

    @property
    def address_layout(self) -> data.StructLayout:
        return register_address_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits)

    @property
    def register_layout(self) -> data.ArrayLayout:
        return warp_register_layout(lanes=self.lanes, data_width=self.data_width)

    @property
    def queue_len_layout(self) -> data.ArrayLayout:
        return queue_len_layout(banks=self.banks, bits=self.queue_bits)

    def signature(self) -> wiring.Signature:
        """``issue`` stream in, ``dispatch`` stream out, a :func:`bank_read_signature` per
        bank, ``queue_len`` out, ``write`` (per bank: a writeback uses it this cycle) in."""
        return wiring.Signature({
            "issue": In(stream.Signature(self.issue_layout)),
            "dispatch": Out(stream.Signature(self.dispatch_layout)),
            "read": Out(bank_read_signature(self)).array(self.banks),
            "queue_len": Out(self.queue_len_layout),
            "write": In(self.banks),
        })


def bank_read_signature(config: OperandCollectorConfig) -> wiring.Signature:
    """The collector's read port toward one register-file bank (collector's view).

    ``valid``/``addr``: a read granted this cycle; ``data``: the bank's output, sampled
    ``read_latency`` cycles after the grant (no handshake: a bank takes one read a cycle).
    """
    return wiring.Signature({
        "valid": Out(1),
        "addr": Out(config.address_layout),
        "data": In(config.register_layout),
    })


class SubcoreAssignerConfig(BlockConfig):
    """The sub-core assigner's parameters (the paper's values as defaults) and widths."""

    subcores: int = param(4, "Sub-cores of the SM (only 4 has the hash table).", low=2, high=8)
    depth: int = param(4, "Hash table entries (4: 4 bytes, 16 warps before wrapping).",
                       choices=DEPTHS)

    @property
    def hashed(self) -> bool:
        """The hash table path exists: its 2 select lines encode exactly 4 sub-cores."""
        return self.subcores == TABLE_SUBCORES

    entry_bits = index_width(
        "depth", "Width of the entry counter and the table write index: ``log2(depth)``.")

    @property
    def table_bits(self) -> int:
        """Flip-flops of the hash table (the paper's 4 bytes at depth 4); 0 without it."""
        return self.depth * 8 if self.hashed else 0

    def signature(self) -> wiring.Signature:
        """``warp`` and ``launch`` in (with ``subcores == 4`` also ``mode`` and the table
        write port ``table_we``, ``table_index``, ``table_data``); ``subcore_valid`` and
        ``subcore`` out."""
        ports = {"warp": In(1), "launch": In(1)}
        if self.hashed:
            ports.update({"mode": In(1), "table_we": In(1),
                          "table_index": In(range(self.depth)), "table_data": In(8)})
        ports.update({"subcore_valid": Out(1), "subcore": Out(range(self.subcores))})
        return wiring.Signature(ports)
