"""Golden model of ``compression.value_converter``: exact widening of narrow floats."""

from gpurf.golden.model import PortModel
from gpurf.hw.compression.configs import ValueConverterConfig
from gpurf.hw.compression.formats import FP32, FloatFormat

from .formats import Decoded, decode, encode, encode_nan, pack
from .lanes import from_lanes, to_lanes, widen_lanes

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
    if not _same_magnitude(decode(wide, FP32), value):
        raise AssertionError(f"{fmt} {bits:#x} is not exact in fp32")
    return wide


def _same_magnitude(a: Decoded, b: Decoded) -> bool:
    """``a.magnitude == b.magnitude``, in integers (both ``significand x 2^scale``)."""
    low = min(a.scale, b.scale)
    return a.significand << (a.scale - low) == b.significand << (b.scale - low)


class ValueConverter(PortModel, config=ValueConverterConfig):
    """Port-level model: every lane's operand widened from the operand's format.

    The format is the configured one, or (run-time choice) the Table 3 format of
    ``4 x slices`` bits; a ``slices`` value with no format breaks the input protocol and
    raises ``ValueError``. Combinational: the outputs depend on this cycle's inputs only.
    Every lane is widened at once (:func:`~.lanes.widen_lanes`, :func:`widen` on an array).
    """

    def reset(self):
        self._last = None

    def step(self, inputs: dict) -> dict:
        slices = inputs.get("slices")
        fmt = self.config.format_for(slices)
        if fmt is None:
            raise ValueError(f"slices={slices}: no Table 3 float has {slices} data slices")
        lanes = to_lanes(inputs["operand"], self.config.lanes)
        result = widen_lanes(lanes, fmt)
        self._last = fmt, int(lanes[0]), int(result[0])
        return {"result": self.ports["result"].pack(from_lanes(result))}

    def line_trace(self) -> str:
        if self._last is None:
            return "value_converter: -"
        fmt, operand, result = self._last
        return f"value_converter: {fmt}: lane0 {operand:#x} -> {result:#010x}"
