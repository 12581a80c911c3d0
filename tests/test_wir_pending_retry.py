# amaranth: UnusedElaboratable=no
"""Defaults, storage and the queue order of ``wir.pending_retry``."""

from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import PendingRetryConfig
from gpurf.synth.flow import storage


def golden(**params):
    return get_block("wir.pending_retry").golden(params)


def test_defaults():
    config = PendingRetryConfig(**get_block("wir.pending_retry").defaults)
    assert (config.depth, config.width, config.pointer_bits) == (16, 64, 4)
    assert config.storage_bits == 1024


def test_storage_is_a_ring_memory():
    """16 x 64-bit ring (a row of its own: the paper leaves the queue out); head and tail
    pointers (4 + 4) and the count (5) are the only flip-flops."""
    report = storage(get_block("wir.pending_retry"))
    assert report.memory_bits == 16 * 64
    assert report.ff_bits == 4 + 4 + 5


def test_golden_requeues_at_the_tail():
    model = golden(depth=4, width=8)
    idle = {"enq__valid": 0, "enq__payload": 0, "recheck__ready": 0, "still_pending": 0}
    for value in (1, 2, 3):
        model.step({**idle, "enq__valid": 1, "enq__payload": value})
    out = model.step({**idle, "recheck__ready": 1, "still_pending": 1})
    assert out["recheck__payload"] == 1
    out = model.step({**idle, "recheck__ready": 1, "still_pending": 0})
    assert (out["recheck__payload"], out["count"]) == (2, 3)
    assert list(model.queue) == [3, 1]
