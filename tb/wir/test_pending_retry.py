"""cocotb bench of ``wir.pending_retry`` against its golden model.

The bench plays the reuse stage: it offers pending hits on ``enq`` (an offer is held until
taken, or withdrawn after a random wait, as a full queue makes the instruction execute
normally), raises ``recheck.ready`` on idle rename cycles and answers ``still_pending``.
"""

from gpurf.hw.wir.configs import PendingRetryConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


def random_stream(params, rng, cycles):
    """Random enqueues, idle cycles and re-check answers; phases of a mostly pending
    buffer (the queue fills up) and of results arriving (it drains)."""
    config = PendingRetryConfig(**params)
    offer, p_enq, p_idle, p_pending = None, 0.5, 0.5, 0.5
    for now in range(cycles):
        if now % 48 == 0:
            p_enq = rng.choice([0.1, 0.5, 0.9])
            p_idle = rng.choice([0.2, 0.5, 0.9])
            p_pending = rng.choice([0.1, 0.6, 0.95])
        if offer is None and rng.random() < p_enq:
            offer = rng.getrandbits(config.width)
        inputs = {"recheck__ready": int(rng.random() < p_idle),
                  "still_pending": int(rng.random() < p_pending)}
        if offer is not None:
            inputs.update(enq__valid=1, enq__payload=offer)
        outputs = yield inputs
        if offer is not None and (outputs["enq__ready"] or rng.random() < 0.3):
            offer = None


def directed_full(params, rng, cycles):
    """Fill the queue (the next offer is refused), re-check every entry still pending (the
    order rotates), re-queue and enqueue in the same cycle at ``depth - 1`` and when full,
    then drain with hits."""
    config = PendingRetryConfig(**params)
    for value in range(config.depth + 1):
        yield {"enq__valid": 1, "enq__payload": value % (1 << config.width)}
    for _ in range(config.depth + 1):
        yield {"recheck__ready": 1, "still_pending": 1}
    yield {"recheck__ready": 1, "still_pending": 1, "enq__valid": 1, "enq__payload": 1}
    yield {"recheck__ready": 1, "still_pending": 0}
    yield {"recheck__ready": 1, "still_pending": 1, "enq__valid": 1, "enq__payload": 0}
    yield {"recheck__ready": 1, "still_pending": 0, "enq__valid": 1, "enq__payload": 1}
    for _ in range(config.depth + 2):
        yield {"recheck__ready": 1, "still_pending": 0}
    yield {"recheck__ready": 1, "still_pending": 1, "enq__valid": 1, "enq__payload": 1}
    yield {"recheck__ready": 1, "still_pending": 1}
    yield {"recheck__ready": 1, "still_pending": 0}


STIMULI = (random_stream, directed_full)

globals().update(cocotb_tests(STIMULI))
