# amaranth: UnusedElaboratable=no
"""Parameter validation, widths and the paper's storage figure of ``greener.scoreboard_ext``."""

from gpurf.golden.greener.scoreboard_ext import fits, touches
from gpurf.hw.greener.scoreboard_ext import ScoreboardExt, ScoreboardExtConfig
from gpurf.hw.registry import get_block
from gpurf.synth.flow import storage

from .ranges import parameter_tests, range_ends_test

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


test_out_of_range, test_not_an_integer = parameter_tests(ScoreboardExt, golden, RANGES)
test_range_ends_accepted = range_ends_test(
    ScoreboardExtConfig, get_block("greener.scoreboard_ext").defaults, RANGES)


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
