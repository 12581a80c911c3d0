"""Parametrizations of the integer-range parameter checks (``hw/params.py: check_int``),
shared by the blocks' parameter tests: one anchored message pattern, built in one place."""

import pytest

NOT_INTEGERS = (pytest.param(2.0, id="float"), pytest.param("2", id="str"),
                pytest.param(True, id="bool"))


def range_message(name: str, low: int, high: int, shown: str) -> str:
    """The anchored pattern of ``name must be an integer in low..high, not shown``."""
    return f"^{name} must be an integer in {low}\\.\\.{high}, not {shown}$"


def out_of_range_params(ranges: dict) -> list:
    """``(name, value, message)`` just below and just above every range."""
    return [pytest.param(name, value, range_message(name, low, high, str(value)),
                         id=f"{name}={value}")
            for name, (low, high) in ranges.items() for value in (low - 1, high + 1)]


def not_an_integer_params(ranges: dict) -> list:
    """``(name, value, message)`` for a float, a string and a bool per parameter."""
    return [pytest.param(name, value.values[0], range_message(name, low, high,
                                                              repr(value.values[0])),
                         id=f"{name}-{value.id}")
            for name, (low, high) in sorted(ranges.items()) for value in NOT_INTEGERS]
