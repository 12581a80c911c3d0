"""Hand-made mutants of the compression blocks, each killed by its block's formal harness
(``tests/test_compression_*.py::test_formal_kills_mutant``)."""

from gpurf.hw.compression.indirection_table import IndirectionTable

__all__ = ["HighestPortWins"]


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
