"""Value converter: narrow float -> fp32 (paper 3.2.5, Table 3; spec "Value converter")."""

from dataclasses import dataclass

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int

from .formats import FP32, FloatFormat, resolve_formats, table3_format
from .layouts import warp_register_layout

__all__ = [
    "FloatUnitConfig",
    "ValueConverter",
    "ValueConverterConfig",
    "decode",
    "format_select",
    "format_select_by",
    "leading_one",
    "onehot_mux",
    "prefix_counts",
]


@dataclass(frozen=True)
class FloatUnitConfig:
    """Validated parameters of a value converter or truncator and what derives from them.

    Shared by the components and their golden models, so both reject the same parameters
    with the same message and agree on the formats (see :func:`resolve_formats`).
    """

    lanes: int
    width: int
    exponent: int
    mantissa: int

    def __post_init__(self):
        check_int("lanes", self.lanes, 1, 32)
        resolve_formats(width=self.width, exponent=self.exponent, mantissa=self.mantissa)

    @property
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
    """Parameters of :class:`ValueConverter` (see :class:`FloatUnitConfig`)."""


class ValueConverter(wiring.Component):
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

    Parameters
    ----------
    lanes : int
        Thread value converters, 1..32 (default 32, a warp).
    width : int
        0 (default: every Table 3 format, chosen at run time) or one Table 3 width
        (8, 12, 16, 20, 24, 28, 32); with a custom format, 0 or ``1 + exponent + mantissa``.
    exponent : int
        0 (Table 3) or the exponent bits of a custom format, 2..8.
    mantissa : int
        0 (Table 3) or the mantissa bits of a custom format, 1..23.

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

    def __init__(self, *, lanes=32, width=0, exponent=0, mantissa=0):
        self.config = config = ValueConverterConfig(
            lanes=lanes, width=width, exponent=exponent, mantissa=mantissa)
        ports = {} if config.fixed else {"slices": In(range(2, 9))}
        super().__init__({
            **ports,
            "operand": In(config.register_layout),
            "result": Out(config.register_layout),
        })

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


def format_select_by(m, slices, formats, *, enable=1):
    """One-hot format choice: bit ``i`` when ``enable`` and ``slices`` is ``formats[i]``'s
    slice count (all zero when no format has that count)."""
    select = Signal(len(formats), name="format_select")
    with m.Switch(slices):
        for index, f in enumerate(formats):
            with m.Case(f.slices):
                m.d.comb += select.eq(Mux(enable, 1 << index, 0))
        with m.Default():
            m.d.comb += select.eq(0)
    return select


def onehot_mux(m, select, values, width, name):
    """The value whose ``select`` bit is set (AND-OR; 0 when none is)."""
    out = Signal(width, name=name)
    terms = []
    for index, value in enumerate(values):
        if isinstance(value, int):
            terms.append(Const(value, width))
            continue
        term = Signal(width, name=f"{name}_in{index}")
        m.d.comb += term.eq(value)
        terms.append(term)
    acc = Const(0, width)
    for index, term in enumerate(terms):
        acc = acc | (term & select[index].replicate(width))
    m.d.comb += out.eq(acc)
    return out


def leading_one(m, value, name):
    """The index of the highest set bit of ``value`` (0 when it is 0), 8 bits wide."""
    position = Signal(8, name=name)
    for bit in range(len(value)):
        with m.If(value[bit]):
            m.d.comb += position.eq(bit)
    return position


def prefix_counts(m, bits, name, *, start=None):
    """``counts[s]`` = ``start`` (default 0) plus the set bits among ``bits[:s]``, for ``s``
    in ``0..len(bits)``: a chain of incrementers. Without ``start`` each count is exactly as
    wide as its largest value, with ``start`` as wide as ``start``: Amaranth narrows
    zero-extended operands, and an adder whose operands are much narrower than its result
    is a lint finding."""
    counts = [Const(0, 1) if start is None else start]
    for index in range(len(bits)):
        width = (index + 1).bit_length() if start is None else len(start)
        count = Signal(width, name=f"{name}_{index + 1}")
        if start is None and index == 0:
            m.d.comb += count.eq(bits[0])
        else:
            m.d.comb += count.eq(counts[-1] + bits[index])
        counts.append(count)
    return counts


def decode(m, value, count, name):
    """One-hot ``value`` (bit ``k`` set when ``value == k``, for ``k < count``), from
    AND gates on the value's bits and their complements."""
    onehot = Signal(count, name=name)
    for k in range(count):
        literals = [value[j] if (k >> j) & 1 else ~value[j] for j in range(len(value))]
        high = 0 if k >> len(value) else 1
        m.d.comb += onehot[k].eq(Cat(*literals).all() & high)
    return onehot
