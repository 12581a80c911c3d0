"""Golden model of ``compression.collector_ext``: per-operand fields and the parts received."""

from gpurf.hw.compression.collector_ext import CollectorExtConfig

from .value_extractor import data_positions, sign_extend, unpack_entry

__all__ = ["CollectorExt", "merge_parts"]


def merge_parts(parts: list[list[int]], entry: dict, signed: bool) -> list[int]:
    """Per lane, the operand from its received parts: the first part as it is; two parts
    ORed and, for a signed operand, sign-extended from the top of its
    ``popcount(m0) + popcount(m1)`` slices."""
    if len(parts) == 1:
        return list(parts[0])
    width = len(data_positions(entry))
    merged = [a | b for a, b in zip(*parts, strict=True)]
    return [sign_extend(v, width) for v in merged] if signed else merged


class CollectorExt:
    """Port-level model: ``step(inputs)`` returns the outputs of the cycle, then clocks."""

    def __init__(self, **params):
        self.config = CollectorExtConfig(**params)
        self.reset()

    def reset(self):
        self.operands = [self._fresh(0, 0) for _ in range(self.config.operands)]

    @staticmethod
    def _fresh(signed, convert):
        return {"signed": signed, "convert": convert, "located": 0,
                "info": unpack_entry(0), "parts": []}

    @staticmethod
    def _needed(operand):
        return 2 if operand["info"]["m1"] else 1

    def _collected(self, operand):
        return operand["located"] and len(operand["parts"]) == self._needed(operand)

    def _outputs(self):
        config = self.config
        bits = {name: sum(1 << i for i, op in enumerate(self.operands) if op[name])
                for name in ("signed", "convert", "located")}
        values = [merge_parts(op["parts"], op["info"], op["signed"]) if self._collected(op)
                  else [0] * config.lanes for op in self.operands]
        return {
            "is_signed": bits["signed"], "convert": bits["convert"], "located": bits["located"],
            "collected": sum(1 << i for i, op in enumerate(self.operands)
                             if self._collected(op)),
            "info": config.info_layout.const([op["info"] for op in self.operands])
            .as_value().value,
            "data": config.data_layout.const(values).as_value().value,
        }

    def step(self, inputs):
        config = self.config
        outputs = self._outputs()
        if inputs["allocate"]:
            instr = config.instr_layout.from_bits(inputs["instr"])
            self.operands = [self._fresh(int(instr[i].signed), int(instr[i].convert))
                             for i in range(config.operands)]
            return outputs
        if inputs["fetch_valid"]:
            self._fetch(inputs["fetch"])
        locate = config.info_layout.from_bits(inputs["locate"])
        for i, operand in enumerate(self.operands):
            if inputs["locate_valid"] >> i & 1:
                operand["located"] = 1
                operand["info"] = {k: int(locate[i][k]) for k in ("r0", "m0", "r1", "m1")}
        return outputs

    def _fetch(self, bits):
        """Add a part to its operand (the input protocol is checked first)."""
        config = self.config
        fetch = config.fetch_layout.from_bits(bits)
        index = int(fetch.operand)
        if index >= config.operands:
            raise ValueError(f"fetch of operand {index}: the CU has {config.operands}")
        operand = self.operands[index]
        if not operand["located"]:
            raise ValueError(f"fetch of operand {index} before its location")
        if len(operand["parts"]) >= self._needed(operand):
            raise ValueError(f"fetch of operand {index}: all its parts were received")
        operand["parts"].append([int(fetch.data[lane]) for lane in range(config.lanes)])

    def line_trace(self):
        return "collector_ext: " + " ".join(
            f"op{i}(loc={op['located']} parts={len(op['parts'])} s={op['signed']})"
            for i, op in enumerate(self.operands))
