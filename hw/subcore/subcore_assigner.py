"""Sub-core assignment multiplexer control of an SM (RBA paper, Section IV-B, Fig. 7)."""

from amaranth import Array, Cat, Module, Mux, Signal
from amaranth.lib import data

from gpurf.hw.params import ConfiguredComponent

from .configs import (
    MODE_HASHED,
    MODE_ROUND_ROBIN,
    RR_ENTRY,
    WARPS_PER_ENTRY,
    SubcoreAssignerConfig,
)
from .layouts import hash_entry_layout

__all__ = ["MODE_HASHED", "MODE_ROUND_ROBIN", "SubcoreAssigner", "SubcoreAssignerConfig"]


class SubcoreAssigner(ConfiguredComponent, config=SubcoreAssignerConfig):
    """Choose the sub-core whose warp PC table receives each new warp of a kernel.

    Round robin (the baseline): a counter of warps since launch, modulo ``subcores``,
    drives the multiplexer's select lines. Hashed (``subcores == 4`` only): a table of
    ``depth`` bytes, each fixing the sub-cores of 4 consecutive warps; for the ``i``-th warp
    since launch ``e = table[(i // 4) % depth]``, ``j = i % 4`` and the sub-core is
    ``2*e[3-j] + e[7-j]`` (upper nibble = select line 0, lower nibble = select line 1,
    most significant bit first). The first warp of a group takes its bits straight from
    the table and loads the remaining 3 bits of each nibble into two 4-bit shift
    registers, which the next 3 warps shift out one bit each; the entry counter advances
    every 4th warp and wraps.

    **Interpretations.** The 2-bit round-robin counter is also the position within the
    group (both are ``i % 4``), as in Fig. 7. An entry is read when its group's first warp
    is assigned: a table write in the middle of a group affects the next pass over that
    entry. A table write lands on the clock edge, so a warp in the same cycle still sees
    the old byte. ``mode`` only steers the output multiplexer, sampled with each warp;
    the counters and shift registers advance on every warp in both modes. ``launch``
    resets the warp count (and clears the shift registers) on its clock edge, and a warp
    strobed in the launch cycle is the new kernel's warp 0. After reset every table entry
    holds :data:`RR_ENTRY` (so hashed mode is round robin until the host loads a table).
    ``subcore_valid`` and ``subcore`` are combinational (latency 0): the select lines
    steer the warp PC written in the same cycle. With ``subcores`` other than 4 only the
    round-robin path is built, without the ``mode`` and ``table_*`` ports.

    Attributes
    ----------
    warp : In(1)
        Strobe: a new warp PC is written this cycle.
    launch : In(1)
        Strobe: kernel launch; the warp count restarts at 0.
    mode : In(1)
        ``MODE_ROUND_ROBIN`` (0) or ``MODE_HASHED`` (1); only with ``subcores == 4``.
    table_we, table_index, table_data : In(1), In(range(depth)), In(8)
        Hash table write port (host load); only with ``subcores == 4``.
    subcore_valid : Out(1)
        A sub-core is chosen this cycle (equals ``warp``).
    subcore : Out(range(subcores))
        The chosen sub-core; don't-care while ``subcore_valid`` is low.
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        m.d.comb += self.subcore_valid.eq(self.warp)
        if self.config.hashed:
            self._elaborate_hashed(m)
        else:
            self._elaborate_round_robin(m)
        return m

    def _elaborate_round_robin(self, m):
        """A counter of warps since launch, modulo ``subcores``, is the sub-core."""
        last = self.config.subcores - 1
        counter = Signal(range(self.config.subcores))
        current = Signal.like(counter, name="counter_now")
        m.d.comb += [current.eq(Mux(self.launch, 0, counter)), self.subcore.eq(current)]
        with m.If(self.warp):
            m.d.sync += counter.eq(Mux(current == last, 0, current + 1))
        with m.Elif(self.launch):
            m.d.sync += counter.eq(0)

    def _elaborate_hashed(self, m):
        config = self.config
        table = self._table(m)
        phase = Signal(2)
        entry = Signal(config.entry_bits)
        shift0, shift1 = Signal(4), Signal(4)
        phase_now = Signal(2)
        entry_now = Signal(config.entry_bits)
        m.d.comb += [phase_now.eq(Mux(self.launch, 0, phase)),
                     entry_now.eq(Mux(self.launch, 0, entry))]
        byte = data.View(hash_entry_layout(), Array(table)[entry_now])
        group_start = ~phase_now.any()
        hashed = Signal(2)
        m.d.comb += hashed.eq(Mux(group_start, Cat(byte.sel0[3], byte.sel1[3]),
                                  Cat(shift0[3], shift1[3])))
        m.d.comb += self.subcore.eq(Mux(self.mode == MODE_HASHED, hashed, phase_now))
        with m.If(self.warp):
            m.d.sync += phase.eq(phase_now + 1)
            with m.If(phase_now == WARPS_PER_ENTRY - 1):
                m.d.sync += entry.eq(entry_now + 1)
            with m.Else():
                m.d.sync += entry.eq(entry_now)
            with m.If(group_start):
                m.d.sync += [shift0.eq(Cat(0, byte.sel0.as_value()[:3])),
                             shift1.eq(Cat(0, byte.sel1.as_value()[:3]))]
            with m.Else():
                m.d.sync += [shift0.eq(Cat(0, shift0[:3])), shift1.eq(Cat(0, shift1[:3]))]
        with m.Elif(self.launch):
            m.d.sync += [phase.eq(0), entry.eq(0), shift0.eq(0), shift1.eq(0)]

    def _table(self, m):
        """The hash table in flip-flops, loaded through the write port."""
        depth = self.config.depth
        table = [Signal(8, init=RR_ENTRY, name=f"table_{k}") for k in range(depth)]
        selected = Signal(depth)
        with m.Switch(self.table_index):
            for k in range(depth):
                with m.Case(k):
                    m.d.comb += selected.eq(1 << k)
        for k, byte in enumerate(table):
            with m.If(self.table_we & selected[k]):
                m.d.sync += byte.eq(self.table_data)
        return table
