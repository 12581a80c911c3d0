"""Parser of the PTX subset nvcc emits for gpurf's kernels.

:func:`parse_ptx` turns PTX text into a :class:`~gpurf.sim.ptx.ir.Module`. Every construct it does
not know — a directive, an instruction, a modifier, an operand form — raises
:class:`PtxError` whose message starts with ``file:line:`` and names what was found and what
was expected; nothing is skipped silently. Comments, ``.pragma`` and the ``{ }`` scopes nvcc
wraps around inline assembly are accepted.
"""

import re
from pathlib import Path

from . import isa
from .ir import (
    TYPES,
    Addr,
    Imm,
    Instruction,
    Kernel,
    Label,
    Module,
    Param,
    Reg,
    RegDecl,
    SharedVar,
    Special,
    Sym,
    type_width,
)

__all__ = ["MAX_PTX_BYTES", "MAX_REGISTERS", "MAX_SHARED_BYTES", "PtxError", "load_ptx",
           "parse_ptx"]


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
  | (?P<punct>[{}()\[\],;:@!+\-<>|])
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


class _Parser:
    def __init__(self, text: str, file: str):
        self.file = file
        self.toks = _tokens(text, file)
        self.pos = 0

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
        kernels = {}
        while self.tok[0] != "eof":
            if self.peek(".visible"):
                self.next()
            if not self.peek(".entry"):
                raise self.error(f"unsupported module-level directive '{self.tok[1]}' "
                                 "(expected '.entry')")
            kernel = self.entry()
            kernels[kernel.name] = kernel
        if not kernels:
            raise self.error("no .entry in the module")
        return Module(header[".version"], header[".target"], 64, kernels, self.file)

    def entry(self) -> Kernel:
        line = self.next()[2]
        name = self.expect_kind("ident", "a kernel name", "after '.entry'")
        params, offset = [], 0
        self.expect("(", "after the kernel name")
        while not self.accept(")"):
            if params:
                self.expect(",", "between parameters")
            self.expect(".param", "to declare a parameter")
            ptype = self.declared_type("after '.param'")
            size = type_width(ptype) // 8
            offset = -(-offset // size) * size
            params.append(Param(self.expect_kind("ident", "a parameter name", "in .param"),
                                ptype, offset))
            offset += size
        if self.tok[1] in (".maxntid", ".reqntid", ".minnctapersm", ".maxnreg"):
            raise self.error(f"unsupported performance directive '{self.tok[1]}'")
        self.expect("{", "to open the kernel body")
        body = _Body(self, name, tuple(params))
        body.parse()
        return body.kernel(line)

    def declared_type(self, context) -> str:
        word = self.expect_kind("ident", "a type", context)
        if not word.startswith(".") or word[1:] not in TYPES:
            raise self.error(f"expected a type (.u32, .f32, .b64, ...) {context}, found "
                             f"'{word}'", self.toks[self.pos - 1][2])
        return word[1:]


class _Body:
    """The statements of one kernel body."""

    def __init__(self, parser: _Parser, name: str, params: tuple[Param, ...]):
        self.p = parser
        self.name = name
        self.params = params
        self.regs: dict[str, RegDecl] = {}
        self.shared: list[SharedVar] = []
        self.instructions: list[Instruction] = []
        self.labels: dict[str, int] = {}
        self.label_lines: dict[str, int] = {}

    def parse(self):
        depth = 1
        while depth:
            p = self.p
            kind, value, line = p.tok
            if kind == "eof":
                raise p.error(f"expected '}}' to close kernel '{self.name}', found end of file")
            if p.accept("{"):
                depth += 1
            elif p.accept("}"):
                depth -= 1
            elif value == ".reg":
                self.reg_decl()
            elif value == ".shared":
                self.shared_decl()
            elif value == ".pragma":
                p.next()
                p.expect_kind("string", "a string", "after '.pragma'")
                p.expect(";", "after .pragma")
            elif kind == "ident" and p.toks[p.pos + 1][1] == ":":
                if value in self.labels:
                    raise p.error(f"label '{value}' defined twice")
                self.labels[value] = len(self.instructions)
                self.label_lines[value] = line
                p.pos += 2
            elif value.startswith("."):
                raise p.error(f"unsupported directive '{value}' in a kernel body")
            else:
                self.instructions.append(self.instruction())

    def reg_decl(self):
        p = self.p
        p.next()
        rtype = p.declared_type("after '.reg'")
        while True:
            name = p.expect_kind("ident", "a register name", "in .reg")
            if not name.startswith("%"):
                raise p.error(f"expected a register name starting with '%', found '{name}'")
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
                self.regs[reg] = RegDecl(reg, rtype)
            if not p.accept(","):
                break
        p.expect(";", "after .reg")

    def shared_decl(self):
        p = self.p
        line = p.next()[2]
        align = 1
        if p.accept(".align"):
            align = p.number("after '.align'")
        stype = p.declared_type("in .shared")
        name = p.expect_kind("ident", "a variable name", "in .shared")
        count = 1
        if p.accept("["):
            count = p.number("as the .shared array size")
            if not 0 < count * type_width(stype) // 8 <= MAX_SHARED_BYTES:
                raise p.error(f".shared array {name}[{count}]: between 1 and "
                              f"{MAX_SHARED_BYTES:,} bytes are allowed")
            p.expect("]", "after the array size")
        p.expect(";", "after .shared")
        align = max(align, type_width(stype) // 8)
        end = max((v.offset + v.size for v in self.shared), default=0)
        offset = -(-end // align) * align
        if any(v.name == name for v in self.shared):
            raise PtxError(p.file, line, f".shared variable '{name}' declared twice")
        self.shared.append(SharedVar(name, offset, count * type_width(stype) // 8, align))

    def instruction(self) -> Instruction:
        p = self.p
        line = p.tok[2]
        guard, negated = None, False
        if p.accept("@"):
            negated = p.accept("!")
            guard = p.expect_kind("ident", "a predicate register", "after '@'")
        opcode = p.expect_kind("ident", "an instruction", "")
        base, *mods = opcode.split(".")
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
        if problem == isa.UNSUPPORTED:
            raise PtxError(p.file, line, f"unsupported instruction '{opcode}'")
        if problem is not None:
            raise PtxError(p.file, line, f"{problem} in '{opcode}'")
        return Instruction(opcode, base, tuple(mods), tuple(operands), guard, negated, line)

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
            return Addr(Reg(base) if base.startswith("%") else Sym(base), offset)
        if value == "{":
            raise p.error(f"unsupported vector operand in '{opcode}'")
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
        if value.startswith("%"):
            return Reg(value)
        if opcode.startswith("bra"):
            return Label(value)
        return Sym(value)

    def kernel(self, line) -> Kernel:
        file = self.p.file
        symbols = {p.name for p in self.params} | {v.name for v in self.shared}
        for ins in self.instructions:
            for op in (*ins.operands, *([Reg(ins.guard)] if ins.guard else [])):
                self.check_operand(ins, op, symbols)
        return Kernel(self.name, self.params, dict(self.regs), tuple(self.shared),
                      tuple(self.instructions), dict(self.labels), file, line)

    def check_operand(self, ins, op, symbols):
        file = self.p.file
        if isinstance(op, Addr):
            op = op.base
        if isinstance(op, Reg) and op.name not in self.regs:
            raise PtxError(file, ins.line, f"undeclared register '{op.name}' in '{ins.opcode}'")
        if isinstance(op, Sym) and op.name not in symbols:
            raise PtxError(file, ins.line, f"unknown symbol '{op.name}' in '{ins.opcode}'")
        if isinstance(op, Label) and op.name not in self.labels:
            raise PtxError(file, ins.line, f"unknown label '{op.name}' in '{ins.opcode}'")


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
