"""Extended collector unit of the static data compression register file (paper 3.2.4)."""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import ConfiguredComponent

from .configs import CollectorExtConfig
from .layouts import (
    SLICE_BITS,
    SLICES,
    indirection_entry_layout,
    slice_layout,
    warp_register_layout,
)
from .logic import onehot_decode

__all__ = ["CollectorExt", "CollectorExtConfig", "OperandMerge", "SplitSignExtend"]


def thermometer(m, masks, name):
    """Bit ``k`` set iff the masks hold more than ``k`` set bits in all (saturating at 8):
    which slices of the merged operand are data slices, computed with a chain of shifts
    (no adders)."""
    code = Const(0, SLICES)
    for i, bit in enumerate(bit for mask in masks for bit in mask):
        after = Signal(SLICES, name=f"{name}_{i}")
        m.d.comb += after.eq(Mux(bit, Cat(Const(1, 1), code[:-1]), code))
        code = after
    return code


class SplitSignExtend(wiring.Component):
    """The per-slice fill after the OR of a split operand's two parts (**spec
    interpretation**: the paper leaves the split signed case implicit).

    With ``enable``, every slice above the operand's width (``thermometer`` bit clear) of
    each lane becomes the lane's top data bit (bit 3 of the highest data slice) replicated;
    without it, or at full width, ``merged`` passes unchanged.

    Attributes
    ----------
    merged : In(ArrayLayout(32, lanes))
    width : In(8)
        Thermometer code of the operand width in slices.
    enable : In(1)
    value : Out(ArrayLayout(32, lanes))
    """

    def __init__(self, lanes):
        self._lanes = lanes
        layout = warp_register_layout(lanes=lanes)
        super().__init__({"merged": In(layout), "width": In(SLICES), "enable": In(1),
                          "value": Out(layout)})

    def elaborate(self, platform):
        m = Module()
        width = self.width
        top = Signal(SLICES)
        for k in range(SLICES):
            above = ~width[k + 1] if k + 1 < SLICES else Const(1, 1)
            m.d.comb += top[k].eq(width[k] & above)
        for lane in range(self._lanes):
            slices = slice_layout()
            merged = Signal(slices, name=f"merged_{lane}")
            value = Signal(slices, name=f"value_{lane}")
            sign = Signal(name=f"sign_{lane}")
            m.d.comb += [
                merged.eq(self.merged[lane]),
                sign.eq(self.enable & Cat(merged[k][SLICE_BITS - 1] & top[k]
                                          for k in range(SLICES)).any()),
                self.value[lane].eq(value),
            ]
            for k in range(SLICES):
                m.d.comb += value[k].eq(Mux(width[k] | ~self.enable, merged[k],
                                            sign.replicate(SLICE_BITS)))
        return m


class CollectorExt(ConfiguredComponent, config=CollectorExtConfig):
    """The collector-unit extension: per-operand fields and the OR merge of split operands.

    Per operand it keeps the paper's four fields — ``is_signed``, ``convert`` (convert
    info), ``located`` (location fetched) and ``info`` (the indirection entry: 35 bits) —
    and the operand field the parts are merged into. One part arrives per cycle at most
    (one operand collected per CU per cycle, paper 3.1), so one 1024-bit OR is shared by the
    operands.

    Timing (all updates on the clock edge, visible the next cycle):

    - ``allocate``: a new instruction: ``is_signed``/``convert`` from ``instr``;
      ``located`` and the parts received are cleared. ``locate``/``fetch`` in the same
      cycle are ignored (allocation wins).
    - ``locate_valid[i]``: the source table's result for operand ``i``: ``info[i]`` stored,
      ``located[i]`` set; ``info[i]`` reads zero until then.
    - ``fetch_valid``: an extracted part of operand ``fetch.operand`` (the value
      extractor's aligned, padded output). The first part is stored as it is; the second
      (a split operand, ``m1 != 0``) is ORed with the stored one and, for a signed
      operand, sign-extended from its top data bit (slice ``w - 1``,
      ``w = popcount(m0) + popcount(m1)``).
    - ``collected[i]``: ``located[i]`` and all its parts (1, or 2 when split) received;
      ``data[i]`` is the merged operand while ``collected[i]``, else zero.

    Input protocol (asserted by the golden model): an operand's parts are fetched after
    its location, at most as many parts as the entry has, and only for an allocated
    operand.

    Attributes
    ----------
    allocate : In(1)
    instr : In(ArrayLayout(collector_operand_layout, operands))
        Per operand: ``signed``, ``convert``.
    locate_valid : In(operands)
    locate : In(ArrayLayout(indirection_entry_layout, operands))
    fetch_valid : In(1)
    fetch : In(collector_fetch_layout)
        ``operand``, ``data``.
    is_signed, convert, located, collected : Out(operands)
    info : Out(ArrayLayout(indirection_entry_layout, operands))
    data : Out(ArrayLayout(ArrayLayout(32, lanes), operands))
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        config = self.config
        info = [Signal(indirection_entry_layout(), name=f"info_{i}")
                for i in range(config.operands)]
        target = onehot_decode(m, self.fetch.operand, config.operands, "target")
        stored = [Signal(config.register_layout, name=f"stored_{i}", reset_less=True)
                  for i in range(config.operands)]
        parts = [self._operand(m, i, target[i], info[i]) for i in range(config.operands)]
        merged = self._merge(m, stored, target, parts, info)
        for i in range(config.operands):
            _, second = parts[i]
            with m.If(self.fetch_valid & target[i] & ~self.allocate & ~second):
                m.d.sync += stored[i].eq(merged)
            m.d.comb += self.data[i].eq(Mux(self.collected[i], stored[i], 0))
        return m

    def _operand(self, m, i, targeted, info):
        """Operand ``i``'s fields (its stored entry is ``info``) and part counters; returns
        (first, second) received."""
        first = Signal(name=f"first_{i}")
        second = Signal(name=f"second_{i}")
        split = Signal(name=f"split_{i}")
        m.d.comb += [
            self.info[i].eq(Mux(self.located[i], info, 0)),
            split.eq(info.m1.any()),
            self.collected[i].eq(self.located[i] & Mux(split, second, first)),
        ]
        with m.If(self.allocate):
            m.d.sync += [
                self.is_signed[i].eq(self.instr[i].signed),
                self.convert[i].eq(self.instr[i].convert),
                self.located[i].eq(0), first.eq(0), second.eq(0),
            ]
        with m.Else():
            with m.If(self.locate_valid[i]):
                m.d.sync += [self.located[i].eq(1), info.eq(self.locate[i])]
            with m.If(self.fetch_valid & targeted):
                m.d.sync += [first.eq(1), second.eq(first)]
        return first, second

    def _merge(self, m, stored, target, parts, info):
        """The targeted operand's stored part, entry and sign into the shared
        :class:`OperandMerge`; returns the value written into the operand field."""
        config = self.config
        m.submodules.merge = merge = OperandMerge(config.lanes)
        m.d.comb += merge.part.eq(self.fetch.data)
        for i in range(config.operands):
            with m.If(target[i]):
                m.d.comb += [merge.stored.eq(stored[i]), merge.entry.eq(info[i]),
                             merge.merging.eq(parts[i][0]), merge.signed.eq(self.is_signed[i])]
        return merge.value


class OperandMerge(wiring.Component):
    """The CU extension's datapath, shared by the operands: the 1024-bit OR of the stored
    first part with the arriving second part (``merging``; otherwise the arriving part
    passes), then the split sign fill (:class:`SplitSignExtend`) of a signed operand.

    Attributes
    ----------
    stored, part : In(ArrayLayout(32, lanes))
    entry : In(indirection_entry_layout)
        The operand's indirection info (its width is ``popcount(m0) + popcount(m1)``).
    merging : In(1)
        ``part`` is the second part.
    signed : In(1)
    value : Out(ArrayLayout(32, lanes))
    """

    def __init__(self, lanes):
        self._lanes = lanes
        layout = warp_register_layout(lanes=lanes)
        super().__init__({"stored": In(layout), "part": In(layout),
                          "entry": In(indirection_entry_layout()), "merging": In(1),
                          "signed": In(1), "value": Out(layout)})

    def elaborate(self, platform):
        m = Module()
        layout = warp_register_layout(lanes=self._lanes)
        ored = Signal(layout)
        m.d.comb += ored.eq(Mux(self.merging, self.stored.as_value() | self.part.as_value(),
                                self.part))
        m.submodules.extend = extend = SplitSignExtend(self._lanes)
        m.d.comb += [
            extend.merged.eq(ored),
            extend.width.eq(thermometer(m, (self.entry.m0, self.entry.m1), "width")),
            extend.enable.eq(self.merging & self.signed),
            self.value.eq(extend.value),
        ]
        return m
