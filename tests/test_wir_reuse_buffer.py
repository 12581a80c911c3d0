# amaranth: UnusedElaboratable=no
"""Default widths, layouts, the paper's storage figure and the formal proof of
``wir.reuse_buffer``."""

import pytest

from gpurf.golden.wir.reuse_buffer import fold_index
from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import ReuseBufferConfig
from gpurf.hw.wir.reuse_buffer import ReuseBuffer
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.harness import simulate_amaranth
from gpurf.tb.wir.formal_reuse_buffer import ReuseBufferFormal
from gpurf.tb.wir.mutants import BarrierIgnored, ResultReferenceKept
from gpurf.tb.wir.test_reuse_buffer import Driver, cycle


def test_default_widths():
    config = ReuseBufferConfig(**get_block("wir.reuse_buffer").defaults)
    assert config == ReuseBufferConfig(entries=256, opcode_bits=8, preg_bits=10, imm_bits=32,
                                       blocks=8, barrier_bits=5)
    assert (config.index_bits, config.tbid_bits, config.null_tbid) == (8, 4, 0xF)
    assert config.tag_layout.size == 8 + 3 * 10 + 4 + 5
    assert config.row_layout.size == 58
    assert config.entry_layout.size == 59
    assert [name for name, _ in config.entry_layout] == ["valid", "tag", "result", "pending"]
    assert config.storage_bits == 15104


def test_fold_index_examples():
    assert fold_index(0, 47, 8) == 0
    assert fold_index(0xAB, 47, 8) == 0xAB
    assert fold_index(0xAB00 | 0xAB, 47, 8) == 0
    assert fold_index(1 << 46, 47, 8) == 1 << 6
    assert fold_index(0b1011_01, 6, 2) == 0b01 ^ 0b11 ^ 0b10


def test_storage_is_the_papers_15104_bits():
    """Paper VII-E: 256 entries x 59 bits = 15,104 bits: a 256 x 58-bit unmapped memory
    plus 256 valid flip-flops; the only other flip-flops are the 8-bit eviction pointer."""
    report = storage(get_block("wir.reuse_buffer"))
    assert report.memories == 1
    assert report.memory_bits == 256 * 58
    pointer = 8
    assert report.ff_bits == 256 + pointer
    assert report.memory_bits + report.ff_bits - pointer == 15104


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_hit_implies_tag_equality_and_clear_pending():
    """k-induction, depth 3, on ``formal_reuse_buffer.SMALL`` with 2 entries (2 entries,
    4-bit opcodes, 4 registers, 3-bit immediates, one thread block, 1-bit barrier count:
    12-bit tags folded to a 1-bit index, so tags collide all the time); every input free.
    A hit only on a valid entry with the lookup's tag and a clear pending bit (and its
    result); every response equals the spec's; reference events balance the shadow's held
    references."""
    result = prove(ReuseBufferFormal(entries=2), name="reuse_buffer_e2", depth=3,
                   mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 6, on ``formal_reuse_buffer.SMALL`` with 2 entries: every event
    the harness claims (reuse hit, pending hit, eviction, replacement, fill) is reached from
    reset under its assumptions."""
    result = prove(ReuseBufferFormal(entries=2), name="reuse_buffer_cover", depth=6, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 6 (deeper than the depth-3 base case of the k-induction of
    :func:`test_hit_implies_tag_equality_and_clear_pending`), fails on
    ``mutants.ResultReferenceKept`` (a displaced entry keeps its result reference)."""
    result = prove(ReuseBufferFormal(block=ResultReferenceKept, entries=2),
                   name="reuse_buffer_mutant", depth=6, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


ALIASING = {"entries": 16}
"""A configuration where two tags differing only in the barrier count share an index: 4
index bits, 5-bit barrier, so barriers ``b`` and ``b ^ 0b10001`` fold to the same index
(at every registered configuration the barrier is at most ``index_bits`` wide and such
tags never meet)."""


def directed_barrier_alias(params, rng, cycles):
    """An entry filled under barrier count ``b`` is looked up under ``b ^ (1 | 1 <<
    index_bits)``: same index, different tag, so a miss that replaces it, never a hit."""
    driver = Driver(params, rng)
    config = driver.config
    before = {"op": 1, "regs": 0b011, "operand": [1, 2, 0], "tbid": 0, "barrier": 1}
    after = {**before, "barrier": before["barrier"] ^ (1 | 1 << config.index_bits)}
    response = yield from cycle(driver, driver.lookup(before), before)
    assert response["reserved"], response
    index, tag = driver.reserved.pop()
    yield from cycle(driver, driver.fill(index, tag, 5))
    response = yield from cycle(driver, driver.lookup(before), before)
    assert response["hit"] and response["result"] == 5, response
    response = yield from cycle(driver, driver.lookup(after), after)
    assert response["index"] == index, response
    assert not response["hit"] and not response["pending"] and response["reserved"], response
    response = yield from cycle(driver, driver.lookup(before), before)
    assert response["index"] == index and not response["hit"], response


def test_barrier_alias_directed():
    """``directed_barrier_alias`` at ``ALIASING`` on the RTL (Amaranth's simulator) against
    the golden model; the same case fails on ``mutants.BarrierIgnored``."""
    golden = get_block("wir.reuse_buffer").golden
    params = {**get_block("wir.reuse_buffer").defaults, **ALIASING}
    config = ReuseBufferConfig(**params)
    assert config.barrier_bits > config.index_bits
    assert simulate_amaranth(ReuseBuffer(**params), golden(params), directed_barrier_alias,
                             params, seed=1, cycles=0) == 5
    with pytest.raises(AssertionError):
        simulate_amaranth(BarrierIgnored(**params), golden(params), directed_barrier_alias,
                          params, seed=1, cycles=0)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_barrier_proof_at_two_barrier_bits():
    """k-induction, depth 3, on ``formal_reuse_buffer.SMALL`` with 2 entries and a 2-bit
    barrier count: the barrier's two bits fold onto the 1-bit index, so tags differing only
    in the barrier (``b``, ``b ^ 0b11``) share an entry. The invariants of
    :func:`test_hit_implies_tag_equality_and_clear_pending` hold."""
    result = prove(ReuseBufferFormal(entries=2, barrier_bits=2), name="reuse_buffer_e2_b2",
                   depth=3, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize(("barrier_bits", "status"), [(1, "PASS"), (2, "FAIL")])
def test_barrier_mutant_killed_only_where_tags_alias(barrier_bits, status):
    """BMC, depth 8, 2 entries: ``mutants.BarrierIgnored`` (hits ignoring the barrier count)
    passes at a 1-bit barrier (two tags differing in it fold to different indices, as at
    every registered configuration) and fails at 2 bits, where they share one."""
    result = prove(ReuseBufferFormal(block=BarrierIgnored, entries=2, barrier_bits=barrier_bits),
                   name=f"reuse_buffer_barrier_mutant_b{barrier_bits}", depth=8, mode="bmc")
    assert result.status == status, result.log_tail
