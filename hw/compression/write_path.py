"""The composed write-back path of the compressed register file (paper 3.2.1, 3.2.6)."""

from amaranth import Module, Mux

from gpurf.hw.params import ConfiguredComponent

from .configs import WritePathConfig
from .indirection_table import loaded_table
from .value_truncator import ValueTruncator

__all__ = ["WritePath", "WritePathConfig"]


class WritePath(ConfiguredComponent, config=WritePathConfig):
    """The write-back path: destination indirection table (``ports`` writeback ports, a
    conflict buffer per port) -> one value truncator per port -> the register-file writes
    with their per-slice masks, one stage each.

    Built from :class:`~.indirection_table.IndirectionTable` (the writeback's ``float``
    flag and data ride in the lookup's tag, so a conflicting writeback waits in the
    table's buffer with its data) and :class:`~.value_truncator.ValueTruncator` (every
    Table 3 format, chosen by the entry's slice count).

    Timing: a writeback on port ``p`` accepted in cycle ``t`` (``write_valid[p]`` and
    ``write_ready[p]``, the table's stream rule) is looked up when its bank grants it
    (``t``, or later after a conflict); in the cycle after the grant the truncator narrows
    a float and scatters the slices; the writes show on ``rf_write[p]`` one cycle later:
    ``t+2`` without a conflict (the paper's minimum write-back delay of two cycles).
    ``rf_write[p][0]`` writes ``r0`` under ``m0``, ``rf_write[p][1]`` writes ``r1`` under
    ``m1``; a mask of 0 is no write (every field is zero while a port has nothing to
    write).

    Input protocol (the golden model raises otherwise): a looked-up entry is legal for the
    value truncator, and a ``float`` writeback has a Table 3 format (2..8 slices).

    Attributes
    ----------
    write_valid : In(ports)
    write : In(ArrayLayout(request_layout, ports))
        Per port: ``reg``, ``float``, ``data``.
    write_ready : Out(ports)
    load : In(stream.Signature(load_layout))
        Table contents: ``payload.{reg, entry}`` (always ready).
    rf_write : Out(ArrayLayout(ArrayLayout(register_write_layout, 2), ports))
        Per port, the writes to ``r0`` and ``r1``: ``reg``, ``mask``, ``data``.
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        config = self.config
        table = loaded_table(m, config.table_params, self.load)
        m.d.comb += [table.lookup_valid.eq(self.write_valid),
                     self.write_ready.eq(table.lookup_ready)]
        for p in range(config.ports):
            write = self.write[p]
            m.d.comb += [table.lookup[p].reg.eq(write.reg),
                         table.lookup[p].tag.eq(write.float | (write.data.as_value() << 1))]
            truncator = ValueTruncator(lanes=config.lanes)
            m.submodules[f"truncator{p}"] = truncator
            shown = table.result[p]
            m.d.comb += [truncator.entry.eq(shown.entry), truncator.is_float.eq(shown.tag[0]),
                         truncator.operand.eq(shown.tag[1:])]
            m.d.sync += self.rf_write[p].eq(
                Mux(table.result_valid[p], truncator.write.as_value(), 0))
        return m
