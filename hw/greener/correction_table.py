"""Run-time correction lookup table of GReEneR (paper Sections 3.3-3.4, Fig. 5 Label 6)."""

import functools

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import memory

from gpurf.hw.params import ConfiguredComponent

from .configs import CorrectionTableConfig

__all__ = ["CorrectionTable", "CorrectionTableConfig"]


class CorrectionTable(ConfiguredComponent, config=CorrectionTableConfig):
    """Per-warp table of in-flight decoded instructions that keeps registers ON (paper 3.3).

    Storage is one unmapped memory row per warp holding ``entries`` entries of
    ``{pc, reg[entry_regs]}``: ``W x w x (PC bits + r x log2(R))`` bits, 10,240 bits =
    1,280 bytes at the defaults, as the paper states. No valid bits: an entry whose ``pc``
    is all ones is empty, so that PC is reserved (**spec interpretation**).

    Behaviour and timing:

    - **State N (clear after reset).** The memory cannot be reset: for ``N = warps``
      cycles after reset the table writes all-ones rows, one warp a cycle, with ``ready``,
      ``insert.ready`` and ``remove.ready`` low and every ``keep_on`` low (after reset no
      instruction is in flight, so the empty table's answer is the right one).
      Afterwards ``ready`` stays high and both streams are always ready.
    - **Insert** (decode, stream): the instruction's registers are the fields ``reg[k]``
      with ``valid[k]`` set; unused fields store the lowest valid field's register
      (**spec interpretation**: "repeat the first register"), so an entry is exactly the
      paper's size. It goes into the lowest-numbered empty entry of its warp as seen at the
      start of the cycle. A transfer is not stored when the warp's entries are all used
      (**spec interpretation**: a full table simply does not insert; the correction is a
      performance aid), when no ``valid`` bit is set (nothing to keep ON) or when ``pc`` is
      the reserved all-ones PC. A stored entry is visible to queries from the next cycle.
    - **Remove** (writeback, stream): empties one entry of ``warp`` whose ``pc`` matches
      (the lowest-numbered one); nothing happens without a match (e.g. its insert was not
      stored). The entry is free for an insert from the next cycle.
    - **Duplicate PCs** (a short loop decodes the same PC again before the previous
      instance's writeback): every instance takes its own entry and every remove empties
      one, so the table counts instances. Instances of one PC of a warp are the same static
      instruction and carry the same registers, which is why it does not matter which one a
      remove empties (a protocol rule: the golden model raises if an insert's registers
      differ from a stored instance of the same warp and PC). Following the paper, a query
      ignores entries with the query's own PC, so the next iteration of the same
      instruction never keeps a register ON.
    - **Query** (combinational, latency 0, ``query_ports`` ports: by default the 4 source
      and 4 destination set-state ports of the power controller): ``keep_on[p]`` is high
      when ``query[p].valid``, the table is ready, and some stored entry of
      ``query[p].warp`` with a PC different from ``query[p].pc`` holds ``query[p].reg``.
      Queries see the table as it was at the start of the cycle.

    Every ``warp`` input must be below ``warps``.

    Attributes
    ----------
    insert : In(stream.Signature(insert_layout))
        Decoded instructions: ``payload.{warp, pc, valid, reg}``.
    remove : In(stream.Signature(remove_layout))
        Instructions past writeback: ``payload.{warp, pc}``.
    query : In(ArrayLayout(query_layout, query_ports))
        Per port: ``valid``, ``warp``, ``pc``, ``reg``.
    keep_on : Out(query_ports)
        Bit ``p``: keep ``query[p].reg`` ON.
    ready : Out(1)
        The clear after reset is done.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.clearing = Signal(init=1)
        """High during the clear after reset (state N)."""
        self.clear_row = Signal(range(config.warps))
        """The row cleared this cycle while ``clearing``."""

    @functools.cached_property
    def table(self) -> memory.Memory:
        """The table memory, one row per warp, created on first use (elaboration or a
        formal harness that adds its own read ports)."""
        config = self.config
        return memory.Memory(shape=config.row_layout, depth=config.warps, init=[])

    def elaborate(self, platform):
        m = Module()
        config = self.config
        m.submodules.table = table = self.table
        clearing, clear_row = self._clear_state(m)
        m.d.comb += [
            self.ready.eq(~clearing),
            self.insert.ready.eq(~clearing),
            self.remove.ready.eq(~clearing),
        ]
        self._insert(m, table, clearing, clear_row)
        self._remove(m, table, clearing)
        for index in range(config.query_ports):
            self._query(m, table, clearing, index)
        return m

    def _clear_state(self, m):
        """``clearing`` for the ``warps`` cycles after reset; ``clear_row`` the row cleared."""
        clearing, clear_row = self.clearing, self.clear_row
        last = Signal()
        m.d.comb += last.eq(clear_row == self.config.warps - 1)
        with m.If(clearing):
            m.d.sync += clear_row.eq(clear_row + 1)
            with m.If(last):
                m.d.sync += clearing.eq(0)
        return clearing, clear_row

    def _empty(self, m, entry, name):
        """The entry holds the reserved all-ones PC."""
        empty = Signal(name=name)
        m.d.comb += empty.eq(entry.pc.all())
        return empty

    def _insert(self, m, table, clearing, clear_row):
        """Write the new entry into the lowest empty entry of its warp (or clear a row)."""
        config, payload = self.config, self.insert.payload
        read = table.read_port(domain="comb")
        write = table.write_port(granularity=1)
        m.d.comb += read.addr.eq(payload.warp)
        empty = Cat(self._empty(m, read.data[e], f"insert_empty_{e}")
                    for e in range(config.entries))
        target = _lowest(m, empty, "insert_target")
        entry = Signal(config.entry_layout)
        m.d.comb += [entry.pc.eq(payload.pc), _first_fill(m, entry, payload)]
        store = Signal()
        m.d.comb += store.eq(self.insert.valid & ~clearing & payload.valid.any()
                             & ~payload.pc.all())
        ones = Const(-1, config.row_layout.size)
        m.d.comb += [
            write.addr.eq(Mux(clearing, clear_row, payload.warp)),
            write.en.eq(Mux(clearing, Const(-1, config.entries), Mux(store, target, 0))),
            write.data.as_value().eq(Mux(clearing, ones,
                                         Cat(entry.as_value() for _ in range(config.entries)))),
        ]

    def _remove(self, m, table, clearing):
        """Empty the lowest entry of the warp whose PC matches."""
        config, payload = self.config, self.remove.payload
        read = table.read_port(domain="comb")
        write = table.write_port(granularity=1)
        m.d.comb += read.addr.eq(payload.warp)
        match = Signal(config.entries)
        for e in range(config.entries):
            stored = read.data[e]
            empty = self._empty(m, stored, f"remove_empty_{e}")
            m.d.comb += match[e].eq(~empty & (stored.pc == payload.pc))
        target = _lowest(m, match, "remove_target")
        m.d.comb += [
            write.addr.eq(payload.warp),
            write.en.eq(Mux(self.remove.valid & ~clearing, target, 0)),
            write.data.as_value().eq(Const(-1, config.row_layout.size)),
        ]

    def _query(self, m, table, clearing, index):
        """``keep_on[index]``: another in-flight instruction of the warp holds the register."""
        config, query = self.config, self.query[index]
        read = table.read_port(domain="comb")
        m.d.comb += read.addr.eq(query.warp)
        hits = Signal(config.entries, name=f"query_{index}_hits")
        for e in range(config.entries):
            stored = read.data[e]
            empty = self._empty(m, stored, f"query_{index}_empty_{e}")
            uses = Cat(reg == query.reg for reg in stored.reg).any()
            m.d.comb += hits[e].eq(~empty & (stored.pc != query.pc) & uses)
        m.d.comb += self.keep_on[index].eq(query.valid & ~clearing & hits.any())


def _lowest(m, bits, name):
    """The lowest set bit of ``bits`` alone (one-hot, or zero), as a priority chain
    ``bits[i] & ~bits[:i].any()``. Not :func:`gpurf.hw.gates.lowest` (``bits & -bits``):
    at the defaults that maps to another netlist (7,759 cells against 7,768)."""
    onehot = Signal(len(bits), name=name)
    for i in range(len(bits)):
        m.d.comb += onehot[i].eq(bits[i] & ~bits[:i].any() if i else bits[0])
    return onehot


def _first_fill(m, entry, payload):
    """``entry.reg[k]``: the payload's ``reg[k]`` if valid, else its lowest valid register."""
    first = Signal.like(payload.reg[0], name="insert_first_reg")
    for k in reversed(range(len(payload.valid))):
        with m.If(payload.valid[k]):
            m.d.comb += first.eq(payload.reg[k])
    return [entry.reg[k].eq(Mux(payload.valid[k], payload.reg[k], first))
            for k in range(len(payload.valid))]
