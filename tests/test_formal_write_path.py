"""SymbiYosys proofs of ``compression.write_path`` (``tb/compression/formal_write_path.py``):
one write per accepted writeback, nothing else on a port, port 0's two-cycle write-back."""

import pytest

from gpurf.sim.formal import prove
from gpurf.tb.compression.formal_write_path import WritePathFormal
from gpurf.tb.compression.mutants import WriteOneCycleLate


@pytest.mark.parametrize("ports", [1, pytest.param(2, marks=pytest.mark.slow_formal)])
def test_formal_one_write_per_writeback_bmc_20(ports):
    """BMC 20 with one port (default tier) and with two (``SMALL``: bank conflicts and the
    conflict buffer; slow tier)."""
    result = prove(WritePathFormal(ports=ports), name=f"write_path_ports{ports}_20",
                   depth=20, mode="bmc")
    assert result.passed, result


def test_formal_covers_reached():
    """Writes and split writes on both ports, a full conflict buffer, a wait for a bank."""
    result = prove(WritePathFormal(), name="write_path_small_cover", depth=12, mode="cover")
    assert result.passed and not result.unreached, result


def test_formal_kills_a_write_one_cycle_late():
    result = prove(WritePathFormal(block=WriteOneCycleLate), name="write_path_mutant",
                   depth=12, mode="bmc")
    assert not result.passed and result.failed_step == 4, result
