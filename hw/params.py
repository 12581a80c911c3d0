"""Validation of constructor parameters, shared by every component and golden model.

Each check raises :class:`TypeError` (wrong type) or :class:`ValueError` (out of range)
with a message that names the parameter and the allowed range, e.g.
``slots must be an integer in 2..64, not 1``.
"""

from typing import Any

__all__ = ["check_bool", "check_choice", "check_int", "check_int_choice", "index_bits"]


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
