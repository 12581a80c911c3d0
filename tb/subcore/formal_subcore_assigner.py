"""Formal harness of ``subcore.subcore_assigner``: the spec's table formula, group coverage
with permutation entries, and the restart on kernel launch."""

from amaranth import Cat, Mux, Signal
from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume

from gpurf.hw.subcore.configs import MODE_HASHED, RR_ENTRY, WARPS_PER_ENTRY
from gpurf.hw.subcore.subcore_assigner import SubcoreAssigner

from ..formal_base import FormalHarness

__all__ = ["SMALL", "SubcoreAssignerFormal"]

SMALL = {"subcores": 4}
"""The proof configuration: 4 sub-cores (a table byte holds 4 warps' sub-cores); the table
depth is the harness's ``depth``."""


def entry_subcore(entry, j):
    """Sub-core of warp ``j`` of a table byte: ``2*e[3-j] + e[7-j]`` (the spec's reading)."""
    return Cat(entry[7 - j], entry[3 - j])


class SubcoreAssignerFormal(FormalHarness):
    """A 4-sub-core assigner under any warp/launch strobes, table writes and a fixed mode.

    The harness keeps a shadow table (written like the block's, round robin after reset),
    the warp count since launch modulo ``4 * depth`` and the entry captured at each
    group's first warp. It asserts:

    - every warp's sub-core is ``rr = i % 4`` (round robin) or, hashed, warp ``j = i % 4``
      of ``table[(i // 4) % depth]`` as it stood at the group's first warp; a warp in the
      launch cycle, or the first one after it, is warp 0 (counter and shift registers
      restart on launch);
    - with ``shuffle_like`` (every written byte assumed a permutation of the 4 sub-cores,
      as a Random Shuffle table is): the warps of each group of 4 after launch go to
      4 different sub-cores, so every full group covers all 4.
    """

    block = SubcoreAssigner
    SMALL = SMALL
    RESET_FIRST = False

    def __init__(self, *, block=None, depth=4, shuffle_like=True):
        super().__init__(block=block, depth=depth)
        self.shuffle_like = shuffle_like

    def check(self, m):
        dut = self.dut
        depth = dut.config.depth
        mode = AnyConst(1)
        self.free(m, dut.warp, dut.launch, dut.table_we, dut.table_index, dut.table_data)
        m.d.comb += dut.mode.eq(mode)
        if self.shuffle_like:
            m.d.comb += Assume(self._is_permutation(dut.table_data))
        table = [Signal(8, init=RR_ENTRY, name=f"shadow_{k}") for k in range(depth)]
        with m.If(dut.table_we):
            for k, byte in enumerate(table):
                with m.If(dut.table_index == k):
                    m.d.sync += byte.eq(dut.table_data)
        count = Signal(range(WARPS_PER_ENTRY * depth))
        captured = Signal(8)
        seen = Signal(4)
        now = Signal.like(count, name="count_now")
        m.d.comb += now.eq(Mux(dut.launch, 0, count))
        j = now % WARPS_PER_ENTRY
        group_entry = Signal(8)
        with m.Switch(now // WARPS_PER_ENTRY):
            for k, byte in enumerate(table):
                with m.Case(k):
                    m.d.comb += group_entry.eq(byte)
        entry = Mux(j == 0, group_entry, captured)
        seen_now = Mux(j == 0, 0, seen)
        hashed = Signal(2)
        with m.Switch(j):
            for position in range(WARPS_PER_ENTRY):
                with m.Case(position):
                    m.d.comb += hashed.eq(entry_subcore(entry, position))
        with m.If(dut.warp):
            expected = Mux(mode == MODE_HASHED, hashed, j)
            m.d.comb += [Assert(dut.subcore_valid), Assert(dut.subcore == expected)]
            if self.shuffle_like:
                fresh = [~((dut.subcore == k) & seen_now[k]) for k in range(4)]
                m.d.comb += Assert(Cat(*fresh).all())
            m.d.sync += [count.eq(now + 1), captured.eq(entry),
                         seen.eq(seen_now | Cat(*(dut.subcore == k for k in range(4))))]
        with m.Else():
            m.d.comb += Assert(~dut.subcore_valid)
            with m.If(dut.launch):
                m.d.sync += [count.eq(0), seen.eq(0)]
        # The events: a hashed group's last warp after a table write, a launch mid-group.
        written = Signal()
        m.d.sync += written.eq(written | dut.table_we)
        self.covers(m, [
            (dut.warp & (mode == MODE_HASHED) & written & (j == WARPS_PER_ENTRY - 1)
             & (now != 0) & (entry != RR_ENTRY), "hashed_group_after_write"),
            (dut.launch & (count % WARPS_PER_ENTRY != 0), "launch_mid_group"),
        ])

    @staticmethod
    def _is_permutation(byte):
        subcores = [entry_subcore(byte, j) for j in range(WARPS_PER_ENTRY)]
        return Cat(*(subcores[a] != subcores[b]
                     for a in range(WARPS_PER_ENTRY) for b in range(a + 1, WARPS_PER_ENTRY))).all()
