"""Hand-made mutants of the compression blocks, each killed by its block's formal harness
(``tests/test_compression_*.py::test_formal_kills_mutant``)."""

from gpurf.hw.compression.collector_ext import CollectorExt
from gpurf.hw.compression.indirection_table import IndirectionTable

__all__ = ["FirstPartCollects", "HighestPortWins"]


class HighestPortWins(IndirectionTable):
    """A bank grants the highest-numbered port that wants it, not the lowest (priority
    reversed). Killed by the source table's fixed priority: "ready iff offered and no lower
    port offers the same bank"."""

    def _arbitrate(self, m, b, candidates):
        taken = 0
        for p, (valid, _, bank, _) in reversed(list(enumerate(candidates))):
            wants = valid & bank[b]
            m.d.comb += self.grant[b][p].eq(wants & ~taken)
            taken = taken | wants


class FirstPartCollects(CollectorExt):
    """An operand counts as collected after its first part even when its entry is split
    (the second part's wait lost): half an operand dispatched. Killed by "collected exactly
    when located and all its parts arrived"."""

    def _operand(self, m, i, targeted, info):
        first, second = super()._operand(m, i, targeted, info)
        m.d.comb += self.collected[i].eq(self.located[i] & first)
        return first, second
