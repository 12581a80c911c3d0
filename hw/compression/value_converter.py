"""Value converter: narrow float -> fp32 (paper 3.2.5, Table 3; spec "Value converter")."""

from amaranth import Cat, Const, Module, Signal
from amaranth.lib import data

from gpurf.hw.params import ConfiguredComponent

from .configs import FloatUnitConfig, ValueConverterConfig
from .formats import FP32
from .logic import format_select_by, onehot_mux

__all__ = ["FloatUnitConfig", "ValueConverter", "ValueConverterConfig", "format_select",
           "leading_one"]


class ValueConverter(ConfiguredComponent, config=ValueConverterConfig):
    """A warp value converter: ``lanes`` thread value converters, narrow float -> fp32.

    Each lane's narrow float sits in the low ``width`` bits of its 32-bit input (the value
    extractor's aligned output); bits above it are ignored. Widening is exact: normals get
    the exponent rebiased; subnormals are normalized (leading-one position and shift) unless
    the format has 8 exponent bits, where they stay fp32 subnormals; zeros keep their sign;
    infinities stay infinities; a NaN keeps its sign and its payload shifted up to the top
    of the fp32 mantissa, not quieted (numpy's float16 behaviour, spec). Combinational
    (latency 0): the paper's "one cycle" is the stage that holds the block.

    The format: by default (``width = 0``) every Table 3 format, chosen per operand by the
    ``slices`` input (data slices, 2..8: the format of ``4 x slices`` bits, as the
    collector unit derives it from ``popcount(m0) + popcount(m1)``). A ``slices`` value
    outside 2..8 breaks the input protocol (the golden model raises); the RTL then outputs
    0. With ``width`` set, or a custom ``exponent``/``mantissa``, the block converts that
    one format and has no ``slices`` port.

    Attributes
    ----------
    slices : In(range(2, 9))
        Data slices of the operand, selecting its Table 3 format (only with ``width = 0``
        and no custom format).
    operand : In(ArrayLayout(32, lanes))
        Per lane: the narrow float in the low bits.
    result : Out(ArrayLayout(32, lanes))
        Per lane: the fp32 value.
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        formats = self.config.formats
        select = format_select(m, self, formats)
        offset = onehot_mux(m, select, [FP32.bias - f.bias for f in formats], 8, "offset")
        keep_subnormal = onehot_mux(m, select, [f.exponent == FP32.exponent for f in formats],
                                    1, "keep_subnormal")
        subnormal_offset = onehot_mux(
            m, select, [max(0, FP32.bias - f.bias - (FP32.mantissa - 1)) for f in formats], 8,
            "subnormal_offset")
        for lane in range(self.config.lanes):
            self._widen(m, lane, select, offset, keep_subnormal, subnormal_offset)
        return m

    def _widen(self, m, lane, select, offset, keep_subnormal, subnormal_offset):
        """Lane ``lane``: the selected format's fields, then one shared fp32 datapath."""
        formats, narrow = self.config.formats, self.operand[lane]
        views = [data.View(f.layout, narrow[:f.width]) for f in formats]
        sign = onehot_mux(m, select, [v.sign for v in views], 1, f"sign_{lane}")
        exp = onehot_mux(m, select, [v.exponent for v in views], 8, f"exp_{lane}")
        special = onehot_mux(m, select, [v.exponent.all() for v in views], 1,
                             f"special_{lane}")
        man = onehot_mux(m, select, [Cat(Const(0, FP32.mantissa - f.mantissa), v.mantissa)
                                     for f, v in zip(formats, views, strict=True)],
                         FP32.mantissa, f"man_{lane}")
        lead = leading_one(m, man, f"lead_{lane}")
        out = data.View(FP32.layout, self.result[lane])
        m.d.comb += out.sign.eq(sign)
        with m.If(special):
            m.d.comb += [out.exponent.eq(FP32.max_exponent), out.mantissa.eq(man)]
        with m.Elif(~exp.any()):
            with m.If(keep_subnormal | ~man.any()):
                m.d.comb += [out.exponent.eq(0), out.mantissa.eq(man)]
            with m.Else():
                # the leading one becomes the hidden bit: man << (23 - lead), written as
                # a right shift (a widening left shift is a lint finding)
                m.d.comb += [out.exponent.eq(subnormal_offset + lead),
                             out.mantissa.eq((Cat(Const(0, FP32.mantissa), man)
                                              >> lead)[:FP32.mantissa])]
        with m.Else():
            m.d.comb += [out.exponent.eq(exp + offset), out.mantissa.eq(man)]


def format_select(m, component, formats):
    """One-hot format choice: constant 1 for a fixed format, else ``slices`` decoded."""
    if len(formats) == 1:
        return Const(1, 1)
    return format_select_by(m, component.slices, formats)


def leading_one(m, value, name):
    """The index of the highest set bit of ``value`` (0 when it is 0), 8 bits wide."""
    position = Signal(8, name=name)
    for bit in range(len(value)):
        with m.If(value[bit]):
            m.d.comb += position.eq(bit)
    return position
