# amaranth: UnusedElaboratable=no
"""Defaults, storage and the queue order of ``wir.pending_retry``."""

import pytest

from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import PendingRetryConfig
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.wir.formal_pending_retry import PendingRetryFormal
from gpurf.tb.wir.mutants import AcceptsWhenFull


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


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [{}, {"depth": 2, "width": 3}], ids=["small", "d2-w3"])
def test_formal_fifo_order(params):
    """BMC, depth 20 (k-induction does not close: the pointers are local to the block).
    ``small`` (``formal_pending_retry.SMALL``): 4 entries of 2 bits; ``d2-w3``: 2 entries
    of 3 bits. Re-checks offer the oldest queued instruction, re-queues go to the tail
    before a same-cycle enqueue, nothing is lost or duplicated, ``enq.ready`` low exactly
    when full."""
    name = "pending_retry_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(PendingRetryFormal(**params), name=name, depth=20, mode="bmc")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 12, on ``formal_pending_retry.SMALL``: a full queue
    refusing an enqueue, a re-queue and an enqueue in one cycle, a re-queue into a full
    queue, a re-check that leaves, the ring wrapping."""
    result = prove(PendingRetryFormal(), name="pending_retry_cover", depth=12, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 10, on ``small``: fails on ``mutants.AcceptsWhenFull`` (an enqueue into a
    full queue accepted, overwriting the oldest instruction)."""
    result = prove(PendingRetryFormal(block=AcceptsWhenFull), name="pending_retry_mutant",
                   depth=10, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
