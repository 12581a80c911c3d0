"""Fast conversion between packed port values and Python structures, one codec per layout.

A golden model or a bench works on ports as Python values: a struct as a named tuple of its
fields (``entry.valid``, ``entry.tag``), an array as a list, a plain or enum shape as an
``int`` (signed shapes sign-extended). :func:`codec` derives, once per layout, an ``unpack``
(packed ``int`` -> structure) and a ``pack`` (structure -> packed ``int``) from the layout's
field offsets, compiled to straight-line Python: no :class:`amaranth.lib.data.Const` is built
per cycle, and the bit layout stays the one :mod:`amaranth.lib.data` defines (first field in
the least significant bits), so hardware, golden models and benches cannot disagree on it.

``pack`` takes a named tuple, a mapping or (for an array) a sequence, with missing struct
fields and array elements read as 0; a field value wider than its field is an error.
"""

import itertools
from collections import namedtuple
from collections.abc import Mapping
from enum import Enum
from functools import cache
from typing import Any

from amaranth.hdl import Shape, ShapeCastable
from amaranth.lib import data, wiring

__all__ = ["Codec", "codec", "port_codecs"]


class Codec:
    """``unpack``/``pack`` of one shape, and its ``width``.

    Built by :func:`codec` (cached per layout); ``Codec.zero`` is the structure of the
    packed value 0.
    """

    def __init__(self, shape, unpack, pack, width: int):
        self.shape, self.unpack, self.pack, self.width = shape, unpack, pack, width

    @property
    def zero(self) -> Any:
        return self.unpack(0)

    def __repr__(self):
        return f"Codec({self.shape!r})"


@cache
def codec(shape) -> Codec:
    """The :class:`Codec` of ``shape`` (a data layout, a shape-castable or an ``int`` width)."""
    builder = _Builder()
    unpack_expr = builder.unpack_expr(shape, "v", 0)
    width = _width(shape)
    namespace = builder.namespace
    source = f"def unpack(v):\n    return {unpack_expr}\n"
    source += "def pack(x):\n" + builder.pack_body(shape, "x", 0, width)
    exec(compile(source, f"<codec {shape!r}>", "exec"), namespace)
    return Codec(shape, namespace["unpack"], namespace["pack"], width)


def port_codecs(signature: wiring.Signature) -> dict[str, Codec]:
    """A codec per port of ``signature``, by Verilog name: the path joined with ``__``, with
    an index for every dimension of an array member (``read__0__addr``), as the harness and
    the generated Verilog name them."""
    return dict(_ports(signature.members, ()))


def _ports(members: wiring.SignatureMembers, prefix: tuple):
    for name, member in members.items():
        for index in itertools.product(*(range(n) for n in member.dimensions)):
            path = (*prefix, name, *index)
            if member.is_signature:
                yield from _ports(member.signature.members, path)
            else:
                yield "__".join(map(str, path)), codec(_shape_of(member))


def _shape_of(member):
    shape = member.shape
    return shape if isinstance(shape, data.Layout) else Shape.cast(shape)


def _width(shape) -> int:
    if isinstance(shape, data.Layout):
        return shape.size
    return Shape.cast(shape).width


def _plain(shape) -> Shape | None:
    """``shape`` as a plain :class:`Shape` if it is not a data layout."""
    if isinstance(shape, data.Layout):
        return None
    if isinstance(shape, int | Shape | ShapeCastable):
        return Shape.cast(shape)
    raise TypeError(f"cannot make a codec of {shape!r}")


class _Builder:
    """Generates the expressions of one codec; named tuple types go into ``namespace``."""

    def __init__(self):
        self.namespace: dict[str, Any] = {"_Mapping": Mapping, "_int": _int,
                                          "_overflow": _overflow}
        self._names = 0
        self._types: dict[data.Layout, str] = {}

    def _fresh(self, prefix: str) -> str:
        self._names += 1
        return f"{prefix}{self._names}"

    def _tuple_type(self, layout: data.StructLayout) -> str:
        """The name of the named tuple type of ``layout`` (one per layout)."""
        if layout not in self._types:
            name = self._types[layout] = self._fresh("_T")
            self.namespace[name] = namedtuple("Struct", [str(n) for n, _ in layout])
        return self._types[layout]

    def unpack_expr(self, shape, source: str, offset: int) -> str:
        plain = _plain(shape)
        if plain is not None:
            field = f"(({source} >> {offset}) & {(1 << plain.width) - 1})"
            if plain.signed and plain.width:
                top = 1 << (plain.width - 1)
                return f"(({field} ^ {top}) - {top})"
            return field
        if isinstance(shape, data.ArrayLayout):
            step = _width(shape.elem_shape)
            items = [self.unpack_expr(shape.elem_shape, source, offset + i * step)
                     for i in range(shape.length)]
            return f"[{', '.join(items)}]"
        kind = self._tuple_type(shape)
        items = [self.unpack_expr(field.shape, source, offset + field.offset)
                 for _, field in shape]
        return f"{kind}({', '.join(items)})"

    def pack_body(self, shape, source: str, offset: int, width: int) -> str:
        lines = ["    acc = 0"]
        self._pack_into(lines, shape, source, offset, 1)
        lines.append("    return acc")
        return "\n".join(lines) + "\n"

    def _pack_into(self, lines, shape, source, offset, depth):
        pad = "    " * depth
        plain = _plain(shape)
        if plain is not None:
            self._pack_plain(lines, plain, source, offset, pad)
            return
        item = self._fresh("_x")
        lines.append(f"{pad}{item} = {source}")
        lines.append(f"{pad}if isinstance({item}, int):")
        self._pack_plain(lines, Shape(_width(shape)), item, offset, pad + "    ")
        if isinstance(shape, data.ArrayLayout):
            step = _width(shape.elem_shape)
            lines.append(f"{pad}else:")
            lines.append(f"{pad}    {item} = list({item}) + [0] * ({shape.length} - len({item}))")
            for i in range(shape.length):
                self._pack_into(lines, shape.elem_shape, f"{item}[{i}]",
                                offset + i * step, depth + 1)
            return
        lines.append(f"{pad}else:")
        lines.append(f"{pad}    if not isinstance({item}, _Mapping): {item} = {item}._asdict()")
        for name, field in shape:
            self._pack_into(lines, field.shape, f"{item}.get({str(name)!r}, 0)",
                            offset + field.offset, depth + 1)

    def _pack_plain(self, lines, plain: Shape, source: str, offset: int, pad: str):
        if plain.width == 0:
            lines.append(f"{pad}pass")
            return
        mask = (1 << plain.width) - 1
        low = -(1 << (plain.width - 1)) if plain.signed else 0
        value = self._fresh("_v")
        lines.append(f"{pad}{value} = _int({source})")
        lines.append(f"{pad}if not {low} <= {value} <= {mask}: "
                     f"_overflow({value}, {plain.width})")
        lines.append(f"{pad}acc |= ({value} & {mask}) << {offset}")


def _int(value) -> int:
    """A field value as an ``int``: enum members by their value."""
    if type(value) is int:
        return value
    return value.value if isinstance(value, Enum) else int(value)


def _overflow(value, width):
    raise ValueError(f"value {value!r} does not fit {width} bits")


