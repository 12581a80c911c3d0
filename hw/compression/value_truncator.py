"""Value truncator: fp32 -> narrow float, then slice placement (paper 3.2.6, Fig. 5)."""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data

from gpurf.hw.params import ConfiguredComponent

from .configs import ValueTruncatorConfig
from .formats import FP32
from .layouts import SLICE_BITS, SLICES, slice_layout
from .logic import decode, format_select_by, onehot_mux, prefix_counts

__all__ = ["ValueTruncator", "ValueTruncatorConfig"]

_SIG_BITS = FP32.mantissa + 1
"""fp32 significand with its hidden bit."""


class ValueTruncator(ConfiguredComponent, config=ValueTruncatorConfig):
    """A warp value truncator: ``lanes`` thread value truncators (paper 3.2.6, Fig. 5).

    Step 1 (``is_float``): each lane's fp32 value is narrowed to the operand's format:
    round to nearest, ties to even (one right shift of the significand with round and
    sticky bits, one increment that may carry into the exponent); overflow to infinity;
    below the normal range to a subnormal or zero; a NaN keeps its sign and the top bits of
    its payload, with the lowest bit set if those are all zero, and is not quieted (numpy's
    float16 rule, spec). An integer (``is_float`` low) skips this step.

    Step 2: the operand's ``n = popcount(m0) + popcount(m1)`` data slices (data slice ``k``
    = bits ``4k+3:4k``) go to the set bits of ``m0`` in increasing slice order, then to the
    set bits of ``m1`` (spec "Slice order"): the paper's two thread value extractors with
    other select lines, computed once per warp from the masks. ``write[p]`` carries
    register ``r_p``, its per-slice write mask ``m_p`` (0 = no write: ``m1 = 0`` is an
    unsplit operand) and the data, zero outside the mask. Combinational (latency 0).

    The float format: by default every Table 3 format, the one of ``4 x n`` bits; with
    ``width`` or a custom ``exponent``/``mantissa``, that one format (``n`` must be its
    slice count). Input protocol (the golden model raises otherwise): ``m0 != 0``,
    ``n <= 8``, the masks do not overlap when ``r0 == r1``, a float has a format. With a
    float of no format the RTL writes zeros.

    Attributes
    ----------
    entry : In(indirection_entry_layout())
        The destination register's indirection entry ``{r0, m0, r1, m1}``.
    is_float : In(1)
        The operand is a narrow float (the instruction's convert flag).
    operand : In(ArrayLayout(32, lanes))
        Per lane: the fp32 result or the integer.
    write : Out(ArrayLayout(register_write_layout(lanes), 2))
        The writes to ``r0`` and ``r1``: ``reg``, ``mask``, ``data``.
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        config, entry = self.config, self.entry
        count0 = prefix_counts(m, entry.m0, "count0")
        count1 = prefix_counts(m, entry.m1, "count1", start=count0[-1])
        slices = count1[-1]
        select = format_select_by(m, slices, config.formats, enable=self.is_float)
        offset = onehot_mux(m, select, [FP32.bias - f.bias for f in config.formats], 8,
                            "offset")
        shifts = (onehot_mux(m, select, [FP32.mantissa - f.mantissa for f in config.formats],
                             8, "shift_normal"),
                  onehot_mux(m, select, [FP32.mantissa - f.mantissa + 1 for f in config.formats],
                             8, "shift_subnormal"))
        routes = self._placement(m, count0, count1)
        for p, mask in enumerate((entry.m0, entry.m1)):
            m.d.comb += [self.write[p].reg.eq(entry[f"r{p}"]), self.write[p].mask.eq(mask)]
        for lane in range(config.lanes):
            narrowed = self._narrow(m, lane, select, offset, shifts)
            value = Signal(32, name=f"value_{lane}")
            m.d.comb += value.eq(Mux(self.is_float, narrowed, self.operand[lane]))
            self._scatter(m, lane, value, routes)
        return m

    def _placement(self, m, count0, count1):
        """The select lines of the slice muxes, shared by every lane: ``routes[p][s]`` is
        one-hot over the data slices, the one register slice ``s`` of ``r_p`` receives
        (``count_p[s]``: data slices placed before it), or zero outside the mask."""
        routes = ([], [])
        for p, (mask, counts) in enumerate(((self.entry.m0, count0), (self.entry.m1, count1))):
            for s in range(SLICES):
                index = decode(m, counts[s], SLICES, f"index{p}_{s}")
                route = Signal(SLICES, name=f"route{p}_{s}")
                m.d.comb += route.eq(index & mask[s].replicate(SLICES))
                routes[p].append(route)
        return routes

    def _scatter(self, m, lane, value, routes):
        """Lane ``lane``'s data slices to their register slices (AND-OR muxes on the shared
        select lines); zero outside the masks."""
        source = data.View(slice_layout(), value)
        for p in (0, 1):
            out = data.View(slice_layout(), self.write[p].data[lane])
            for s in range(SLICES):
                route = routes[p][s]
                acc = Const(0, SLICE_BITS)
                for k in range(SLICES):
                    acc = acc | (source[k] & route[k].replicate(SLICE_BITS))
                m.d.comb += out[s].eq(acc)

    def _narrow(self, m, lane, select, offset, shifts):
        """Lane ``lane``'s fp32 operand in the selected format (low bits; 0 if none)."""
        formats = self.config.formats
        shift_normal, shift_subnormal = shifts
        x = data.View(FP32.layout, self.operand[lane])
        hidden = Signal(name=f"hidden_{lane}")
        biased = Signal(8, name=f"biased_{lane}")
        target = Signal(8, name=f"target_{lane}")
        below_normal = Signal(8, name=f"below_normal_{lane}")
        normal = Signal(name=f"normal_{lane}")
        shift = Signal(9, name=f"shift_{lane}")
        m.d.comb += [
            hidden.eq(x.exponent.any()),
            biased.eq(Mux(hidden, x.exponent, Const(1, 8))),
            target.eq(biased - offset),
            below_normal.eq(offset - biased),
            normal.eq(biased > offset),
            shift.eq(Mux(normal, shift_normal, shift_subnormal + below_normal)),
        ]
        sig = Cat(Const(0, 1), x.mantissa, hidden)
        shifted = Signal(_SIG_BITS + 1, name=f"shifted_{lane}")
        dropped = Signal(2 * _SIG_BITS + 1, name=f"dropped_{lane}")
        sticky = Signal(name=f"sticky_{lane}")
        # sticky = the bits below the round bit; it only matters while the round bit is
        # still inside the significand (shift <= 24), so a 49-bit shift covers it
        m.d.comb += [
            shifted.eq(sig >> shift),
            dropped.eq(Cat(Const(0, _SIG_BITS), sig) >> shift),
            sticky.eq(dropped[:_SIG_BITS].any()),
        ]
        kept, round_bit = shifted[1:], shifted[0]
        field = Signal(8, name=f"field_{lane}")
        m.d.comb += field.eq(Mux(normal & hidden, target, Const(0, 8)))
        packed = onehot_mux(m, select, [Cat(kept[:f.mantissa], field) for f in formats],
                            FP32.mantissa + 8, f"packed_{lane}")
        increment = Signal(FP32.mantissa + 8, name=f"increment_{lane}")
        rounded = Signal(FP32.mantissa + 9, name=f"rounded_{lane}")
        m.d.comb += [increment.eq(round_bit & (sticky | kept[0])),
                     rounded.eq(packed + increment)]
        special = x.exponent.all()
        candidates = []
        for f in formats:
            overflow = rounded[f.mantissa + f.exponent:].any() | rounded[
                f.mantissa:f.mantissa + f.exponent].all()
            payload = x.mantissa[FP32.mantissa - f.mantissa:]
            nan = Cat(Mux(payload.any(), payload, Const(1, f.mantissa)),
                      Const(f.max_exponent, f.exponent))
            inf = Const(f.max_exponent << f.mantissa, f.width - 1)
            body = Mux(special & x.mantissa.any(), nan,
                       Mux(special | overflow, inf, rounded[:f.width - 1]))
            candidates.append(Cat(body, x.sign))
        return onehot_mux(m, select, candidates, 32, f"narrowed_{lane}")
