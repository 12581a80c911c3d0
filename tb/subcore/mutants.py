"""Hand-made mutants of the sub-core blocks: each one comparison or one update changed, each
killed by its block's formal harness (``tests/test_subcore_*.py::test_formal_kills_mutant``)."""

from amaranth import Const, Mux, Signal

from gpurf.hw.subcore.operand_collector import OperandCollector
from gpurf.hw.subcore.rba_scorer import RbaScorer
from gpurf.hw.subcore.subcore_assigner import SubcoreAssigner
from gpurf.hw.subcore.warp_selector import WarpSelector

__all__ = ["AgeNeverCleared", "InvalidOperandCounted", "TableReversed", "TieToHigherIndex",
           "WriteIgnored"]


class TieToHigherIndex(WarpSelector):
    """A compare-select cell takes the right (higher-index) input on equal keys (``<=`` for
    ``<``): the tie-break bug. Killed by "no ready slot has an equal key at a lower index"."""

    def _compare_select(self, m, stage, position, left, right=None):
        if right is None:
            return left
        l_present, l_key, l_index = left
        r_present, r_key, r_index = right
        take_right = Signal(name=f"take_right_mutant_s{stage}_{position // 2}")
        m.d.comb += take_right.eq(r_present & (~l_present | (r_key <= l_key)))
        return (l_present | r_present, Mux(take_right, r_key, l_key),
                Mux(take_right, r_index, l_index))


class InvalidOperandCounted(RbaScorer):
    """An operand's bank queue is counted whether or not the operand is valid. Killed by
    "every score is the saturated sum over the slot's valid operands"."""

    def _operand_queue(self, m, index, operand, queues):
        picked = super()._operand_queue(m, index, operand, queues)
        with m.Switch(self.slot[index][operand].bank):
            for bank in range(self.config.banks):
                with m.Case(bank):
                    m.d.comb += picked.eq(queues[bank])
        return picked


class TableReversed(SubcoreAssigner):
    """The hash table read in reverse order (group ``k`` reads entry ``depth - 1 - k``).
    Killed by "a hashed warp's sub-core is the table formula" once two entries differ."""

    def _table(self, m):
        return super()._table(m)[::-1]


class AgeNeverCleared(OperandCollector):
    """The pairwise age bit is set when the younger CU is allocated but never cleared when
    the older one is reallocated, so a reallocated CU keeps its old priority. Killed by
    "the grant goes to the request of the earliest allocated CU"."""

    def _age(self, m):
        cus = self.config.cus
        for i in range(cus):
            for j in range(i + 1, cus):
                with m.If(self.units[j].allocate):
                    m.d.sync += self.older[i][j].eq(1)
                m.d.comb += self.older[j][i].eq(~self.older[i][j])


class WriteIgnored(OperandCollector):
    """The arbiter grants a read to a bank whose port a writeback uses this cycle (the
    ``write`` input ignored). Killed by "no grant while the bank is written"."""

    def _written(self, bank):
        return Const(0, 1)
