"""Block parameters: declared once (:func:`param` fields of a :class:`BlockConfig`), validated
the same way by every component and golden model.

Each check raises :class:`TypeError` (wrong type) or :class:`ValueError` (out of range)
with a message that names the parameter and the allowed range, e.g.
``slots must be an integer in 2..64, not 1``.
"""

import inspect
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from functools import cache
from typing import Any, ClassVar

from amaranth.lib import wiring

from .ports import Codec, port_codecs

__all__ = ["BlockConfig", "ConfiguredComponent", "Param", "check_bool", "check_choice",
           "check_int", "check_int_choice", "index_bits", "param"]


def check_int(name: str, value: Any, low: int, high: int) -> int:
    """``value`` if it is an ``int`` in ``low..high`` (both inclusive)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an integer in {low}..{high}, not {value!r}")
    if not low <= value <= high:
        raise ValueError(f"{name} must be an integer in {low}..{high}, not {value!r}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is a ``bool``."""
    if not isinstance(value, bool):
        raise TypeError(f"{name} must be True or False, not {value!r}")
    return value


def check_choice(name: str, value: Any, choices: tuple[str, ...]) -> str:
    """``value`` if it is one of the strings ``choices``."""
    if not isinstance(value, str):
        raise TypeError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(choices)}, not {value!r}")
    return value


def check_int_choice(name: str, value: Any, choices: tuple[int, ...]) -> int:
    """``value`` if it is one of the integers ``choices``."""
    listed = ", ".join(map(str, choices))
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be one of {listed}, not {value!r}")
    if value not in choices:
        raise ValueError(f"{name} must be one of {listed}, not {value!r}")
    return value


def index_bits(count: int) -> int:
    """Bits of an index ``0..count-1``, at least 1 (a signal of 0 bits cannot be a port)."""
    return max(1, (count - 1).bit_length())


def index_width(name: str, doc: str | None = None) -> property:
    """A configuration's derived width: the bits of an index into parameter ``name``
    (:func:`index_bits` of its value), e.g. ``warp_bits = index_width("warps")``."""
    width = property(lambda config: index_bits(getattr(config, name)))
    width.__doc__ = doc or f"Bits of an index into ``{name}``."
    return width


def layout_from(build: Callable[..., Any], *names: str, doc: str | None = None) -> property:
    """A configuration's derived layout: ``build`` called with the configuration's
    attributes ``names`` as keywords of the same names, e.g. ``reg_layout =
    layout_from(pipeline_reg_layout, "warp_bits", "reg_bits")``."""
    layout = property(lambda config: build(**{name: getattr(config, name) for name in names}))
    layout.__doc__ = doc or f"``{build.__name__}`` of ``{', '.join(names)}``."
    return layout


@dataclass(frozen=True)
class Param:
    """The declaration of one block parameter: what values it takes and a one-line doc.

    Made by :func:`param`; read by :class:`BlockConfig` (validation), the registry (``gpurf
    list``, ``-p KEY=VALUE`` parsing), the components' docstrings and the parameter tests.
    """

    doc: str
    kind: type
    low: int | None = None
    high: int | None = None
    choices: tuple | None = None

    def check(self, name: str, value: Any) -> Any:
        """``value`` if allowed; else the ``TypeError``/``ValueError`` of ``check_*``."""
        if self.kind is bool:
            return check_bool(name, value)
        if self.choices is not None:
            if self.kind is str:
                return check_choice(name, value, self.choices)
            return check_int_choice(name, value, self.choices)
        return check_int(name, value, self.low, self.high)

    @property
    def allowed(self) -> str:
        """The allowed values as the error messages and ``gpurf list`` show them."""
        if self.kind is bool:
            return "True or False"
        if self.choices is not None:
            return ", ".join(map(str, self.choices))
        return f"{self.low}..{self.high}"

    def extremes(self) -> tuple:
        """The values at the ends of the allowed set (both ends of a range, every choice)."""
        if self.kind is bool:
            return (False, True)
        if self.choices is not None:
            return self.choices
        return (self.low, self.high)

    def outside(self) -> tuple:
        """Values of the right type just outside the allowed set (none for a bool)."""
        if self.kind is bool:
            return ()
        if self.choices is None:
            return (self.low - 1, self.high + 1)
        if self.kind is str:
            return ("",)
        return (min(self.choices) - 1, max(self.choices) + 1)

    def wrong_types(self) -> tuple:
        """Values of other types, each rejected with a ``TypeError``."""
        if self.kind is bool:
            return (1, "true")
        if self.kind is str:
            return (1, True)
        return (2.0, "2", True)


def param(default: Any, doc: str, *, low: int | None = None, high: int | None = None,
          choices: tuple | None = None) -> Any:
    """A :class:`BlockConfig` field: ``default``, its doc line and its allowed values.

    An integer takes ``low..high`` (both inclusive) or one of ``choices``; a string one of
    ``choices``; a bool either value. The kind is the default's type.
    """
    kind = bool if isinstance(default, bool) else type(default)
    if kind is int and choices is None and (low is None or high is None):
        raise TypeError("an integer parameter needs low and high, or choices")
    if kind is str and choices is None:
        raise TypeError("a string parameter needs choices")
    spec = Param(doc=doc, kind=kind, low=low, high=high,
                 choices=tuple(choices) if choices is not None else None)
    spec.check("default", default)
    return field(default=default, metadata={"param": spec})


@dataclass(frozen=True)
class BlockConfig:
    """Base of every block's configuration: parameters declared once with :func:`param`.

    A subclass (made a frozen dataclass here, as it is defined) declares the block's
    parameters as :func:`param` fields; construction checks each against its declaration,
    then :meth:`validate` checks the rules between parameters. Derived widths are properties
    (or ``functools.cached_property``) of the subclass, and :meth:`signature` gives the
    block's ports. The component and the golden model of a block both build it, so they
    reject the same parameters with the same message and agree on every width.
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        dataclass(frozen=True)(cls)

    def __post_init__(self):
        for name, (_, spec) in self.declared().items():
            spec.check(name, getattr(self, name))
        self.validate()

    def validate(self) -> None:
        """Rules between parameters; a subclass raises ``ValueError`` naming them."""

    @classmethod
    def declared(cls) -> dict[str, tuple[Any, Param]]:
        """``name -> (default, declaration)`` of every parameter, in declaration order."""
        return {f.name: (f.default, f.metadata["param"]) for f in fields(cls)
                if "param" in f.metadata}

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        return {name: default for name, (default, _) in cls.declared().items()}

    def signature(self) -> wiring.Signature:
        """The block's port signature at this configuration (the component's)."""
        raise NotImplementedError(f"{type(self).__name__} does not declare its signature")

    @property
    def codecs(self) -> dict[str, Codec]:
        """A :class:`~gpurf.hw.ports.Codec` per port of :meth:`signature`, by Verilog name:
        how golden models and benches read and write packed port values. Built once per
        configuration value (equal configurations share them; a configuration holding an
        unhashable value, such as a list, builds its own once)."""
        cached = self.__dict__.get("_codecs")
        if cached is None:
            cached = _codecs(self) if _hashable(self) else port_codecs(self.signature())
            object.__setattr__(self, "_codecs", cached)
        return cached

    def params(self) -> dict[str, Any]:
        """This configuration's parameter values by name."""
        return {name: getattr(self, name) for name in self.declared()}

    @classmethod
    def numpydoc(cls) -> str:
        """The ``Parameters`` section of a numpydoc docstring (unindented)."""
        lines = ["Parameters", "----------"]
        for name, (default, spec) in cls.declared().items():
            lines.append(f"{name} : {spec.kind.__name__}")
            lines += textwrap.wrap(f"{spec.doc} Allowed: {spec.allowed}; default {default!r}.",
                                   width=88, initial_indent="    ", subsequent_indent="    ")
        return "\n".join(lines)


@cache
def _codecs(config: BlockConfig) -> dict[str, Codec]:
    return port_codecs(config.signature())


def _hashable(value) -> bool:
    try:
        hash(value)
    except TypeError:
        return False
    return True


class ConfiguredComponent(wiring.Component):
    """A component built from a :class:`BlockConfig`: ``class X(ConfiguredComponent,
    config=XConfig)``.

    Its keyword-only constructor parameters are the configuration's fields (the signature
    ``inspect`` shows is derived from them) and its docstring gets their ``Parameters``
    section, placed before ``Attributes`` (or last). ``__init__(**params)`` of the subclass
    calls ``self.configure(params)`` first, which validates and sets ``self.config``.
    """

    config_class: ClassVar[type[BlockConfig]]

    def __init_subclass__(cls, *, config: type[BlockConfig] | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if config is None:
            return
        cls.config_class = config
        cls.__doc__ = _with_parameters(cls.__doc__ or "", config.numpydoc())
        cls.__init__.__signature__ = inspect.Signature([
            inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD),
            *(inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default)
              for name, default in config.defaults().items())])

    def configure(self, params: dict[str, Any]):
        """``self.config``, built (and so validated) from ``params``."""
        self.config = self.config_class(**params)
        return self.config


def _with_parameters(doc: str, section: str) -> str:
    """``doc`` with ``section`` inserted before its ``Attributes`` section, at its indent."""
    lines = inspect.cleandoc(doc).splitlines()
    indent = "    "
    block = ["", *(indent + line if line else "" for line in section.splitlines())]
    body = [indent + line if line else "" for line in lines[1:]]
    where = next((i for i, line in enumerate(body) if line.strip() == "Attributes"), None)
    if where is None:
        body = [*body, *block[1:]] if not body else [*body, *block]
    else:
        body = [*body[:where], *block[1:], "", *body[where:]]
    return "\n".join([lines[0] if lines else "", *body, ""])
