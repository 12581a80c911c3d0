"""Golden model of ``wir.pending_retry``, written from the paper's Section VI-B: a queue of
waiting instructions whose head re-checks the reuse buffer and goes back to the tail while
its entry is still pending."""

from collections import deque

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import PendingRetryConfig

__all__ = ["PendingRetry"]


class PendingRetry(PortModel, config=PendingRetryConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    The queue holds payloads as they are given: packed integers at the ports, any Python
    value when a composition drives :meth:`advance` directly."""

    def reset(self):
        self.queue: deque = deque()

    @property
    def head(self):
        """The payload offered for a re-check (``None`` when the queue is empty)."""
        return self.queue[0] if self.queue else None

    def advance(self, enq, *, recheck: bool, still_pending: bool) -> bool:
        """Take the clock edge: the head re-checked (``recheck``, the consumer's ready)
        leaves or, ``still_pending``, goes back to the tail; then ``enq`` (``None``: no
        offer) joins unless the queue was full. Returns whether ``enq`` was taken."""
        queue = self.queue
        full = len(queue) == self.config.depth
        if queue and recheck:
            head = queue.popleft()
            if still_pending:
                queue.append(head)
        if enq is not None and not full:
            queue.append(enq)
            return True
        return False

    def step(self, inputs: dict) -> dict:
        ports, queue = self.ports, self.queue
        outputs = {
            "enq__ready": int(len(queue) != self.config.depth),
            "recheck__valid": int(bool(queue)),
            "recheck__payload": ports["recheck__payload"].pack(queue[0]) if queue else None,
            "count": ports["count"].pack(len(queue)),
        }
        enq = ports["enq__payload"].unpack(inputs["enq__payload"]) if inputs["enq__valid"] \
            else None
        self.advance(enq, recheck=inputs["recheck__ready"],
                     still_pending=inputs["still_pending"])
        return outputs

    def line_trace(self) -> str:
        shown = [hex(p) if isinstance(p, int) else p for p in self.queue]
        return f"pending_retry: queue={shown}"
