# amaranth: UnusedElaboratable=no
"""``compression.indirection_table``: the rule between parameters, widths, the paper's
storage, the golden arbitration, and the SymbiYosys proofs (small configurations, named
per test)."""

import pytest

from gpurf.golden.compression.indirection_table import grant_banks
from gpurf.hw.compression.configs import DESTINATION, IndirectionTableConfig
from gpurf.hw.compression.indirection_table import IndirectionTable
from gpurf.hw.registry import get_block
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.compression.formal_indirection_table import IndirectionTableFormal
from gpurf.tb.compression.mutants import HighestPortWins


def golden(**params):
    return get_block("compression.indirection_table").golden(params)


BUILDS = pytest.mark.parametrize("build", [IndirectionTable, golden], ids=["hw", "golden"])


@BUILDS
def test_banks_at_most_entries(build):
    with pytest.raises(ValueError, match=r"^banks must be at most entries \(8\), not 16$"):
        build(entries=8, banks=16)


def test_default_widths():
    config = IndirectionTableConfig(**get_block("compression.indirection_table").defaults)
    assert config == IndirectionTableConfig(entries=256, banks=16, ports=16, buffer=0,
                                            tag_width=8)
    assert (config.reg_bits, config.bank_bits, config.rows, config.role) == (8, 4, 16, "source")
    assert config.storage_bits == 256 * 32
    assert config.lookup_layout.size == 8 + 8
    assert config.result_layout.size == 32 + 8
    assert config.load_layout.size == 8 + 32
    destination = IndirectionTableConfig(**{**config.params(), **DESTINATION})
    assert (destination.ports, destination.buffer, destination.role) == (3, 1, "destination")


def test_grant_lowest_port_per_bank():
    assert grant_banks([None, None]) == set()
    assert grant_banks([3, 3, 1, 3, 1, None, 2]) == {0, 2, 6}


def test_storage_is_the_papers_256_x_32_bits():
    """Paper 3.2.2 / 6.4: 256 entries x 32 bits, 16 unmapped memories (6T SRAM: 49,152
    transistors); the arbiter and result registers are logic."""
    report = storage(get_block("compression.indirection_table"))
    assert report.memory_bits == 256 * 32
    assert 6 * report.memory_bits == 49_152
    assert report.memories == 16


pytestmark_formal = pytest.mark.skipif(missing_solver() is not None,
                                       reason=str(missing_solver()))

PROOFS = [
    pytest.param({}, ("banks", "priority"), 20, id="source-order-banks-priority"),
    pytest.param({}, ("wait",), 20, id="source-wait", marks=pytest.mark.slow_formal),
    pytest.param({"ports": 3, "buffer": 1}, ("banks",), 20, id="destination-order-banks"),
    pytest.param({"ports": 3, "buffer": 1}, ("wait",), 20, id="destination-wait",
                 marks=pytest.mark.slow_formal),
    pytest.param({"entries": 8, "banks": 2, "ports": 2, "buffer": 2}, ("banks", "wait"), 20,
                 id="buffer2-order-banks-wait"),
    pytest.param({}, ("data",), 10, id="source-data"),
    pytest.param({"ports": 3, "buffer": 1}, ("data",), 10, id="destination-data",
                 marks=pytest.mark.slow_formal),
]


@pytestmark_formal
@pytest.mark.parametrize(("params", "checks", "depth"), PROOFS)
def test_no_lost_or_duplicated_lookup(params, checks, depth):
    """BMC of ``formal_indirection_table`` (SMALL = 8 registers in 2 banks, 3 ports, the
    source table; overrides per case: the destination table with 1 buffer entry per port,
    and 2 ports with 2 entries each). Every case proves the ordering group: each accepted
    lookup has exactly one result, in order, at most ``buffer + 1`` outstanding. ``banks``:
    one grant and one result per bank per cycle; ``priority``: the source table's fixed
    priority exactly; ``wait``: the bounded wait under fairness; ``data``: results carry
    the entry at the grant (depth 10: the memory model makes deeper BMC slow)."""
    name = "indirection_table_" + "_".join(checks) + "_" + (
        "_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(IndirectionTableFormal(checks=checks, **params), name=name, depth=depth)
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 6, on ``formal_indirection_table.SMALL``: every event the
    harness claims (bank conflict, stalled offer, full port, result) is reached from reset under
    its assumptions."""
    result = prove(IndirectionTableFormal(), name="indirection_table_cover", depth=6, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 4, on ``formal_indirection_table.SMALL`` with the default checks (the ``small``
    proof of :func:`test_no_lost_or_duplicated_lookup` passes on the block): fails on
    ``mutants.HighestPortWins`` (bank priority reversed)."""
    result = prove(IndirectionTableFormal(block=HighestPortWins), name="indirection_table_mutant",
                   depth=4, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
