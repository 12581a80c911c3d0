"""Golden model of ``wir.pending_retry``, written from the paper's Section VI-B: a queue of
waiting instructions whose head re-checks the reuse buffer and goes back to the tail while
its entry is still pending."""

from collections import deque

from gpurf.hw.wir.pending_retry import PendingRetryConfig

__all__ = ["PendingRetry"]


class PendingRetry:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge."""

    def __init__(self, **params):
        self.config = PendingRetryConfig(**params)
        self.reset()

    def reset(self):
        self.queue: deque[int] = deque()
        self._trace = ""

    def step(self, inputs: dict) -> dict:
        queue = self.queue
        full = len(queue) == self.config.depth
        outputs = {
            "enq__ready": int(not full),
            "recheck__valid": int(bool(queue)),
            "recheck__payload": queue[0] if queue else None,
            "count": len(queue),
        }
        self._trace = f"queue={[hex(p) for p in queue]}"
        if queue and inputs["recheck__ready"]:
            head = queue.popleft()
            if inputs["still_pending"]:
                queue.append(head)
        if inputs["enq__valid"] and not full:
            queue.append(inputs["enq__payload"])
        return outputs

    def line_trace(self) -> str:
        return f"pending_retry: {self._trace}"
