"""Formal harness of ``compression.collector_ext`` in a small configuration.

The block is stateful (per operand: ``is_signed``, ``convert``, ``located``, the stored
indirection entry, the parts received, the stored operand). Inputs are free (``AnySeq``)
after a reset in the first cycle, under the block's input protocol: an operand is located
once per allocation, and a part is fetched only for an operand below ``operands`` that is
located and still owes a part (1, or 2 when its entry is split). The harness keeps the
spec's view per operand (fields from the last allocation, the entry from the last location,
parts received since allocation, the first part) and asserts:

- ``is_signed``/``convert`` are the last allocation's, ``info`` the located entry (zero
  until located), ``located`` set by a location and cleared by an allocation;
- **an operand is collected exactly when it is located and all its parts arrived**, and
  ``data`` is zero until then;
- a collected unsplit operand's ``data`` is the part as fetched; a collected split unsigned
  operand's ``data`` is the OR of its two parts (the signed split case, sign-extended by
  :class:`~gpurf.hw.compression.collector_ext.SplitSignExtend`, is not checked here).

The parts received and the stored operand are local to the block's ``elaborate``, so the
harness cannot tie them to its own and k-induction does not close: the proof is BMC.
"""

from amaranth import Mux, ResetSignal, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.compression.collector_ext import CollectorExt
from gpurf.hw.compression.layouts import indirection_entry_layout

from ..formal_base import FormalHarness

__all__ = ["SMALL", "CollectorExtFormal"]

SMALL = {"operands": 2, "lanes": 1}
"""The proof configuration: 2 operands, 1 lane (32-bit operands)."""


class CollectorExtFormal(FormalHarness):
    """The extension with free inputs and the invariants above (``params`` override SMALL;
    ``block`` is the component class)."""

    block = CollectorExt
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free(m, dut.allocate, dut.instr, dut.locate_valid, dut.locate, dut.fetch_valid,
                  dut.fetch)
        fetch = dut.fetch
        for i in range(config.operands):
            signed, convert = Signal(name=f"signed_{i}"), Signal(name=f"convert_{i}")
            located = Signal(name=f"located_{i}")
            entry = Signal(indirection_entry_layout(), name=f"entry_{i}")
            parts = Signal(range(3), name=f"parts_{i}")
            first = Signal(config.register_layout.size, name=f"first_{i}")
            merged = Signal(config.register_layout.size, name=f"merged_{i}")
            split = entry.m1.any()
            needed = Mux(split, 2, 1)
            targeted = dut.fetch_valid & (fetch.operand == i) & ~dut.allocate
            with m.If(dut.locate_valid[i] & ~dut.allocate):
                m.d.comb += Assume(~located)
            with m.If(dut.fetch_valid & (fetch.operand == i)):
                m.d.comb += Assume(located & (parts < needed) & ~ResetSignal())
            m.d.comb += Assume(~dut.fetch_valid | (fetch.operand < config.operands))
            with m.If(dut.allocate):
                m.d.sync += [signed.eq(dut.instr[i].signed), convert.eq(dut.instr[i].convert),
                             located.eq(0), parts.eq(0)]
            with m.Else():
                with m.If(dut.locate_valid[i]):
                    m.d.sync += [located.eq(1), entry.eq(dut.locate[i])]
                with m.If(targeted):
                    m.d.sync += parts.eq(parts + 1)
                    with m.If(parts == 0):
                        m.d.sync += [first.eq(fetch.data), merged.eq(fetch.data)]
                    with m.Else():
                        m.d.sync += merged.eq(first | fetch.data.as_value())
            collected = located & (parts == needed)
            m.d.comb += [
                Assert(dut.is_signed[i] == signed), Assert(dut.convert[i] == convert),
                Assert(dut.located[i] == located),
                Assert(dut.info[i].as_value() == Mux(located, entry.as_value(), 0)),
                Assert(dut.collected[i] == collected),
            ]
            with m.If(~collected):
                m.d.comb += Assert(dut.data[i].as_value() == 0)
            with m.Elif(~split | ~signed):
                m.d.comb += Assert(dut.data[i].as_value() == merged)
            # The events: an unsplit operand collected, a split one collected (both parts),
            # a re-allocation while an operand is half collected.
            self.covers(m, [
                (collected & ~split & (merged != 0), f"collected_{i}"),
                (collected & split & ~signed & (merged != first), f"split_collected_{i}"),
                (dut.allocate & located & (parts == 1) & split, f"reallocated_{i}"),
            ])
