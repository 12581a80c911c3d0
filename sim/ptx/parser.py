"""Parser of the PTX subset nvcc emits for gpurf's kernels.

:func:`parse_ptx` turns PTX text into a :class:`~gpurf.sim.ptx.ir.Module`. Every construct it does
not know — a directive, an instruction, a modifier, an operand form — raises
:class:`PtxError` whose message starts with ``file:line:`` and names what was found and what
was expected; nothing is skipped silently. Comments, ``.pragma``, the ``{ }`` scopes nvcc
wraps around inline assembly and call sequences, ``.loc``/``.file``/``.section`` (debug line
information of a ``-lineinfo`` build, dropped) and performance directives (``.maxntid``,
``.maxnreg``, ..., which do not change what a kernel computes) are accepted.

Calls are inlined here, so every later pass sees one body: a ``.func`` called from a kernel
is copied in at each ``call`` with its registers, labels and ``.local`` variables renamed
apart (suffix ``$cN``), its ``ret`` a branch to the end of the copy. Call-sequence ``.param``
variables (and so the callee's parameters and return values bound to them) become
per-thread ``.local`` variables: ``st.param``/``ld.param`` of them turn into
``st.local``/``ld.local``, a faithful view of the ABI's stack-passed arguments. Recursion
and indirect calls are rejected.
"""

import itertools
import re
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from . import isa
from .ir import (
    CARRY,
    SPACES,
    TYPES,
    Addr,
    Imm,
    Instruction,
    Kernel,
    Label,
    LocalVar,
    Module,
    Pair,
    Param,
    Reg,
    RegDecl,
    SharedVar,
    Special,
    StaticVar,
    Sym,
    Vec,
    type_width,
)

__all__ = ["MAX_PTX_BYTES", "MAX_REGISTERS", "MAX_SHARED_BYTES", "MAX_STATIC_BYTES", "PtxError",
           "load_ptx", "parse_ptx"]


MAX_PTX_BYTES = 16 << 20
"""The largest PTX file gpurf reads (16 MiB; the shipped kernels' are a few KiB)."""
MAX_REGISTERS = 65536
"""The most registers one ``.reg`` range may declare (``%r<N>``); ptxas allocates at most 255
per thread, so larger ranges are typos or hostile input."""
MAX_SHARED_BYTES = 228 << 10
"""The most shared memory one ``.shared`` array may take (228 KiB, the largest per SM of the
architectures the papers model)."""


class PtxError(ValueError):
    """Malformed or unsupported PTX; the message starts with ``file:line:``."""

    def __init__(self, file: str, line: int, message: str):
        super().__init__(f"{file}:{line}: {message}")
        self.file, self.line, self.reason = file, line, message


_TOKEN = re.compile(r"""
    (?P<space>[ \t\r]+) | (?P<newline>\n) | (?P<comment>//[^\n]*|/\*.*?\*/)
  | (?P<string>"[^"\n]*")
  | (?P<float>0[fF][0-9a-fA-F]{8}|0[dD][0-9a-fA-F]{16})
  | (?P<number>0[xX][0-9a-fA-F]+U?|[0-9]+U?)
  | (?P<ident>[A-Za-z_$%.][A-Za-z0-9_$.%]*)
  | (?P<punct>[{}()\[\],;:@!+\-<>|=])
""", re.VERBOSE | re.DOTALL)

SPECIALS = frozenset(
    [f"%{r}.{d}" for r in ("tid", "ntid", "ctaid", "nctaid") for d in "xyz"]
    + ["%laneid", "%warpid", "%nwarpid", "%smid", "%clock"])


def _tokens(text: str, file: str):
    """``(kind, text, line)`` tuples, whitespace and comments dropped."""
    line, pos, out = 1, 0, []
    while pos < len(text):
        match = _TOKEN.match(text, pos)
        if match is None:
            raise PtxError(file, line, f"unexpected character {text[pos]!r}")
        kind, value = match.lastgroup, match.group()
        if kind in ("punct", "ident", "number", "float", "string"):
            out.append((kind, value, line))
        line += value.count("\n")
        pos = match.end()
    out.append(("eof", "end of file", line))
    return out


_PERFORMANCE = (".maxntid", ".reqntid", ".minnctapersm", ".maxnreg", ".maxclusterrank",
                ".noreturn")
MAX_STATIC_BYTES = 16 << 20
"""The most bytes of module-scope ``.global``/``.const`` variables a module may declare."""


class _Parser:
    def __init__(self, text: str, file: str):
        self.file = file
        self.toks = _tokens(text, file)
        self.pos = 0
        self.statics: list[StaticVar] = []
        self.module_shared: list[SharedVar] = []
        self.dynamic_shared: str | None = None
        self.funcs: dict[str, _Body] = {}
        self.entries: list[_Body] = []

    # -- token helpers -------------------------------------------------------------------
    @property
    def tok(self):
        return self.toks[self.pos]

    def error(self, message, line=None):
        return PtxError(self.file, self.tok[2] if line is None else line, message)

    def next(self):
        tok = self.toks[self.pos]
        self.pos += 1
        return tok

    def peek(self, value) -> bool:
        return self.tok[1] == value

    def accept(self, value) -> bool:
        if self.peek(value):
            self.pos += 1
            return True
        return False

    def expect(self, value, context):
        if not self.accept(value):
            raise self.error(f"expected '{value}' {context}, found '{self.tok[1]}'")

    def expect_kind(self, kind, what, context):
        if self.tok[0] != kind:
            raise self.error(f"expected {what} {context}, found '{self.tok[1]}'")
        return self.next()[1]

    def number(self, context) -> int:
        negative = self.accept("-")
        text = self.expect_kind("number", "a number", context).rstrip("U")
        value = int(text, 16) if text[:2] in ("0x", "0X") else int(text)
        return -value if negative else value

    def skip_line(self, line):
        """Drop the rest of a directive that ends at the end of its line (``.loc``)."""
        while self.tok[0] != "eof" and self.tok[2] == line:
            self.next()

    # -- module level --------------------------------------------------------------------
    def module(self) -> Module:
        header = {}
        for directive in (".version", ".target", ".address_size"):
            if not self.peek(directive):
                raise self.error(f"expected '{directive}', found '{self.tok[1]}'")
            self.next()
            _, value, line = self.next()
            if directive == ".version" and re.fullmatch(r"\.[0-9]+", self.tok[1]):
                value += self.next()[1]
            header[directive] = value
        if header[".address_size"] != "64":
            raise self.error(f"expected .address_size 64, found {header['.address_size']}", line)
        while self.tok[0] != "eof":
            self.module_statement()
        if not self.entries:
            raise self.error("no .entry in the module")
        kernels = {}
        for body in self.entries:
            kernels[body.name] = body.kernel()
        return Module(header[".version"], header[".target"], 64, kernels, self.file)

    def module_statement(self):
        linkage = set()
        while self.tok[1] in (".visible", ".weak", ".extern"):
            linkage.add(self.next()[1])
        value = self.tok[1]
        if value == ".entry":
            self.entries.append(self.function(entry=True))
        elif value == ".func":
            body = self.function(entry=False)
            if body is not None:
                if body.name in self.funcs:
                    raise self.error(f".func '{body.name}' defined twice", body.line)
                self.funcs[body.name] = body
        elif value in (".global", ".const"):
            self.static_decl()
        elif value == ".shared":
            self.module_shared_decl(".extern" in linkage)
        elif value == ".file":
            self.skip_line(self.next()[2])
        elif value == ".section":
            self.skip_section()
        else:
            raise self.error(f"unsupported module-level directive '{value}' (expected '.entry', "
                             "'.func', '.global', '.const', '.shared', '.file' or '.section')")

    def skip_section(self):
        """Skip a ``.section`` (DWARF data nvcc emits with ``-lineinfo``): its name and its
        ``{ }`` block."""
        self.next()
        self.expect_kind("ident", "a section name", "after '.section'")
        self.expect("{", "to open the .section")
        depth = 1
        while depth:
            kind, value, _ = self.next()
            if kind == "eof":
                raise self.error("expected '}' to close the .section, found end of file")
            depth += {"{": 1, "}": -1}.get(value, 0) if kind == "punct" else 0

    def function(self, entry: bool):
        """An ``.entry`` or ``.func``: its parameters and body (``None`` for a ``.func``
        prototype without body)."""
        line = self.next()[2]
        retvals = ()
        if not entry and self.peek("("):
            retvals = self.param_list("return value")
        name = self.expect_kind("ident", "a function name",
                                f"after '{'.entry' if entry else '.func'}'")
        params = self.param_list("parameter") if entry or self.peek("(") else ()
        while self.tok[1] in _PERFORMANCE:
            directive = self.next()[1]
            if directive != ".noreturn":
                self.number(f"after '{directive}'")
                while self.accept(","):
                    self.number(f"after '{directive}'")
        if not entry and self.accept(";"):
            return None
        self.expect("{", f"to open the body of '{name}'")
        body = _Body(self, name, params, retvals, line, "kernel" if entry else "function")
        body.parse()
        return body

    def param_list(self, what) -> tuple[Param, ...]:
        params, offset = [], 0
        self.expect("(", f"to open the {what} list")
        while not self.accept(")"):
            if params:
                self.expect(",", f"between {what}s")
            self.expect(".param", f"to declare a {what}")
            param = self.param_decl(offset, what)
            offset = param.offset + param.size
            params.append(param)
        return tuple(params)

    def param_decl(self, offset, what) -> Param:
        """``[.align N] .type [.ptr [.space] [.align N]] name[[count]]`` after ``.param``."""
        align = self.number("after '.align'") if self.accept(".align") else 0
        ptype = self.declared_type("after '.param'")
        if self.accept(".ptr"):
            if self.tok[1] in (".global", ".shared", ".local", ".const"):
                self.next()
            if self.accept(".align"):
                self.number("after '.align'")
        name = self.expect_kind("ident", f"a {what} name", "in .param")
        count = 1
        if self.accept("["):
            count = self.number("as the .param array size")
            if not 0 < count * type_width(ptype) // 8 <= MAX_SHARED_BYTES:
                raise self.error(f".param array {name}[{count}]: between 1 and "
                                 f"{MAX_SHARED_BYTES:,} bytes are allowed")
            self.expect("]", "after the array size")
        align = max(align, type_width(ptype) // 8, 1)
        return Param(name, ptype, -(-offset // align) * align, count, align)

    def declared_type(self, context) -> str:
        word = self.expect_kind("ident", "a type", context)
        if not word.startswith(".") or word[1:] not in TYPES:
            raise self.error(f"expected a type (.u32, .f32, .b64, ...) {context}, found "
                             f"'{word}'", self.toks[self.pos - 1][2])
        return word[1:]

    def variable(self, directive, limit, allow_unsized=False):
        """``[.align N] .type name[[count]]`` after ``directive``: ``(name, type, count,
        align, line)``; ``count`` is ``None`` for ``name[]`` when ``allow_unsized``."""
        line = self.tok[2]
        align = self.number("after '.align'") if self.accept(".align") else 1
        vtype = self.declared_type(f"in {directive}")
        name = self.expect_kind("ident", "a variable name", f"in {directive}")
        count = 1
        if self.accept("["):
            if allow_unsized and self.peek("]"):
                count = None
            else:
                count = self.number(f"as the {directive} array size")
                if not 0 < count * type_width(vtype) // 8 <= limit:
                    raise self.error(f"{directive} array {name}[{count}]: between 1 and "
                                     f"{limit:,} bytes are allowed")
            self.expect("]", "after the array size")
        return name, vtype, count, max(align, type_width(vtype) // 8), line

    def static_decl(self):
        """A module-scope ``.global`` or ``.const`` variable, with its initializer."""
        space = self.next()[1][1:]
        name, vtype, count, align, line = self.variable(f".{space}", MAX_STATIC_BYTES, True)
        values = []
        if self.accept("="):
            if self.accept("{"):
                values.append(self.literal(vtype))
                while self.accept(","):
                    values.append(self.literal(vtype))
                self.expect("}", "to close the initializer")
            else:
                values.append(self.literal(vtype))
        self.expect(";", f"after .{space}")
        count = len(values) if count is None else count
        if len(values) > count:
            raise PtxError(self.file, line, f".{space} {name}: {len(values)} initial values for "
                           f"{count} elements")
        if any(v.name == name for v in self.statics):
            raise PtxError(self.file, line, f".{space} variable '{name}' declared twice")
        end = max((v.offset + len(v.data) for v in self.statics), default=0)
        offset = -(-end // align) * align
        if offset + count * type_width(vtype) // 8 > MAX_STATIC_BYTES:
            raise PtxError(self.file, line, f"module variables exceed {MAX_STATIC_BYTES:,} bytes")
        self.statics.append(StaticVar(name, space, offset, _pack(values, vtype, count)))

    def literal(self, vtype) -> int | float:
        """One initializer value: an integer or a ``0f``/``0d`` float literal's bits."""
        if self.tok[0] == "float":
            text = self.next()[1]
            if type_width(vtype) != (32 if text[1] in "fF" else 64):
                raise self.error(f"float literal {text} initializes a .{vtype}")
            return int(text[2:], 16)
        value = self.number(f"in the .{vtype} initializer")
        return float(value) if vtype[0] == "f" else value

    def module_shared_decl(self, extern: bool):
        line = self.next()[2]
        name, vtype, count, align, _ = self.variable(".shared", MAX_SHARED_BYTES, extern)
        self.expect(";", "after .shared")
        if extern:
            if count is not None:
                raise PtxError(self.file, line, f".extern .shared {name} needs no size: "
                               "expected '[]'")
            self.dynamic_shared = name
            return
        _add_shared(self.module_shared, name, count * type_width(vtype) // 8, align, self.file,
                    line)


def _pack(values, vtype, count) -> bytes:
    """The bytes of ``count`` elements of ``vtype``, ``values`` first, zeros after."""
    width = type_width(vtype)
    raw = np.zeros(count, np.dtype(f"u{width // 8}") if width > 1 else np.uint8)
    for i, value in enumerate(values):
        if isinstance(value, float):
            raw[i] = np.array(value, {32: np.float32, 64: np.float64}[width]).view(raw.dtype)
        else:
            raw[i] = value & ((1 << width) - 1)
    return raw.tobytes()


def _add_shared(shared: list, name, size, align, file, line):
    if any(v.name == name for v in shared):
        raise PtxError(file, line, f".shared variable '{name}' declared twice")
    end = max((v.offset + v.size for v in shared), default=0)
    shared.append(SharedVar(name, -(-end // align) * align, size, align))


@dataclass
class _Frame:
    """The renaming of one inlined call: its suffix, the callee's parameters and return
    values bound to the caller's call-sequence ``.param`` variables, its return label."""

    suffix: str
    binding: dict
    end: str
    local: frozenset


class _Body:
    """The statements of one ``.entry`` or ``.func`` body."""

    def __init__(self, parser: _Parser, name: str, params: tuple[Param, ...],
                 retvals: tuple[Param, ...], line: int, kind: str):
        self.p = parser
        self.name = name
        self.params = params
        self.retvals = retvals
        self.line = line
        self.kind = kind
        self.regs: dict[str, RegDecl] = {}
        self.shared: list[SharedVar] = list(parser.module_shared)
        self.local: list[tuple[str, int, int]] = []
        """``(name, size, align)`` of each ``.local`` and call-sequence ``.param``."""
        self.param_names: dict[str, str] = {}
        """A call-sequence ``.param`` name -> its local variable, the latest declaration."""
        self.statements: list = []
        """Instructions and ``(label, line)`` tuples, in order."""
        self.labels: set = set()

    def parse(self):
        depth = 1
        while depth:
            p = self.p
            kind, value, line = p.tok
            if kind == "eof":
                raise p.error(f"expected '}}' to close {self.kind} '{self.name}', found end of "
                              "file")
            if p.accept("{"):
                depth += 1
            elif p.accept("}"):
                depth -= 1
            elif value == ".reg":
                self.reg_decl()
            elif value == ".shared":
                p.next()
                name, vtype, count, align, _ = p.variable(".shared", MAX_SHARED_BYTES)
                p.expect(";", "after .shared")
                _add_shared(self.shared, name, count * type_width(vtype) // 8, align, p.file,
                            line)
            elif value in (".local", ".param"):
                self.frame_decl()
            elif value == ".loc":
                p.skip_line(line)
            elif value == ".pragma":
                p.next()
                p.expect_kind("string", "a string", "after '.pragma'")
                p.expect(";", "after .pragma")
            elif kind == "ident" and p.toks[p.pos + 1][1] == ":":
                if value in self.labels:
                    raise p.error(f"label '{value}' defined twice")
                self.labels.add(value)
                self.statements.append((value, line))
                p.pos += 2
            elif value.startswith("."):
                raise p.error(f"unsupported directive '{value}' in a function body")
            else:
                self.statements.append(self.instruction())

    def reg_decl(self):
        p = self.p
        p.next()
        rtype = p.declared_type("after '.reg'")
        while True:
            name = p.expect_kind("ident", "a register name", "in .reg")
            if name.startswith("."):
                raise p.error(f"expected a register name, found '{name}'")
            if p.accept("<"):
                count = p.number("in a .reg range")
                if not 0 < count <= MAX_REGISTERS:
                    raise p.error(f".reg range {name}<{count}>: a kernel declares between 1 "
                                  f"and {MAX_REGISTERS:,} registers of a name")
                p.expect(">", "to close the .reg range")
                names = [f"{name}{i}" for i in range(count)]
            else:
                names = [name]
            for reg in names:
                if reg in self.regs and self.regs[reg].type != rtype:
                    raise p.error(f"register '{reg}' declared as .{self.regs[reg].type} "
                                  f"and .{rtype}")
                self.regs[reg] = RegDecl(reg, rtype)
            if not p.accept(","):
                break
        p.expect(";", "after .reg")

    def frame_decl(self):
        """A ``.local`` variable, or a call sequence's ``.param`` (a per-thread variable of
        the local frame; a later one of the same name, in another call sequence, is a
        new variable)."""
        p = self.p
        directive = p.next()[1]
        name, vtype, count, align, line = p.variable(directive, MAX_SHARED_BYTES)
        p.expect(";", f"after {directive}")
        size = count * type_width(vtype) // 8
        if directive == ".param":
            unique = f"{name}${len(self.local)}"
            self.param_names[name] = unique
            name = unique
        elif any(v[0] == name for v in self.local):
            raise PtxError(p.file, line, f".local variable '{name}' declared twice")
        self.local.append((name, size, align))

    def instruction(self) -> Instruction:
        p = self.p
        line = p.tok[2]
        guard, negated = None, False
        if p.accept("@"):
            negated = p.accept("!")
            guard = p.expect_kind("ident", "a predicate register", "after '@'")
        opcode = p.expect_kind("ident", "an instruction", "")
        base, *mods = opcode.split(".")
        if base == "call":
            if guard is not None:
                raise PtxError(p.file, line, f"unsupported: a guarded '{opcode}'")
            return self.call(opcode, tuple(mods), line)
        if base in isa.OUTSIDE:
            raise PtxError(p.file, line, f"unsupported instruction '{opcode}' ({isa.OUTSIDE[base]} "
                           "instructions are outside gpurf's PTX subset)")
        if base not in isa.OPCODES:
            raise PtxError(p.file, line, f"unsupported instruction '{opcode}'")
        if base not in ("ld", "st", "cvt", "mov") and isa.HALF.intersection(mods):
            raise PtxError(p.file, line, f"unsupported instruction '{opcode}' (f16/bf16 "
                           "arithmetic is outside gpurf's PTX subset)")
        operands = []
        if not p.peek(";"):
            operands.append(self.operand(opcode))
            while p.accept(","):
                operands.append(self.operand(opcode))
        if not p.peek(";"):
            raise p.error(f"expected ',' or ';' after the operands of '{opcode}', found "
                          f"'{p.tok[1]}'", line)
        p.next()
        problem = isa.check(base, tuple(mods), len(operands))
        if problem is not None:
            raise PtxError(p.file, line, f"{problem} in '{opcode}'")
        ins = Instruction(opcode, base, tuple(mods), tuple(operands), guard, negated, line)
        return self.frame_access(ins)

    def frame_access(self, ins: Instruction) -> Instruction:
        """A ``ld.param``/``st.param`` of a call sequence's ``.param`` becomes ``.local``."""
        if ins.base in ("ld", "st") and ins.space == "param":
            address = ins.operands[0 if ins.base == "st" else 1]
            if isinstance(address.base, Sym) and address.base.name in self._frame_names():
                return _respace(ins, "local")
        return ins

    def _frame_names(self):
        return {name for name, _, _ in self.local}

    def call(self, opcode, mods, line) -> Instruction:
        """``call[.uni] [(ret, ...),] func[, (arg, ...)];`` kept as an instruction whose
        operands are the function and two :class:`Vec` of symbols, inlined later."""
        p = self.p
        if mods not in ((), ("uni",)):
            raise PtxError(p.file, line, f"unsupported modifier in '{opcode}'")
        rets = self.symbol_list(opcode) if p.peek("(") else ()
        if rets:
            p.expect(",", f"after the return values of '{opcode}'")
        func = p.expect_kind("ident", "a function name", f"in '{opcode}'")
        if func.startswith("%"):
            raise PtxError(p.file, line, f"unsupported: an indirect call ('{opcode}' through "
                           f"{func})")
        args = ()
        if p.accept(","):
            if not p.peek("("):
                raise PtxError(p.file, line, f"unsupported: an indirect call ('{opcode}' with "
                               "a prototype)")
            args = self.symbol_list(opcode)
        p.expect(";", f"after '{opcode}'")
        return Instruction(opcode, "call", mods, (Sym(func), Vec(rets), Vec(args)), None,
                           False, line)

    def symbol_list(self, opcode) -> tuple:
        p = self.p
        p.expect("(", f"in '{opcode}'")
        names = []
        while not p.accept(")"):
            if names:
                p.expect(",", f"between the parameters of '{opcode}'")
            name = p.expect_kind("ident", "a .param name", f"in '{opcode}'")
            if name not in self.param_names:
                raise p.error(f"'{name}' in '{opcode}' is not a .param of the call sequence")
            names.append(Sym(self.param_names[name]))
        return tuple(names)

    def operand(self, opcode):
        p = self.p
        kind, value, _ = p.tok
        if value == "[":
            p.next()
            base = p.expect_kind("ident", "an address", f"in '{opcode}'")
            offset = 0
            if p.accept("+"):
                offset = p.number(f"as an address offset in '{opcode}'")
            p.expect("]", f"to close the address in '{opcode}'")
            return Addr(self.name_operand(base, opcode), offset)
        if value == "{":
            p.next()
            items = [self.operand(opcode)]
            while p.accept(","):
                items.append(self.operand(opcode))
            p.expect("}", f"to close the vector operand in '{opcode}'")
            if not all(isinstance(item, Reg | Imm) for item in items):
                raise p.error(f"a vector operand holds registers or immediates in '{opcode}'")
            return Vec(tuple(items))
        if kind == "float":
            p.next()
            return Imm(int(value[2:], 16), 32 if value[1] in "fF" else 64)
        if kind == "number" or value == "-":
            return Imm(p.number(f"in '{opcode}'"))
        if kind != "ident":
            raise p.error(f"expected an operand in '{opcode}', found '{value}'")
        p.next()
        if value in SPECIALS:
            return Special(value)
        if opcode.startswith("bra"):
            return Label(value)
        op = self.name_operand(value, opcode)
        if isinstance(op, Reg) and p.accept("|"):
            second = p.expect_kind("ident", "a predicate register", f"after '|' in '{opcode}'")
            return Pair(op, Reg(second))
        return op

    def name_operand(self, name, opcode):
        """A register (``%r1``, or a declared name without ``%``) or a symbol (a call
        sequence's ``.param`` by its latest declaration)."""
        if name.startswith("%") or name in self.regs:
            return Reg(name)
        return Sym(self.param_names.get(name, name))

    # -- the kernel ----------------------------------------------------------------------
    def kernel(self) -> Kernel:
        counter = itertools.count()
        statements, regs, local = _expand(self, self.p.funcs, (self.name,), counter)
        instructions, labels = [], {}
        for st in statements:
            if isinstance(st, tuple):
                labels[st[0]] = len(instructions)
            else:
                instructions.append(st)
        if any(CARRY in (*ins.dests, *ins.sources) for ins in instructions):
            regs[CARRY] = RegDecl(CARRY, "pred")
        frame, offset = [], 0
        for name, size, align in local:
            offset = -(-offset // align) * align
            frame.append(LocalVar(name, offset, size))
            offset += size
        p = self.p
        kernel = Kernel(self.name, self.params, regs, tuple(self.shared), tuple(instructions),
                        labels, p.file, self.line, tuple(frame), tuple(p.statics),
                        p.dynamic_shared)
        symbols = ({q.name for q in self.params} | {v.name for v in self.shared}
                   | {v.name for v in frame} | {v.name for v in p.statics}
                   | ({p.dynamic_shared} if p.dynamic_shared else set()))
        for ins in instructions:
            for op in (*ins.operands, *([Reg(ins.guard)] if ins.guard else [])):
                _check_operand(p.file, ins, op, symbols, regs, labels)
        return kernel


def _check_operand(file, ins, op, symbols, regs, labels):
    for item in (op.items if isinstance(op, Vec) else
                 (op.first, op.second) if isinstance(op, Pair) else (op,)):
        if isinstance(item, Addr):
            item = item.base
        if isinstance(item, Reg) and item.name not in regs:
            raise PtxError(file, ins.line, f"undeclared register '{item.name}' in "
                           f"'{ins.opcode}'")
        if isinstance(item, Sym) and item.name not in symbols:
            raise PtxError(file, ins.line, f"unknown symbol '{item.name}' in '{ins.opcode}'")
        if isinstance(item, Label) and item.name not in labels:
            raise PtxError(file, ins.line, f"unknown label '{item.name}' in '{ins.opcode}'")


def _respace(ins: Instruction, space: str) -> Instruction:
    mods = (space, *ins.mods[1:]) if ins.mods and ins.mods[0] in SPACES else (space, *ins.mods)
    return replace(ins, opcode=".".join((ins.base, *mods)), mods=mods)


def _expand(body: _Body, funcs, stack, counter):
    """``body``'s statements with every ``call`` replaced by the callee's body (itself
    expanded), renamed apart; and the registers and local variables that takes."""
    out, regs, local = [], dict(body.regs), list(body.local)
    file = body.p.file
    for st in body.statements:
        if isinstance(st, tuple) or st.base != "call":
            out.append(st)
            continue
        name = st.operands[0].name
        if name in stack:
            raise PtxError(file, st.line, f"unsupported: recursive call of '{name}' cannot be "
                           "inlined")
        callee = funcs.get(name)
        if callee is None:
            raise PtxError(file, st.line, f"call of '{name}', which the module does not define")
        rets, args = st.operands[1].items, st.operands[2].items
        if (len(rets), len(args)) != (len(callee.retvals), len(callee.params)):
            raise PtxError(file, st.line, f"'{name}' takes {len(callee.params)} parameters "
                           f"and returns {len(callee.retvals)} values; the call passes "
                           f"{len(args)} and receives {len(rets)}")
        sizes = {n: size for n, size, _ in local}
        for formal, actual in zip((*callee.retvals, *callee.params), (*rets, *args),
                                  strict=True):
            if sizes[actual.name] < formal.size:
                raise PtxError(file, st.line, f"'{actual.name.split('$')[0]}' has "
                               f"{sizes[actual.name]} bytes, {name}'s '{formal.name}' "
                               f"{formal.size}")
        inner, inner_regs, inner_local = _expand(callee, funcs, (*stack, name), counter)
        suffix = f"$c{next(counter)}"
        binding = {f.name: a.name for f, a in zip((*callee.retvals, *callee.params),
                                                  (*rets, *args), strict=True)}
        frame = _Frame(suffix, binding, f"$L__return{suffix}",
                       frozenset(n for n, _, _ in inner_local))
        regs.update({r + suffix: replace(d, name=r + suffix) for r, d in inner_regs.items()})
        local.extend((n + suffix, size, align) for n, size, align in inner_local)
        out.extend(_renamed(s, frame) for s in inner)
        out.append((frame.end, st.line))
    return out, regs, local


def _renamed(st, frame: _Frame):
    """A statement of an inlined body, renamed for ``frame``: registers, labels and locals
    get its suffix, parameters become the call's, ``ret`` a branch to the return label."""
    if isinstance(st, tuple):
        return (st[0] + frame.suffix, st[1])
    guard = None if st.guard is None else st.guard + frame.suffix
    if st.base == "ret":
        return replace(st, opcode="bra", base="bra", mods=(), operands=(Label(frame.end),),
                       guard=guard)
    operands = tuple(_rename_operand(op, frame) for op in st.operands)
    ins = replace(st, operands=operands, guard=guard)
    if ins.base in ("ld", "st") and ins.space == "param":
        ins = _respace(ins, "local")
    return ins


def _rename_operand(op, frame: _Frame):
    if isinstance(op, Reg):
        return Reg(op.name + frame.suffix)
    if isinstance(op, Label):
        return Label(op.name + frame.suffix)
    if isinstance(op, Sym):
        if op.name in frame.binding:
            return Sym(frame.binding[op.name])
        return Sym(op.name + frame.suffix) if op.name in frame.local else op
    if isinstance(op, Addr):
        return Addr(_rename_operand(op.base, frame), op.offset)
    if isinstance(op, Vec):
        return Vec(tuple(_rename_operand(item, frame) for item in op.items))
    if isinstance(op, Pair):
        return Pair(_rename_operand(op.first, frame), _rename_operand(op.second, frame))
    return op


def parse_ptx(text: str, file: str = "<ptx>") -> Module:
    """Parse PTX ``text``; ``file`` names it in error messages."""
    return _Parser(text, file).module()


def load_ptx(path: str | Path) -> Module:
    """Parse the PTX file at ``path`` (UTF-8 text of at most :data:`MAX_PTX_BYTES`)."""
    path = Path(path)
    size = path.stat().st_size
    if size > MAX_PTX_BYTES:
        raise PtxError(str(path), 1, f"{size:,} bytes of PTX; at most {MAX_PTX_BYTES:,}")
    try:
        text = path.read_text()
    except UnicodeDecodeError as error:
        raise PtxError(str(path), 1, f"not PTX text (byte {error.start} is not UTF-8)") from None
    return parse_ptx(text, str(path))
