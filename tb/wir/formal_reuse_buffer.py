"""Formal harness of ``wir.reuse_buffer`` in a small configuration.

Every input is free (``AnySeq``) after a reset in the first cycle. The harness keeps the
spec's view of the buffer, written from the paper and the spec rather than from the RTL:
per entry ``{valid, tag, result, pending}`` in flip-flops, the XOR-fold index, the
lookup rules (hit / pending hit / reserving miss / low-register eviction) and the fill rule.
It asserts:

- **a hit implies tag equality and a clear pending bit**: ``response.hit`` only when the
  shadow entry at the index is valid, holds the lookup's tag and is not pending, and the
  result is that entry's result register; a pending hit only on a valid pending entry with
  the tag;
- every response flag, the index and the result equal the spec's;
- the reference events balance: per register, the increments (reserved operands, filled
  results) minus the decrements (displaced entries) equal the references the shadow's
  entries hold, so no reference is dropped twice or never;
- (induction strengthening) the RTL's valid bits, eviction pointer and memory words equal
  the shadow's.
"""

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert

from gpurf.hw.wir.reuse_buffer import ReuseBuffer

from ..formal_base import FormalHarness

__all__ = ["SMALL", "ReuseBufferFormal"]

SMALL = {"entries": 4, "opcode_bits": 4, "preg_bits": 2, "imm_bits": 3, "blocks": 1,
         "barrier_bits": 1}
"""The proof configuration: 4 entries, 4-bit opcodes, 4 registers, 3-bit immediates, one
thread block, 1-bit barrier count (12-bit tags)."""


class ReuseBufferFormal(FormalHarness):
    """The buffer with free inputs and the invariants above (``params`` override SMALL)."""

    block = ReuseBuffer
    SMALL = SMALL

    def check(self, m):
        dut = self.dut
        self.free_streams(m, dut.lookup, dut.fill)
        self.free(m, dut.low_reg, dut.result_saturated, dut.operand_saturated)
        shadow = self._shadow(m)
        self._strengthen(m, shadow)

    def _tag(self, m):
        """The lookup's tag from its fields, and whether every operand fits the field."""
        config, payload = self.dut.config, self.dut.lookup.payload
        tag = Signal(config.tag_layout.size)
        operands = [payload.operand[k] for k in range(3)]
        m.d.comb += tag.eq(Cat(payload.opcode.op, payload.opcode.regs,
                               *(o[:config.preg_bits] for o in operands),
                               payload.tbid, payload.barrier))
        fits = Signal()
        m.d.comb += fits.eq(Cat(o < (1 << config.preg_bits) for o in operands).all())
        return tag, fits

    def _fold(self, m, tag):
        config = self.dut.config
        index = Signal(config.index_bits)
        for position in range(config.index_bits):
            m.d.comb += index[position].eq(
                Cat(tag[bit] for bit in range(position, len(tag), config.index_bits)).xor())
        return index

    def _shadow(self, m):
        dut, config = self.dut, self.dut.config
        n, tags = config.entries, config.tag_layout
        valid = [Signal(name=f"s_valid_{e}") for e in range(n)]
        tag_of = [Signal(tags.size, name=f"s_tag_{e}") for e in range(n)]
        result = [Signal(config.preg_bits, name=f"s_result_{e}") for e in range(n)]
        pending = [Signal(name=f"s_pending_{e}") for e in range(n)]
        pointer = Signal(config.index_bits)
        m.d.sync += pointer.eq(pointer + 1)
        payload, response = dut.lookup.payload, dut.response.payload
        tag, fits = self._tag(m)
        index = self._fold(m, tag)
        eligible = Signal()
        m.d.comb += eligible.eq(dut.lookup.valid & ~payload.divergent & ~payload.bypass & fits)
        at = [index == e for e in range(n)]
        same = Cat(at[e] & valid[e] & (tag_of[e] == tag) for e in range(n)).any()
        filled = Cat(at[e] & ~pending[e] for e in range(n)).any()
        hit, pend, reserve, evict_at = Signal(), Signal(), Signal(), Signal(n)
        m.d.comb += [
            pend.eq(eligible & same & ~filled),
            hit.eq(eligible & same & filled & ~dut.result_saturated),
            reserve.eq(eligible & ~hit & ~pend & ~dut.low_reg & ~dut.operand_saturated),
        ]
        for e in range(n):
            m.d.comb += evict_at[e].eq(dut.low_reg & Mux(dut.lookup.valid,
                                                         eligible & ~hit & ~pend & at[e],
                                                         pointer == e))
        hit_result = Signal(config.preg_bits)
        for e in range(n):
            with m.If(at[e]):
                m.d.comb += hit_result.eq(result[e])
        # The invariant of the issue, then the rest of the response.
        with m.If(response.hit):
            m.d.comb += Assert(same & filled & (response.result == hit_result))
        with m.If(response.pending):
            m.d.comb += Assert(same & ~filled)
        with m.If(dut.lookup.valid):
            m.d.comb += [Assert(response.hit == hit), Assert(response.pending == pend),
                         Assert(response.reserved == reserve), Assert(response.index == index)]
        fill = self._fill(m, valid, tag_of, pending, [reserve & at[e] | evict_at[e]
                                                     for e in range(n)])
        for e in range(n):
            with m.If(reserve & at[e]):
                m.d.sync += [valid[e].eq(1), tag_of[e].eq(tag), pending[e].eq(1)]
            with m.Elif(evict_at[e]):
                m.d.sync += valid[e].eq(0)
            with m.Elif(fill[e]):
                m.d.sync += [result[e].eq(dut.fill.payload.result), pending[e].eq(0)]
        self._balance(m, valid, tag_of, result, pending)
        # The events: a reuse hit, a pending hit, an eviction of a valid entry, a fill.
        self.covers(m, [
            (hit, "reuse_hit"),
            (pend, "pending_hit"),
            (Cat(evict_at[e] & valid[e] for e in range(n)).any(), "eviction"),
            (Cat(reserve & at[e] & valid[e] for e in range(n)).any(), "replacement"),
            (fill.any(), "fill"),
        ])
        return valid, tag_of, result, pending, pointer

    def _fill(self, m, valid, tag_of, pending, written):
        """Per entry: the fill completes it (valid, pending, same tag, not written)."""
        dut = self.dut
        fill = dut.fill.payload
        hits = Signal(len(valid))
        for e in range(len(valid)):
            m.d.comb += hits[e].eq(dut.fill.valid & (fill.index == e) & valid[e] & pending[e]
                                   & (tag_of[e] == fill.tag.as_value()) & ~written[e])
        m.d.comb += Assert(dut.inc[4].valid == hits.any())
        return hits

    def _balance(self, m, valid, tag_of, result, pending):
        """Per register: net events so far == references the shadow's entries hold."""
        dut, config = self.dut, self.dut.config
        tags = config.tag_layout
        width = (4 * config.entries).bit_length() + 1
        for p in range(1 << config.preg_bits):
            net = Signal(width, name=f"net_{p}")
            ups = [(dut.inc[k].valid & (dut.inc[k].preg == p)) for k in (0, 1, 2, 4)]
            downs = [(dut.dec[k].valid & (dut.dec[k].preg == p)) for k in range(4)]
            m.d.sync += net.eq(net + sum(ups) - sum(downs))
            held = []
            for e in range(config.entries):
                view = tags(tag_of[e])
                held += [valid[e] & view.opcode.regs[k] & (view.operand[k] == p)
                         for k in range(3)]
                held.append(valid[e] & ~pending[e] & (result[e] == p))
            m.d.comb += Assert(net == sum(held))

    def _strengthen(self, m, shadow):
        dut, config = self.dut, self.dut.config
        valid, tag_of, result, pending, pointer = shadow
        m.d.comb += Assert(dut.pointer == pointer)
        for e in range(config.entries):
            read = dut.table.read_port(domain="comb")
            m.d.comb += [read.addr.eq(e), Assert(dut.valid[e] == valid[e])]
            with m.If(valid[e]):
                m.d.comb += [Assert(read.data.tag.as_value() == tag_of[e]),
                             Assert(read.data.pending == pending[e])]
                with m.If(~pending[e]):
                    m.d.comb += Assert(read.data.result == result[e])
