"""What each PTX instruction does to a warp: one numpy closure per instruction.

:func:`compile_instruction` turns an :class:`~gpurf.sim.ptx.ir.Instruction` into
``fn(warp, mask)`` that reads its source registers as 32-lane arrays, computes all lanes at
once (a group of k warps, :class:`gpurf.sim.sm.batch.WarpGroup`, passes ``(k, 32)`` arrays), and
writes the destination only in lanes where ``mask`` is set. Memory instructions return
``(space, addresses)`` of the active lanes, others ``None``. Control instructions
(``bra``, ``ret``, ``exit``, ``bar``) are handled by the warp itself.

Registers hold raw bits (``uint16``/``uint32``/``uint64``, ``bool`` for predicates); an
instruction's type says how to read them. Integer arithmetic wraps; ``div``/``rem``
truncate towards zero (division by zero gives 0, a documented choice: PTX leaves it
undefined); shifts saturate (``shl.b32`` by 32 or more gives 0, ``shr.s32`` the sign);
float-to-integer ``cvt`` saturates and maps NaN to 0; ``fma.rn.f32`` and ``mad.f32`` are
fused (:func:`gpurf.sim.kernels.fp.fma_f32`, shared with the numpy references), and so
are ``fma.rn.f64``/``mad.rn.f64`` (:func:`fma_exact_f64`);
``div.approx``/``div.full`` are computed correctly rounded.

Instruction/type combinations the model does not implement raise
:class:`~gpurf.sim.ptx.parser.PtxError` naming the file and line, when the kernel is compiled.
"""

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from gpurf.sim.kernels.fp import fma_f32, ftz
from gpurf.sim.ptx.ir import (
    CARRY,
    Addr,
    Imm,
    Instruction,
    Not,
    Pair,
    Reg,
    Special,
    Sym,
    Vec,
    type_width,
)
from gpurf.sim.ptx.parser import PtxError

from .memory import (
    GLOBAL_BASE,
    LOCAL_WINDOW,
    SHARED_WINDOW,
    WINDOW_BYTES,
    FaultError,
    MemoryFaultError,
)

__all__ = ["NUMPY_TYPES", "STORAGE", "Context", "compile_instruction"]

NUMPY_TYPES = {
    "pred": np.bool_, "b8": np.uint8, "u8": np.uint8, "s8": np.int8,
    "b16": np.uint16, "u16": np.uint16, "s16": np.int16, "f16": np.float16,
    "b32": np.uint32, "u32": np.uint32, "s32": np.int32, "f32": np.float32,
    "b64": np.uint64, "u64": np.uint64, "s64": np.int64, "f64": np.float64,
}
STORAGE = {1: np.bool_, 8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
"""The numpy dtype a register of each width is stored in."""

_UINT = {8: np.uint8, 16: np.uint16, 32: np.uint32, 64: np.uint64}
_SINT = {8: np.int8, 16: np.int16, 32: np.int32, 64: np.int64}
_WIDE = {"u16": "u32", "s16": "s32", "u32": "u64", "s32": "s64"}


@dataclass(frozen=True)
class Context:
    """What compiling needs besides the instruction: register slots and widths, symbol
    addresses (shared variables, the dynamic shared array; local variables' offsets in the
    thread's frame; module variables' static addresses), parameter offsets, and the bytes of
    one thread's local frame."""

    file: str
    index: dict[str, int]
    width: dict[str, int]
    shared: dict[str, int]
    params: dict[str, tuple[int, str]]
    local: dict[str, int] = None
    statics: dict[str, int] = None
    frame: int = 0

    def symbol(self, name: str) -> tuple[str, int] | None:
        """``(space, address)`` of a shared, local or module variable, else ``None``."""
        for space, table in (("shared", self.shared), ("local", self.local or {}),
                             ("global", self.statics or {})):
            if name in table:
                return space, table[name]
        return None


class _UnsupportedError(Exception):
    pass


def _float(t):
    return t[0] == "f"


def _signed(t):
    return t[0] == "s"


def _imm(op: Imm, t: str):
    dt = NUMPY_TYPES[t]
    if t == "pred":
        return np.bool_(op.value != 0)
    width = type_width(t)
    if op.float_bits:
        if not _float(t) or op.float_bits != width:
            raise _UnsupportedError(f"float literal {op} used as .{t}")
        return np.array(op.value, _UINT[width]).view(dt)[()]
    if _float(t):
        return dt(op.value)
    return np.array(op.value & ((1 << width) - 1), _UINT[width]).view(dt)[()]


def _reader(op, t: str, ctx: Context, relaxed: bool = False):
    """``fn(warp)`` giving operand ``op`` as type ``t`` (an array, or a scalar for
    immediates). A register must have the type's width, as ptxas demands, except where
    ``relaxed`` (``ld``/``st``/``cvt`` may use a wider register, chopped)."""
    dt = NUMPY_TYPES[t]
    if isinstance(op, Not):
        if t != "pred":
            raise _UnsupportedError(f"negated operand {op} used as .{t}")
        inner = _reader(op.reg, t, ctx)
        return lambda w: ~inner(w)
    if isinstance(op, Reg):
        i, rw = ctx.index[op.name], ctx.width[op.name]
        if (t == "pred") != (rw == 1):
            raise _UnsupportedError(f"register {op.name} of {rw} bits used as .{t}")
        if t == "pred" or rw == type_width(t):
            return (lambda w: w.regs[i]) if t == "pred" else (lambda w: w.regs[i].view(dt))
        if not relaxed:
            raise _UnsupportedError(f"register {op.name} of {rw} bits used as a .{t} source "
                                    "(ptxas rejects it: only ld, st and cvt take a register of "
                                    "another width)")
        unsigned = _UINT[type_width(t)]
        return lambda w: w.regs[i].astype(unsigned).view(dt)
    if isinstance(op, Imm):
        value = _imm(op, t)
        return lambda w: value
    if isinstance(op, Special):
        if _float(t) or t == "pred":
            raise _UnsupportedError(f"special register {op.name} used as .{t}")
        name = op.name
        return lambda w: w.special[name].astype(dt)
    if isinstance(op, Sym) and ctx.symbol(op.name) is not None:
        value = _imm(Imm(ctx.symbol(op.name)[1]), t)
        return lambda w: value
    raise _UnsupportedError(f"operand '{op}' cannot be read as .{t}")


def _writer(op, t: str, ctx: Context, relaxed: bool = False):
    """``fn(warp, value, mask)`` storing a value of type ``t`` into register ``op`` (of the
    type's width; wider only where ``relaxed``: ``ld`` and ``cvt``)."""
    if not isinstance(op, Reg):
        raise _UnsupportedError(f"destination '{op}' is not a register")
    i, rw = ctx.index[op.name], ctx.width[op.name]
    if (t == "pred") != (rw == 1):
        raise _UnsupportedError(f"register {op.name} of {rw} bits written as .{t}")
    if t != "pred" and rw != type_width(t) and not relaxed:
        raise _UnsupportedError(f"register {op.name} of {rw} bits written as .{t} (ptxas "
                                "rejects it: only ld and cvt write a register of another "
                                "width)")
    dt, store = NUMPY_TYPES[t], STORAGE[rw]
    if t == "pred":
        def write(w, value, mask):
            np.copyto(w.regs[i], value, where=mask)
    elif rw == type_width(t):
        def write(w, value, mask):
            np.copyto(w.regs[i], np.asarray(value, dt).view(store), where=mask)
    elif rw > type_width(t):
        wide = (_SINT if _signed(t) else _UINT)[rw]
        narrow = _UINT[type_width(t)]

        def write(w, value, mask):
            bits = np.asarray(value, dt)
            bits = bits.astype(wide) if _signed(t) else bits.view(narrow).astype(wide)
            np.copyto(w.regs[i], bits.view(store), where=mask)
    else:
        raise _UnsupportedError(f"register {op.name} of {rw} bits is narrower than .{t}")
    return write


def _float_op(func, mods, t):
    """``func`` with the ``.ftz`` and ``.sat`` modifiers applied."""
    if "ftz" in mods and t == "f32":
        inner = func

        def func(*args):
            return ftz(inner(*(ftz(np.asarray(a)) for a in args)))
    if "sat" in mods:
        unsat = func

        def func(*args):
            r = unsat(*args)
            return np.where(np.isnan(r), 0, np.clip(r, 0, 1)).astype(r.dtype)
    return func


def _trunc_div(a, b):
    safe = np.where(b == 0, 1, b).astype(a.dtype)
    if np.issubdtype(a.dtype, np.unsignedinteger):
        q = a // safe
    else:
        q = np.abs(a.astype(np.int64) if a.dtype.itemsize < 8 else a) // np.abs(safe)
        q = np.where((a < 0) != (safe < 0), -q, q)
    return np.where(b == 0, 0, q).astype(a.dtype)


def _mul_hi(a, b, t):
    width = type_width(t)
    if width < 64:
        wide = NUMPY_TYPES[_WIDE[t]]
        return ((a.astype(wide) * b.astype(wide)) >> width).astype(NUMPY_TYPES[t])
    pairs = np.broadcast(a, b)
    product = [(int(x) * int(y)) >> 64 for x, y in pairs]
    return np.array([p & ((1 << 64) - 1) for p in product], np.uint64).reshape(
        pairs.shape).view(NUMPY_TYPES[t])


def _arith(ins: Instruction, ctx: Context):
    base, mods, t = ins.base, ins.mods, ins.mods[-1]
    ops = ins.operands
    dt = NUMPY_TYPES[t]
    mode = next((m for m in mods if m in ("lo", "hi", "wide")), None)
    if _float(t):
        if mode is not None:
            raise _UnsupportedError(f".{mode} on a float type")
        directed = next((m for m in mods if m in ("rz", "rm", "rp")), None)
        if directed is not None:
            func = _directed_op(base, directed, t)
        elif base in ("mad", "fma"):
            func = fma_f32 if t == "f32" else fma_exact_f64
        else:
            func = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "div": np.divide, "min": np.fmin, "max": np.fmax}[base]
        func = _float_op(func, mods, t)
        reads = [_reader(op, t, ctx) for op in ops[1:]]
        write = _writer(ops[0], t, ctx)
    else:
        if {"rn", "rz", "rm", "rp", "ftz"} & set(mods) or ("sat" in mods and t != "s32"):
            raise _UnsupportedError("a float modifier on an integer type")
        if base in ("mul", "mad") and mode is None:
            raise _UnsupportedError(f"integer {base} without .lo, .hi or .wide")
        if mode == "wide" and t not in _WIDE:
            raise _UnsupportedError(f".wide on .{t}")
        func = _int_func(base, mode, t, "sat" in mods)
        src_types = [t, t] + ([_WIDE[t] if mode == "wide" else t] if base == "mad" else [])
        reads = [_reader(op, st, ctx) for op, st in zip(ops[1:], src_types, strict=True)]
        write = _writer(ops[0], _WIDE[t] if mode == "wide" else t, ctx)
        dt = NUMPY_TYPES[_WIDE[t]] if mode == "wide" else dt
    if len(reads) == 2:
        ra, rb = reads

        def run(w, mask):
            write(w, func(ra(w), rb(w)).astype(dt, copy=False), mask)
    else:
        ra, rb, rc = reads

        def run(w, mask):
            write(w, np.asarray(func(ra(w), rb(w), rc(w))).astype(dt, copy=False), mask)
    return run


_SPLIT = np.float64(134217729.0)
"""2^27 + 1: Veltkamp's constant, splitting a float64 into two 26-bit halves."""
_SAFE_HIGH, _SAFE_LOW = 2.0 ** 995, 2.0 ** -960


def _two_sum(a, b):
    """``(s, e)`` with ``s = fl(a + b)`` and ``a + b = s + e`` exactly (Knuth)."""
    s = a + b
    v = s - a
    return s, (a - (s - v)) + (b - v)


def _two_product(a, b):
    """``(p, e)`` with ``p = fl(a * b)`` and ``a * b = p + e`` exactly (Dekker; needs no
    overflow in the split and no underflow of ``e``)."""
    p = a * b
    ah = _SPLIT * a
    ah = ah - (ah - a)
    bh = _SPLIT * b
    bh = bh - (bh - b)
    al, bl = a - ah, b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _add_to_odd(a, b):
    """``a + b`` rounded to odd: the nearest float64, moved one ulp towards the exact sum
    where that is inexact and its last bit is even."""
    s, e = _two_sum(a, b)
    bits = np.atleast_1d(s).view(np.uint64)
    even_inexact = (np.atleast_1d(e) != 0) & ((bits & np.uint64(1)) == 0)
    away = (np.atleast_1d(e) > 0) == (np.atleast_1d(s) > 0)
    step = np.where(away, np.uint64(1), np.uint64(0xFFFF_FFFF_FFFF_FFFF))
    return np.where(even_inexact, bits + step, bits).view(np.float64).reshape(np.shape(s))


def fma_exact_f64(a, b, c) -> np.ndarray:
    """``a * b + c`` rounded once to float64 (``fma.rn.f64``): Boldo and Melquiond's
    emulation (IEEE TC 2008, the rounding-to-odd FMA): ``a * b = uh + ul`` exactly,
    ``c + uh = th + tl`` exactly, then ``RN(th + RO(tl + ul))``. Operands near overflow or
    underflow, where the exact splits fail, are computed with exact rationals."""
    a, b, c = np.broadcast_arrays(*(np.asarray(x, np.float64) for x in (a, b, c)))
    uh, ul = _two_product(a, b)
    th, tl = _two_sum(c, uh)
    result = np.asarray(th + _add_to_odd(tl, ul), np.float64)
    finite = np.isfinite(a) & np.isfinite(b) & np.isfinite(c)
    risky = finite & ((np.abs(a) > _SAFE_HIGH) | (np.abs(b) > _SAFE_HIGH)
                      | (np.abs(c) > _SAFE_HIGH) | ((uh != 0) & (np.abs(uh) < _SAFE_LOW))
                      | ~np.isfinite(result))
    if risky.any():
        result = result.copy()
        for index in zip(*np.nonzero(risky), strict=True):
            exact = Fraction(float(a[index])) * Fraction(float(b[index])) \
                + Fraction(float(c[index]))
            result[index] = _rational_to_f64(exact)
    special = ~finite
    if special.any():
        result = np.where(special, a * b + c, result)
    return result


def _rational_to_f64(exact: Fraction) -> float:
    try:
        return float(exact)
    except OverflowError:
        return float("inf") if exact > 0 else float("-inf")


_F32_MAX = np.finfo(np.float32).max


def fma_directed_f32(a, b, c, mode: str) -> np.ndarray:
    """``a * b + c`` rounded once to float32 towards zero (``rz``), minus (``rm``) or plus
    (``rp``) infinity: the nearest float32 (:func:`fma_f32`) moved one step where it lies on
    the wrong side of the exact value. The exact value is ``s + err`` (float64 sum and its
    TwoSum error; the product of two float32 is exact in float64), and ``s - nearest`` is
    exact (Sterbenz), so the side is the sign of ``s - nearest``, or of ``err`` where that
    is 0. An exactly zero sum of terms not both +0 is -0 under ``rm`` (IEEE 754)."""
    a, b, c = (np.asarray(x, np.float32) for x in (a, b, c))
    nearest = np.asarray(fma_f32(a, b, c), np.float32)
    p = a.astype(np.float64) * b
    c64 = c.astype(np.float64)
    s = p + c64
    v = s - p
    err = (p - (s - v)) + (c64 - v)
    diff = s - nearest.astype(np.float64)
    above = np.where(diff != 0, diff < 0, err < 0)
    below = np.where(diff != 0, diff > 0, err > 0)
    down = {"rm": above, "rp": np.zeros_like(above), "rz": above & (nearest > 0)}[mode]
    up = {"rm": np.zeros_like(below), "rp": below, "rz": below & (nearest < 0)}[mode]
    result = np.where(down, np.nextafter(nearest, np.float32(-np.inf)), nearest)
    result = np.where(up, np.nextafter(nearest, np.float32(np.inf)), result)
    if mode == "rm":
        cancelled = (s == 0) & (err == 0) & (np.signbit(p) | np.signbit(c64))
        result = np.where(cancelled, np.float32(-0.0), result)
    return result.astype(np.float32)


def _directed_op(base: str, mode: str, t: str):
    """``add``/``sub``/``mul``/``fma``/``mad`` of float32 with a directed rounding."""
    if t != "f32" or base not in ("add", "sub", "mul", "fma", "mad"):
        raise _UnsupportedError(f"directed rounding .{mode} of {base}.{t}")
    one, zero = np.float32(1), np.float32(0)
    return {"add": lambda a, b: fma_directed_f32(a, one, b, mode),
            "sub": lambda a, b: fma_directed_f32(a, one, -np.asarray(b, np.float32), mode),
            "mul": lambda a, b: fma_directed_f32(a, b, zero, mode),
            "fma": lambda a, b, c: fma_directed_f32(a, b, c, mode),
            "mad": lambda a, b, c: fma_directed_f32(a, b, c, mode)}[base]


def _int_func(base, mode, t, sat):
    dt = NUMPY_TYPES[t]
    wide = NUMPY_TYPES[_WIDE[t]] if t in _WIDE else None
    if base == "add" and sat:
        return lambda a, b: np.clip(a.astype(np.int64) + b, -2**31, 2**31 - 1)
    if base == "sub" and sat:
        return lambda a, b: np.clip(a.astype(np.int64) - b, -2**31, 2**31 - 1)
    simple = {"add": np.add, "sub": np.subtract, "min": np.minimum, "max": np.maximum,
              "div": _trunc_div, "rem": lambda a, b: a - _trunc_div(a, b) * b}
    if base in simple:
        func = simple[base]
        return lambda a, b: func(np.asarray(a, dt), np.asarray(b, dt))
    def mul(a, b):
        a, b = np.asarray(a, dt), np.asarray(b, dt)
        if mode == "lo":
            return a * b
        if mode == "hi":
            return _mul_hi(a, b, t)
        return a.astype(wide) * b.astype(wide)

    if base == "mul":
        return mul
    return lambda a, b, c: mul(a, b) + c


def _unary(ins: Instruction, ctx: Context):
    t = ins.mods[-1]
    func = {"abs": np.abs, "neg": np.negative,
            "not": np.logical_not if t == "pred" else np.invert}[ins.base]
    if _float(t):
        func = _float_op(func, ins.mods, t)
    dt = NUMPY_TYPES[t]
    read, write = _reader(ins.operands[1], t, ctx), _writer(ins.operands[0], t, ctx)
    return lambda w, mask: write(w, np.asarray(func(read(w)), dt), mask)


def _logic(ins: Instruction, ctx: Context):
    t = ins.mods[-1]
    if t == "pred":
        func = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}[ins.base]
    else:
        func = {"and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}[ins.base]
    dt = NUMPY_TYPES[t]
    ra, rb = (_reader(op, t, ctx) for op in ins.operands[1:])
    write = _writer(ins.operands[0], t, ctx)
    return lambda w, mask: write(w, np.asarray(func(ra(w), rb(w)), dt), mask)


def _shift(ins: Instruction, ctx: Context):
    t = ins.mods[-1]
    dt, width = NUMPY_TYPES[t], type_width(t)
    ra, rb = _reader(ins.operands[1], t, ctx), _reader(ins.operands[2], "u32", ctx)
    write = _writer(ins.operands[0], t, ctx)
    left = ins.base == "shl"
    arithmetic = not left and _signed(t)

    def run(w, mask):
        a, b = np.asarray(ra(w), dt), np.asarray(rb(w))
        amount = np.minimum(b, width - 1).astype(dt)
        value = (a << amount) if left else (a >> amount)
        if not arithmetic:
            value = np.where(b >= width, dt(0), value)
        write(w, np.asarray(value, dt), mask)
    return run


_CMP = {"eq": np.equal, "ne": np.not_equal, "lt": np.less, "le": np.less_equal,
        "gt": np.greater, "ge": np.greater_equal, "lo": np.less, "ls": np.less_equal,
        "hi": np.greater, "hs": np.greater_equal}


def _comparison(cmp: str, t: str):
    """``fn(a, b)`` of a ``setp`` comparison on type ``t`` (``...u`` comparisons of floats
    are true where either is NaN)."""
    if not _float(t):
        if cmp not in _CMP:
            raise _UnsupportedError(f"comparison .{cmp} on an integer type")
        return _CMP[cmp]
    if cmp in ("num", "nan"):
        def func(a, b):
            either = np.isnan(a) | np.isnan(b)
            return ~either if cmp == "num" else either
        return func
    ordered = _CMP[cmp.rstrip("u")] if cmp.endswith("u") else _CMP[cmp]
    unordered = cmp.endswith("u")

    def func(a, b):
        either = np.isnan(a) | np.isnan(b)
        result = ordered(a, b)
        return (result | either) if unordered else (result & ~either)
    return func


_COMBINE = {"and": np.logical_and, "or": np.logical_or, "xor": np.logical_xor}


def _setp(ins: Instruction, ctx: Context):
    """``setp.cmp[.op].t p[|q], a, b[, c]``: ``p = cmp(a, b) op c``, ``q = !cmp(a, b) op c``."""
    cmp, t = ins.mods[0], ins.mods[-1]
    combine = next((_COMBINE[m] for m in ins.mods[1:-1] if m in _COMBINE), None)
    if (combine is None) != (len(ins.operands) == 3):
        raise _UnsupportedError("a fourth (predicate) operand goes with .and, .or or .xor")
    ra, rb = (_reader(op, t, ctx) for op in ins.operands[1:3])
    rc = _reader(ins.operands[3], "pred", ctx) if combine is not None else None
    dst = ins.operands[0]
    write = _writer(dst.first if isinstance(dst, Pair) else dst, "pred", ctx)
    complement = _writer(dst.second, "pred", ctx) if isinstance(dst, Pair) else None
    func = _comparison(cmp, t)

    def run(w, mask):
        result = func(ra(w), rb(w))
        other = ~result
        if combine is not None:
            c = rc(w)
            result, other = combine(result, c), combine(other, c)
        write(w, result, mask)
        if complement is not None:
            complement(w, other, mask)
    return run


def _selp(ins: Instruction, ctx: Context):
    t = ins.mods[-1]
    dt = NUMPY_TYPES[t]
    ra, rb = (_reader(op, t, ctx) for op in ins.operands[1:3])
    rp = _reader(ins.operands[3], "pred", ctx)
    write = _writer(ins.operands[0], t, ctx)
    return lambda w, mask: write(w, np.where(rp(w), ra(w), rb(w)).astype(dt), mask)


def _mov(ins: Instruction, ctx: Context):
    t = ins.mods[-1]
    dst, src = ins.operands
    if isinstance(dst, Vec) or isinstance(src, Vec):
        return _pack(ins, ctx)
    if isinstance(src, Sym) and ctx.symbol(src.name) is None:
        raise _UnsupportedError(f"mov of the address of '{src.name}'")
    read, write = _reader(src, t, ctx), _writer(dst, t, ctx)
    return lambda w, mask: write(w, read(w), mask)


def _pack(ins: Instruction, ctx: Context):
    """``mov.b64 %rd, {%r1, %r2}`` (pack, first element lowest) and its inverse (unpack)."""
    t = ins.mods[-1]
    dst, src = ins.operands
    width = type_width(t)
    vector = dst if isinstance(dst, Vec) else src
    part = width // len(vector.items)
    if isinstance(dst, Vec) == isinstance(src, Vec) or part not in _UINT:
        raise _UnsupportedError("a vector mov packs 2 or 4 registers into one or unpacks it")
    wide, narrow = _UINT[width], f"b{part}"
    shifts = [wide(part * k) for k in range(len(vector.items))]
    if isinstance(src, Vec):
        reads = [_reader(item, narrow, ctx) for item in src.items]
        write = _writer(dst, t, ctx)

        def run(w, mask):
            value = wide(0)
            for read, shift in zip(reads, shifts, strict=True):
                value = value | (np.asarray(read(w)).astype(wide) << shift)
            write(w, np.asarray(value, wide).view(NUMPY_TYPES[t]), mask)
        return run
    read = _reader(src, t, ctx)
    writes = [_writer(item, narrow, ctx) for item in dst.items]
    low = _UINT[part]

    def run(w, mask):
        value = np.asarray(read(w)).view(wide)
        for write, shift in zip(writes, shifts, strict=True):
            write(w, (value >> shift).astype(low), mask)
    return run


_RANGE = {t: (np.iinfo(NUMPY_TYPES[t]).min, np.iinfo(NUMPY_TYPES[t]).max)
          for t in ("u8", "s8", "u16", "s16", "u32", "s32", "u64", "s64")}


def _cvt(ins: Instruction, ctx: Context):
    dst_t, src_t = ins.mods[-2:]
    rounding = next((m for m in ins.mods[:-2] if m not in ("ftz", "sat")), None)
    dd = NUMPY_TYPES[dst_t]
    for t in (dst_t, src_t):
        if t.startswith("b"):
            raise _UnsupportedError(f"cvt with bit type .{t}")
    if _float(src_t) and not _float(dst_t):
        if rounding not in ("rni", "rzi", "rmi", "rpi"):
            raise _UnsupportedError("float-to-integer cvt needs .rni, .rzi, .rmi or .rpi")
        lo, hi = _RANGE[dst_t]
        rnd = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}[rounding]

        def convert(x):
            x = np.asarray(x, np.float64)
            return np.where(np.isnan(x), 0, np.clip(rnd(x), lo, hi)).astype(dd)
    elif _float(dst_t):
        if rounding not in (None, "rn", "rni", "rzi", "rmi", "rpi") or (
                rounding is None and type_width(dst_t) < type_width(src_t)):
            raise _UnsupportedError(f"cvt from .{src_t} to .{dst_t} needs .rn, not "
                               f"{'no rounding' if rounding is None else '.' + rounding}")
        rnd = {"rni": np.rint, "rzi": np.trunc, "rmi": np.floor, "rpi": np.ceil}.get(rounding)

        def convert(x):
            y = np.asarray(x).astype(dd)
            return rnd(y) if rnd is not None else y
        if "ftz" in ins.mods and "f32" in (dst_t, src_t):
            inner = convert

            def convert(x):
                return ftz(inner(ftz(np.asarray(x)) if src_t == "f32" else x))
        if "sat" in ins.mods:
            unsaturated = convert

            def convert(x):
                y = unsaturated(x)
                return np.where(np.isnan(y), 0, np.clip(y, 0, 1)).astype(dd)
    else:
        if rounding is not None:
            raise _UnsupportedError("integer-to-integer cvt with a rounding modifier")
        if "sat" in ins.mods:
            lo, hi = _RANGE[dst_t]

            def convert(x):
                return np.clip(np.asarray(x).astype(object), lo, hi).astype(dd)
        else:
            def convert(x):
                return np.asarray(x).astype(dd)
    read = _reader(ins.operands[1], src_t, ctx, relaxed=True)
    write = _writer(ins.operands[0], dst_t, ctx, relaxed=True)
    return lambda w, mask: write(w, convert(read(w)), mask)


_WINDOWS = {"shared": SHARED_WINDOW, "local": LOCAL_WINDOW, "global": 0, "const": 0}


def _cvta(ins: Instruction, ctx: Context):
    """``cvta.space`` (a space's address to a generic one) and ``cvta.to.space`` (back):
    shared and local addresses move into or out of their generic windows
    (:mod:`gpurf.sim.sm.memory`); global and const addresses are generic already."""
    t = ins.mods[-1]
    space = ins.mods[-2]
    dt = NUMPY_TYPES[t]
    window = np.array(_WINDOWS[space], dt)
    to_space = ins.mods[0] == "to"
    read, write = _reader(ins.operands[1], t, ctx), _writer(ins.operands[0], t, ctx)

    def run(w, mask):
        value = np.asarray(read(w), dt)
        write(w, value - window if to_space else value + window, mask)
    return run


def _address(op: Addr, space: str, ctx: Context):
    """``fn(warp)`` giving the 32 lanes' byte addresses (``uint64``) of a memory operand: in
    ``space``'s own addresses (a variable's offset, or a register's value)."""
    if isinstance(op.base, Sym):
        found = ctx.symbol(op.base.name)
        if found is None:
            raise _UnsupportedError(f"'{op.base.name}' is not a variable")
        home, address = found
        if space != home and not (space in ("const", "generic") and home == "global"):
            raise _UnsupportedError(f"'{op.base.name}' is a .{home} variable, accessed as "
                                    f".{space}")
        value = np.full(32, (address + op.offset) & ((1 << 64) - 1), np.uint64)
        return lambda w: value
    i, offset = ctx.index[op.base.name], np.uint64(op.offset & ((1 << 64) - 1))
    if ctx.width[op.base.name] not in (32, 64):
        raise _UnsupportedError(f"address register {op.base.name} is not 32 or 64 bits")
    return lambda w: w.regs[i].astype(np.uint64) + offset


def _thread_frames(w, mask, frame: int) -> np.ndarray:
    """The byte offset of each executing lane's local frame in its block's local memory."""
    tid = w.special["%warpid"].astype(np.uint64) * np.uint64(32) + w.special["%laneid"]
    return np.broadcast_to(tid, mask.shape)[mask] * np.uint64(frame)


def _local(w, mask, offsets, frame: int, lanes=None):
    """Local-memory addresses of frame ``offsets`` (of the executing lanes, or of those
    ``lanes`` of them), checked against the frame size."""
    outside = offsets >= np.uint64(frame)
    if outside.any():
        raise MemoryFaultError(f"local access at 0x{int(offsets[outside][0]):x}, outside the "
                               f"{frame}-byte frame of each thread")
    frames = _thread_frames(w, mask, frame)
    return (frames if lanes is None else frames[lanes]) + offsets


def _parts(w, space: str, addresses, mask, frame: int):
    """Where ``addresses`` (of the executing lanes, in ``space``) go: a list of
    ``(memory, lanes, addresses in that memory)`` with ``lanes`` ``None`` for all."""
    if space == "shared":
        return [(w.shared, None, addresses)]
    if space == "local":
        return [(w.local, None, _local(w, mask, addresses, frame))]
    if space == "const":
        return [(w.statics, None, addresses)]
    if space == "global" and (not addresses.size or addresses.min() >= np.uint64(GLOBAL_BASE)):
        return [(w.memory, None, addresses)]
    kind = (addresses < np.uint64(GLOBAL_BASE)).astype(np.int8)
    if space == "generic":
        for code, base in ((2, SHARED_WINDOW), (3, LOCAL_WINDOW)):
            inside = (addresses >= np.uint64(base)) & (addresses < np.uint64(base + WINDOW_BYTES))
            kind[inside] = code
    present = np.unique(kind).tolist()
    parts = []
    for code in present:
        lanes = None if len(present) == 1 else np.flatnonzero(kind == code)
        mine = addresses if lanes is None else addresses[lanes]
        if code == 0:
            parts.append((w.memory, lanes, mine))
        elif code == 1:
            parts.append((w.statics, lanes, mine))
        elif code == 2:
            parts.append((w.shared, lanes, mine - np.uint64(SHARED_WINDOW)))
        else:
            parts.append((w.local, lanes, _local(w, mask, mine - np.uint64(LOCAL_WINDOW),
                                                 frame, lanes)))
    return parts


def _load(w, space, addresses, mask, dt, frame):
    parts = _parts(w, space, addresses, mask, frame)
    if len(parts) == 1:
        return parts[0][0].load(parts[0][2], dt)
    values = np.empty(addresses.shape, dt)
    for memory, lanes, mine in parts:
        values[lanes] = memory.load(mine, dt)
    return values


def _store(w, space, addresses, mask, values, frame):
    for memory, lanes, mine in _parts(w, space, addresses, mask, frame):
        memory.store(mine, values if lanes is None else values[lanes])


def _vector(ins: Instruction, operand) -> list:
    """The registers (or immediates) of a ``.v2``/``.v4`` operand, or ``[operand]``."""
    count = {"v2": 2, "v4": 4}.get(next((m for m in ins.mods if m in ("v2", "v4")), ""), 1)
    items = list(operand.items) if isinstance(operand, Vec) else [operand]
    if len(items) != count:
        raise _UnsupportedError(f"{len(items)} data operands for {count} vector elements")
    return items


def _aligned(addresses, size):
    misaligned = (addresses & np.uint64(size - 1)) != 0
    if misaligned.any():
        raise MemoryFaultError(f"misaligned vector access of {size} bytes at "
                               f"0x{int(addresses[misaligned][0]):x}")


def _element_addresses(address, mask, count, size):
    """The active lanes' addresses of a ``count``-element access of ``size``-byte elements
    (aligned to the whole access when ``count > 1``) and each element's addresses."""
    addresses = np.broadcast_to(address, mask.shape)[mask]
    if count == 1:
        return addresses, [addresses]
    _aligned(addresses, count * size)
    return addresses, [addresses + np.uint64(k * size) for k in range(count)]


def _touched(space, addresses, count, size):
    """What a memory instruction reports: its space and the addresses of every element
    (``(lanes, count)`` for a vector access)."""
    if count == 1:
        return space, addresses
    return space, addresses[:, None] + np.arange(count, dtype=np.uint64) * np.uint64(size)


def _ld(ins: Instruction, ctx: Context):
    space, t = ins.space, ins.mods[-1]
    dst, src = ins.operands
    if not isinstance(src, Addr):
        raise _UnsupportedError("ld needs an address operand [..]")
    dt = NUMPY_TYPES[t]
    size = np.dtype(dt).itemsize
    read_type = {"b8": "u8"}.get(t, t)
    writes = [_writer(item, read_type, ctx, relaxed=True) for item in _vector(ins, dst)]
    if space == "param":
        if not isinstance(src.base, Sym) or src.base.name not in ctx.params:
            raise _UnsupportedError(f"ld.param from '{src.base}', not a kernel parameter")
        offset = ctx.params[src.base.name][0] + src.offset

        def run(w, mask):
            for k, write in enumerate(writes):
                write(w, np.frombuffer(w.params, dt, 1, offset + k * size)[0], mask)
        return run
    address = _address(src, space, ctx)
    frame, count = ctx.frame, len(writes)

    def run(w, mask):
        addresses, elements = _element_addresses(address(w), mask, count, size)
        for write, element in zip(writes, elements, strict=True):
            values = np.zeros(mask.shape, dt)
            values[mask] = _load(w, space, element, mask, dt, frame)
            write(w, values, mask)
        return _touched(space, addresses, count, size)
    return run


def _st(ins: Instruction, ctx: Context):
    space, t = ins.space, ins.mods[-1]
    dst, src = ins.operands
    if not isinstance(dst, Addr):
        raise _UnsupportedError("st needs an address operand [..]")
    if space == "param":
        raise _UnsupportedError("st.param outside a call sequence")
    dt = NUMPY_TYPES[t]
    size = np.dtype(dt).itemsize
    address = _address(dst, space, ctx)
    reads = [_reader(item, t, ctx, relaxed=True) for item in _vector(ins, src)]
    frame, count = ctx.frame, len(reads)

    def run(w, mask):
        addresses, elements = _element_addresses(address(w), mask, count, size)
        for read, element in zip(reads, elements, strict=True):
            values = np.broadcast_to(np.asarray(read(w), dt), mask.shape)[mask]
            _store(w, space, element, mask, values, frame)
        return _touched(space, addresses, count, size)
    return run


_ATOM_TYPES = {"add": ("u32", "s32", "u64", "s64", "f32", "f64"),
               "min": ("u32", "s32", "u64", "s64"), "max": ("u32", "s32", "u64", "s64"),
               "inc": ("u32",), "dec": ("u32",), "and": ("b32", "b64"), "or": ("b32", "b64"),
               "xor": ("b32", "b64"), "exch": ("b32", "b64"), "cas": ("b32", "b64")}


def _atom(ins: Instruction, ctx: Context):
    """``atom.op.t d, [a], b[, c]`` and ``red.op.t [a], b``: lane by lane in lane order
    (:meth:`gpurf.sim.sm.memory.Memory.atomic`), ``d`` each lane's old value."""
    space, op, t = ins.space, ins.mods[-2], ins.mods[-1]
    if t not in _ATOM_TYPES[op]:
        raise _UnsupportedError(f"atomic .{op} on .{t} (PTX has it on "
                                f"{', '.join('.' + x for x in _ATOM_TYPES[op])})")
    red = ins.base == "red"
    operands = ins.operands if red else ins.operands[1:]
    if len(operands) != (3 if op == "cas" else 2):
        raise _UnsupportedError(f"atomic .{op} takes {3 if op == 'cas' else 2} operands after "
                                "the destination")
    if not isinstance(operands[0], Addr):
        raise _UnsupportedError(f"{ins.base} needs an address operand [..]")
    dt = NUMPY_TYPES[t]
    address = _address(operands[0], space, ctx)
    reads = [_reader(item, t, ctx) for item in operands[1:]]
    write = None if red else _writer(ins.operands[0], t, ctx)
    flush = ftz if (t == "f32" and op == "add") else None
    frame = ctx.frame

    def run(w, mask):
        addresses = np.broadcast_to(address(w), mask.shape)[mask]
        b, *rest = (np.broadcast_to(np.asarray(r(w), dt), mask.shape)[mask] for r in reads)
        if flush is not None:
            b = flush(b)
        c = rest[0] if rest else None
        old = np.empty(addresses.shape, dt)
        for memory, lanes, mine in _parts(w, space, addresses, mask, frame):
            pick = slice(None) if lanes is None else lanes
            old[pick] = memory.atomic(op, mine, b[pick], None if c is None else c[pick], flush)
        if write is not None:
            values = np.zeros(mask.shape, dt)
            values[mask] = old
            write(w, values, mask)
        return space, addresses
    return run


_LANE = np.arange(32, dtype=np.int64)
_LANE_BITS = np.left_shift(np.uint32(1), np.arange(32, dtype=np.uint32))


def _members(w, mask, member_mask) -> np.ndarray:
    """The lanes each lane's member mask names, checking that every executing lane is one
    (PTX: a ``.sync`` instruction executed outside its member mask is undefined)."""
    member = (np.broadcast_to(np.asarray(member_mask, np.uint32), mask.shape)
              & _LANE_BITS) != 0
    outside = mask & ~member
    if outside.any():
        lane = int(np.argwhere(outside)[0][-1])
        raise FaultError(f"lane {lane} executes it outside its member mask")
    return member


def _shfl(ins: Instruction, ctx: Context):
    """``shfl.sync.mode.b32 d[|p], a, b, c, membermask`` (PTX ISA pseudocode: ``c`` packs
    the clamp lane in bits 0-4 and the segment mask in bits 8-12; out of range, a lane keeps
    its own value and ``p`` is false). A source lane that is not executing gives its
    register's current value (PTX leaves it undefined)."""
    mode = ins.mods[1]
    dst = ins.operands[0]
    ra = _reader(ins.operands[1], "b32", ctx)
    rb, rc, rm = (_reader(op, "u32", ctx) for op in ins.operands[2:])
    write = _writer(dst.first if isinstance(dst, Pair) else dst, "b32", ctx)
    in_range = _writer(dst.second, "pred", ctx) if isinstance(dst, Pair) else None

    def run(w, mask):
        _members(w, mask, rm(w))
        a = np.broadcast_to(ra(w), mask.shape)
        b = np.broadcast_to(np.asarray(rb(w), np.int64) & 31, mask.shape)
        c = np.broadcast_to(np.asarray(rc(w), np.int64), mask.shape)
        source, valid = _shfl_source(mode, b, c)
        write(w, np.take_along_axis(a, source, axis=-1), mask)
        if in_range is not None:
            in_range(w, valid, mask)
    return run


def _shfl_source(mode: str, b, c):
    """The lane each lane reads in a ``shfl.sync`` of ``mode`` and whether it is in range
    (the PTX ISA's pseudocode; out of range, a lane reads itself)."""
    segment, clamp = (c >> 8) & 31, c & 31
    top = (_LANE & segment) | (clamp & ~segment)
    if mode == "up":
        source = _LANE - b
        valid = source >= top
    else:
        source = {"down": _LANE + b, "bfly": _LANE ^ b,
                  "idx": (_LANE & segment) | (b & ~segment)}[mode]
        valid = source <= top
    return np.where(valid, source, _LANE), valid


def _vote(ins: Instruction, ctx: Context):
    """``vote.sync.mode d, a, membermask`` over the executing lanes of the member mask:
    ``all``/``any``/``uni`` of predicate ``a``, or ``ballot`` (bit ``l`` = lane ``l``'s
    ``a``)."""
    mode, t = ins.mods[1], ins.mods[-1]
    if (mode == "ballot") != (t == "b32"):
        raise _UnsupportedError("vote.ballot gives .b32, all/any/uni give .pred")
    ra, rm = _reader(ins.operands[1], "pred", ctx), _reader(ins.operands[2], "u32", ctx)
    write = _writer(ins.operands[0], t, ctx)

    def run(w, mask):
        voting = mask & _members(w, mask, rm(w))
        a = np.broadcast_to(ra(w), mask.shape)
        if mode == "ballot":
            result = np.bitwise_or.reduce(np.where(a & voting, _LANE_BITS, np.uint32(0)),
                                          axis=-1)
        else:
            every, some = (a | ~voting).all(axis=-1), (a & voting).any(axis=-1)
            result = {"all": every, "any": some, "uni": every | ~some}[mode]
        write(w, np.broadcast_to(np.asarray(result)[..., None], mask.shape), mask)
    return run


def _activemask(ins: Instruction, ctx: Context):
    write = _writer(ins.operands[0], "b32", ctx)

    def run(w, mask):
        bits = np.bitwise_or.reduce(np.where(mask, _LANE_BITS, np.uint32(0)), axis=-1)
        write(w, np.broadcast_to(np.asarray(bits)[..., None], mask.shape), mask)
    return run


def _nothing(ins: Instruction, ctx: Context):
    """``membar``/``fence``/``bar.warp.sync``: the functional model makes every store visible
    at once and runs a warp's lanes together, so there is nothing to wait for."""
    return lambda w, mask: None


_MATH = {"sqrt": np.sqrt, "rcp": np.reciprocal, "rsqrt": lambda x: 1 / np.sqrt(x),
         "ex2": np.exp2, "lg2": np.log2, "sin": np.sin, "cos": np.cos, "tanh": np.tanh}


def _math(ins: Instruction, ctx: Context):
    """``sqrt``/``rcp`` (``.rn``: correctly rounded, in the type itself) and the ``.approx``
    functions (``rsqrt``, ``ex2``, ``lg2``, ``sin``, ``cos``, ``tanh``, ``sqrt``/``rcp``):
    computed in double and rounded once, which is within every bound PTX documents for
    them."""
    t, rounding = ins.mods[-1], ins.mods[0]
    if rounding not in ("rn", "approx"):
        raise _UnsupportedError(f"directed rounding .{rounding}")
    dt = NUMPY_TYPES[t]
    inner = _MATH[ins.base]
    if rounding == "rn":
        def func(x):
            return inner(np.asarray(x, dt))
    else:
        def func(x):
            return inner(np.asarray(x, np.float64)).astype(dt)
    func = _float_op(func, ins.mods, t)
    read, write = _reader(ins.operands[1], t, ctx), _writer(ins.operands[0], t, ctx)
    return lambda w, mask: write(w, np.asarray(func(read(w)), dt), mask)


def _smear(x):
    """Every bit below the highest set bit of ``x`` set too."""
    for shift in (1, 2, 4, 8, 16, 32)[:x.dtype.itemsize.bit_length() + 2]:
        x = x | (x >> x.dtype.type(shift))
    return x


_REVERSED = np.array([int(f"{b:08b}"[::-1], 2) for b in range(256)], np.uint8)


def _brev(x):
    raw = np.ascontiguousarray(x)
    flipped = _REVERSED[raw[..., None].view(np.uint8)][..., ::-1]
    return np.ascontiguousarray(flipped).view(raw.dtype)[..., 0]


def _bits(ins: Instruction, ctx: Context):
    """``popc``, ``clz``, ``brev`` of ``.b32``/``.b64`` (``popc``/``clz`` give ``.u32``)."""
    t = ins.mods[-1]
    dt = NUMPY_TYPES[t]
    width = type_width(t)
    read = _reader(ins.operands[1], t, ctx)
    write = _writer(ins.operands[0], t if ins.base == "brev" else "u32", ctx)
    base = ins.base

    def run(w, mask):
        x = np.atleast_1d(np.asarray(read(w), dt))
        if base == "popc":
            value = _popc(x)
        elif base == "clz":
            value = np.uint32(width) - _popc(_smear(x))
        else:
            value = _brev(x)
        write(w, value, mask)
    return run


def _popc(x):
    """Set bits of each element, as ``uint32``."""
    return np.bitwise_count(x).astype(np.uint32)


_U64 = np.uint64


def _low_bits(count):
    """``uint64`` masks of the ``count`` (0..255, as ``uint64``) lowest bits."""
    return np.where(count >= _U64(64), ~_U64(0), (_U64(1) << np.minimum(count, _U64(63)))
                    - _U64(1))


def _shifted_left(x, count):
    """``x << count`` in ``uint64``, 0 where ``count`` is 64 or more."""
    return np.where(count >= _U64(64), _U64(0), x << np.minimum(count, _U64(63)))


def _bfe(ins: Instruction, ctx: Context):
    """``bfe.t d, a, pos, len``: ``len`` bits of ``a`` from ``pos`` (both taken mod 256),
    sign-extended for signed types from the field's last bit inside ``a``."""
    t = ins.mods[-1]
    width = type_width(t)
    ra = _reader(ins.operands[1], t, ctx)
    rpos, rlen = (_reader(op, "u32", ctx) for op in ins.operands[2:])
    write = _writer(ins.operands[0], t, ctx)
    top = _U64(width - 1)
    full = _low_bits(_U64(width))

    def run(w, mask):
        a = np.asarray(ra(w)).view(_UINT[width]).astype(_U64)
        pos = np.asarray(rpos(w)).astype(_U64) & _U64(0xFF)
        length = np.asarray(rlen(w)).astype(_U64) & _U64(0xFF)
        inside = np.where(pos > top, _U64(0), np.minimum(length, _U64(width) - pos))
        value = (a >> np.minimum(pos, top)) & _low_bits(inside)
        if _signed(t):
            last = np.minimum(pos + length - _U64(1), top)
            sign = ((a >> last) & _U64(1)).astype(bool) & (length != 0)
            value = np.where(sign, value | (full & ~_low_bits(inside)), value)
        write(w, (value & full).astype(_UINT[width]).view(NUMPY_TYPES[t]), mask)
    return run


def _bfi(ins: Instruction, ctx: Context):
    """``bfi.t d, f, b, pos, len``: ``b`` with ``len`` bits from ``pos`` replaced by the low
    bits of ``f`` (``pos``, ``len`` mod 256; bits past the top are dropped)."""
    t = ins.mods[-1]
    width = type_width(t)
    rf, rb = (_reader(op, t, ctx) for op in ins.operands[1:3])
    rpos, rlen = (_reader(op, "u32", ctx) for op in ins.operands[3:])
    write = _writer(ins.operands[0], t, ctx)
    full = _low_bits(_U64(width))

    def run(w, mask):
        f, b = (np.asarray(r(w)).view(_UINT[width]).astype(_U64) for r in (rf, rb))
        pos = np.asarray(rpos(w)).astype(_U64) & _U64(0xFF)
        length = np.asarray(rlen(w)).astype(_U64) & _U64(0xFF)
        field = _shifted_left(_low_bits(length), pos) & full
        value = (b & ~field) | (_shifted_left(f, pos) & field)
        write(w, value.astype(_UINT[width]).view(NUMPY_TYPES[t]), mask)
    return run


_PRMT_MODES = {
    "f4e": lambda c, i: (c + i) % 8, "b4e": lambda c, i: (c - i) % 8,
    "rc8": lambda c, i: c, "ecl": lambda c, i: np.maximum(c, i),
    "ecr": lambda c, i: np.minimum(c, i), "rc16": lambda c, i: 2 * (c & 1) + (i & 1)}


def _prmt(ins: Instruction, ctx: Context):
    """``prmt.b32[.mode] d, a, b, c``: bytes of ``{b, a}`` (``a`` the low four) chosen by
    ``c``: by default four nibbles, each a byte index (bits 0-2) and a sign-replicate flag
    (bit 3); the modes use ``c``'s low two bits as in the PTX ISA's table."""
    mode = ins.mods[-1] if ins.mods[-1] in _PRMT_MODES else None
    ra, rb, rc = (_reader(op, "b32", ctx) for op in ins.operands[1:])
    write = _writer(ins.operands[0], "b32", ctx)

    def run(w, mask):
        a, b, c = np.broadcast_arrays(*(np.asarray(r(w)).astype(np.uint64) for r in (ra, rb,
                                                                                     rc)))
        source = (b << np.uint64(32)) | a
        out = np.zeros(a.shape, np.uint64)
        for i in range(4):
            if mode is None:
                nibble = (c >> np.uint64(4 * i)) & np.uint64(15)
                pick = nibble & np.uint64(7)
            else:
                pick = _PRMT_MODES[mode](c & np.uint64(3), np.uint64(i)).astype(np.uint64)
            byte = (source >> (pick * np.uint64(8))) & np.uint64(0xFF)
            if mode is None:
                sign = ((nibble & np.uint64(8)) != 0) & ((byte & np.uint64(0x80)) != 0)
                byte = np.where(nibble & np.uint64(8), np.where(sign, np.uint64(0xFF),
                                                                  np.uint64(0)), byte)
            out |= byte.astype(np.uint64) << np.uint64(8 * i)
        write(w, out.astype(np.uint32), mask)
    return run


def _lop3(ins: Instruction, ctx: Context):
    """``lop3.b32 d, a, b, c, lut``: bit ``i`` of ``d`` is bit ``(a_i<<2 | b_i<<1 | c_i)``
    of ``lut`` (so ``lut = F(0xF0, 0xCC, 0xAA)`` computes ``F``)."""
    lut_op = ins.operands[4]
    if not isinstance(lut_op, Imm) or lut_op.float_bits or not 0 <= lut_op.value <= 255:
        raise _UnsupportedError("lop3's lookup table is an immediate 0..255")
    lut = lut_op.value
    ra, rb, rc = (_reader(op, "b32", ctx) for op in ins.operands[1:4])
    write = _writer(ins.operands[0], "b32", ctx)

    def run(w, mask):
        a, b, c = (np.asarray(r(w), np.uint32) for r in (ra, rb, rc))
        out = np.zeros(np.broadcast_shapes(a.shape, b.shape, c.shape), np.uint32)
        for minterm in range(8):
            if lut >> minterm & 1:
                out |= ((a if minterm & 4 else ~a) & (b if minterm & 2 else ~b)
                        & (c if minterm & 1 else ~c))
        write(w, out, mask)
    return run


def _shf(ins: Instruction, ctx: Context):
    """``shf.{l,r}.{wrap,clamp}.b32 d, a, b, n``: the funnel ``{b, a}`` shifted by ``n``
    (``wrap``: ``n mod 32``; ``clamp``: at most 32); ``l`` keeps the high word, ``r`` the
    low one."""
    left, wrap = ins.mods[0] == "l", ins.mods[1] == "wrap"
    ra, rb, rn = (_reader(op, "b32", ctx) for op in ins.operands[1:])
    write = _writer(ins.operands[0], "b32", ctx)

    def run(w, mask):
        a, b, n = (np.asarray(r(w)).astype(np.uint64) for r in (ra, rb, rn))
        n = n & np.uint64(31) if wrap else np.minimum(n, np.uint64(32))
        funnel = (b << np.uint64(32)) | a
        out = (funnel << n) >> np.uint64(32) if left else funnel >> n
        write(w, (out & np.uint64(0xFFFFFFFF)).astype(np.uint32), mask)
    return run


def _carry(ins: Instruction, ctx: Context):
    """``add.cc``/``addc``, ``sub.cc``/``subc``, ``mad{c}.{lo,hi}.cc``: unsigned arithmetic
    on the type's width with the carry (or, subtracting, borrow) flag :data:`CARRY` in and
    out (``subc`` computes ``a - (b + borrow)``)."""
    base, t = ins.base, ins.mods[-1]
    if t not in ("u32", "s32", "u64", "s64"):
        raise _UnsupportedError(f"carry arithmetic on .{t}")
    width = type_width(t)
    unsigned = _UINT[width]
    carry_in = base in ("addc", "subc", "madc")
    carry_out = "cc" in ins.mods
    subtract = base in ("sub", "subc")
    reads = [_reader(op, t, ctx) for op in ins.operands[1:]]
    write = _writer(ins.operands[0], t, ctx)
    flag = ctx.index[CARRY]
    write_flag = _writer(Reg(CARRY), "pred", ctx)
    high = "hi" in ins.mods

    def run(w, mask):
        values = [np.asarray(r(w)).view(unsigned) for r in reads]
        if base in ("mad", "madc"):
            a, b, addend = values
            product = (_mul_hi(a, b, f"u{width}") if high else a * b).astype(unsigned)
            values = [product, addend]
        x, y = np.broadcast_arrays(*values)
        cin = (w.regs[flag] if carry_in else np.zeros(mask.shape, bool)).astype(unsigned)
        if subtract:
            first, second = x - y, x < y
            result = first - cin
            out = second | (first < cin)
        else:
            first = x + y
            result = first + cin
            out = (first < x) | (result < first)
        write(w, result.view(NUMPY_TYPES[t]), mask)
        if carry_out:
            write_flag(w, out, mask)
    return run


def _copysign(ins: Instruction, ctx: Context):
    """``copysign.t d, a, b``: the magnitude of ``b`` with the sign of ``a``."""
    t = ins.mods[-1]
    ra, rb = (_reader(op, t, ctx) for op in ins.operands[1:])
    write = _writer(ins.operands[0], t, ctx)
    dt = NUMPY_TYPES[t]
    return lambda w, mask: write(w, np.copysign(np.asarray(rb(w), dt), np.asarray(ra(w), dt)),
                                 mask)


_PROPERTIES = {"finite": np.isfinite, "infinite": np.isinf, "number": lambda x: ~np.isnan(x),
               "notanumber": np.isnan}


def _testp(ins: Instruction, ctx: Context):
    """``testp.property.t p, a``: whether ``a`` is finite, infinite, a number, NaN, normal or
    subnormal."""
    prop, t = ins.mods[0], ins.mods[-1]
    tiny = np.finfo(NUMPY_TYPES[t]).tiny
    tests = {**_PROPERTIES, "normal": lambda x: np.isfinite(x) & (np.abs(x) >= tiny),
             "subnormal": lambda x: (x != 0) & (np.abs(x) < tiny)}
    test = tests[prop]
    read, write = _reader(ins.operands[1], t, ctx), _writer(ins.operands[0], "pred", ctx)
    return lambda w, mask: write(w, test(np.asarray(read(w))), mask)


def _sad(ins: Instruction, ctx: Context):
    """``sad.t d, a, b, c``: ``c + |a - b|`` (wrapping)."""
    t = ins.mods[-1]
    dt = NUMPY_TYPES[t]
    ra, rb, rc = (_reader(op, t, ctx) for op in ins.operands[1:])
    write = _writer(ins.operands[0], t, ctx)
    unsigned = _UINT[type_width(t)]

    def run(w, mask):
        a, b = np.asarray(ra(w), dt), np.asarray(rb(w), dt)
        difference = np.where(a >= b, a.view(unsigned) - b.view(unsigned),
                              b.view(unsigned) - a.view(unsigned))
        write(w, (np.asarray(rc(w), dt).view(unsigned) + difference).view(dt), mask)
    return run


def _mul24(ins: Instruction, ctx: Context):
    """``mul24``/``mad24`` ``.lo``/``.hi``: the 48-bit product of the low 24 bits of each
    operand (sign-extended for ``.s32``), its low 32 bits or bits 16-47, plus ``c``."""
    mode, t = ins.mods[0], ins.mods[-1]
    if "sat" in ins.mods:
        raise _UnsupportedError("mad24.sat")
    reads = [_reader(op, t, ctx) for op in ins.operands[1:]]
    write = _writer(ins.operands[0], t, ctx)
    signed = _signed(t)

    def low24(x):
        x = np.asarray(x).astype(np.int64) & 0xFFFFFF
        return np.where(signed & (x >= 1 << 23), x - (1 << 24), x)

    def run(w, mask):
        product = low24(reads[0](w)) * low24(reads[1](w))
        value = product if mode == "lo" else product >> 16
        if len(reads) == 3:
            value = value + np.asarray(reads[2](w)).astype(np.int64)
        write(w, (value & 0xFFFFFFFF).astype(np.uint32).view(NUMPY_TYPES[t]), mask)
    return run


_FACTORIES = {
    "add": _arith, "sub": _arith, "mul": _arith, "mad": _arith, "fma": _arith,
    "div": _arith, "rem": _arith, "min": _arith, "max": _arith,
    "abs": _unary, "neg": _unary, "not": _unary,
    "and": _logic, "or": _logic, "xor": _logic, "shl": _shift, "shr": _shift,
    "setp": _setp, "selp": _selp, "mov": _mov, "cvt": _cvt, "cvta": _cvta,
    "ld": _ld, "st": _st, "atom": _atom, "red": _atom,
    "shfl": _shfl, "vote": _vote, "activemask": _activemask,
    "membar": _nothing, "fence": _nothing,
    "sqrt": _math, "rcp": _math, "rsqrt": _math, "ex2": _math, "lg2": _math, "sin": _math,
    "cos": _math, "tanh": _math,
    "popc": _bits, "clz": _bits, "brev": _bits, "bfe": _bfe, "bfi": _bfi, "prmt": _prmt,
    "lop3": _lop3, "shf": _shf, "addc": _carry, "subc": _carry, "madc": _carry,
    "copysign": _copysign, "testp": _testp, "sad": _sad, "mul24": _mul24, "mad24": _mul24,
}

CONTROL = frozenset({"bra", "ret", "exit", "bar"})


def _factory(ins: Instruction):
    if ins.base in ("add", "sub", "mad") and "cc" in ins.mods:
        return _carry
    if ins.base == "bar" and ins.mods[0] == "warp":
        return _nothing
    return _FACTORIES[ins.base]


def compile_instruction(ins: Instruction, ctx: Context):
    """``fn(warp, mask)`` executing ``ins`` (``None`` for control instructions)."""
    if ins.base in CONTROL and not (ins.base == "bar" and ins.mods[0] == "warp"):
        return None
    try:
        return _factory(ins)(ins, ctx)
    except _UnsupportedError as why:
        raise PtxError(ctx.file, ins.line, f"unsupported: {why} in '{ins.opcode}'") from None
