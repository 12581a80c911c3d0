# amaranth: UnusedElaboratable=no
"""Defaults, state and the load-reuse rules of ``wir.load_filter``."""

from gpurf.golden.wir.load_filter import load_answer
from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import LoadFilterConfig
from gpurf.hw.wir.layouts import LoadKind
from gpurf.synth.flow import storage


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
