# amaranth: UnusedElaboratable=no
"""Parameter validation, widths and the paper's storage figure of ``greener.scoreboard_ext``."""

import pytest

from golden.greener.scoreboard_ext import fits, touches
from hw.greener.scoreboard_ext import ScoreboardExt, ScoreboardExtConfig
from hw.registry import get_block
from synth.flow import storage

from .ranges import not_an_integer_params, out_of_range_params

RANGES = {
    "warps": (2, 64),
    "regs": (2, 256),
    "sources": (1, 8),
    "dests": (1, 8),
    "check_ports": (1, 8),
    "release_ports": (1, 8),
}


def golden(**params):
    """The golden model with the block's defaults updated by ``params``."""
    return get_block("greener.scoreboard_ext").golden(params)


OUT_OF_RANGE = out_of_range_params(RANGES)


@pytest.mark.parametrize("build", [ScoreboardExt, golden], ids=["hw", "golden"])
@pytest.mark.parametrize(("name", "value", "message"), OUT_OF_RANGE)
def test_out_of_range(build, name, value, message):
    with pytest.raises(ValueError, match=message):
        build(**{name: value})


@pytest.mark.parametrize("build", [ScoreboardExt, golden], ids=["hw", "golden"])
@pytest.mark.parametrize(("name", "value", "message"), not_an_integer_params(RANGES))
def test_not_an_integer(build, name, value, message):
    with pytest.raises(TypeError, match=message):
        build(**{name: value})


@pytest.mark.parametrize("name", sorted(RANGES))
def test_range_ends_accepted(name):
    low, high = RANGES[name]
    defaults = get_block("greener.scoreboard_ext").defaults
    for value in (low, high):
        assert getattr(ScoreboardExtConfig(**{**defaults, name: value}), name) == value


def test_default_widths():
    config = ScoreboardExtConfig(**get_block("greener.scoreboard_ext").defaults)
    assert config == ScoreboardExtConfig(warps=64, regs=64, sources=4, dests=4, check_ports=1,
                                         release_ports=4)
    assert (config.warp_width, config.reg_bits) == (6, 6)
    assert config.slot_layout.size == 24
    assert config.reserve_layout.size == 6 + 4 + 4 * 6
    assert config.release_layout.size == 1 + 6 + 6
    assert config.check_layout.size == 1 + 6 + 4 + 24 + 4 + 24
    assert config.storage_bits == 1536


def test_storage_is_the_papers_192_bytes():
    """Paper 5.6: 4 x W x log2(R) = 4 x 64 x 6 bits = 192 bytes of register numbers, one
    unmapped memory; the slots' occupancy bits (4 x 64, left out by the paper) are the
    only flip-flops, reported separately."""
    report = storage(get_block("greener.scoreboard_ext"))
    assert report.memory_bits == 1536 == 192 * 8
    assert report.memories == 1
    assert report.ff_bits == 4 * 64


def test_golden_rules():
    assert touches([3, 5], [1, 5])
    assert not touches([3, 5], [1, 2])
    assert not touches([], [0])
    assert fits([3], [1, 2, 2], 4)
    assert not fits([3, 4], [1, 2, 2], 4)
    assert fits([], [], 1)
