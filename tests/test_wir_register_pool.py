# amaranth: UnusedElaboratable=no
"""``wir.register_pool``: the low-water rule, widths, the paper's 10,240 counter bits, the golden
model's merge and protocol, and the SymbiYosys proof of the pool's invariants."""

import pytest

from gpurf.golden.wir.register_pool import ProtocolError, merge_events
from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import RegisterPoolConfig
from gpurf.hw.wir.register_pool import RegisterPool
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.wir.formal_register_pool import RegisterPoolFormal
from gpurf.tb.wir.mutants import SaturationFromMemory


def golden(**params):
    return get_block("wir.register_pool").golden(params)


@pytest.mark.parametrize("build", [RegisterPool, golden], ids=["hw", "golden"])
def test_low_water_range_follows_pregs(build):
    with pytest.raises(ValueError, match=r"^low_water must be an integer in 0\.\.7, not 8$"):
        build(pregs=8, low_water=8)
    with pytest.raises(ValueError, match=r"^low_water must be an integer in 0\.\.1023, "
                                         r"not 1024$"):
        build(low_water=1024)
    assert RegisterPoolConfig(**{**get_block("wir.register_pool").defaults, "pregs": 8,
                                 "low_water": 7}).low_water == 7


def test_default_widths():
    config = RegisterPoolConfig(**get_block("wir.register_pool").defaults)
    assert config == RegisterPoolConfig(pregs=1024, count_width=10, inc_ports=12,
                                        dec_ports=12, query_ports=4, policy="max_register",
                                        low_water=0)
    assert (config.preg_bits, config.max_count, config.slots) == (10, 1023, 24)
    assert config.delta_shape.width == 5 and config.delta_shape.signed
    assert config.ref_layout.size == 11
    assert config.merge_layout.size == 1 + 10 + 5
    assert config.storage_bits == 1024 * 10 == 10_240
    assert config.queue_bits == 1024 * 10


def test_capped_policy_has_a_cap_port():
    assert "cap" not in RegisterPool(pregs=8).signature.members
    assert "cap" in RegisterPool(pregs=8, policy="capped_register").signature.members


def test_storage_is_the_papers_10240_counter_bits():
    """Paper VII-E: 1024 counters x 10 bits = 10,240 bits (1.25 KB), an unmapped memory.
    The free-pool queue (1024 x 10 bits, which the paper calls trivial and leaves out) is
    the second memory; the flip-flops are control and the merge register, no entry state."""
    block = get_block("wir.register_pool")
    config = block.build().config
    report = storage(block)
    assert report.memories == 2
    assert report.memory_bits == config.storage_bits + config.queue_bits
    assert report.memory_bits - config.queue_bits == 10_240
    merge_register = config.slots * config.merge_layout.size
    control = 2 * (config.preg_bits + 1) + config.preg_bits
    assert report.ff_bits == merge_register + control


def test_merge_events_nets_ports_per_register():
    counts, zeros = merge_events({1: 2, 2: 1, 3: 1}, [1, 1, 2], [2, 1, 3, 2], max_count=7)
    assert counts == {1: 3, 2: 0, 3: 0}
    assert zeros == [2, 3]
    counts, zeros = merge_events({}, [5], [5, 5], allocated=5, max_count=3)
    assert (counts, zeros) == ({5: 0}, [5])


@pytest.mark.parametrize(("counts", "incs", "decs", "message"), [
    ({}, [4], [], r"^event on register 4, which has no reference$"),
    ({4: 1}, [], [4, 4], r"^count of register 4 would be -1, outside 0\.\.3$"),
    ({4: 3}, [4], [], r"^count of register 4 would be 4, outside 0\.\.3$"),
])
def test_golden_asserts_the_protocol(counts, incs, decs, message):
    with pytest.raises(ProtocolError, match=message):
        merge_events(counts, incs, decs, max_count=3)


def test_the_allocated_register_takes_events_in_its_cycle():
    assert merge_events({}, [4, 4], [], allocated=4, max_count=3) == ({4: 3}, [])
    with pytest.raises(ProtocolError, match=r"^count of register 4 would be 4, "):
        merge_events({}, [4, 4, 4], [], allocated=4, max_count=3)


def test_release_takes_two_cycles():
    """A decrement to zero in cycle t: the id is offered in cycle t+2 (golden model, pool
    of 4 with every other id taken)."""
    model = golden(pregs=4, inc_ports=1, dec_ports=1, query_ports=1)
    idle = {"alloc__ready": 0, "inc": 0, "dec": 0, "query": 0}
    for _ in range(4):
        assert model.step({**idle, "alloc__ready": 1})["alloc__valid"]
    assert not model.step(idle)["alloc__valid"]
    dec_2 = 1 | 2 << 1
    assert not model.step({**idle, "dec": dec_2})["alloc__valid"]
    assert not model.step(idle)["alloc__valid"]
    out = model.step(idle)
    assert (out["alloc__valid"], out["alloc__payload"], out["in_use"]) == (1, 2, 3)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.slow_formal
def test_pool_invariants_k_induction():
    """k-induction, depth 3, on ``formal_register_pool.SMALL``: a pool of 8 registers,
    3-bit counters, 2 increment and 2 decrement ports, 1 query, every input free but for
    the protocol (about 2 minutes of solver time). A register with a non-zero count is
    never in the free pool; every register is free (exactly once) or referenced; the RTL
    count equals the harness's shadow count; an offered id has no reference (the pool
    never hands out one id twice); saturated, in_use, alloc.valid and low_register follow
    the shadow counts."""
    result = prove(RegisterPoolFormal(), name="register_pool_small", depth=3, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 11, on ``formal_register_pool.SMALL``: every event the harness
    claims (allocation, return to the pool, saturated count, low-water mark) is reached from
    reset under its assumptions."""
    result = prove(RegisterPoolFormal(), name="register_pool_cover", depth=11, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 6 (deeper than the depth-3 base case of the k-induction of
    :func:`test_pool_invariants_k_induction`), fails on ``mutants.SaturationFromMemory``
    (saturated ignores this cycle's merged events)."""
    result = prove(RegisterPoolFormal(block=SaturationFromMemory), name="register_pool_mutant",
                   depth=6, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_pool_invariants_bmc():
    """BMC, depth 8, the harness of :func:`test_pool_invariants_k_induction` (about 2
    minutes, under ``slow_formal``): the same invariants from reset for 8 cycles."""
    result = prove(RegisterPoolFormal(), name="register_pool_small_bmc8", depth=8, mode="bmc")
    assert result.passed, result.log_tail
