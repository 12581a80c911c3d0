"""Parameter sets of every registered block, for parametrized tests."""

import pytest

from gpurf.hw.registry import all_blocks
from gpurf.sim.toolchain import SIMULATORS, missing_simulator


def block_configs(*, amaranth: bool = False, lint: bool = False) -> list:
    """``pytest.param(block, params)`` for each block's defaults and declared test sets;
    ``amaranth`` / ``lint``: only those the Amaranth-simulator tier / the lint test runs
    (see ``Block.amaranth_defaults`` and ``Block.lint_defaults``)."""
    return [pytest.param(block, params, id=f"{block.qualname}-{index}")
            for block in all_blocks()
            for index, params in enumerate(({}, *block.test_params))
            if index or ((block.amaranth_defaults or not amaranth)
                         and (block.lint_defaults or not lint))]


def _simulators(block, index: int, every_set: bool) -> list[str]:
    """The cocotb simulators that run parameter set ``index`` of ``block`` (0 = defaults).

    Every block's bench runs on both simulators: its defaults on Verilator, its small test
    sets on Icarus, whose build takes a second where Verilator's C++ compile takes half a
    minute or more, and whose run of a large default configuration takes minutes. With
    ``every_set``, every set runs on both (Icarus skips the defaults of blocks registered
    with ``icarus_defaults=False``); a missing simulator's share goes to the other one.
    """
    defaults_on_icarus = block.icarus_defaults
    if every_set:
        return [sim for sim in SIMULATORS if index or sim != "icarus" or defaults_on_icarus]
    preferred, other = ("verilator", "icarus") if index == 0 else ("icarus", "verilator")
    if missing_simulator(preferred) is None or (other == "icarus" and not defaults_on_icarus):
        return [preferred]
    return [other]


def cosim_configs(*, every_set: bool = False) -> list:
    """``pytest.param(block, params, sim)`` for the cocotb tier (see :func:`_simulators`)."""
    return [pytest.param(block, params, sim, id=f"{sim}-{block.qualname}-{index}")
            for sim_order in SIMULATORS
            for block in all_blocks()
            for index, params in enumerate(({}, *block.test_params))
            for sim in _simulators(block, index, every_set) if sim == sim_order]
