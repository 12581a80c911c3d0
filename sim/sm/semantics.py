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
fused (:func:`gpurf.sim.kernels.fp.fma_f32`, shared with the numpy references);
``div.approx``/``div.full`` are computed correctly rounded.

Instruction/type combinations the model does not implement raise
:class:`~gpurf.sim.ptx.parser.PtxError` naming the file and line, when the kernel is compiled.
"""

from dataclasses import dataclass

import numpy as np

from gpurf.sim.kernels.fp import fma_f32, fma_f64, ftz
from gpurf.sim.ptx.ir import Addr, Imm, Instruction, Reg, Special, Sym, type_width
from gpurf.sim.ptx.parser import PtxError

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
    addresses (shared variables) and parameter offsets."""

    file: str
    index: dict[str, int]
    width: dict[str, int]
    shared: dict[str, int]
    params: dict[str, tuple[int, str]]


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


def _reader(op, t: str, ctx: Context):
    """``fn(warp)`` giving operand ``op`` as type ``t`` (an array, or a scalar for
    immediates)."""
    dt = NUMPY_TYPES[t]
    if isinstance(op, Reg):
        i, rw = ctx.index[op.name], ctx.width[op.name]
        if (t == "pred") != (rw == 1):
            raise _UnsupportedError(f"register {op.name} of {rw} bits used as .{t}")
        if t == "pred" or rw == type_width(t):
            return (lambda w: w.regs[i]) if t == "pred" else (lambda w: w.regs[i].view(dt))
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
    if isinstance(op, Sym) and op.name in ctx.shared:
        value = _imm(Imm(ctx.shared[op.name]), t)
        return lambda w: value
    raise _UnsupportedError(f"operand '{op}' cannot be read as .{t}")


def _writer(op, t: str, ctx: Context):
    """``fn(warp, value, mask)`` storing a value of type ``t`` into register ``op``."""
    if not isinstance(op, Reg):
        raise _UnsupportedError(f"destination '{op}' is not a register")
    i, rw = ctx.index[op.name], ctx.width[op.name]
    if (t == "pred") != (rw == 1):
        raise _UnsupportedError(f"register {op.name} of {rw} bits written as .{t}")
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
        if base in ("mad", "fma"):
            func = fma_f32 if t == "f32" else fma_f64
        else:
            func = {"add": np.add, "sub": np.subtract, "mul": np.multiply,
                    "div": np.divide, "min": np.fmin, "max": np.fmax}[base]
        func = _float_op(func, mods, t)
        reads = [_reader(op, t, ctx) for op in ops[1:]]
        write = _writer(ops[0], t, ctx)
    else:
        if "rn" in mods or "ftz" in mods or ("sat" in mods and t != "s32"):
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


def _setp(ins: Instruction, ctx: Context):
    cmp, t = ins.mods[0], ins.mods[-1]
    ra, rb = (_reader(op, t, ctx) for op in ins.operands[1:])
    write = _writer(ins.operands[0], "pred", ctx)
    if not _float(t):
        if cmp not in _CMP:
            raise _UnsupportedError(f"comparison .{cmp} on an integer type")
        func = _CMP[cmp]
    elif cmp in ("num", "nan"):
        def func(a, b):
            either = np.isnan(a) | np.isnan(b)
            return ~either if cmp == "num" else either
    else:
        ordered = _CMP[cmp.rstrip("u")] if cmp.endswith("u") else _CMP[cmp]
        unordered = cmp.endswith("u")

        def func(a, b):
            either = np.isnan(a) | np.isnan(b)
            result = ordered(a, b)
            return (result | either) if unordered else (result & ~either)
    return lambda w, mask: write(w, func(ra(w), rb(w)), mask)


def _selp(ins: Instruction, ctx: Context):
    t = ins.mods[-1]
    dt = NUMPY_TYPES[t]
    ra, rb = (_reader(op, t, ctx) for op in ins.operands[1:3])
    rp = _reader(ins.operands[3], "pred", ctx)
    write = _writer(ins.operands[0], t, ctx)
    return lambda w, mask: write(w, np.where(rp(w), ra(w), rb(w)).astype(dt), mask)


def _mov(ins: Instruction, ctx: Context):
    t = ins.mods[-1]
    src = ins.operands[1]
    if isinstance(src, Sym) and src.name not in ctx.shared:
        raise _UnsupportedError(f"mov of the address of '{src.name}'")
    read, write = _reader(src, t, ctx), _writer(ins.operands[0], t, ctx)
    return lambda w, mask: write(w, read(w), mask)


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
    read, write = _reader(ins.operands[1], src_t, ctx), _writer(ins.operands[0], dst_t, ctx)
    return lambda w, mask: write(w, convert(read(w)), mask)


def _cvta(ins: Instruction, ctx: Context):
    read, write = _reader(ins.operands[1], "u64", ctx), _writer(ins.operands[0], "u64", ctx)
    return lambda w, mask: write(w, read(w), mask)


def _address(op: Addr, space: str, ctx: Context):
    """``fn(warp)`` giving the 32 lanes' byte addresses (``uint64``) of a memory operand."""
    if isinstance(op.base, Sym):
        if op.base.name not in ctx.shared:
            raise _UnsupportedError(f"'{op.base.name}' is not a .shared variable")
        value = np.full(32, ctx.shared[op.base.name] + op.offset, np.uint64)
        return lambda w: value
    i, offset = ctx.index[op.base.name], np.uint64(op.offset & ((1 << 64) - 1))
    if ctx.width[op.base.name] not in (32, 64):
        raise _UnsupportedError(f"address register {op.base.name} is not 32 or 64 bits")
    return lambda w: w.regs[i].astype(np.uint64) + offset


def _ld(ins: Instruction, ctx: Context):
    space, t = ins.mods[0], ins.mods[-1]
    dst, src = ins.operands
    if not isinstance(src, Addr):
        raise _UnsupportedError("ld needs an address operand [..]")
    dt = NUMPY_TYPES[t]
    read_type = {"b8": "u8"}.get(t, t)
    write = _writer(dst, read_type, ctx)
    if space == "param":
        if not isinstance(src.base, Sym) or src.base.name not in ctx.params:
            raise _UnsupportedError(f"ld.param from '{src.base}', not a kernel parameter")
        offset = ctx.params[src.base.name][0] + src.offset

        def run(w, mask):
            write(w, np.frombuffer(w.params, dt, 1, offset)[0], mask)
        return run
    address = _address(src, space, ctx)

    def run(w, mask):
        addresses = np.broadcast_to(address(w), mask.shape)[mask]
        memory = w.shared if space == "shared" else w.memory
        values = np.zeros(mask.shape, dt)
        values[mask] = memory.load(addresses, dt)
        write(w, values, mask)
        return space, addresses
    return run


def _st(ins: Instruction, ctx: Context):
    space, t = ins.mods[0], ins.mods[-1]
    dst, src = ins.operands
    if not isinstance(dst, Addr):
        raise _UnsupportedError("st needs an address operand [..]")
    dt = NUMPY_TYPES[t]
    address = _address(dst, space, ctx)
    read = _reader(src, t, ctx)

    def run(w, mask):
        addresses = np.broadcast_to(address(w), mask.shape)[mask]
        memory = w.shared if space == "shared" else w.memory
        values = np.broadcast_to(np.asarray(read(w), dt), mask.shape)[mask]
        memory.store(addresses, values)
        return space, addresses
    return run


_FACTORIES = {
    "add": _arith, "sub": _arith, "mul": _arith, "mad": _arith, "fma": _arith,
    "div": _arith, "rem": _arith, "min": _arith, "max": _arith,
    "abs": _unary, "neg": _unary, "not": _unary,
    "and": _logic, "or": _logic, "xor": _logic, "shl": _shift, "shr": _shift,
    "setp": _setp, "selp": _selp, "mov": _mov, "cvt": _cvt, "cvta": _cvta,
    "ld": _ld, "st": _st,
}

CONTROL = frozenset({"bra", "ret", "exit", "bar"})


def compile_instruction(ins: Instruction, ctx: Context):
    """``fn(warp, mask)`` executing ``ins`` (``None`` for control instructions)."""
    if ins.base in CONTROL:
        return None
    try:
        return _FACTORIES[ins.base](ins, ctx)
    except _UnsupportedError as why:
        raise PtxError(ctx.file, ins.line, f"unsupported: {why} in '{ins.opcode}'") from None
