"""Parameter sets of every registered block, for parametrized tests."""

import pytest

from hw.registry import all_blocks


def block_configs() -> list:
    """``pytest.param(block, params)`` for each block's defaults and declared test sets."""
    return [pytest.param(block, params, id=f"{block.qualname}-{index}")
            for block in all_blocks()
            for index, params in enumerate(({}, *block.test_params))]
