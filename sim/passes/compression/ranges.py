"""Integer range analysis of a PTX kernel (paper Section 4.2, Fig. 8): an interval per
integer virtual register, with e-SSA-style branch refinement, giving each one a bit width.

Abstract interpretation over the CFG (:mod:`gpurf.sim.ptx.cfg`). A register's interval holds the
*mathematical* values whose bits (modulo ``2^W``, ``W`` the register's declared width) it
holds: an instruction reads a register as its type (``s32``, ``u16``, ``b64``: unsigned),
and a value outside the type's range is reinterpreted (shifted by ``2^t``) or, if it would
straddle a wrap-around, becomes the whole range of the type. Results that overflow their
type wrap the same way (PTX integer arithmetic is modular).

Branch refinement (e-SSA's sigma functions, done on the edges instead of renaming): at a
block ending in ``@%p bra``, the predicate's definition in the same block (``setp`` on
registers or immediates, and ``and``/``or``/``not`` of such predicates) narrows the
compared registers on each edge: ``setp.lt.s32 %p, %r1, %r2; @%p bra L`` gives
``%r1 <= hi(%r2) - 1`` on the taken edge and ``%r1 >= lo(%r2)`` on the fall-through. An
edge whose refinement is empty is infeasible. The refinement holds only while neither
operand is redefined between the ``setp`` and the branch.

Termination: at loop headers (targets of back edges) the ascending iteration widens a
growing bound to the next threshold (the kernel's integer constants and known launch
values, +-1), then to the register's limit; a fixed number of descending rounds
(plain re-evaluation, which stays sound from a post-fixpoint) then recovers bounds such
as a counter's ``< n`` from the refined back edge.

Seeds (what is assumed known at compile time): the launch — block and grid dimensions
and the scalar kernel parameters (``n``) of the size being compiled, as the paper's
per-kernel indirection table is loaded at launch. So ``%tid.x`` is in
``[0, ntid.x - 1]``, ``%ctaid.x`` in ``[0, nctaid.x - 1]``, ``%ntid.x`` exact, a scalar
parameter exact. Buffer addresses (``.u64`` pointer parameters) and loaded data are not
known: their type's whole range. Widths are 1 bit at least.

A register's range is the union of the results of all its definitions (the paper's merge
of the e-SSA versions of one variable, Fig. 8d). Its width: ``bits`` of the range as an
unsigned number when it has no negative value (zero-extended back), else as a two's
complement signed number (sign-extended back); never more than the declared width.
"""

from collections.abc import Mapping
from dataclasses import dataclass

from gpurf.sim.ptx.cfg import CFG, EXIT, build_cfg
from gpurf.sim.ptx.ir import Imm, Instruction, Kernel, Reg, Special, Sym, Vec, type_width

__all__ = [
    "IntWidth",
    "Interval",
    "LaunchRanges",
    "RangeAnalysis",
    "as_type",
    "domain",
    "interval_width",
    "range_analysis",
]


@dataclass(frozen=True)
class Interval:
    """The integers ``lo..hi`` (inclusive)."""

    lo: int
    hi: int

    def join(self, other: "Interval | None") -> "Interval":
        return self if other is None else Interval(min(self.lo, other.lo),
                                                   max(self.hi, other.hi))

    def meet(self, lo: int | None = None, hi: int | None = None) -> "Interval | None":
        """The part of this interval within ``lo..hi``, ``None`` if empty."""
        new = Interval(self.lo if lo is None else max(self.lo, lo),
                       self.hi if hi is None else min(self.hi, hi))
        return None if new.lo > new.hi else new

    def __str__(self):
        return f"[{self.lo}, {self.hi}]"


def _signed(t: str) -> bool:
    return t[0] == "s"


def domain(t: str) -> Interval:
    """The values of integer type ``t`` (``b`` types are unsigned)."""
    width = type_width(t)
    if _signed(t):
        return Interval(-(1 << (width - 1)), (1 << (width - 1)) - 1)
    return Interval(0, (1 << width) - 1)


def as_type(value: Interval, t: str) -> Interval:
    """``value`` read (or wrapped) as type ``t``: shifted by a multiple of ``2^width`` into
    the type's range when the whole interval lands in it, else the whole range."""
    dom, span = domain(t), 1 << type_width(t)
    k = (value.lo - dom.lo) // span
    if (value.hi - dom.lo) // span != k:
        return dom
    return Interval(value.lo - k * span, value.hi - k * span)


def _register_limits(width: int) -> Interval:
    """Every value a register of ``width`` bits can be said to hold (signed or not)."""
    return Interval(-(1 << (width - 1)), (1 << width) - 1)


def interval_width(value: Interval, register_width: int) -> tuple[int, bool]:
    """``(bits, signed)`` needed to store ``value`` in a register of ``register_width``
    bits and get it back by zero- (``signed`` false) or sign-extension. An interval of
    values at or above ``2^(W-1)`` has the bits of the negative interval ``2^W`` below it,
    which may need fewer (``4294967290`` as ``u32`` is ``-6``: 4 bits, sign-extended)."""
    if value.lo >= 1 << (register_width - 1):
        top = 1 << register_width
        return min(interval_width(value, register_width + 1),
                   interval_width(Interval(value.lo - top, value.hi - top), register_width))
    if value.lo >= 0:
        return max(1, min(register_width, value.hi.bit_length())), False
    bits = 1 + max((-value.lo - 1).bit_length(), value.hi.bit_length())
    if bits > register_width:
        return register_width, value.hi < 1 << (register_width - 1)
    return bits, True


@dataclass(frozen=True)
class IntWidth:
    """The analysed width of one integer virtual register."""

    range: Interval
    bits: int
    signed: bool


@dataclass(frozen=True)
class LaunchRanges:
    """What the analysis knows of the launch: block and grid dimensions and the value of
    every scalar parameter (by ``.param`` name)."""

    block: tuple[int, int, int] = (1024, 1024, 64)
    grid: tuple[int, int, int] = (65535, 65535, 65535)
    params: Mapping[str, int] = None

    @classmethod
    def from_launch(cls, launch, kernel: Kernel) -> "LaunchRanges":
        """The ranges of ``launch`` (a :class:`gpurf.sim.sm.launch.Launch`: its dims and
        scalar params; a host loop's largest grid, and only the params every launch
        shares) of ``kernel``."""
        params = {ptx.name: int(value) for (_, ptype, value), ptx
                  in zip(launch.fixed_params, kernel.params, strict=True)
                  if ptype != "ptr" and ptype[0] in "su" and value is not None}
        return cls(tuple(launch.block), tuple(launch.max_grid), params)

    def special(self, name: str) -> Interval:
        base, _, axis = name.partition(".")
        i = "xyz".index(axis) if axis else 0
        warps = -(-self.block[0] * self.block[1] * self.block[2] // 32)
        exact = {"%ntid": self.block[i], "%nctaid": self.grid[i], "%nwarpid": warps,
                 "%smid": 0}
        if base in exact:
            return Interval(exact[base], exact[base])
        upper = {"%tid": self.block[i], "%ctaid": self.grid[i], "%laneid": 32,
                 "%warpid": warps}
        if base in upper:
            return Interval(0, upper[base] - 1)
        return domain("u32")


State = dict
"""Register -> :class:`Interval` at a program point (an absent register: no value yet)."""


class _Transfer:
    """The abstract effect of one instruction on a :data:`State`."""

    def __init__(self, kernel: Kernel, launch: LaunchRanges):
        self.kernel, self.launch = kernel, launch
        self.shared = {v.name: v.offset for v in kernel.shared}
        self.params = {p.name: p for p in kernel.params}

    def is_int(self, reg: str) -> bool:
        t = self.kernel.regs[reg].type
        return t != "pred" and t[0] != "f"

    def read(self, state: State, op, t: str) -> Interval:
        """Operand ``op`` read as integer type ``t``."""
        if isinstance(op, Reg):
            value = state.get(op.name)
            return domain(t) if value is None else as_type(value, t)
        if isinstance(op, Imm) and not op.float_bits:
            return as_type(Interval(op.value, op.value), t)
        if isinstance(op, Special):
            return as_type(self.launch.special(op.name), t)
        if isinstance(op, Sym) and op.name in self.shared:
            return as_type(Interval(self.shared[op.name], self.shared[op.name]), t)
        return domain(t)

    def result(self, state: State, ins: Instruction) -> Interval | None:
        """The value the instruction writes to its integer destination."""
        base, mods, ops = ins.base, ins.mods, ins.operands
        t = mods[-1]
        dest_t = self.kernel.regs[ins.dests[0]].type
        if isinstance(ops[0], Vec):
            return domain(dest_t)
        if base == "mov" and isinstance(ops[1], Reg) and \
                self.kernel.regs[ops[1].name].width == type_width(t):
            return state.get(ops[1].name, domain(t))
        if base == "ld":
            return self._load(ins, t)
        if base == "cvta":
            return self.read(state, ops[1], "u64")
        if base == "cvt":
            return self._cvt(state, ins)
        if t[0] == "f" or t == "pred":
            return domain(dest_t)
        if base in ("mul", "mad") and "wide" in mods:
            wide = t[0] + str(2 * type_width(t))
            a, b = (self.read(state, op, t) for op in ops[1:3])
            value = _mul(a, b)
            if base == "mad":
                value = _add(value, self.read(state, ops[3], wide))
            return as_type(value, wide)
        func = _OPS.get(base)
        if func is None:
            return domain(dest_t if dest_t[0] != "f" else t)
        args = [self.read(state, op, _SHIFT_TYPE if (base in ("shl", "shr") and i == 1)
                          else t) for i, op in enumerate(ops[1:])]
        if base == "selp":
            args = args[:2]
        value = func(t, mods, *args)
        if "sat" in mods:
            return value.meet(*_bounds(domain("s32"))) or domain("s32")
        return as_type(value, t)

    def _load(self, ins: Instruction, t: str) -> Interval:
        t = {"b8": "u8"}.get(t, t)
        src = ins.operands[1]
        if ins.mods[0] == "param" and isinstance(src.base, Sym):
            known = (self.launch.params or {}).get(src.base.name)
            if known is not None and not src.offset:
                return as_type(Interval(known, known), t)
        return domain(t)

    def _cvt(self, state: State, ins: Instruction) -> Interval:
        dst_t, src_t = ins.mods[-2:]
        if dst_t[0] == "f":
            return domain("u32")
        if src_t[0] == "f":
            return domain(dst_t)
        value = self.read(state, ins.operands[1], src_t)
        if "sat" in ins.mods:
            return value.meet(*_bounds(domain(dst_t))) or domain(dst_t)
        return as_type(value, dst_t)


_SHIFT_TYPE = "u32"


def _bounds(value: Interval) -> tuple[int, int]:
    return value.lo, value.hi


def _add(a: Interval, b: Interval) -> Interval:
    return Interval(a.lo + b.lo, a.hi + b.hi)


def _mul(a: Interval, b: Interval) -> Interval:
    corners = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    return Interval(min(corners), max(corners))


def _magnitude(a: Interval) -> int:
    return max(abs(a.lo), abs(a.hi))


def _trunc_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return -q if (x < 0) != (y < 0) else q


def _div(t, mods, a, b):
    if b.lo > 0 or b.hi < 0:
        corners = [_trunc_div(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return Interval(min(corners), max(corners))
    m = _magnitude(a)
    return Interval(min(0, -m if a.lo < 0 else 0), m if a.hi > 0 else 0)


def _rem(t, mods, a, b):
    m = _magnitude(a)
    if b.lo > 0 or b.hi < 0:
        m = min(m, _magnitude(b) - 1)
    return Interval(max(min(a.lo, 0), -m), min(max(a.hi, 0), m))


def _mul_op(t, mods, a, b, c=None):
    if "hi" in mods:
        return domain(t)
    value = _mul(a, b)
    return value if c is None else _add(value, c)


def _shl(t, mods, a, s):
    if s.hi >= type_width(t):
        return Interval(0, a.hi << min(s.hi, type_width(t))) if a.lo >= 0 else domain(t)
    if a.lo >= 0:
        return Interval(a.lo << s.lo, a.hi << s.hi)
    return Interval(min(a.lo << s.lo, a.lo << s.hi), max(a.hi << s.lo, a.hi << s.hi))


def _shr(t, mods, a, s):
    limit = type_width(t) - 1 if _signed(t) else type_width(t)
    lo_s, hi_s = min(s.lo, limit), min(s.hi, limit)
    values = [x >> y for x in (a.lo, a.hi) for y in (lo_s, hi_s)]
    return Interval(min(values), max(values))


def _and(t, mods, a, b):
    if a.lo >= 0 and b.lo >= 0:
        return Interval(0, min(a.hi, b.hi))
    return domain(t)


def _or(t, mods, a, b):
    if a.lo >= 0 and b.lo >= 0:
        top = (1 << max(a.hi.bit_length(), b.hi.bit_length())) - 1
        return Interval(max(a.lo, b.lo) if mods[0] != "xor" else 0, top)
    return domain(t)


def _abs(t, mods, a):
    if a.lo >= 0:
        return a
    if a.hi <= 0:
        return Interval(-a.hi, -a.lo)
    return Interval(0, _magnitude(a))


_OPS = {
    "add": lambda t, mods, a, b: _add(a, b),
    "sub": lambda t, mods, a, b: Interval(a.lo - b.hi, a.hi - b.lo),
    "mul": _mul_op,
    "mad": _mul_op,
    "div": _div,
    "rem": _rem,
    "min": lambda t, mods, a, b: Interval(min(a.lo, b.lo), min(a.hi, b.hi)),
    "max": lambda t, mods, a, b: Interval(max(a.lo, b.lo), max(a.hi, b.hi)),
    "abs": _abs,
    "neg": lambda t, mods, a: Interval(-a.hi, -a.lo),
    "not": lambda t, mods, a: Interval(domain(t).hi - a.hi, domain(t).hi - a.lo),
    "and": _and,
    "or": _or,
    "xor": lambda t, mods, a, b: _or(t, ("xor",), a, b),
    "shl": _shl,
    "shr": _shr,
    "selp": lambda t, mods, a, b: a.join(b),
    "mov": lambda t, mods, a: a,
}

_NEGATE = {"eq": "ne", "ne": "eq", "lt": "ge", "ge": "lt", "le": "gt", "gt": "le",
           "lo": "hs", "hs": "lo", "ls": "hi", "hi": "ls"}
_SWAP = {"eq": "eq", "ne": "ne", "lt": "gt", "gt": "lt", "le": "ge", "ge": "le",
         "lo": "hi", "hi": "lo", "ls": "hs", "hs": "ls"}


def _refine_one(a: Interval, cmp: str, b: Interval) -> Interval | None:
    """``a`` knowing ``a cmp b`` holds for some value of ``b``."""
    cmp = {"lo": "lt", "ls": "le", "hi": "gt", "hs": "ge"}.get(cmp, cmp)
    if cmp == "lt":
        return a.meet(hi=b.hi - 1)
    if cmp == "le":
        return a.meet(hi=b.hi)
    if cmp == "gt":
        return a.meet(lo=b.lo + 1)
    if cmp == "ge":
        return a.meet(lo=b.lo)
    if cmp == "eq":
        return a.meet(b.lo, b.hi)
    if b.lo == b.hi:
        if a.lo == b.lo:
            return a.meet(lo=a.lo + 1)
        if a.hi == b.lo:
            return a.meet(hi=a.hi - 1)
    return a


def _refine_register(value: Interval, t: str, cmp: str, other: Interval) -> Interval | None:
    """A register's interval knowing ``(value read as t) cmp other``: each piece of the
    interval that one shift maps into ``t``'s range is refined in ``t``'s view and shifted
    back; more than two pieces (a register wider than ``t``): left as it is."""
    dom, span = domain(t), 1 << type_width(t)
    first, last = (value.lo - dom.lo) // span, (value.hi - dom.lo) // span
    if last - first > 1:
        return value
    result = None
    for k in range(first, last + 1):
        piece = value.meet(dom.lo + k * span, dom.hi + k * span)
        if piece is None:
            continue
        refined = _refine_one(Interval(piece.lo - k * span, piece.hi - k * span), cmp, other)
        if refined is not None:
            result = Interval(refined.lo + k * span, refined.hi + k * span).join(result)
    return result


@dataclass(frozen=True)
class _Cond:
    """A branch condition: a ``setp`` (``op`` = None) or ``and``/``or``/``not`` of two."""

    setp: Instruction | None = None
    op: str | None = None
    parts: tuple = ()


class RangeAnalysis:
    """The analysis of one kernel (see the module docstring).

    Attributes
    ----------
    before : list of dict or None
        Per instruction, the state (register -> :class:`Interval`) before it; ``None``
        for unreachable code.
    defs : list of Interval or None
        Per instruction, the interval written to its integer destination.
    widths : dict
        Integer register -> :class:`IntWidth` (registers never written are absent).
    """

    DESCENDING_ROUNDS = 8

    def __init__(self, kernel: Kernel, launch: LaunchRanges | None = None,
                 cfg: CFG | None = None):
        self.kernel = kernel
        self.cfg = cfg or build_cfg(kernel)
        self.transfer = _Transfer(kernel, launch or LaunchRanges())
        self.headers = {head for _, head in self.cfg.back_edges()}
        self.thresholds = self._thresholds()
        self.conditions = [self._condition(b.index) for b in self.cfg.blocks]
        self.block_in = self._solve()
        self.before, self.defs = self._final()
        self.widths = self._widths()

    # -- dataflow -------------------------------------------------------------
    def _run_block(self, index: int, state: State, record=None) -> State:
        block = self.cfg.blocks[index]
        state = dict(state)
        for pc in range(block.start, block.end):
            ins = self.kernel.instructions[pc]
            if record is not None:
                record[0][pc] = dict(state)
            dests = [d for d in ins.dests if self.transfer.is_int(d)]
            for d in dests:
                value = self.transfer.result(state, ins)
                value = value.meet(*_bounds(_register_limits(self.kernel.regs[d].width))) \
                    or _register_limits(self.kernel.regs[d].width)
                if record is not None:
                    record[1][pc] = value
                state[d] = value.join(state.get(d)) if ins.guard is not None else value
        return state

    def _edge(self, index: int, out: State, succ: int) -> State | None:
        """``out`` refined for the edge from block ``index`` to ``succ``."""
        cond = self.conditions[index]
        block = self.cfg.blocks[index]
        last = self.kernel.instructions[block.end - 1]
        if cond is None or len(block.succs) != 2:
            return out
        taken = succ == self.cfg.blocks[index].succs[0]
        return self._refine(out, cond, taken != last.guard_negated)

    def _refine(self, state: State, cond: _Cond, truth: bool) -> State | None:
        if cond.op == "not":
            return self._refine(state, cond.parts[0], not truth)
        if cond.op is not None:
            if (cond.op == "and") != truth:
                return state
            for part in cond.parts:
                state = self._refine(state, part, truth)
                if state is None:
                    return None
            return state
        ins = cond.setp
        cmp, t = ins.mods[0], ins.mods[-1]
        cmp = cmp if truth else _NEGATE[cmp]
        a, b = (self.transfer.read(state, op, t) for op in ins.operands[1:3])
        new = dict(state)
        for op, theirs, rel in ((ins.operands[1], b, cmp), (ins.operands[2], a, _SWAP[cmp])):
            mine = state.get(op.name) if isinstance(op, Reg) else None
            if mine is None:
                if _refine_one(self.transfer.read(state, op, t), rel, theirs) is None:
                    return None
                continue
            refined = _refine_register(mine, t, rel, theirs)
            if refined is None:
                return None
            new[op.name] = refined
        return new

    def _condition(self, index: int) -> _Cond | None:
        """The condition of block ``index``'s guarded branch, from definitions in the
        block whose operands are not redefined before the branch."""
        block = self.cfg.blocks[index]
        code = self.kernel.instructions
        last = code[block.end - 1]
        if not (last.is_branch and last.guard is not None):
            return None

        def cond_of(pred: str, end: int, depth: int = 0) -> _Cond | None:
            for pc in range(end - 1, block.start - 1, -1):
                ins = code[pc]
                if pred not in ins.dests:
                    continue
                if ins.guard is not None or depth > 8:
                    return None
                written = {d for i in range(pc + 1, block.end - 1) for d in code[i].dests}
                if ins.base == "setp" and ins.mods[-1][0] != "f":
                    if any(isinstance(op, Reg) and op.name in written
                           for op in ins.operands[1:3]):
                        return None
                    return _Cond(setp=ins)
                if ins.base in ("and", "or", "not") and ins.mods[-1] == "pred":
                    parts = tuple(cond_of(op.name, pc, depth + 1) for op in ins.operands[1:]
                                  if isinstance(op, Reg))
                    if None in parts or len(parts) != len(ins.operands) - 1:
                        return None
                    return _Cond(op=ins.base, parts=parts)
                return None
            return None

        return cond_of(last.guard, block.end - 1)

    def _in_state(self, index: int, outs: list) -> State | None:
        states = []
        for p in self.cfg.blocks[index].preds:
            if outs[p] is not None:
                edge = self._edge(p, outs[p], index)
                if edge is not None:
                    states.append(edge)
        if index == 0:
            states.append({})
        if not states:
            return None
        merged = {}
        for reg in set().union(*states):
            values = [s[reg] for s in states if reg in s]
            merged[reg] = values[0]
            for v in values[1:]:
                merged[reg] = merged[reg].join(v)
        return merged

    def _thresholds(self) -> list[int]:
        """Widening thresholds: every integer immediate of the kernel, the known launch
        values (block and grid dimensions, scalar parameters), each +-1, and 0."""
        launch = self.transfer.launch
        values = {0, *launch.block, *launch.grid, *(launch.params or {}).values()}
        for ins in self.kernel.instructions:
            values.update(op.value for op in ins.operands
                          if isinstance(op, Imm) and not op.float_bits)
        return sorted({v + d for v in values for d in (-1, 0, 1)})

    def _widen(self, old: State, new: State) -> State:
        """Widening with thresholds: a growing bound jumps to the next threshold
        (:meth:`_thresholds`), then to the register's signed, then unsigned limit."""
        result = {}
        for reg, value in new.items():
            prev = old.get(reg)
            if prev is None:
                result[reg] = value
                continue
            width = self.kernel.regs[reg].width
            lows = [*reversed(self.thresholds), -(1 << (width - 1))]
            highs = [*self.thresholds, (1 << (width - 1)) - 1, (1 << width) - 1]
            lo = prev.lo if value.lo >= prev.lo else next(x for x in lows if x <= value.lo)
            hi = prev.hi if value.hi <= prev.hi else next(x for x in highs if x >= value.hi)
            result[reg] = Interval(lo, hi)
        return result

    def _solve(self) -> list:
        n = len(self.cfg.blocks)
        ins_, outs = [None] * n, [None] * n
        work = list(range(n))
        while work:
            b = work.pop(0)
            state = self._in_state(b, outs)
            if state is None:
                continue
            if b in self.headers and ins_[b] is not None:
                state = self._widen(ins_[b], state)
            if state == ins_[b] and outs[b] is not None:
                continue
            ins_[b] = state
            outs[b] = self._run_block(b, state)
            work.extend(s for s in self.cfg.blocks[b].succs if s != EXIT and s not in work)
        for _ in range(self.DESCENDING_ROUNDS):
            new_ins = [self._in_state(b, outs) for b in range(n)]
            if new_ins == ins_:
                break
            ins_ = new_ins
            outs = [None if s is None else self._run_block(b, s) for b, s in enumerate(ins_)]
        return ins_

    def _final(self):
        code = self.kernel.instructions
        before, defs = [None] * len(code), [None] * len(code)
        for b, state in enumerate(self.block_in):
            if state is not None:
                self._run_block(b, state, (before, defs))
        return before, defs

    def _widths(self) -> dict:
        ranges = {}
        for pc, value in enumerate(self.defs):
            if value is not None:
                d = self.kernel.instructions[pc].dests[0]
                ranges[d] = value.join(ranges.get(d))
        return {reg: IntWidth(value, *interval_width(value, self.kernel.regs[reg].width))
                for reg, value in ranges.items()}


def range_analysis(kernel: Kernel, launch: LaunchRanges | None = None) -> RangeAnalysis:
    """:class:`RangeAnalysis` of ``kernel`` under ``launch`` (default: only the CUDA
    limits on block and grid dimensions, parameters unknown)."""
    return RangeAnalysis(kernel, launch)
