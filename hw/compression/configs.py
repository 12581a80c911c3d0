"""Configurations of the static data compression blocks: parameters declared once, widths
derived once, and each block's port signature.

Components, golden models and benches import these (with :mod:`.layouts` and
:mod:`.formats`), never each other: a component is ``XConfig(**params).signature()`` plus its
``elaborate``; a golden model reads its ports through the codecs of the same signature.
"""

from functools import cached_property

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import BlockConfig, index_width, param

from .formats import FloatFormat, resolve_formats, table3_format
from .layouts import (
    collector_fetch_layout,
    collector_operand_layout,
    indirection_entry_layout,
    lookup_layout,
    lookup_result_layout,
    read_request_layout,
    read_result_layout,
    register_write_layout,
    table_load_layout,
    warp_register_layout,
    write_request_layout,
)

__all__ = ["DESTINATION", "SOURCE", "CollectorExtConfig", "FloatUnitConfig",
           "IndirectionTableConfig", "ReadPathConfig", "ValueConverterConfig",
           "ValueExtractorConfig", "ValueTruncatorConfig", "WritePathConfig"]


class CollectorExtConfig(BlockConfig):
    """The extended collector unit's parameters and the layouts derived from them."""

    operands: int = param(3, "Source operands per CU.", low=1, high=4)
    lanes: int = param(32, "Lanes of a warp register.", low=1, high=32)

    operand_bits = index_width("operands")

    @property
    def field_bits(self) -> int:
        """The paper's added fields per operand: signed, convert info, location fetched and
        the 32-bit indirection info (35 bits)."""
        return 3 + indirection_entry_layout().size

    @property
    def register_layout(self) -> data.ArrayLayout:
        return warp_register_layout(lanes=self.lanes)

    @property
    def instr_layout(self) -> data.ArrayLayout:
        return data.ArrayLayout(collector_operand_layout(), self.operands)

    @property
    def info_layout(self) -> data.ArrayLayout:
        return data.ArrayLayout(indirection_entry_layout(), self.operands)

    @property
    def fetch_layout(self) -> data.StructLayout:
        return collector_fetch_layout(operand_bits=self.operand_bits, lanes=self.lanes)

    @property
    def data_layout(self) -> data.ArrayLayout:
        return data.ArrayLayout(self.register_layout, self.operands)

    def signature(self) -> wiring.Signature:
        """``allocate``/``instr``, ``locate_valid``/``locate``, ``fetch_valid``/``fetch`` in;
        the per-operand fields ``is_signed``, ``convert``, ``located``, ``collected``,
        ``info`` and the merged operands ``data`` out."""
        operands = self.operands
        return wiring.Signature({
            "allocate": In(1),
            "instr": In(self.instr_layout),
            "locate_valid": In(operands),
            "locate": In(self.info_layout),
            "fetch_valid": In(1),
            "fetch": In(self.fetch_layout),
            "is_signed": Out(operands),
            "convert": Out(operands),
            "located": Out(operands),
            "collected": Out(operands),
            "info": Out(self.info_layout),
            "data": Out(self.data_layout),
        })


SOURCE = {}
"""Parameters of the paper's source indirection table (the defaults)."""

DESTINATION = {"ports": 3, "buffer": 1}
"""Parameters of the paper's destination indirection table: the writeback bus is three
operands wide, and each writeback port has one conflict-buffer entry (paper 3.2.1)."""


class IndirectionTableConfig(BlockConfig):
    """The indirection table's parameters and the widths derived from them."""

    entries: int = param(256, "Architectural registers (a power of two).",
                         choices=(4, 8, 16, 32, 64, 128, 256))
    banks: int = param(16, "Banks, at most ``entries``.", choices=(1, 2, 4, 8, 16))
    ports: int = param(16, "Requesters (the destination table has 3 writeback ports).",
                       low=1, high=16)
    buffer: int = param(0, "Conflict-buffer entries per port (0: the source table; 1 for "
                           "the destination table, see ``DESTINATION``).", low=0, high=4)
    tag_width: int = param(8, "Bits carried from a lookup to its result (on the destination "
                              "side the writeback's warp register and warp id travel here).",
                           low=1, high=2048)

    def validate(self):
        if self.banks > self.entries:
            raise ValueError(f"banks must be at most entries ({self.entries}), not {self.banks}")

    reg_bits = index_width("entries", "Bits of an architectural register id.")

    @property
    def bank_bits(self) -> int:
        """Low register-id bits naming the bank (bank = register mod banks): ``log2(banks)``,
        0 for one bank."""
        return self.banks.bit_length() - 1

    @property
    def rows(self) -> int:
        """Entries of one bank."""
        return self.entries // self.banks

    @property
    def role(self) -> str:
        """``"source"`` (no conflict buffer) or ``"destination"``."""
        return "destination" if self.buffer else "source"

    @property
    def storage_bits(self) -> int:
        """Table storage: ``entries x 32`` bits (the paper's 256 x 32)."""
        return self.entries * indirection_entry_layout().size

    @property
    def lookup_layout(self) -> data.StructLayout:
        return lookup_layout(reg_bits=self.reg_bits, tag_width=self.tag_width)

    @property
    def result_layout(self) -> data.StructLayout:
        return lookup_result_layout(tag_width=self.tag_width)

    @property
    def load_layout(self) -> data.StructLayout:
        return table_load_layout(reg_bits=self.reg_bits)

    def signature(self) -> wiring.Signature:
        """Per port ``lookup_valid``/``lookup``/``lookup_ready`` and
        ``result_valid``/``result``; the ``load`` stream."""
        ports = self.ports
        return wiring.Signature({
            "lookup_valid": In(ports),
            "lookup": In(data.ArrayLayout(self.lookup_layout, ports)),
            "lookup_ready": Out(ports),
            "result_valid": Out(ports),
            "result": Out(data.ArrayLayout(self.result_layout, ports)),
            "load": In(stream.Signature(self.load_layout)),
        })


class ValueExtractorConfig(BlockConfig):
    """The warp value extractor's parameter."""

    lanes: int = param(32, "Thread value extractors (32: a warp).", low=1, high=32)

    @property
    def register_layout(self) -> data.ArrayLayout:
        return warp_register_layout(lanes=self.lanes)

    def signature(self) -> wiring.Signature:
        """``word``, ``entry``, ``part``, ``is_signed`` in; ``value`` out."""
        return wiring.Signature({
            "word": In(self.register_layout),
            "entry": In(indirection_entry_layout()),
            "part": In(1),
            "is_signed": In(1),
            "value": Out(self.register_layout),
        })


class FloatUnitConfig(BlockConfig):
    """The parameters of a value converter or truncator and the formats they select.

    ``exponent = mantissa = 0`` selects Table 3 (every format, or the one of ``width``); else
    one custom format (see :func:`~gpurf.hw.compression.formats.resolve_formats`, whose
    messages :meth:`validate` keeps).
    """

    lanes: int = param(32, "Thread units, one per lane (32: a warp).", low=1, high=32)
    width: int = param(0, "0: every Table 3 format, chosen per operand by its slice count; "
                          "or one Table 3 width (8, 12, 16, 20, 24, 28, 32); with a custom "
                          "format, 0 or ``1 + exponent + mantissa``.", low=0, high=32)
    exponent: int = param(0, "0 (Table 3) or the exponent bits of a custom format, 2..8.",
                          low=0, high=8)
    mantissa: int = param(0, "0 (Table 3) or the mantissa bits of a custom format, 1..23.",
                          low=0, high=23)

    def validate(self):
        resolve_formats(width=self.width, exponent=self.exponent, mantissa=self.mantissa)

    @cached_property
    def formats(self) -> tuple[FloatFormat, ...]:
        """The handled formats, narrowest first."""
        return resolve_formats(width=self.width, exponent=self.exponent, mantissa=self.mantissa)

    @property
    def fixed(self) -> bool:
        """One format only: no run-time format choice."""
        return len(self.formats) == 1

    @property
    def register_layout(self) -> data.ArrayLayout:
        return warp_register_layout(lanes=self.lanes)

    def format_for(self, slices: int | None) -> FloatFormat | None:
        """The format of a float of ``slices`` data slices (``None``: not a legal float).

        A fixed format takes exactly its own slice count; otherwise the Table 3 format of
        ``4 x slices`` bits.
        """
        if self.fixed:
            fmt = self.formats[0]
            return fmt if slices in (None, fmt.slices) else None
        return table3_format(slices) if slices is not None else None


class ValueConverterConfig(FloatUnitConfig):
    """The value converter's parameters (see :class:`FloatUnitConfig`)."""

    def signature(self) -> wiring.Signature:
        """``slices`` (run-time format choice only) and ``operand`` in, ``result`` out."""
        ports = {} if self.fixed else {"slices": In(range(2, 9))}
        return wiring.Signature({
            **ports,
            "operand": In(self.register_layout),
            "result": Out(self.register_layout),
        })


class ValueTruncatorConfig(FloatUnitConfig):
    """The value truncator's parameters (see :class:`FloatUnitConfig`)."""

    @property
    def writes_layout(self) -> data.ArrayLayout:
        """The two register writes: ``write[0]`` to ``r0``, ``write[1]`` to ``r1``."""
        return data.ArrayLayout(register_write_layout(lanes=self.lanes), 2)

    def signature(self) -> wiring.Signature:
        """``entry``, ``is_float``, ``operand`` in; the two register writes ``write`` out."""
        return wiring.Signature({
            "entry": In(indirection_entry_layout()),
            "is_float": In(1),
            "operand": In(self.register_layout),
            "write": Out(self.writes_layout),
        })


class _PathConfig(BlockConfig):
    """Parameters shared by the composed read and write paths."""

    lanes: int = param(32, "Lanes of a warp register.", low=1, high=32)
    entries: int = param(256, "Indirection-table entries (architectural registers).",
                         choices=(4, 8, 16, 32, 64, 128, 256))
    banks: int = param(16, "Indirection-table banks, at most ``entries``.",
                       choices=(1, 2, 4, 8, 16))

    def validate(self):
        if self.banks > self.entries:
            raise ValueError(f"banks must be at most entries ({self.entries}), not {self.banks}")

    reg_bits = index_width("entries", "Bits of an architectural register id.")

    @property
    def register_layout(self) -> data.ArrayLayout:
        return warp_register_layout(lanes=self.lanes)

    @property
    def load_layout(self) -> data.StructLayout:
        return table_load_layout(reg_bits=self.reg_bits)


class ReadPathConfig(_PathConfig):
    """The composed operand-read path's parameters and layouts."""

    tag_width: int = param(8, "Bits carried from a request to its operand.", low=1, high=16)

    @property
    def request_layout(self) -> data.StructLayout:
        return read_request_layout(reg_bits=self.reg_bits, tag_width=self.tag_width)

    @property
    def result_layout(self) -> data.StructLayout:
        return read_result_layout(lanes=self.lanes, tag_width=self.tag_width)

    @property
    def table_params(self) -> dict:
        """The source indirection table inside: one port, the request's flags and tag as
        the lookup's tag."""
        return {"entries": self.entries, "banks": self.banks, "ports": 1, "buffer": 0,
                "tag_width": 2 + self.tag_width}

    def signature(self) -> wiring.Signature:
        """``request`` (valid/ready), the table ``load`` stream, the register-file read
        ``rf_valid``/``rf_reg`` out and its data ``rf_data`` in (the next cycle), the
        collected operand ``result_valid``/``result`` out."""
        return wiring.Signature({
            "request_valid": In(1),
            "request": In(self.request_layout),
            "request_ready": Out(1),
            "load": In(stream.Signature(self.load_layout)),
            "rf_valid": Out(1),
            "rf_reg": Out(8),
            "rf_data": In(self.register_layout),
            "result_valid": Out(1),
            "result": Out(self.result_layout),
        })


class WritePathConfig(_PathConfig):
    """The composed write-back path's parameters and layouts."""

    ports: int = param(3, "Writeback ports (the paper's writeback bus: 3 operands).",
                       low=1, high=3)
    buffer: int = param(1, "Destination-table conflict-buffer entries per port.",
                        low=0, high=4)

    @property
    def request_layout(self) -> data.StructLayout:
        return write_request_layout(reg_bits=self.reg_bits, lanes=self.lanes)

    @property
    def writes_layout(self) -> data.ArrayLayout:
        """Per port, the two register writes (``r0``, ``r1``) of the value truncator."""
        return data.ArrayLayout(
            data.ArrayLayout(register_write_layout(lanes=self.lanes), 2), self.ports)

    @property
    def table_params(self) -> dict:
        """The destination indirection table inside: the writeback's ``float`` flag and
        data travel as the lookup's tag (the conflict buffer holds a warp register)."""
        return {"entries": self.entries, "banks": self.banks, "ports": self.ports,
                "buffer": self.buffer, "tag_width": 1 + self.register_layout.size}

    def signature(self) -> wiring.Signature:
        """Per port ``write_valid``/``write``/``write_ready``; the table ``load`` stream;
        per port the two register-file writes ``rf_write`` (mask 0: no write)."""
        ports = self.ports
        return wiring.Signature({
            "write_valid": In(ports),
            "write": In(data.ArrayLayout(self.request_layout, ports)),
            "write_ready": Out(ports),
            "load": In(stream.Signature(self.load_layout)),
            "rf_write": Out(self.writes_layout),
        })
