# amaranth: UnusedElaboratable=no
"""Defaults, state and the load-reuse rules of ``wir.load_filter``."""

import pytest

from gpurf.golden.wir.load_filter import load_answer
from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import LoadFilterConfig
from gpurf.hw.wir.layouts import LoadKind
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.wir.formal_load_filter import LoadFilterFormal
from gpurf.tb.wir.mutants import CounterWraps


def test_defaults():
    config = LoadFilterConfig(**get_block("wir.load_filter").defaults)
    assert (config.warps, config.blocks, config.barrier_bits) == (48, 8, 5)
    assert (config.tbid_bits, config.null_tbid, config.saturated) == (4, 0xF, 31)
    assert config.state_bits == 2 * 48 + 8 * 5


def test_state_is_flags_and_counters():
    """Two store flags per warp and a 5-bit counter per block, all flip-flops (a row of
    their own: the paper leaves them out), no memory."""
    report = storage(get_block("wir.load_filter"))
    assert report.memory_bits == 0
    assert report.ff_bits == 136


def test_load_answer_rules():
    rules = {"saturated": 31, "null_tbid": 15}
    shared, global_ = LoadKind.SHARED.value, LoadKind.GLOBAL.value
    assert load_answer(shared, set(), 2, 3, **rules) == {"reuse": 1, "tbid": 2, "barrier": 3}
    assert load_answer(shared, {"shared"}, 2, 3, **rules)["reuse"] == 0
    assert load_answer(shared, {"global"}, 2, 3, **rules)["reuse"] == 1
    assert load_answer(global_, set(), 2, 3, **rules) == {"reuse": 1, "tbid": 15, "barrier": 3}
    assert load_answer(global_, {"global"}, 2, 3, **rules)["reuse"] == 0
    assert load_answer(global_, set(), 2, 31, **rules)["reuse"] == 0
    for kind in (LoadKind.OTHER.value, LoadKind.RESERVED.value):
        assert load_answer(kind, {"shared", "global"}, 2, 31, **rules) == {
            "reuse": 1, "tbid": 15, "barrier": 0}


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [{}, {"warps": 2, "blocks": 3, "barrier_bits": 1}],
                         ids=["small", "w2-b3-c1"])
def test_formal_no_stale_load_reuse(params):
    """k-induction, depth 2. ``small`` (``formal_load_filter.SMALL``): 3 warps, 2 block
    slots, 2-bit barrier counters; ``w2-b3-c1``: 2 warps, 3 slots, 1-bit counters. A shared
    (global) load reaches the reuse buffer exactly when its warp has not stored to shared
    (global) memory since its block's last barrier or launch and the block's count is not
    saturated; the tag's block and barrier fields are the spec's."""
    name = "load_filter_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(LoadFilterFormal(**params), name=name, depth=2, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 8, on ``formal_load_filter.SMALL``: a shared load reused
    after a barrier, one refused after a store, a global load refused by a saturated
    counter, a launch and a barrier of one slot in one cycle, a store and a clear of one
    warp in one cycle."""
    result = prove(LoadFilterFormal(), name="load_filter_cover", depth=8, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 8, on ``small``: fails on ``mutants.CounterWraps`` (a barrier counter
    that wraps instead of saturating)."""
    result = prove(LoadFilterFormal(block=CounterWraps), name="load_filter_mutant", depth=8,
                   mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
