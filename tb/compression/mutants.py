"""Hand-made mutants of the compression blocks, each killed by its block's formal harness
(``tests/test_compression_*.py::test_formal_kills_mutant``) or, for the composed paths, by
their benches against the golden models (``tests/test_compression_read_path.py``,
``tests/test_compression_write_path.py``)."""

from amaranth import Mux, Signal

from gpurf.hw.compression.collector_ext import CollectorExt
from gpurf.hw.compression.indirection_table import IndirectionTable
from gpurf.hw.compression.read_path import ReadPath
from gpurf.hw.compression.write_path import WritePath

__all__ = ["FirstPartCollects", "FirstPartCompletes", "FloatsNotNarrowed", "HighestPortWins",
           "SecondReadOfR0", "WriteOneCycleLate"]


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


class SecondReadOfR0(ReadPath):
    """A split operand's second register-file read fetches ``r0`` again instead of ``r1``
    (the double fetch lost). Killed by the read path's bench: the merged operand differs."""

    @staticmethod
    def _second_register(entry):
        return entry.r0


class FirstPartCompletes(ReadPath):
    """A split operand's first part already counts as a collected operand: two results
    for one request. Killed by the read path's formal harness ("one result per request, in
    request order")."""

    @staticmethod
    def _complete(stage, split):
        return stage["valid"]


class FloatsNotNarrowed(WritePath):
    """Port 0's truncator is never told its writeback is a float: fp32 results are stored
    by their low bits instead of rounded to their format. Killed by the write path's
    bench."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += m.submodules.truncator0.is_float.eq(0)
        return m



class WriteOneCycleLate(WritePath):
    """Port 0's register-file writes leave one cycle late (an extra stage after the
    truncator): a three-cycle write-back. Killed by the write path's formal harness (port 0
    writes exactly two cycles after its writeback)."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        write = m.submodules.truncator0.write.as_value()
        late = Signal(len(write), name="late_write")
        m.d.sync += [late.eq(Mux(m.submodules.table.result_valid[0], write, 0)),
                     self.rf_write[0].eq(late)]
        return m
