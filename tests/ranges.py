# amaranth: UnusedElaboratable=no
"""Parametrizations of the integer-range parameter checks (``hw/params.py: check_int``),
shared by the blocks' parameter tests: one anchored message pattern, built in one place."""

import re

import pytest

NOT_INTEGERS = (pytest.param(2.0, id="float"), pytest.param("2", id="str"),
                pytest.param(True, id="bool"))


def range_message(name: str, low: int, high: int, shown: str) -> str:
    """The anchored pattern of ``name must be an integer in low..high, not shown`` (``shown``
    literally, so ``2.0`` does not match ``2x0``)."""
    return f"^{name} must be an integer in {low}\\.\\.{high}, not {re.escape(shown)}$"


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


def parameter_tests(hw, golden, ranges: dict, bad_values=()) -> tuple:
    """``test_out_of_range`` and ``test_not_an_integer`` of a block, for the hardware and the
    golden model (ids ``hw`` and ``golden``).

    ``test_out_of_range`` expects a ``ValueError`` for every value just outside ``ranges``
    and for each ``(name, value, message)`` of ``bad_values``; ``test_not_an_integer`` a
    ``TypeError`` for a float, a string and a bool per parameter of ``ranges``. A module
    writes ``test_out_of_range, test_not_an_integer = parameter_tests(Osu, golden, RANGES)``.
    """
    builds = pytest.mark.parametrize("build", [hw, golden], ids=["hw", "golden"])

    @builds
    @pytest.mark.parametrize(("name", "value", "message"),
                             [*out_of_range_params(ranges), *bad_values])
    def test_out_of_range(build, name, value, message):
        with pytest.raises(ValueError, match=message):
            build(**{name: value})

    @builds
    @pytest.mark.parametrize(("name", "value", "message"), not_an_integer_params(ranges))
    def test_not_an_integer(build, name, value, message):
        with pytest.raises(TypeError, match=message):
            build(**{name: value})

    return test_out_of_range, test_not_an_integer


def range_ends_test(config, defaults: dict, ranges: dict):
    """``test_range_ends_accepted``: ``config`` (the block's defaults updated by one parameter)
    takes both ends of every range of ``ranges``."""

    @pytest.mark.parametrize("name", sorted(ranges))
    def test_range_ends_accepted(name):
        low, high = ranges[name]
        for value in (low, high):
            assert getattr(config(**{**defaults, name: value}), name) == value

    return test_range_ends_accepted
