# amaranth: UnusedElaboratable=no
"""Widths, the paper's storage figure, the golden rules and the proof of
``greener.scoreboard_ext``."""

import pytest

from gpurf.golden.greener.scoreboard_ext import fits, touches
from gpurf.hw.greener.configs import ScoreboardExtConfig
from gpurf.hw.registry import get_block
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.greener.formal_scoreboard_ext import ScoreboardExtFormal
from gpurf.tb.greener.mutants import DestinationsUnchecked


def test_default_widths():
    config = ScoreboardExtConfig(**get_block("greener.scoreboard_ext").defaults)
    assert config == ScoreboardExtConfig(warps=64, regs=64, sources=4, dests=4, check_ports=1,
                                         release_ports=4)
    assert (config.warp_bits, config.reg_bits) == (6, 6)
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


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [
    {},
    {"warps": 3, "regs": 3, "sources": 3, "dests": 1, "check_ports": 1, "release_ports": 2},
], ids=["small", "w3-s3"])
def test_formal_reservations_until_release(params):
    """k-induction, depth 8. ``small`` (``formal_scoreboard_ext.SMALL``): 2 warps x 2
    slots, 4 registers, 2 destinations, 2 check and 2 release ports; ``w3-s3``: 3 warps x
    3 slots, 3 registers, 1 destination, 1 check and 2 release ports. A reserved register
    is reported until released, a released one is not, full/ready follow the free slots,
    no slot is lost."""
    name = "scoreboard_ext_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(ScoreboardExtFormal(**params), name=name, depth=8, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 6, on ``formal_scoreboard_ext.SMALL``: every event the harness
    claims (hazard, full warp, full check, release) is reached from reset under its assumptions."""
    result = prove(ScoreboardExtFormal(), name="scoreboard_ext_cover", depth=6, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 8 (the base case of the ``small`` k-induction of
    :func:`test_formal_reservations_until_release`), fails on ``mutants.DestinationsUnchecked``
    (hazards on destinations missed)."""
    result = prove(ScoreboardExtFormal(block=DestinationsUnchecked), name="scoreboard_ext_mutant",
                   depth=8, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
