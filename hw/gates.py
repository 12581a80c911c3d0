"""Gate-level arithmetic and selection shared by the blocks whose generated Verilog must lint
clean."""

from amaranth.hdl import Cat, Const, Mux, Signal, Value

__all__ = ["bit", "equals", "lowest", "onehot", "or_all", "ripple_add", "select"]


def _carry_out(terms):
    """The carry of one full (three terms) or half (two terms) adder bit."""
    if len(terms) == 3:
        return (terms[0] & terms[1]) | (terms[2] & (terms[0] ^ terms[1]))
    if len(terms) == 2:
        return terms[0] & terms[1]
    return None


def ripple_add(m, a, b, width, name, *, subtract=False) -> Signal:
    """``a + b`` (or ``a - b``) modulo ``2**width`` in module ``m``, operands of any width
    up to ``width`` (missing bits are 0).

    Built from one-bit XOR/AND/OR (a ripple adder): Amaranth trims the zero-extension of
    narrower adder operands, which Verilator's WIDTHEXPAND lint flags, and widening them
    through a process instead races with register initialisation at time 0 in Icarus.
    Each carry is a named signal ``{name}_c{i}``; the result is the signal ``name``.
    """
    a, b = Value.cast(a), Value.cast(b)
    bits, carry = [], Const(1, 1) if subtract else None
    for i in range(width):
        x = a[i] if i < len(a) else None
        y = b[i] if i < len(b) else None
        if subtract:
            y = Const(1, 1) if y is None else ~y
        terms = [term for term in (x, y, carry) if term is not None]
        if not terms:
            bits.append(Const(0, 1))
            continue
        total = terms[0]
        for term in terms[1:]:
            total = total ^ term
        bits.append(total)
        carry = _carry_out(terms)
        if carry is not None:
            named = Signal(name=f"{name}_c{i}")
            m.d.comb += named.eq(carry)
            carry = named
    result = Signal(width, name=name)
    m.d.comb += result.eq(Cat(bits))
    return result


def equals(value, constant: int):
    """``value == constant`` as an AND of ``value``'s bits (Amaranth writes a comparison
    with a narrower constant, which Verilator's lint flags as WIDTHEXPAND)."""
    return Cat(value[j] if constant >> j & 1 else ~value[j] for j in range(len(value))).all()


def select(m, items, index, name):
    """``items[index]`` through a case statement (a dynamic slice would be a shift that
    Verilator's lint flags as WIDTHTRUNC); zero when ``index`` is out of range."""
    out = Signal(len(Value.cast(items[0])), name=name)
    with m.Switch(index):
        for k, item in enumerate(items):
            with m.Case(k):
                m.d.comb += out.eq(item)
        if len(items) < 1 << len(index):
            with m.Default():
                m.d.comb += out.eq(0)
    return out


def or_all(terms):
    """Bitwise OR of ``terms`` as a chain, first term first (the AND-OR tail of a one-hot
    multiplexer); ``terms`` is a non-empty iterable."""
    terms = list(terms)
    result = terms[0]
    for term in terms[1:]:
        result = result | term
    return result


def bit(m, vector, index, name):
    """Bit ``index`` (a signal) of ``vector``, shifted into a full-width signal ``name`` first
    so that the Verilog has no truncating shift (Verilator's WIDTHTRUNC)."""
    shifted = Signal(len(vector), name=name)
    m.d.comb += shifted.eq(vector >> index)
    return shifted[0]


def onehot(m, index, width, name, *, enable=None):
    """``1 << index`` cut to ``width`` bits as the signal ``name`` (a full-width shift: no
    comparisons against narrow constants in the Verilog); zero when ``enable`` is given and
    low."""
    shifted = Const(1, width) << index
    result = Signal(width, name=name)
    m.d.comb += result.eq(shifted if enable is None else Mux(enable, shifted, 0))
    return result


def lowest(bits):
    """The lowest set bit of ``bits`` alone, as ``bits & -bits`` (zero when none is set)."""
    return bits & (~bits + 1)
