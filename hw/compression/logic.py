"""Gate-level helpers shared by several static data compression blocks (those shared by the
whole project are in :mod:`gpurf.hw.gates`).

The decoders here are AND gates over a value's bits, not :func:`gpurf.hw.gates.onehot` (a
shift, which synthesizes to a different netlist), and not a ``Switch`` of constants (which
yosys turns into a ROM counted as memory bits).
"""

from amaranth import Cat, Const, Mux, Signal

__all__ = ["decode", "format_select_by", "onehot_decode", "onehot_mux", "prefix_counts"]


def onehot_decode(m, value, count, name):
    """``value`` as a ``count``-bit one-hot signal (zero when ``value >= count``, for
    ``count <= 2**len(value)``), as AND gates over the bits of ``value``."""
    onehot = Signal(count, name=name)
    for index in range(count):
        terms = [value[j] if index >> j & 1 else ~value[j] for j in range(len(value))]
        m.d.comb += onehot[index].eq(Cat(terms).all() if terms else 1)
    return onehot


def decode(m, value, count, name):
    """One-hot ``value`` (bit ``k`` set when ``value == k``, for ``k < count``), from
    AND gates on the value's bits and their complements; unlike :func:`onehot_decode`,
    ``count`` may exceed ``2**len(value)`` (the bits beyond it are constant 0)."""
    onehot = Signal(count, name=name)
    for k in range(count):
        literals = [value[j] if (k >> j) & 1 else ~value[j] for j in range(len(value))]
        high = 0 if k >> len(value) else 1
        m.d.comb += onehot[k].eq(Cat(*literals).all() & high)
    return onehot


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
    """The value whose ``select`` bit is set (AND-OR; 0 when none is); integer values are
    constants. The OR chain starts from a zero constant, not from the first term as
    :func:`gpurf.hw.gates.or_all` does (the blocks' generated Verilog is kept as it was)."""
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
