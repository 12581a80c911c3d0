"""Hand-made mutants of the GReEneR blocks, each killed by its block's formal harness
(``tests/test_greener_*.py::test_formal_kills_mutant``)."""

from amaranth import Cat, Signal

from gpurf.hw.greener.correction_table import CorrectionTable
from gpurf.hw.greener.power_controller import PowerController
from gpurf.hw.greener.scoreboard_ext import ScoreboardExt

__all__ = ["DestinationsUnchecked", "KeepOnIgnored", "SamePcKeepsOn"]


class SamePcKeepsOn(CorrectionTable):
    """A query is answered ``keep_on`` by an entry of its own PC too (the PC comparison
    dropped). Killed by "keep_on iff an in-flight instance with a different PC uses it"."""

    def _query(self, m, table, clearing, index):
        super()._query(m, table, clearing, index)
        config, query = self.config, self.query[index]
        read = table.read_port(domain="comb")
        m.d.comb += read.addr.eq(query.warp)
        hits = Signal(config.entries, name=f"query_{index}_mutant_hits")
        for e in range(config.entries):
            stored = read.data[e]
            empty = self._empty(m, stored, f"query_{index}_mutant_empty_{e}")
            m.d.comb += hits[e].eq(~empty & Cat(reg == query.reg for reg in stored.reg).any())
        m.d.comb += self.keep_on[index].eq(query.valid & ~clearing & hits.any())


class KeepOnIgnored(PowerController):
    """A set-state port lowers its register whatever its ``keep_on`` bit (the run-time
    correction lost). Killed by "a set with keep_on leaves the register ON"."""

    def _new_state(self, m, port, keep, index):
        new_on, new_live = super()._new_state(m, port, keep, index)
        m.d.comb += [new_on.eq(port.state[1]), new_live.eq(port.state.any())]
        return new_on, new_live


class DestinationsUnchecked(ScoreboardExt):
    """``hazard`` looks at the sources of an issue candidate only (a WAW hazard on a
    reserved destination missed). Killed by "a reserved register is reported by every
    check naming it, as a source or a destination"."""

    def _check(self, m, slots, index):
        super()._check(m, slots, index)
        config, check = self.config, self.check[index]
        read = slots.read_port(domain="comb")
        m.d.comb += read.addr.eq(check.warp)
        occupied = self._occupancy(m, check.warp, f"check_{index}_mutant_occupied")
        touched = Cat(check.src_valid[k] & Cat(occupied[j] & (read.data[j] == check.src[k])
                                               for j in range(config.sources)).any()
                      for k in range(config.sources))
        m.d.comb += self.hazard[index].eq(check.valid & touched.any())
