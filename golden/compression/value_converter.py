"""Golden model of ``compression.value_converter``: exact widening of narrow floats."""

from gpurf.hw.compression.formats import FP32, FloatFormat
from gpurf.hw.compression.value_converter import ValueConverterConfig

from .formats import decode, encode, encode_nan, pack

__all__ = ["ValueConverter", "widen"]


def widen(bits: int, fmt: FloatFormat) -> int:
    """The fp32 bits of the ``fmt`` float in the low ``fmt.width`` bits of ``bits`` (bits
    above are ignored). Exact; a NaN keeps its payload, shifted up, not quieted."""
    value = decode(bits % (1 << fmt.width), fmt)
    if value.kind == "nan":
        return encode_nan(value.sign, value.payload, fmt, FP32)
    if value.kind == "inf":
        return pack(FP32, value.sign, FP32.max_exponent, 0)
    wide = encode(value.sign, value.significand, value.scale, FP32)
    if decode(wide, FP32).magnitude != value.magnitude:
        raise AssertionError(f"{fmt} {bits:#x} is not exact in fp32")
    return wide


class ValueConverter:
    """Port-level model: every lane's operand widened from the operand's format.

    The format is the configured one, or (run-time choice) the Table 3 format of
    ``4 x slices`` bits; a ``slices`` value with no format breaks the input protocol and
    raises ``ValueError``. Combinational: the outputs depend on this cycle's inputs only.
    """

    def __init__(self, **params):
        self.config = ValueConverterConfig(**params)
        self._trace = "-"

    def reset(self):
        self._trace = "-"

    def step(self, inputs: dict) -> dict:
        config = self.config
        slices = inputs.get("slices")
        fmt = config.format_for(slices)
        if fmt is None:
            raise ValueError(f"slices={slices}: no Table 3 float has {slices} data slices")
        lanes = config.register_layout.from_bits(inputs["operand"])
        result = [widen(int(lanes[lane]), fmt) for lane in range(config.lanes)]
        self._trace = f"{fmt}: lane0 {int(lanes[0]):#x} -> {result[0]:#010x}"
        return {"result": config.register_layout.const(result).as_value().value}

    def line_trace(self) -> str:
        return f"value_converter: {self._trace}"
