"""Reuse buffer of WIR with pending reservations (paper Sections V-C, V-D, VI-A, VI-B, Fig. 9)."""

import functools

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import memory

from gpurf.hw.gates import bit
from gpurf.hw.params import ConfiguredComponent

from .configs import ReuseBufferConfig

__all__ = ["ReuseBuffer", "ReuseBufferConfig"]


class ReuseBuffer(ConfiguredComponent, config=ReuseBufferConfig):
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

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.valid = Signal(config.entries)
        """Per-entry valid bits (flip-flops)."""
        self.pointer = Signal(config.index_bits)
        """The eviction pointer: cycles since reset modulo ``entries``."""

    @functools.cached_property
    def table(self) -> memory.Memory:
        """``{tag, result, pending}`` of every entry. Created on first use (elaboration, or
        a formal harness's own ports), so that a component built only to check its
        parameters or read its ports leaves no unused memory behind."""
        return memory.Memory(shape=self.config.row_layout, depth=self.config.entries, init=[])

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
            entry_valid.eq(bit(m, self.valid, addr, "entry_valid_row")),
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
            fill.eq(self.fill.valid & bit(m, self.valid, payload.index, "fill_valid_row")
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

