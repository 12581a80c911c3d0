"""The PTX intermediate representation: operands, instructions, kernels.

A :class:`Kernel` is one ``.entry``: its parameters, its register and shared-memory
declarations, and a flat tuple of :class:`Instruction` (labels resolved to instruction
indices in :attr:`Kernel.labels`). Everything else (CFG, dominators, liveness, register
allocation, execution) is computed from this, so passes stay independent of the parser.

Register names are PTX virtual registers (``%r12``, ``%rd3``, ``%p1``). Each has a
:class:`RegDecl` giving its type; :attr:`RegDecl.width` is its size in bits (1 for
predicates), from which the register allocator derives how many 32-bit physical
registers it takes.
"""

from dataclasses import dataclass, field

__all__ = [
    "Addr", "Imm", "Instruction", "Kernel", "Label", "Module", "Param", "Reg", "RegDecl",
    "SharedVar", "Special", "Sym", "type_width",
]

_WIDTHS = {"pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16,
           "b32": 32, "u32": 32, "s32": 32, "f32": 32, "b64": 64, "u64": 64, "s64": 64,
           "f64": 64}

TYPES = frozenset(_WIDTHS)


def type_width(ptx_type: str) -> int:
    """Bits of a PTX fundamental type (``"f32"`` -> 32; ``"pred"`` -> 1)."""
    return _WIDTHS[ptx_type]


@dataclass(frozen=True, slots=True)
class Reg:
    """A virtual register operand, e.g. ``%r3``."""

    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True, slots=True)
class Special:
    """A special register, e.g. ``%tid.x``, ``%ctaid.y``, ``%laneid``."""

    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True, slots=True)
class Imm:
    """An immediate. ``value`` is an int, or the raw bits of a ``0f``/``0d`` float
    literal with ``float_bits`` = 32 or 64 (0 for integers)."""

    value: int
    float_bits: int = 0

    def __str__(self):
        if self.float_bits == 32:
            return f"0f{self.value:08X}"
        if self.float_bits == 64:
            return f"0d{self.value:016X}"
        return str(self.value)


@dataclass(frozen=True, slots=True)
class Sym:
    """A named variable (a ``.param`` or ``.shared`` symbol) used as a value."""

    name: str

    def __str__(self):
        return self.name


@dataclass(frozen=True, slots=True)
class Addr:
    """A memory operand ``[base+offset]``; ``base`` is a :class:`Reg` or :class:`Sym`."""

    base: Reg | Sym
    offset: int = 0

    def __str__(self):
        return f"[{self.base}{'' if not self.offset else f'+{self.offset}'}]"


@dataclass(frozen=True, slots=True)
class Label:
    """A branch target."""

    name: str

    def __str__(self):
        return self.name


Operand = Reg | Special | Imm | Sym | Addr | Label

NO_DEST = frozenset({"st", "bra", "bar", "ret", "exit"})
"""Opcodes whose first operand is not a destination."""


@dataclass(frozen=True, slots=True)
class Instruction:
    """One PTX instruction.

    Attributes
    ----------
    opcode : str
        The full opcode as written, e.g. ``"ld.global.nc.f32"``.
    base : str
        The first component, e.g. ``"ld"``.
    mods : tuple of str
        The remaining components, e.g. ``("global", "nc", "f32")``.
    operands : tuple
        :class:`Reg`, :class:`Special`, :class:`Imm`, :class:`Sym`, :class:`Addr` or
        :class:`Label`.
    guard : str or None
        The guard predicate register (``@%p1``), if any.
    guard_negated : bool
        ``@!%p1``.
    line : int
        Line in the source file.
    """

    opcode: str
    base: str
    mods: tuple[str, ...]
    operands: tuple
    guard: str | None = None
    guard_negated: bool = False
    line: int = 0

    @property
    def dests(self) -> tuple[str, ...]:
        """Registers written."""
        if self.base in NO_DEST or not self.operands or not isinstance(self.operands[0], Reg):
            return ()
        return (self.operands[0].name,)

    @property
    def sources(self) -> tuple[str, ...]:
        """Registers read, in operand order (the guard last), without repeats."""
        start = 0 if self.base in NO_DEST else 1
        names = []
        for op in self.operands[start:]:
            if isinstance(op, Reg):
                names.append(op.name)
            elif isinstance(op, Addr) and isinstance(op.base, Reg):
                names.append(op.base.name)
        if self.guard is not None:
            names.append(self.guard)
        return tuple(dict.fromkeys(names))

    @property
    def is_branch(self) -> bool:
        return self.base == "bra"

    @property
    def is_exit(self) -> bool:
        return self.base in ("ret", "exit")

    @property
    def space(self) -> str | None:
        """The state space of a ``ld``/``st`` (``"global"``, ``"shared"``, ``"param"``)."""
        if self.base in ("ld", "st"):
            return self.mods[0]
        return None

    def __str__(self):
        guard = "" if self.guard is None else f"@{'!' if self.guard_negated else ''}{self.guard} "
        return f"{guard}{self.opcode} {', '.join(map(str, self.operands))};"


@dataclass(frozen=True, slots=True)
class RegDecl:
    """The declared type of a virtual register."""

    name: str
    type: str

    @property
    def width(self) -> int:
        return type_width(self.type)


@dataclass(frozen=True, slots=True)
class Param:
    """A kernel parameter: name, type, byte offset in the parameter buffer."""

    name: str
    type: str
    offset: int

    @property
    def size(self) -> int:
        return type_width(self.type) // 8


@dataclass(frozen=True, slots=True)
class SharedVar:
    """A ``.shared`` variable: byte offset in the block's shared memory and size."""

    name: str
    offset: int
    size: int
    align: int


@dataclass(frozen=True)
class Kernel:
    """One ``.entry`` of a PTX module."""

    name: str
    params: tuple[Param, ...]
    regs: dict[str, RegDecl]
    shared: tuple[SharedVar, ...]
    instructions: tuple[Instruction, ...]
    labels: dict[str, int]
    file: str = "<ptx>"
    line: int = 0

    @property
    def shared_bytes(self) -> int:
        return max((v.offset + v.size for v in self.shared), default=0)

    @property
    def param_bytes(self) -> int:
        return max((p.offset + p.size for p in self.params), default=0)

    def param(self, name: str) -> Param:
        return next(p for p in self.params if p.name == name)


@dataclass(frozen=True)
class Module:
    """A parsed PTX file: its header and its kernels by name."""

    version: str
    target: str
    address_size: int
    kernels: dict[str, Kernel] = field(default_factory=dict)
    file: str = "<ptx>"
