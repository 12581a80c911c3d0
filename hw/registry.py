# amaranth: UnusedElaboratable=no
"""The block registry: every block is declared once, in its mechanism's ``__init__``.

A mechanism package ``hw/<mechanism>/`` lists its blocks in a module-level ``BLOCKS``
tuple of :class:`Block`. Everything else — the command line, Verilog generation,
cocotb runs, synthesis, the test suite — finds blocks here. By convention the
golden model of ``<mechanism>.<block>`` is ``golden/<mechanism>/<block>.py`` and its
cocotb bench ``tb/<mechanism>/test_<block>.py``.

The registry builds components also just to validate parameters or read a signature;
those instances are never elaborated, hence the linter option on this file's first line.
"""

import importlib
import inspect
import pkgutil
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from amaranth.lib import wiring

from gpurf.hw.extensions import VARIABLE, missing_roots
from gpurf.hw.params import BlockConfig, Param

__all__ = ["Block", "BlockError", "all_blocks", "get_block"]


class BlockError(ValueError):
    """An unknown block, or a parameter it does not have or cannot take."""


@dataclass(frozen=True)
class Block:
    """One registered block.

    Parameters
    ----------
    mechanism : str
        Mechanism package name, e.g. ``"subcore"``.
    name : str
        Block name in snake case, e.g. ``"warp_selector"``.
    component : type
        The :class:`amaranth.lib.wiring.Component` subclass; its keyword-only
        constructor parameters and their defaults are the block's parameters.
    test_params : tuple of dict
        Parameter overrides the test suite cosimulates, beside the defaults.
    summary : str
        One line for ``gpurf list``.
    synth_params : dict, optional
        Overrides the main job and ``gpurf synth all`` synthesize the block with (shown in
        the table's design column), for blocks whose default netlist takes ABC far too long
        to map; ``gpurf synth <block>`` still synthesizes the defaults.
    icarus_defaults : bool
        Whether the suite cosimulates the defaults on Icarus too. ``False`` for blocks
        whose default width Icarus steps too slowly for the suite (minutes per hundred
        cycles); Verilator still runs the defaults and Icarus the ``test_params``.
    amaranth_defaults : bool
        Whether the suite runs Amaranth's simulator on the defaults too. ``False`` for
        blocks whose default configuration the Python simulator steps far slower than
        the compiled cocotb tiers do (its tier then covers ``test_params`` only).
    lint_defaults : bool
        Whether the suite lints the defaults' Verilog too. ``False`` for compositions whose
        parts are registered blocks linted at the same sizes on their own (Verilator's lint
        of the flattened whole takes minutes); the ``test_params`` are linted.
    """

    mechanism: str
    name: str
    component: type
    test_params: tuple[dict[str, Any], ...] = ()
    summary: str = ""
    synth_params: dict[str, Any] | None = None
    icarus_defaults: bool = True
    amaranth_defaults: bool = True
    lint_defaults: bool = True
    _defaults: dict[str, Any] = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        signature = inspect.signature(self.component.__init__)
        defaults = {
            name: p.default
            for name, p in signature.parameters.items()
            if p.kind is inspect.Parameter.KEYWORD_ONLY
        }
        object.__setattr__(self, "_defaults", defaults)

    @property
    def config_class(self) -> type[BlockConfig] | None:
        """The block's :class:`~gpurf.hw.params.BlockConfig`, where it declares one."""
        return getattr(self.component, "config_class", None)

    @property
    def declared(self) -> dict[str, tuple[Any, Param | None]]:
        """``name -> (default, declaration)`` of every parameter (declaration ``None`` for a
        block without a :class:`~gpurf.hw.params.BlockConfig`)."""
        if self.config_class is not None:
            return self.config_class.declared()
        return {name: (default, None) for name, default in self._defaults.items()}

    @property
    def qualname(self) -> str:
        return f"{self.mechanism}.{self.name}"

    @property
    def toplevel(self) -> str:
        """The Verilog module name of the block."""
        return f"{self.mechanism}_{self.name}"

    @property
    def golden_module(self) -> str:
        return f"gpurf.golden.{self.mechanism}.{self.name}"

    @property
    def tb_module(self) -> str:
        return f"gpurf.tb.{self.mechanism}.test_{self.name}"

    @property
    def defaults(self) -> dict[str, Any]:
        return dict(self._defaults)

    def resolve(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        """The full parameter set: defaults updated by ``overrides`` (names checked)."""
        overrides = dict(overrides or {})
        unknown = sorted(set(overrides) - set(self._defaults))
        if unknown:
            raise BlockError(
                f"{self.qualname} has no parameter {unknown[0]!r}; "
                f"its parameters are {', '.join(self._defaults) or 'none'}"
            )
        return {**self._defaults, **overrides}

    def parse_param(self, text: str) -> tuple[str, Any]:
        """Parse ``KEY=VALUE`` into a typed pair, typed after the default's type."""
        key, sep, raw = text.partition("=")
        if not sep or not key:
            raise BlockError(f"{self.qualname}: parameter {text!r} is not of the form KEY=VALUE")
        self.resolve({key: None})
        try:
            return key, _parse_value(key, raw, self._defaults[key])
        except BlockError as error:
            raise BlockError(f"{self.qualname}: {error}") from None

    def build(self, overrides: dict[str, Any] | None = None) -> wiring.Component:
        """An instance of the component with the resolved parameters."""
        return self.component(**self.resolve(overrides))

    def golden(self, overrides: dict[str, Any] | None = None):
        """The golden model class of this block, constructed with the same parameters."""
        module = importlib.import_module(self.golden_module)
        model_class = getattr(module, _camel(self.name))
        return model_class(**self.resolve(overrides))


def _camel(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_"))


def _parse_value(key: str, raw: str, default: Any) -> Any:
    if isinstance(default, bool):
        lowered = raw.lower()
        if lowered in ("1", "true", "yes", "on"):
            return True
        if lowered in ("0", "false", "no", "off"):
            return False
        raise BlockError(f"parameter {key!r} takes true or false, not {raw!r}")
    if isinstance(default, int):
        try:
            return int(raw, 0)
        except ValueError:
            raise BlockError(f"parameter {key!r} takes an integer, not {raw!r}") from None
    return raw


@cache
def _registry() -> dict[str, Block]:
    from gpurf import hw

    missing = missing_roots()
    if missing:
        raise BlockError(f"{VARIABLE} names {missing[0]}, which is not a folder")
    blocks = {}
    for info in sorted(pkgutil.iter_modules(hw.__path__), key=lambda i: i.name):
        if not info.ispkg:
            continue
        package = importlib.import_module(f"gpurf.hw.{info.name}")
        for block in getattr(package, "BLOCKS", ()):
            blocks[block.qualname] = block
    return blocks


def all_blocks() -> list[Block]:
    """Every registered block, sorted by qualified name."""
    return [_registry()[name] for name in sorted(_registry())]


def get_block(qualname: str) -> Block:
    """The block called ``<mechanism>.<block>``; :class:`BlockError` if there is none."""
    try:
        return _registry()[qualname]
    except KeyError:
        known = ", ".join(sorted(_registry()))
        raise BlockError(f"unknown block {qualname!r}; known blocks: {known}") from None
