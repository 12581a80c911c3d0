"""Parameter sets of every registered block, for parametrized tests."""

import pytest

from hw.registry import all_blocks


def block_configs(*, amaranth: bool = False) -> list:
    """``pytest.param(block, params)`` for each block's defaults and declared test sets;
    ``amaranth``: only those the Amaranth-simulator tier runs (see ``Block.amaranth_defaults``)."""
    return [pytest.param(block, params, id=f"{block.qualname}-{index}")
            for block in all_blocks()
            for index, params in enumerate(({}, *block.test_params))
            if index or block.amaranth_defaults or not amaranth]
