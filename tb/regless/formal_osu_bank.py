"""Formal harness of ``regless.osu_bank`` in a small configuration.

Every input is free (``AnySeq``, ready signals of the outputs included) after a reset in
the first cycle. Next to the bank, the harness keeps per line a *shadow* of the last value
written into it that L1 has not got yet: ``unsaved`` (set by a write the bank takes into a
line in use, cleared when that line's value leaves on ``writeback`` or the register is
erased), the ``value`` written and the ``tag`` the line had then. It asserts:

- **every line is in exactly one of free / clean / dirty / in use** (the four per-line
  flip-flop vectors, one-hot per line);
- **a dirty value is never dropped without an eviction**: while ``unsaved``, the line keeps
  its tag, is in use or on the dirty list (so never reallocated, never on the clean or free
  list) and the data store holds ``value``; a writeback carries exactly that value; the
  bank's dirty bit (``written``) equals ``unsaved``;
- a read of an unsaved line answers its value one cycle later;
- (induction strengthening) valid tags are distinct; a filling line is in use and not
  written; a line on the dirty list is written, one on the clean or free list is not; the
  line chosen for eviction is on the dirty list and, once read out, the data port's output
  register holds its value.

Covers (after the reset cycle): an eviction (an unsaved value leaves on ``writeback``), a
request waiting for one (a line chosen for eviction), a clean line reused by an allocation
(no free line), a read answering an unsaved value, a fill of a preload miss, an unsaved
value erased by a release.
"""

from amaranth import Cat, Signal
from amaranth.hdl import Assert

from gpurf.hw.regless.osu_bank import OsuBank

from ..formal_base import FormalHarness

__all__ = ["SMALL", "OsuBankFormal"]

SMALL = {"lines": 4, "warps": 2, "regs": 4, "lanes": 1, "data_width": 2}
"""The proof configuration: 4 lines, 2 warps x 4 registers, one 2-bit lane."""


class OsuBankFormal(FormalHarness):
    """The bank with free inputs and the invariants above (``params`` override SMALL;
    ``block`` a mutant class)."""

    block = OsuBank
    SMALL = SMALL

    def check(self, m):
        dut = self.dut
        self.free_streams(m, dut.read, dut.reserve, dut.write, dut.preload, dut.fill,
                          dut.release)
        self.free_ready(m, dut.fetch, dut.writeback)
        self._lists(m)
        self._shadow(m)
        self._covers(m)

    def _lists(self, m):
        dut = self.dut
        for i in range(dut.config.lines):
            places = Cat(dut.free[i], dut.clean[i], dut.dirty[i], dut.used[i])
            m.d.comb += [
                Assert(sum(places[k] for k in range(4)) == 1),
                Assert(~dut.filling[i] | (dut.used[i] & ~dut.written[i])),
                Assert(~dut.dirty[i] | dut.written[i]),
                Assert(~(dut.clean[i] | dut.free[i]) | ~dut.written[i]),
            ]
            for j in range(i):
                same = dut.tags[i] == dut.tags[j]
                m.d.comb += Assert(~(~dut.free[i] & ~dut.free[j] & same))
        evicting = Signal(dut.config.lines)
        m.d.comb += evicting.eq(1 << dut.evict_line)
        with m.If(dut.chosen | dut.held):
            m.d.comb += [Assert((evicting & dut.dirty).any()),
                         Assert(dut.evict_line < dut.config.lines)]
        m.d.comb += Assert(~(dut.chosen & dut.held))

    def _shadow(self, m):
        dut, config = self.dut, self.dut.config
        write, rel = dut.write.payload, dut.release.payload
        rd_check, rd_value = Signal(), Signal(config.value_layout)
        self.read_checked, self.erased_unsaved = rd_check, []
        m.d.sync += rd_check.eq(0)
        with m.If(rd_check):
            m.d.comb += Assert(dut.read_resp.payload == rd_value)
        for i in range(config.lines):
            unsaved = Signal(name=f"unsaved_{i}")
            value = Signal(config.value_layout, name=f"value_{i}")
            tag = Signal(config.ref_layout, name=f"tag_{i}")
            mem = dut.data.read_port(domain="comb")
            m.d.comb += mem.addr.eq(i)
            in_use = dut.used[i] & ~dut.filling[i]
            erased = (dut.release.valid & dut.release.ready & rel.erase & ~dut.free[i]
                      & (dut.tags[i].warp == rel.warp) & (dut.tags[i].reg == rel.reg)
                      & in_use)
            wb = dut.writeback.valid & dut.writeback.ready & (dut.writeback.payload.line == i)
            with m.If(wb):
                m.d.comb += Assert(dut.writeback.payload.data == value)
                m.d.sync += unsaved.eq(0)
            with m.If(dut.write.valid & (write.line == i) & in_use):
                m.d.sync += [unsaved.eq(1), value.eq(write.data), tag.eq(dut.tags[i])]
            with m.If(erased):
                m.d.sync += unsaved.eq(0)
            m.d.comb += Assert(dut.written[i] == unsaved)
            with m.If(unsaved):
                m.d.comb += [Assert(dut.used[i] | dut.dirty[i]),
                             Assert(dut.tags[i] == tag),
                             Assert(mem.data == value)]
            with m.If((dut.chosen | dut.held) & (dut.evict_line == i) & dut.held):
                m.d.comb += Assert(dut.data_read.data == mem.data)
            self.erased_unsaved.append(erased & unsaved)
            hits = (dut.read.valid & dut.read.ready & ~dut.free[i] & unsaved
                    & (dut.tags[i].warp == dut.read.payload.warp)
                    & (dut.tags[i].reg == dut.read.payload.reg))
            with m.If(hits):
                m.d.sync += [rd_check.eq(1), rd_value.eq(value)]

    def _covers(self, m):
        dut = self.dut
        self.covers(m, [
            (dut.writeback.valid & dut.writeback.ready, "eviction"),
            (dut.chosen, "eviction_chosen"),
            (dut.reserve_resp.valid & ~dut.free.any() & dut.clean.any(), "clean_reused"),
            (self.read_checked, "read_unsaved"),
            (dut.fill.valid & dut.fill.ready & dut.preloaded.valid, "fill"),
            (Cat(self.erased_unsaved).any(), "erased_unsaved"),
        ], guard=self.running)
