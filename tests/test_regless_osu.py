# amaranth: UnusedElaboratable=no
"""``regless.osu``: parameters, the bank mapping, widths and storage."""

import pytest

from gpurf.hw.registry import get_block
from gpurf.hw.regless.configs import OsuConfig
from gpurf.hw.regless.osu import Osu
from gpurf.synth.flow import storage


def golden(**params):
    return get_block("regless.osu").golden(params)


BUILDS = pytest.mark.parametrize("build", [Osu, golden], ids=["hw", "golden"])


@BUILDS
def test_lines_a_multiple_of_banks(build):
    with pytest.raises(ValueError, match=r"^lines must be a multiple of banks \(8\), not 100$"):
        build(lines=100)


@BUILDS
def test_lines_per_bank_limit(build):
    with pytest.raises(ValueError, match=r"^lines must be an integer in 1\.\.256, not 512$"):
        build(lines=1024, banks=2)


def test_bank_mapping():
    """Paper 5.2: the lower 3 bits of ``warp + reg`` with 8 banks."""
    config = OsuConfig(**get_block("regless.osu").defaults)
    assert [config.bank_of(0, r) for r in range(10)] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
    assert config.bank_of(5, 4) == 1
    assert config.bank_of(15, 63) == (15 + 63) % 8
    assert OsuConfig(lines=8, banks=2, warps=2, regs=4, lanes=1, data_width=1).bank_of(1, 2) == 1


def test_default_widths():
    config = OsuConfig(**get_block("regless.osu").defaults)
    assert (config.bank.lines, config.bank_bits) == (16, 3)
    assert config.line_layout.size == 4 + 3
    assert config.reserved_layout.size == 7 + 1
    assert config.fetch_layout.size == 4 + 6 + 7 + 1
    assert config.ack_layout.size == 1 + 4


def test_storage_small():
    """2 banks x 4 lines of 2 x 4 bits: two unmapped memories of 4 x 8 bits; flip-flops:
    the banks' state (per bank 4 tags of 3 bits, 6 x 4 state bits, eviction slot 1 + 1 + 2,
    fetch register 1 + 1 + 2 + 2 + 1, two more) plus each merge's lock (1 + 1 bank bit)."""
    params = {"lines": 8, "banks": 2, "warps": 2, "regs": 4, "lanes": 2, "data_width": 4}
    report = storage(get_block("regless.osu"), params)
    assert report.memories == 2
    assert report.memory_bits == 2 * 4 * 8
    per_bank = 4 * 3 + 6 * 4 + 4 + 7 + 2
    assert report.ff_bits == 2 * per_bank + 2 * 2
