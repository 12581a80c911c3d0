"""Golden model of ``wir.register_pool``: a free-id FIFO and a count per register."""

from collections import Counter, deque

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import RegisterPoolConfig

__all__ = ["ProtocolError", "RegisterPool", "merge_events"]


class ProtocolError(AssertionError):
    """The stimulus broke the pool's protocol (an event on an unreferenced register, or a
    count leaving ``0..2**count_width - 1``)."""


def merge_events(counts, incs, decs, allocated=None, *, max_count):
    """The counts after one cycle's events, and the registers whose count fell to zero in
    the order they return to the pool (by the lowest decrement port naming them).

    ``counts`` maps register -> count before the cycle; ``incs`` and ``decs`` list the
    registers the valid ports name (port order); ``allocated`` is the register taken from
    the pool in the cycle (its count starts at 1). Raises :class:`ProtocolError` on a
    protocol violation.
    """
    after = dict(counts)
    if allocated is not None:
        after[allocated] = 1
    net = Counter(incs)
    net.subtract(decs)
    for preg, change in net.items():
        if after.get(preg, 0) == 0:
            raise ProtocolError(f"event on register {preg}, which has no reference")
        value = after[preg] + change
        if not 0 <= value <= max_count:
            raise ProtocolError(f"count of register {preg} would be {value}, "
                                f"outside 0..{max_count}")
        after[preg] = value
    zeros = [preg for preg in dict.fromkeys(decs) if after[preg] == 0]
    return after, zeros


class RegisterPool(PortModel, config=RegisterPoolConfig):
    """Port-level model: ``step(inputs)`` returns the outputs, then takes the clock edge.

    The pool is a FIFO of free ids, initially ``0..pregs-1`` in order; an allocation takes
    the oldest; a register whose count falls to zero re-enters the FIFO one edge after the
    edge that applied the decrement (the 2-cycle release).
    """

    def reset(self):
        self.free = deque(range(self.config.pregs))
        self.counts = {}
        self.returning = []
        self._last = "reset"

    def _refs(self, port, bits):
        """The registers the valid events of ``port`` name, in port order."""
        return [event.preg for event in self.ports[port].unpack(bits) if event.valid]

    def available(self, cap):
        """Ids the pool may hand out now under its policy."""
        config = self.config
        free = len(self.free)
        if not config.capped:
            return free
        in_use = config.pregs - free
        return min(free, max(cap - in_use, 0))

    def step(self, inputs):
        config, ports = self.config, self.ports
        available = self.available(ports["cap"].unpack(inputs["cap"]) if config.capped else 0)
        offer = self.free[0] if available else None
        queries = ports["query"].unpack(inputs["query"])
        saturated = sum(1 << q for q, preg in enumerate(queries)
                        if self.counts.get(preg, 0) >= config.saturation)
        outputs = {
            "alloc__valid": int(offer is not None),
            "alloc__payload": None if offer is None else ports["alloc__payload"].pack(offer),
            "saturated": ports["saturated"].pack(saturated),
            "in_use": ports["in_use"].pack(config.pregs - len(self.free)),
            "low_register": int(available <= config.low_water),
        }
        taken = offer if offer is not None and inputs["alloc__ready"] else None
        self._edge(taken, self._refs("inc", inputs["inc"]), self._refs("dec", inputs["dec"]))
        return outputs

    def _edge(self, taken, incs, decs):
        if taken is not None:
            self.free.popleft()
        self.free.extend(self.returning)
        self.counts, self.returning = merge_events(self.counts, incs, decs, taken,
                                                   max_count=self.config.max_count)
        for preg in self.returning:
            del self.counts[preg]
        self._last = f"took={taken} inc={incs} dec={decs} returning={self.returning}"

    def line_trace(self):
        head = list(self.free)[:4]
        return (f"register_pool: free={len(self.free)} head={head} "
                f"referenced={len(self.counts)} {self._last}")
