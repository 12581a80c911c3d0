# amaranth: UnusedElaboratable=no
"""Verify cache: default widths, the paper's 8 x 1035 storage bits, and the formal proof of
its coherence (a hit returns the register's current value)."""

import pytest

from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import VerifyCacheConfig
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.wir.formal_verify_cache import VerifyCacheFormal
from gpurf.tb.wir.mutants import LookupIgnoresWrite


def golden(**params):
    return get_block("wir.verify_cache").golden(params)


def test_default_widths():
    config = VerifyCacheConfig(**get_block("wir.verify_cache").defaults)
    assert (config.entries, config.preg_bits, config.value_bits) == (8, 10, 1024)
    assert config.entry_bits == 1035
    assert config.storage_bits == 8280


def test_storage_is_the_papers_8_x_1035_bits():
    """Paper VII-E: 8 entries x 1035 bits = 8,280: the values in one unmapped memory
    (8 x 1024), the 8 valid bits and 8 x 10-bit tags in flip-flops. The other flip-flops
    are the FIFO pointer (3) and the result register (valid, hit)."""
    report = storage(get_block("wir.verify_cache"))
    assert report.memories == 1
    assert report.memory_bits == 8 * 1024
    assert report.ff_bits == 8 + 80 + 3 + 2
    assert report.memory_bits + 8 + 80 == 8280


def test_golden_fifo_replacement_and_in_place_refill():
    model = golden(entries=2, pregs=8, lanes=1, data_width=4, invalidate_ports=1)
    config = model.config

    def step(**ins):
        return model.step({"lookup__valid": 0, "lookup__payload": 0, "fill__valid": 0,
                           "fill__payload": 0, "invalidate_valid": 0, "invalidate_preg": 0,
                           **ins})

    def fill(preg, value):
        return step(fill__valid=1, fill__payload=config.codecs["fill__payload"].pack(
            {"preg": preg, "value": [value]}))

    fill(1, 0xA)
    fill(2, 0xB)
    fill(1, 0xC)
    assert model.lines == [(1, [0xC]), (2, [0xB])]
    fill(3, 0xD)
    assert model.lines == [(3, [0xD]), (2, [0xB])] and model.pointer == 1
    step(invalidate_valid=1, invalidate_preg=2, fill__valid=1,
         fill__payload=config.codecs["fill__payload"].pack({"preg": 2, "value": [1]}))
    assert model.lines == [(3, [0xD]), None]


def test_without_lookup_port():
    """``lookup_port`` off (``wir.pipeline`` reads through ``peek``): no ``lookup`` or
    ``result`` port; the golden model answers nothing and still fills and invalidates."""
    params = {"entries": 2, "pregs": 8, "lanes": 1, "data_width": 4, "invalidate_ports": 1,
              "lookup_port": False}
    assert {"lookup", "result"}.isdisjoint(VerifyCacheConfig(**params).signature().members)
    model = golden(**params)
    fill = model.config.codecs["fill__payload"].pack({"preg": 5, "value": [3]})
    assert model.step({"fill__valid": 1, "fill__payload": fill, "invalidate_valid": 0,
                       "invalidate_preg": 0}) == {}
    assert model.lines == [(5, [3]), None]
    model.step({"fill__valid": 0, "fill__payload": 0, "invalidate_valid": 1,
                "invalidate_preg": 5})
    assert model.lines == [None, None]


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [{}, {"entries": 3, "pregs": 4, "invalidate_ports": 2}],
                         ids=["small", "e3-w2"])
def test_formal_coherence(params):
    """k-induction, depth 4. ``small`` (``formal_verify_cache.SMALL``): 2 entries, 4
    registers, 1 lane x 2 bits, 1 write port; ``e3-w2``: 3 entries, 2 write ports. A hit
    returns the last filled value of a register not written since; a fill is found by the
    next cycle's lookup; a register is held by one entry at most."""
    name = "verify_cache_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(VerifyCacheFormal(**params), name=name, depth=4, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 5, on ``formal_verify_cache.SMALL``: every event the harness
    claims (hit, lookup of a register written since its fill, full cache) is reached from reset
    under its assumptions."""
    result = prove(VerifyCacheFormal(), name="verify_cache_cover", depth=5, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 4 (the base case of the ``small`` k-induction of :func:`test_formal_coherence`),
    fails on ``mutants.LookupIgnoresWrite`` (a lookup hits on a register written the same
    cycle)."""
    result = prove(VerifyCacheFormal(block=LookupIgnoresWrite), name="verify_cache_mutant",
                   depth=4, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
