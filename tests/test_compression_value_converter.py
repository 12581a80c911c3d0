# amaranth: UnusedElaboratable=no
"""``compression.value_converter``: its ports follow the format choice, the format of a
slice count, and the spec's NaN examples (the float arithmetic against numpy, golden and
RTL, is in ``tests/test_compression_float.py``)."""

from gpurf.golden.compression.value_converter import widen
from gpurf.hw.compression.configs import ValueConverterConfig
from gpurf.hw.compression.formats import FP32, TABLE3, FloatFormat
from gpurf.hw.compression.value_converter import ValueConverter

F16 = TABLE3[16]


def test_ports_follow_the_format_choice():
    runtime = ValueConverter(lanes=2)
    assert len(runtime.slices) == 4 and len(runtime.operand.as_value()) == 64
    assert len(runtime.result.as_value()) == 64
    assert not hasattr(ValueConverter(lanes=2, width=16), "slices")
    assert not hasattr(ValueConverter(lanes=2, exponent=4, mantissa=4), "slices")


def test_format_for_slices():
    config = ValueConverterConfig(lanes=1, width=0, exponent=0, mantissa=0)
    assert [config.format_for(n) for n in range(10)] == [
        None, None, TABLE3[8], TABLE3[12], F16, TABLE3[20], TABLE3[24], TABLE3[28], FP32,
        None]
    custom = ValueConverterConfig(lanes=1, width=0, exponent=4, mantissa=4)
    assert [custom.format_for(n) for n in (2, 3, 4)] == [None, FloatFormat(4, 4), None]


def test_nan_payload_moves_up():
    """The spec's example: float16 0x7C01 widens to 0x7F802000 (payload shifted, not
    quieted)."""
    assert widen(0x7C01, F16) == 0x7F802000
