"""Golden model of ``compression.read_path``: the source table's model, then the stages of
the operand-read path as :mod:`.paths` composes them (extract, collect, convert)."""

from dataclasses import dataclass

from gpurf.golden.model import PortModel
from gpurf.hw.compression.configs import ReadPathConfig
from gpurf.hw.compression.formats import table3_format

from .indirection_table import IndirectionTable
from .paths import collect
from .value_converter import widen
from .value_extractor import check_entry, part_extractor, unpack_entry

__all__ = ["ReadPath"]


@dataclass(frozen=True)
class _Operand:
    """An operand in flight: its entry, the request's flags and tag."""

    entry: dict
    signed: bool
    convert: bool
    tag: int

    @property
    def split(self) -> bool:
        return bool(self.entry["m1"])

    @property
    def slices(self) -> int:
        return self.entry["m0"].bit_count() + self.entry["m1"].bit_count()


class ReadPath(PortModel, config=ReadPathConfig):
    """Port-level model: ``step(inputs)`` returns the outputs of the cycle, then clocks.

    State per stage: the table (its own golden model), the held split operand whose
    second read is due, the read whose data arrives this cycle (operand and part), a split
    operand's first part, the merged operand before conversion, and the result.
    """

    def reset(self):
        if not hasattr(self, "table"):
            self.table = IndirectionTable(**self.config.table_params)
        self.table.reset()
        self.held = None
        self.reading = None
        self.first = None
        self.merged = None
        self.result = None

    def _shown(self):
        """The operand the table shows this cycle (its lookup result), or ``None``."""
        shown = self.table.shown[0]
        if shown is None:
            return None
        entry_bits, tag = shown
        return _Operand(unpack_entry(entry_bits), bool(tag & 1), bool(tag >> 1 & 1), tag >> 2)

    def _outputs(self, shown, read):
        result = self.result
        return {
            "request_ready": int(not (shown is not None and shown.split)),
            "rf_valid": int(read is not None),
            "rf_reg": 0 if read is None else read[0].entry[f"r{read[1]}"],
            "result_valid": int(result is not None),
            "result": 0 if result is None else self.ports["result"].pack(
                {"data": result[0], "tag": result[1]}),
        }

    def step(self, inputs):
        shown = self._shown()
        read = (self.held, 1) if self.held is not None else (
            (shown, 0) if shown is not None else None)
        outputs = self._outputs(shown, read)
        self.result = self._convert(self.merged)
        self.merged = self._extract(self.reading, inputs["rf_data"])
        self.reading = read
        self.held = shown if shown is not None and shown.split else None
        self._table_step(inputs, outputs["request_ready"])
        return {**outputs, "load__ready": 1}

    def _table_step(self, inputs, ready):
        request = self.ports["request"].unpack(inputs["request"])
        valid = inputs["request_valid"] & ready
        tag = request.signed | request.convert << 1 | request.tag << 2
        self.table.step({
            "lookup_valid": valid,
            "lookup": self.table.ports["lookup"].pack([{"reg": request.reg, "tag": tag}]),
            "load__valid": inputs["load__valid"],
            "load__payload": inputs["load__payload"],
        })

    def _extract(self, reading, rf_data):
        """The data stage: the part read last cycle, extracted; the merged operand when it
        is complete (else ``None``)."""
        if reading is None:
            return None
        operand, part = reading
        check_entry(operand.entry)
        extract = part_extractor(operand.entry, part, operand.signed)
        value = [extract(word) for word in self.ports["rf_data"].unpack(rf_data)]
        if operand.split and part == 0:
            self.first = value
            return None
        parts = [self.first, value] if operand.split else [value]
        return operand, collect(parts, operand.entry, operand.signed, None)

    def _convert(self, merged):
        """The convert stage: the result register's next (data, tag)."""
        if merged is None:
            return None
        operand, lanes = merged
        if not operand.convert:
            return lanes, operand.tag
        fmt = table3_format(operand.slices)
        if fmt is None:
            raise ValueError(f"convert operand {operand.entry}: {operand.slices} slices have "
                             f"no Table 3 format")
        return [widen(value, fmt) for value in lanes], operand.tag

    def line_trace(self):
        stages = (self.held, self.reading, self.merged, self.result)
        return "read_path: " + " ".join(
            f"{name}={'-' if value is None else 'x'}"
            for name, value in zip(("held", "reading", "merged", "result"), stages,
                                   strict=True))
