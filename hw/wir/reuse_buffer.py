"""Reuse buffer of WIR with pending reservations (paper Sections V-C, V-D, VI-A, VI-B, Fig. 9)."""

from dataclasses import dataclass

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int, check_int_choice
from gpurf.hw.signatures import valid_only

from .layouts import (
    preg_ref_layout,
    reuse_entry_layout,
    reuse_fill_layout,
    reuse_lookup_layout,
    reuse_response_layout,
    reuse_row_layout,
    reuse_tag_layout,
)

__all__ = ["ENTRY_CHOICES", "ReuseBuffer", "ReuseBufferConfig"]

ENTRY_CHOICES = tuple(1 << n for n in range(1, 11))
"""Entry counts the buffer takes: powers of two, 2..1024 (a direct-mapped index)."""

INC_PORTS = 5
"""Increment events: three reserved register operands, the hit's result, the fill's result."""

DEC_PORTS = 4
"""Decrement events: the displaced entry's three register operands and its result."""


@dataclass(frozen=True)
class ReuseBufferConfig:
    """Validated parameters of the reuse buffer and the widths derived from them.

    Shared by :class:`ReuseBuffer` and its golden model, so both reject the same
    parameters with the same message and agree on every width.
    """

    entries: int
    opcode_bits: int
    preg_bits: int
    imm_bits: int
    blocks: int
    barrier_bits: int

    def __post_init__(self):
        check_int_choice("entries", self.entries, ENTRY_CHOICES)
        check_int("opcode_bits", self.opcode_bits, 4, 8)
        check_int("preg_bits", self.preg_bits, 2, 12)
        check_int("imm_bits", self.imm_bits, 1, 32)
        check_int("blocks", self.blocks, 1, 15)
        check_int("barrier_bits", self.barrier_bits, 1, 8)

    @property
    def index_bits(self) -> int:
        return (self.entries - 1).bit_length()

    @property
    def tbid_bits(self) -> int:
        """Thread-block id field: the block slots plus the all-ones null value."""
        return self.blocks.bit_length()

    @property
    def null_tbid(self) -> int:
        """The thread-block id of everything but shared-memory loads (0xF by default)."""
        return (1 << self.tbid_bits) - 1

    def _fields(self) -> dict:
        return {"opcode_bits": self.opcode_bits, "preg_bits": self.preg_bits,
                "tbid_bits": self.tbid_bits, "barrier_bits": self.barrier_bits}

    @property
    def tag_layout(self) -> data.StructLayout:
        return reuse_tag_layout(**self._fields())

    @property
    def row_layout(self) -> data.StructLayout:
        return reuse_row_layout(**self._fields())

    @property
    def entry_layout(self) -> data.StructLayout:
        return reuse_entry_layout(**self._fields())

    @property
    def fill_layout(self) -> data.StructLayout:
        return reuse_fill_layout(index_bits=self.index_bits, **self._fields())

    @property
    def lookup_layout(self) -> data.StructLayout:
        return reuse_lookup_layout(opcode_bits=self.opcode_bits, imm_bits=self.imm_bits,
                                   tbid_bits=self.tbid_bits, barrier_bits=self.barrier_bits)

    @property
    def response_layout(self) -> data.StructLayout:
        return reuse_response_layout(index_bits=self.index_bits, preg_bits=self.preg_bits)

    @property
    def ref_layout(self) -> data.StructLayout:
        return preg_ref_layout(preg_bits=self.preg_bits)

    @property
    def storage_bits(self) -> int:
        """The paper's size: ``entries x 59`` bits at the defaults (15,104)."""
        return self.entries * self.entry_layout.size


class ReuseBuffer(wiring.Component):
    """Direct-indexed reuse buffer with eager reservation (pending-retry, paper VI-B).

    Storage: one unmapped memory of ``entries`` words ``{tag, result, pending}`` plus one
    valid flip-flop per entry, so an entry is the paper's 59 bits (Fig. 9) and the buffer
    256 x 59 = 15,104 bits at the defaults; the only other state is the ``index_bits``
    eviction pointer. Valid bits in flip-flops make the buffer empty right after reset.

    The tag is ``{opcode, operand[3], tbid, barrier}`` with the operands cut to
    ``preg_bits``. The ``regs`` bits of the opcode say which operands are physical registers
    (**interpretation** of the spec's "one opcode code per operation and operand kinds":
    the code carries the kinds as its top three bits); the others are immediates (an unused
    operand is the immediate 0). The entry index is the XOR-fold of the packed tag into
    ``index_bits`` bits (**spec interpretation**); it travels with the instruction in
    ``response.index`` and comes back in ``fill.index``.

    Behaviour and timing (one lookup and one fill per cycle; the paper's two instruction
    groups would use two buffers' worth of ports, 2r2w):

    - **Lookup** (valid-only, always taken; answer combinational, latency 0; state as at
      the start of the cycle, updates at the clock edge). A lookup that is ``divergent``,
      ``bypass`` (e.g. the load filter forbids it) or has an operand value that does not fit
      ``preg_bits`` (an immediate of 10+ bits, zero-extended compare) does not touch the
      buffer: all flags low. Otherwise, with ``E`` the entry at the index: valid, equal tag,
      not pending -> **hit** (``result`` = E's result register) unless ``result_saturated``
      (the register pool's answer for ``probe``), which makes it a miss; valid, equal tag,
      pending -> **pending** hit (to the pending-retry queue); else a **miss**: the entry is
      reserved at once (tag written, pending set, ``reserved``) unless ``operand_saturated``
      (one of the lookup's register operands has a saturated count: no reservation, the
      instruction just executes) or ``low_reg``.
    - **Fill** (valid-only, from retire): if the entry at ``fill.index`` is valid, pending
      and holds ``fill.tag``, its result becomes ``fill.result`` and pending clears (visible
      from the next cycle). Otherwise (the reservation was displaced meanwhile) nothing
      happens. A fill is also dropped when the lookup of the same cycle writes or evicts the
      same entry.
    - **Low-register mode** (``low_reg``, paper V-E): a miss evicts the indexed entry instead
      of reserving; a cycle without a lookup evicts the entry at the eviction pointer, which
      counts cycles since reset modulo ``entries`` (**interpretation** of "a random entry":
      a free-running pointer).
    - **References** (combinational events for the register pool, every port zero unless
      valid): ``inc[0..2]`` the register operands a reservation references; ``inc[3]`` the
      result register of a hit (the hit instruction's in-flight reference, which becomes its
      rename mapping at retire); ``inc[4]`` the result register a fill stores. ``dec[0..2]``
      and ``dec[3]`` the register operands and (if filled) the result of the valid entry a
      reservation or an eviction displaces.
    - ``probe``: the result register stored at the indexed entry, for the pool's saturation
      query (meaningful when that entry is valid and filled).

    Parameters
    ----------
    entries : int
        Buffer entries, a power of two 2..1024 (default 256).
    opcode_bits : int
        Opcode code width, 4..8 (default 8; the top three bits are the operand kinds).
    preg_bits : int
        Physical register id width, also the operand field width, 2..12 (default 10).
    imm_bits : int
        Width of an operand value at the lookup port, 1..32 (default 32).
    blocks : int
        Thread-block slots of the SM, 1..15 (default 8: a 4-bit id with null 0xF).
    barrier_bits : int
        Barrier count field width, 1..8 (default 5).

    Attributes
    ----------
    lookup : In(valid_only(lookup_layout))
        ``payload.{opcode, operand, tbid, barrier, divergent, bypass}``.
    result_saturated : In(1)
        The count of ``probe`` is saturated: a hit is treated as a miss.
    operand_saturated : In(1)
        A register operand of the lookup has a saturated count: a miss does not reserve.
    low_reg : In(1)
        Low-register mode.
    fill : In(valid_only(fill_layout))
        ``payload.{index, tag, result}``.
    response : Out(valid_only(response_layout))
        ``valid`` = ``lookup.valid``; ``payload.{hit, pending, reserved, index, result}``.
    probe : Out(preg_bits)
        Result register of the indexed entry.
    inc : Out(ArrayLayout(preg_ref_layout, 5))
        References taken this cycle.
    dec : Out(ArrayLayout(preg_ref_layout, 4))
        References dropped this cycle.
    """

    def __init__(self, *, entries=256, opcode_bits=8, preg_bits=10, imm_bits=32, blocks=8,
                 barrier_bits=5):
        self.config = config = ReuseBufferConfig(
            entries=entries, opcode_bits=opcode_bits, preg_bits=preg_bits, imm_bits=imm_bits,
            blocks=blocks, barrier_bits=barrier_bits)
        super().__init__({
            "lookup": In(valid_only(config.lookup_layout)),
            "result_saturated": In(1),
            "operand_saturated": In(1),
            "low_reg": In(1),
            "fill": In(valid_only(config.fill_layout)),
            "response": Out(valid_only(config.response_layout)),
            "probe": Out(preg_bits),
            "inc": Out(data.ArrayLayout(config.ref_layout, INC_PORTS)),
            "dec": Out(data.ArrayLayout(config.ref_layout, DEC_PORTS)),
        })
        self.table = memory.Memory(shape=config.row_layout, depth=entries, init=[])
        self.valid = Signal(entries)
        """Per-entry valid bits (flip-flops)."""
        self.pointer = Signal(config.index_bits)
        """The eviction pointer: cycles since reset modulo ``entries``."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.table = table = self.table
        m.d.sync += self.pointer.eq(self.pointer + 1)
        victim_addr, victim, victim_valid, writes = self._lookup(m, table)
        self._displace(m, victim, victim_valid & writes)
        self._fill(m, table, victim_addr, writes)
        return m

    def _tag(self, m):
        """The lookup's tag (operands cut to ``preg_bits``) and whether every operand fits."""
        config, payload = self.config, self.lookup.payload
        tag = Signal(config.tag_layout)
        fits = Signal()
        m.d.comb += [
            tag.opcode.eq(payload.opcode),
            tag.tbid.eq(payload.tbid),
            tag.barrier.eq(payload.barrier),
            fits.eq(~Cat(operand[config.preg_bits:].any() for operand in payload.operand).any()),
        ]
        m.d.comb += [tag.operand[k].eq(payload.operand[k][:config.preg_bits]) for k in range(3)]
        return tag, fits

    def _fold(self, m, tag):
        """The XOR-fold of the packed tag into ``index_bits`` bits."""
        bits, width = tag.as_value(), self.config.index_bits
        index = Signal(width)
        chunks = [bits[i:i + width] for i in range(0, len(bits), width)]
        folded = chunks[0]
        for chunk in chunks[1:]:
            folded = folded ^ chunk
        m.d.comb += index.eq(folded)
        return index

    def _lookup(self, m, table):
        """Hit, pending hit, reservation or eviction; returns the looked-up (or evicted)
        address, its word, its valid bit and whether the lookup side writes it."""
        config, lookup, response = self.config, self.lookup, self.response
        tag, fits = self._tag(m)
        index = self._fold(m, tag)
        read = table.read_port(domain="comb")
        write = table.write_port()
        addr = Signal(config.index_bits)
        entry_valid = Signal()
        m.d.comb += [
            addr.eq(Mux(lookup.valid, index, self.pointer)),
            read.addr.eq(addr),
            entry_valid.eq(_bit(m, self.valid, addr, "entry_valid_row")),
            self.probe.eq(read.data.result),
        ]
        word = read.data
        eligible, match = Signal(), Signal()
        hit, pending, miss, reserve, evict = (Signal(name=n) for n in
                                              ("hit", "pending_hit", "miss", "reserve", "evict"))
        payload = lookup.payload
        m.d.comb += [
            eligible.eq(lookup.valid & ~payload.divergent & ~payload.bypass & fits),
            match.eq(eligible & entry_valid & (word.tag.as_value() == tag.as_value())),
            hit.eq(match & ~word.pending & ~self.result_saturated),
            pending.eq(match & word.pending),
            miss.eq(eligible & ~hit & ~pending),
            reserve.eq(miss & ~self.low_reg & ~self.operand_saturated),
            evict.eq(self.low_reg & (miss | ~lookup.valid)),
        ]
        m.d.comb += [
            response.valid.eq(lookup.valid),
            response.payload.hit.eq(hit),
            response.payload.pending.eq(pending),
            response.payload.reserved.eq(reserve),
            response.payload.index.eq(index),
            response.payload.result.eq(Mux(hit, word.result, 0)),
            write.addr.eq(index),
            write.en.eq(reserve),
            write.data.tag.eq(tag),
            write.data.pending.eq(1),
        ]
        self._references(m, tag, reserve, hit, word.result)
        one = Const(1, config.entries) << addr
        with m.If(reserve):
            m.d.sync += self.valid.eq(self.valid | one)
        with m.Elif(evict):
            m.d.sync += self.valid.eq(self.valid & ~one)
        writes = Signal()
        m.d.comb += writes.eq(reserve | evict)
        return addr, word, entry_valid, writes

    def _references(self, m, tag, reserve, hit, result):
        """``inc[0..3]``: the reserved register operands and the hit's result register."""
        for k in range(3):
            taken = reserve & tag.opcode.regs[k]
            m.d.comb += [self.inc[k].valid.eq(taken),
                         self.inc[k].preg.eq(Mux(taken, tag.operand[k], 0))]
        m.d.comb += [self.inc[3].valid.eq(hit), self.inc[3].preg.eq(Mux(hit, result, 0))]

    def _displace(self, m, word, displaced):
        """``dec``: the references of the valid entry a reservation or an eviction drops."""
        for k in range(3):
            dropped = displaced & word.tag.opcode.regs[k]
            m.d.comb += [self.dec[k].valid.eq(dropped),
                         self.dec[k].preg.eq(Mux(dropped, word.tag.operand[k], 0))]
        dropped = displaced & ~word.pending
        m.d.comb += [self.dec[3].valid.eq(dropped),
                     self.dec[3].preg.eq(Mux(dropped, word.result, 0))]

    def _fill(self, m, table, lookup_addr, lookup_writes):
        """Store the result of a matching pending entry and clear its pending bit."""
        payload = self.fill.payload
        read = table.read_port(domain="comb")
        write = table.write_port()
        stored = read.data
        fill = Signal()
        m.d.comb += [
            read.addr.eq(payload.index),
            fill.eq(self.fill.valid & _bit(m, self.valid, payload.index, "fill_valid_row")
                    & stored.pending
                    & (stored.tag.as_value() == payload.tag.as_value())
                    & ~(lookup_writes & (lookup_addr == payload.index))),
            write.addr.eq(payload.index),
            write.en.eq(fill),
            write.data.tag.eq(stored.tag),
            write.data.result.eq(payload.result),
            write.data.pending.eq(0),
            self.inc[4].valid.eq(fill),
            self.inc[4].preg.eq(Mux(fill, payload.result, 0)),
        ]


def _bit(m, vector, index, name):
    """Bit ``index`` of ``vector``, shifted into a full-width signal first so the Verilog
    has no truncating shift (WIDTHTRUNC)."""
    shifted = Signal(len(vector), name=name)
    m.d.comb += shifted.eq(vector >> index)
    return shifted[0]
