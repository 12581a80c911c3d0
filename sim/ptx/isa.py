"""The PTX subset gpurf accepts: opcodes, their modifiers in order, operand counts.

Each opcode is described by a tuple of modifier slots, matched left to right against the
components after the opcode (``ld.global.nc.f32`` -> ``global``, ``nc``, ``f32``); a slot is
``(what, choices, required)``. :func:`check` returns ``None`` for an accepted instruction and
otherwise a message saying what was expected, which the parser turns into an error naming
file and line. Anything not described here (textures, surfaces, f16/bf16 arithmetic, tensor
instructions ``mma``/``wmma``, ...) is outside the subset and rejected, never skipped.
``call`` is parsed by the front end itself (and inlined), never executed.
"""

__all__ = ["HALF", "OPCODES", "OUTSIDE", "UNSUPPORTED", "check"]

UNSUPPORTED = "unsupported instruction"
OUTSIDE = {"mma": "tensor", "wmma": "tensor", "ldmatrix": "tensor", "stmatrix": "tensor",
           "wgmma": "tensor", "tex": "texture", "tld4": "texture", "txq": "texture",
           "suld": "surface", "sust": "surface", "sured": "surface", "suq": "surface"}
"""Instruction families deliberately outside the subset, named in their error."""
HALF = frozenset({"f16", "f16x2", "bf16", "bf16x2", "e4m3x2", "e5m2x2", "tf32"})
"""Half- and narrower-precision float types: outside the subset (except as ``ld``/``st``
data, moved as bits)."""

INT = ("u16", "s16", "u32", "s32", "u64", "s64")
BITS = ("b16", "b32", "b64")
FLOAT = ("f32", "f64")
DATA = ("b8", "u8", "s8", *BITS, *INT, "f16", *FLOAT)
ROUND = ("rn", "rz", "rm", "rp")
INT_ROUND = ("rni", "rzi", "rmi", "rpi")
CMP = ("eq", "ne", "lt", "le", "gt", "ge", "lo", "ls", "hi", "hs",
       "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan")


def _opt(what, *choices):
    return (what, choices, False)


def _req(what, *choices):
    return (what, choices, True)


_ARITH = (_opt("carry", "cc"), _opt("rounding", "rn"), _opt("ftz", "ftz"), _opt("sat", "sat"),
          _req("type", *INT, *FLOAT))
SPACE = ("param", "global", "shared", "local", "const")
_SEM = _opt("memory order", "relaxed", "acquire", "release", "acq_rel")
_SCOPE = _opt("scope", "cta", "gpu", "sys")
_ATOM_TYPES = ("b32", "b64", "u32", "s32", "u64", "s64", "f32", "f64")
_APPROX = (_req("'approx'", "approx"), _opt("ftz", "ftz"), _req("type", "f32"))
_CARRY_INT = ("u32", "s32", "u64", "s64")

OPCODES: dict[str, tuple[int | tuple, tuple]] = {
    "ld": (2, (_opt("volatile", "volatile"), _opt("state space", *SPACE),
               _opt("cache operator", "nc", "ca", "cg", "cs", "lu", "cv"),
               _opt("vector", "v2", "v4"), _req("type", *DATA))),
    "st": (2, (_opt("volatile", "volatile"), _opt("state space", *SPACE[:4]),
               _opt("cache operator", "wb", "cg", "cs", "wt"), _opt("vector", "v2", "v4"),
               _req("type", *DATA))),
    "atom": ((3, 4), (_SEM, _SCOPE, _opt("state space", "global", "shared"),
                      _req("operation", "add", "min", "max", "inc", "dec", "and", "or", "xor",
                           "exch", "cas"),
                      _req("type", *_ATOM_TYPES))),
    "red": (2, (_SEM, _SCOPE, _opt("state space", "global", "shared"),
                _req("operation", "add", "min", "max", "inc", "dec", "and", "or", "xor"),
                _req("type", *_ATOM_TYPES))),
    "shfl": (5, (_req("'sync'", "sync"), _req("mode", "up", "down", "bfly", "idx"),
                 _req("type", "b32"))),
    "vote": (3, (_req("'sync'", "sync"), _req("mode", "all", "any", "uni", "ballot"),
                 _req("type", "pred", "b32"))),
    "activemask": (1, (_req("type", "b32"),)),
    "membar": (0, (_req("level", "cta", "gl", "sys"),)),
    "fence": (0, (_opt("order", "sc", "acq_rel"), _req("scope", "cta", "gpu", "sys"))),
    "sqrt": (2, (_req("rounding", "approx", *ROUND), _opt("ftz", "ftz"), _req("type", *FLOAT))),
    "rcp": (2, (_req("rounding", "approx", *ROUND), _opt("ftz", "ftz"), _req("type", *FLOAT))),
    "rsqrt": (2, (_req("'approx'", "approx"), _opt("ftz", "ftz"), _req("type", *FLOAT))),
    "ex2": (2, _APPROX),
    "lg2": (2, _APPROX),
    "sin": (2, _APPROX),
    "cos": (2, _APPROX),
    "tanh": (2, (_req("'approx'", "approx"), _req("type", "f32"))),
    "popc": (2, (_req("type", "b32", "b64"),)),
    "clz": (2, (_req("type", "b32", "b64"),)),
    "brev": (2, (_req("type", "b32", "b64"),)),
    "bfe": (4, (_req("type", "u32", "s32", "u64", "s64"),)),
    "bfi": (5, (_req("type", "b32", "b64"),)),
    "prmt": (4, (_req("type", "b32"), _opt("mode", "f4e", "b4e", "rc8", "ecl", "ecr", "rc16"))),
    "lop3": (5, (_req("type", "b32"),)),
    "shf": (4, (_req("direction", "l", "r"), _req("mode", "wrap", "clamp"), _req("type", "b32"))),
    "addc": (3, (_opt("carry", "cc"), _req("type", *_CARRY_INT))),
    "subc": (3, (_opt("carry", "cc"), _req("type", *_CARRY_INT))),
    "madc": (4, (_req("mode", "lo", "hi"), _opt("carry", "cc"), _req("type", *_CARRY_INT))),
    "mov": (2, (_req("type", "pred", *DATA),)),
    "cvta": (2, (_opt("'to'", "to"), _req("state space", "global", "shared", "local", "const"),
                 _req("type", "u32", "u64"))),
    "cvt": (2, (_opt("rounding", *ROUND, *INT_ROUND), _opt("ftz", "ftz"), _opt("sat", "sat"),
                _req("destination type", *DATA), _req("source type", *DATA))),
    "add": (3, _ARITH),
    "sub": (3, _ARITH),
    "mul": (3, (_opt("mode", "lo", "hi", "wide", "rn"), _opt("ftz", "ftz"), _opt("sat", "sat"),
                _req("type", *INT, *FLOAT))),
    "mad": (4, (_opt("mode", "lo", "hi", "wide", "rn"), _opt("carry", "cc"), _opt("ftz", "ftz"),
                _opt("sat", "sat"),
                _req("type", *INT, *FLOAT))),
    "fma": (4, (_req("rounding", "rn"), _opt("ftz", "ftz"), _opt("sat", "sat"),
                _req("type", *FLOAT))),
    "div": (3, (_opt("rounding", "rn", "full", "approx"), _opt("ftz", "ftz"),
                _req("type", *INT, *FLOAT))),
    "rem": (3, (_req("type", *INT),)),
    "min": (3, (_opt("ftz", "ftz"), _req("type", *INT, *FLOAT))),
    "max": (3, (_opt("ftz", "ftz"), _req("type", *INT, *FLOAT))),
    "abs": (2, (_opt("ftz", "ftz"), _req("type", "s16", "s32", "s64", *FLOAT))),
    "neg": (2, (_opt("ftz", "ftz"), _req("type", "s16", "s32", "s64", *FLOAT))),
    "not": (2, (_req("type", "pred", *BITS),)),
    "and": (3, (_req("type", "pred", *BITS),)),
    "or": (3, (_req("type", "pred", *BITS),)),
    "xor": (3, (_req("type", "pred", *BITS),)),
    "shl": (3, (_req("type", *BITS),)),
    "shr": (3, (_req("type", *BITS, *INT),)),
    "setp": ((3, 4), (_req("comparison", *CMP), _opt("combination", "and", "or", "xor"),
                      _opt("ftz", "ftz"),
                 _req("type", *BITS, *INT, *FLOAT))),
    "selp": (4, (_req("type", *BITS, *INT, *FLOAT),)),
    "bra": (1, (_opt("uniform", "uni"),)),
    "bar": ((1, 2), (_opt("'warp'", "warp"), _req("'sync'", "sync"))),
    "ret": (0, (_opt("uniform", "uni"),)),
    "exit": (0, ()),
}


def check(base: str, mods: tuple[str, ...], operand_count: int) -> str | None:
    """``None`` if ``base.mods`` with ``operand_count`` operands is in the subset, else
    what is wrong, e.g. ``"expected a type (u16, s16, ...) after 'add', found '.x'"``."""
    if base not in OPCODES:
        return UNSUPPORTED
    count, slots = OPCODES[base]
    position = 0
    for what, choices, required in slots:
        if position < len(mods) and mods[position] in choices:
            position += 1
        elif required:
            found = f"'.{mods[position]}'" if position < len(mods) else "nothing"
            listed = ", ".join(choices[:8]) + (", ..." if len(choices) > 8 else "")
            return f"expected a {what} ({listed}) after '{base}', found {found}"
    if position < len(mods):
        return f"unsupported modifier '.{mods[position]}'"
    counts = count if isinstance(count, tuple) else (count,)
    if operand_count not in counts:
        listed = " or ".join(map(str, counts))
        return f"expected {listed} operands, found {operand_count}"
    return None
