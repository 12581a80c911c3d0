"""The composed operand-read path of the compressed register file (paper Fig. 1, Fig. 6)."""

from amaranth import Module, Mux, Signal

from gpurf.hw.params import ConfiguredComponent

from .collector_ext import OperandMerge
from .configs import ReadPathConfig
from .indirection_table import loaded_table
from .layouts import indirection_entry_layout
from .logic import prefix_counts
from .value_converter import ValueConverter
from .value_extractor import ValueExtractor

__all__ = ["ReadPath", "ReadPathConfig"]


class ReadPath(ConfiguredComponent, config=ReadPathConfig):
    """The operand-read path: source indirection table -> one or two register-file reads ->
    value extractor -> OR merge and sign fill -> value converter, one stage each.

    Built from the blocks :class:`~.indirection_table.IndirectionTable` (one port),
    :class:`~.value_extractor.ValueExtractor`, the collector extension's
    :class:`~.collector_ext.OperandMerge` and :class:`~.value_converter.ValueConverter`
    (every Table 3 format, chosen by the operand's slice count). The register file is
    outside: the path issues one read per cycle on ``rf_valid``/``rf_reg`` and takes its
    data on ``rf_data`` in the next cycle (a synchronous bank read).

    Stages of a request accepted in cycle ``t`` (every stage registered):

    - ``t``: table lookup (``request_valid`` and ``request_ready``).
    - ``t+1`` (fetch): the entry ``{r0, m0, r1, m1}``; read ``r0``. A split operand
      (``m1 != 0``) reads ``r1`` in ``t+2``: its double fetch is a second register-file
      read, and ``request_ready`` is low in ``t+1`` so no new entry arrives in ``t+2``.
    - data cycle (the cycle after a read): the value extractor aligns the part; a split
      operand's first part waits in a register, its second part is ORed with it and, if
      signed, sign-filled (:class:`~.collector_ext.OperandMerge`).
    - convert: a ``convert`` operand of ``n = popcount(m0) + popcount(m1)`` slices is
      widened from the Table 3 format of ``4n`` bits to fp32; others pass.
    - ``result_valid``/``result`` (data and the request's ``tag``) in ``t+4``, ``t+5`` for
      a split operand; results come in request order. ``result`` and ``rf_reg`` are zero
      while their valid bits are low.

    Input protocol (the golden model raises otherwise): a looked-up entry is legal for the
    value extractor (``m0 != 0``, at most 8 slices, masks disjoint when ``r0 == r1``), and a
    ``convert`` operand has 2..8 slices. The table is loaded through ``load`` (one entry per
    cycle, seen by lookups from the next cycle).

    Attributes
    ----------
    request_valid : In(1)
    request : In(request_layout)
        ``reg``, ``signed``, ``convert``, ``tag``.
    request_ready : Out(1)
    load : In(stream.Signature(load_layout))
        Table contents: ``payload.{reg, entry}`` (always ready).
    rf_valid : Out(1)
        A register-file read this cycle.
    rf_reg : Out(8)
        The physical register read (``r0``, or ``r1`` for a split operand's second part).
    rf_data : In(ArrayLayout(32, lanes))
        The warp register read in the previous cycle.
    result_valid : Out(1)
    result : Out(result_layout)
        ``data`` (the collected operand), ``tag``.
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        config = self.config
        table = loaded_table(m, config.table_params, self.load)
        fetch = self._lookup(m, table)
        data_stage = self._fetch(m, fetch)
        merged = self._extract(m, data_stage)
        self._convert(m, merged)
        return m

    def _lookup(self, m, table):
        """Cycle ``t``: the table lookup; returns the fetch stage's (valid, entry, flags)
        as the table shows them in ``t+1``."""
        request, tag_width = self.request, self.config.tag_width
        m.d.comb += [
            table.lookup_valid.eq(self.request_valid & self.request_ready),
            table.lookup[0].reg.eq(request.reg),
            table.lookup[0].tag.eq(
                request.signed | (request.convert << 1) | (request.tag << 2)),
        ]
        shown = table.result[0]
        return table.result_valid[0], shown.entry, shown.tag[:2 + tag_width]

    def _fetch(self, m, fetch):
        """The fetch stage: ``r0`` of the shown entry, or ``r1`` of the held split
        operand; returns the data stage's registers."""
        shown_valid, shown_entry, shown_flags = fetch
        entry_layout = indirection_entry_layout()
        second = Signal(name="second")
        held_entry = Signal(entry_layout, name="held_entry")
        held_flags = Signal(len(shown_flags), name="held_flags")
        split_shown = Signal(name="split_shown")
        m.d.comb += [
            split_shown.eq(shown_valid & shown_entry.m1.any()),
            self.request_ready.eq(~split_shown),
            self.rf_valid.eq(shown_valid | second),
            self.rf_reg.eq(Mux(second, self._second_register(held_entry),
                               Mux(shown_valid, shown_entry.r0, 0))),
        ]
        m.d.sync += second.eq(split_shown)
        with m.If(split_shown):
            m.d.sync += [held_entry.eq(shown_entry), held_flags.eq(shown_flags)]
        stage = {"valid": Signal(name="data_valid"), "part": Signal(name="data_part"),
                 "entry": Signal(entry_layout, name="data_entry"),
                 "flags": Signal(len(shown_flags), name="data_flags")}
        m.d.sync += [
            stage["valid"].eq(self.rf_valid),
            stage["part"].eq(second),
            stage["entry"].eq(Mux(second, held_entry, shown_entry)),
            stage["flags"].eq(Mux(second, held_flags, shown_flags)),
        ]
        return stage

    @staticmethod
    def _second_register(entry):
        """The register a split operand's second read fetches: ``r1``."""
        return entry.r1

    def _extract(self, m, stage):
        """The data stage: extract the part, keep a split operand's first part, merge the
        second; returns the convert stage's registers."""
        config = self.config
        entry, flags = stage["entry"], stage["flags"]
        m.submodules.extractor = extractor = ValueExtractor(lanes=config.lanes)
        m.submodules.merge = merge = OperandMerge(config.lanes)
        first = Signal(config.register_layout, name="first_part")
        split = Signal(name="data_split")
        m.d.comb += [
            split.eq(entry.m1.any()),
            extractor.word.eq(self.rf_data),
            extractor.entry.eq(entry),
            extractor.part.eq(stage["part"]),
            extractor.is_signed.eq(flags[0]),
            merge.stored.eq(first),
            merge.part.eq(extractor.value),
            merge.entry.eq(entry),
            merge.merging.eq(stage["part"]),
            merge.signed.eq(flags[0]),
        ]
        with m.If(stage["valid"] & ~stage["part"]):
            m.d.sync += first.eq(extractor.value)
        count0 = prefix_counts(m, entry.m0, "count0")
        count1 = prefix_counts(m, entry.m1, "count1", start=count0[-1])
        merged = {"valid": Signal(name="merged_valid"),
                  "data": Signal(config.register_layout, name="merged_data"),
                  "slices": Signal(4, name="merged_slices"),
                  "flags": Signal(len(flags) - 1, name="merged_flags")}
        m.d.sync += [
            merged["valid"].eq(self._complete(stage, split)),
            merged["data"].eq(merge.value),
            merged["slices"].eq(count1[-1]),
            merged["flags"].eq(flags[1:]),
        ]
        return merged

    @staticmethod
    def _complete(stage, split):
        """The data stage completes an operand: its only part, or a split one's second."""
        return stage["valid"] & (stage["part"] | ~split)

    def _convert(self, m, merged):
        """The convert stage, then the result register (``merged["flags"]``: the convert
        flag, then the tag)."""
        config = self.config
        m.submodules.converter = converter = ValueConverter(lanes=config.lanes)
        flags = merged["flags"]
        m.d.comb += [converter.slices.eq(merged["slices"]), converter.operand.eq(merged["data"])]
        data = Signal(config.register_layout, name="result_data")
        tag = Signal(config.tag_width, name="result_tag")
        m.d.sync += [
            self.result_valid.eq(merged["valid"]),
            data.eq(Mux(flags[0], converter.result, merged["data"])),
            tag.eq(flags[1:]),
        ]
        m.d.comb += [self.result.data.eq(Mux(self.result_valid, data, 0)),
                     self.result.tag.eq(Mux(self.result_valid, tag, 0))]
