"""Golden model of ``compression.collector_ext``: per-operand fields and the parts received."""

from gpurf.golden.model import PortModel
from gpurf.hw.compression.configs import CollectorExtConfig
from gpurf.hw.ports import codec

from .value_extractor import entry_fields, sign_extend

__all__ = ["CollectorExt", "merge_parts"]


def merge_parts(parts: list[list[int]], entry: dict, signed: bool) -> list[int]:
    """Per lane, the operand from its received parts: the first part as it is; two parts
    ORed and, for a signed operand, sign-extended from the top of its
    ``popcount(m0) + popcount(m1)`` slices."""
    if len(parts) == 1:
        return list(parts[0])
    width = entry["m0"].bit_count() + entry["m1"].bit_count()
    merged = [a | b for a, b in zip(*parts, strict=True)]
    return [sign_extend(v, width) for v in merged] if signed else merged


class _Operand:
    """One operand's fields: the instruction's ``signed``/``convert``, ``located`` and
    its indirection ``info`` (the ``locate`` port's entry), the ``parts`` received and,
    once collected, its merged warp register ``value`` (packed for the ``data`` port)."""

    __slots__ = ("convert", "info", "located", "parts", "signed", "value")

    def __init__(self, signed, convert, info):
        self.signed, self.convert, self.located = signed, convert, 0
        self.info, self.parts, self.value = info, [], None

    @property
    def needed(self) -> int:
        return 2 if self.info.m1 else 1


class CollectorExt(PortModel, config=CollectorExtConfig):
    """Port-level model: ``step(inputs)`` returns the outputs of the cycle, then clocks."""

    def reset(self):
        self._register = codec(self.config.register_layout)
        self._no_entry = self.ports["locate"].zero[0]
        self.operands = [_Operand(0, 0, self._no_entry) for _ in range(self.config.operands)]

    def _outputs(self):
        operands = self.operands
        return {
            "is_signed": sum(op.signed << i for i, op in enumerate(operands)),
            "convert": sum(op.convert << i for i, op in enumerate(operands)),
            "located": sum(op.located << i for i, op in enumerate(operands)),
            "collected": sum(1 << i for i, op in enumerate(operands) if op.value is not None),
            "info": self.ports["info"].pack([op.info for op in operands]),
            "data": self.ports["data"].pack([op.value or 0 for op in operands]),
        }

    def step(self, inputs):
        outputs = self._outputs()
        if inputs["allocate"]:
            self.operands = [_Operand(instr.signed, instr.convert, self._no_entry)
                             for instr in self.ports["instr"].unpack(inputs["instr"])]
            return outputs
        if inputs["fetch_valid"]:
            self._fetch(self.ports["fetch"].unpack(inputs["fetch"]))
        if inputs["locate_valid"]:
            locate = self.ports["locate"].unpack(inputs["locate"])
            for i, operand in enumerate(self.operands):
                if inputs["locate_valid"] >> i & 1:
                    operand.located, operand.info = 1, locate[i]
                    self._collect(operand)
        return outputs

    def _fetch(self, fetch):
        """Add a part to its operand (the input protocol is checked first)."""
        config = self.config
        index = fetch.operand
        if index >= config.operands:
            raise ValueError(f"fetch of operand {index}: the CU has {config.operands}")
        operand = self.operands[index]
        if not operand.located:
            raise ValueError(f"fetch of operand {index} before its location")
        if len(operand.parts) >= operand.needed:
            raise ValueError(f"fetch of operand {index}: all its parts were received")
        operand.parts.append(fetch.data)
        self._collect(operand)

    def _collect(self, operand):
        """The operand's merged value while it is located and has all its parts (else
        ``None``)."""
        operand.value = None
        if operand.located and len(operand.parts) == operand.needed:
            merged = merge_parts(operand.parts, entry_fields(operand.info), operand.signed)
            operand.value = self._register.pack(merged)

    def line_trace(self):
        return "collector_ext: " + " ".join(
            f"op{i}(loc={op.located} parts={len(op.parts)} s={op.signed})"
            for i, op in enumerate(self.operands))
