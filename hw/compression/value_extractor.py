"""Value extractor of the static data compression register file (paper 3.2.3, Figs. 3-4)."""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.gates import or_all
from gpurf.hw.params import ConfiguredComponent

from .configs import ValueExtractorConfig
from .layouts import SLICE_BITS, SLICES, indirection_entry_layout, slice_layout

__all__ = ["SliceSelect", "ThreadValueExtractor", "ValueExtractor", "ValueExtractorConfig"]

CONSTANT = SLICES
"""Select code of the constant nibble: the ninth input of each 9:1 multiplexer."""

RANK = 2 * SLICES + 1
"""Width of a one-hot data-slice index (0..16): indexes of 8 or more are dropped."""


def select_signature() -> wiring.Signature:
    """Select lines shared by every TVE of a warp (the decoder's view).

    ``select[k]``: one-hot over the 9 inputs of output slice ``k``'s multiplexer (bit ``s``
    < 8: input slice ``s``; bit 8: the constant nibble); ``top``: one-hot, the input slice
    holding the operand's top data bit; ``sign_extend``: the constant is the top data bit
    replicated (else 0000).
    """
    return wiring.Signature({
        "select": Out(data.ArrayLayout(SLICES + 1, SLICES)),
        "top": Out(SLICES),
        "sign_extend": Out(1),
    })


class SliceSelect(wiring.Component):
    """The mask logic in front of the multiplexer select lines, shared by the 32 TVEs.

    The part's mask is ``m0`` (``part`` 0) or ``m1`` (``part`` 1). Input slice ``s`` with
    mask bit ``s`` set holds data slice ``offset + popcount(mask[:s])``, ``offset`` being 0
    or ``popcount(m0)`` (spec slice order); a chain of one-hot shifts over the bits of
    ``m0`` then ``m1`` computes these indexes without adders. The output slice of that
    index selects the input slice; output slices no input slice maps to select the
    constant. Data slices of index 8 or more (an illegal entry wider than 8 slices) are
    dropped. ``sign_extend`` is ``is_signed`` for an unsplit operand's only part (``part``
    0 and ``m1 = 0``); both parts of a split operand pad with zeros (the collector unit
    sign-extends after merging).

    Attributes
    ----------
    entry : In(indirection_entry_layout)
    part : In(1)
    is_signed : In(1)
    lines : Out(select_signature)
    """

    def __init__(self):
        super().__init__({
            "entry": In(indirection_entry_layout()),
            "part": In(1),
            "is_signed": In(1),
            "lines": Out(select_signature()),
        })

    def elaborate(self, platform):
        m = Module()
        entry, lines = self.entry, self.lines
        mask = Signal(SLICES)
        m.d.comb += [
            mask.eq(Mux(self.part, entry.m1, entry.m0)),
            lines.sign_extend.eq(self.is_signed & ~self.part & ~entry.m1.any()),
        ]
        rank = Signal(RANK, name="rank_start", init=1)
        ranks = {}
        for part, part_mask in enumerate((entry.m0, entry.m1)):
            for s in range(SLICES):
                ranks[part, s] = rank
                rank = _advance(m, rank, part_mask[s], f"rank_{part}_{s}")
        for s in range(SLICES):
            m.d.comb += lines.top[s].eq(mask[s] & ~mask[s + 1:].any())
            for k in range(SLICES):
                m.d.comb += lines.select[k][s].eq(
                    mask[s] & Mux(self.part, ranks[1, s][k], ranks[0, s][k]))
        for k in range(SLICES):
            m.d.comb += lines.select[k][CONSTANT].eq(~lines.select[k][:SLICES].any())
        return m


def _advance(m, rank, taken, name):
    """The one-hot data-slice index after a slice: shifted up by one if the slice is
    taken (its mask bit set)."""
    after = Signal(RANK, name=name)
    m.d.comb += after.eq(Mux(taken, Cat(Const(0, 1), rank[:-1]), rank))
    return after


class ThreadValueExtractor(wiring.Component):
    """One TVE (Fig. 4): eight 9:1 multiplexers over the 8 input slices and a constant
    nibble, and the 2:1 multiplexer choosing that constant, 0000 or 1111.

    Each 9:1 multiplexer is an AND-OR over its one-hot select lines, so the data path from
    ``word`` to ``value`` is one multiplexer. The constant is 1111 when
    ``sign_extend`` is set and the top data bit (bit 3 of the slice ``top`` names) is 1.

    Attributes
    ----------
    word : In(32)
        The physical thread register as read from the register file.
    lines : In(select_signature)
        The shared select lines.
    value : Out(32)
        The aligned, padded partial operand.
    """

    def __init__(self):
        super().__init__({
            "word": In(slice_layout()),
            "lines": In(select_signature()),
            "value": Out(slice_layout()),
        })

    def elaborate(self, platform):
        m = Module()
        word, lines = self.word, self.lines
        top_bit = Signal()
        constant = Signal(SLICE_BITS)
        m.d.comb += [
            top_bit.eq(Cat(word[s][SLICE_BITS - 1] & lines.top[s]
                           for s in range(SLICES)).any()),
            constant.eq((lines.sign_extend & top_bit).replicate(SLICE_BITS)),
        ]
        for k in range(SLICES):
            select = lines.select[k]
            inputs = [word[s] for s in range(SLICES)] + [constant]
            terms = [source & select[i].replicate(SLICE_BITS) for i, source in enumerate(inputs)]
            m.d.comb += self.value[k].eq(or_all(terms))
        return m


class ValueExtractor(ConfiguredComponent, config=ValueExtractorConfig):
    """Warp value extractor: ``lanes`` thread value extractors and their shared select logic.

    Combinational (latency 0). Takes one physical warp register read for one part of an
    operand and produces each lane's aligned partial operand: output slice ``k`` is the
    input slice holding data slice ``k`` of this part (data slices fill the set bits of
    ``m0``, then those of ``m1``, in increasing slice index; spec, Fig. 3), other slices a
    constant. Padding: zeros for unsigned integers and floats and for both parts of a
    split operand; an unsplit signed operand (``is_signed``, ``m1 = 0``) is sign-extended from
    its top data bit. ``part`` 1 of an unsplit entry gives zero. The collector unit ORs the
    two parts of a split operand and then sign-extends them
    (:class:`~gpurf.hw.compression.collector_ext.CollectorExt`; **spec interpretation**).

    Input protocol (asserted by the golden model): ``m0`` is not zero, the entry holds at
    most 8 data slices, and the masks do not overlap when ``r0 == r1``.

    Attributes
    ----------
    word : In(ArrayLayout(32, lanes))
        The physical warp register read (``r0`` for part 0, ``r1`` for part 1).
    entry : In(indirection_entry_layout)
        The operand's indirection entry ``{r0, m0, r1, m1}``.
    part : In(1)
        Which part ``word`` is: 0 (``r0``/``m0``) or 1 (``r1``/``m1``).
    is_signed : In(1)
        The operand is a signed integer.
    value : Out(ArrayLayout(32, lanes))
        Per lane, the aligned, padded partial operand.
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        m.submodules.select = select = SliceSelect()
        m.d.comb += [select.entry.eq(self.entry), select.part.eq(self.part),
                     select.is_signed.eq(self.is_signed)]
        for lane in range(self.config.lanes):
            tve = ThreadValueExtractor()
            m.submodules[f"tve{lane}"] = tve
            wiring.connect(m, select.lines, tve.lines)
            m.d.comb += [tve.word.eq(self.word[lane]), self.value[lane].eq(tve.value)]
        return m

