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
    "CARRY", "SPACES", "Addr", "Imm", "Instruction", "Kernel", "Label", "LocalVar", "Module",
    "Pair", "Param", "Reg", "RegDecl", "SharedVar", "Special", "StaticVar", "Sym", "Vec",
    "type_width",
]

CARRY = "%cc"
"""The carry flag (``CC.CF``) of ``add.cc``/``addc``/``sub.cc``/``subc``/``mad.cc``/``madc``,
modelled as an implicit 1-bit register of that name: written by ``.cc`` instructions, read by
the ``...c`` ones, so liveness, allocation and scoreboarding see the dependence."""

SPACES = ("param", "global", "shared", "local", "const")
"""State spaces a memory instruction can name; one that names none is generic."""

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


@dataclass(frozen=True, slots=True)
class Vec:
    """A vector operand ``{%f1, %f2, %f3, %f4}`` of a ``.v2``/``.v4`` ``ld`` or ``st``;
    ``items`` are :class:`Reg` (or :class:`Imm` in a store)."""

    items: tuple

    def __str__(self):
        return "{" + ", ".join(map(str, self.items)) + "}"


@dataclass(frozen=True, slots=True)
class Pair:
    """Two destinations ``%p|%q`` (``setp``'s complement, ``shfl.sync``'s in-range flag)."""

    first: Reg
    second: Reg

    def __str__(self):
        return f"{self.first}|{self.second}"


Operand = Reg | Special | Imm | Sym | Addr | Label | Vec | Pair

NO_DEST = frozenset({"st", "red", "bra", "bar", "ret", "exit"})
READS_CARRY = frozenset({"addc", "subc", "madc"})


def _registers(op) -> list[str]:
    """Register names an operand names (a vector's or pair's elements, an address's base)."""
    if isinstance(op, Reg):
        return [op.name]
    if isinstance(op, Vec):
        return [item.name for item in op.items if isinstance(item, Reg)]
    if isinstance(op, Pair):
        return [op.first.name, op.second.name]
    if isinstance(op, Addr) and isinstance(op.base, Reg):
        return [op.base.name]
    return []
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
        """Registers written (a vector's or pair's elements; the carry flag of ``.cc``)."""
        names = []
        if self.base not in NO_DEST and self.operands and not isinstance(self.operands[0], Addr):
            names = _registers(self.operands[0])
        if "cc" in self.mods:
            names.append(CARRY)
        return tuple(dict.fromkeys(names))

    @property
    def sources(self) -> tuple[str, ...]:
        """Registers read, in operand order (the guard last), without repeats."""
        start = 0 if self.base in NO_DEST else 1
        names = [name for op in self.operands[start:] for name in _registers(op)]
        if self.base in READS_CARRY:
            names.append(CARRY)
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
        """The state space of a ``ld``/``st``/``atom``/``red`` (``"global"``, ``"shared"``,
        ``"param"``, ``"local"``, ``"const"``, or ``"generic"`` when it names none)."""
        if self.base in ("ld", "st", "atom", "red"):
            return self.mods[0] if self.mods and self.mods[0] in SPACES else "generic"
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
    """A kernel parameter: name, type, byte offset in the parameter buffer, and ``count``
    elements for an array (a struct passed by value: ``.param .align 8 .b8 s[16]``)."""

    name: str
    type: str
    offset: int
    count: int = 1
    align: int = 0

    @property
    def size(self) -> int:
        return type_width(self.type) // 8 * self.count


@dataclass(frozen=True, slots=True)
class LocalVar:
    """A ``.local`` variable of a kernel (nvcc's stack frame ``__local_depot``): byte
    offset in each thread's local frame and size."""

    name: str
    offset: int
    size: int


@dataclass(frozen=True, slots=True)
class StaticVar:
    """A module-scope ``.global`` or ``.const`` variable: its space, byte offset in the
    module's static image, and initial bytes (zeros where PTX gives no initializer)."""

    name: str
    space: str
    offset: int
    data: bytes


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
    local: tuple[LocalVar, ...] = ()
    statics: tuple[StaticVar, ...] = ()
    """The module's ``.global``/``.const`` variables (shared by its kernels)."""
    dynamic_shared: str | None = None
    """The ``.extern .shared`` array, placed at :attr:`shared_bytes` (aligned to 16), whose
    size the launch gives."""

    @property
    def shared_bytes(self) -> int:
        """Bytes of static shared memory (the dynamic array starts here)."""
        end = max((v.offset + v.size for v in self.shared), default=0)
        return -(-end // 16) * 16 if self.dynamic_shared else end

    @property
    def local_bytes(self) -> int:
        """Bytes of each thread's local frame."""
        return max((v.offset + v.size for v in self.local), default=0)

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
