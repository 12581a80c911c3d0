"""Golden model of ``compression.indirection_table``: a list of entries, per-port FIFOs."""

from collections import deque

from gpurf.golden.model import PortModel
from gpurf.hw.compression.configs import IndirectionTableConfig
from gpurf.hw.compression.layouts import indirection_entry_layout
from gpurf.hw.ports import codec

__all__ = ["IndirectionTable", "grant_banks"]

_ENTRY = codec(indirection_entry_layout())


def grant_banks(banks_wanted: list[int | None]) -> set[int]:
    """The ports granted this cycle: for each bank the lowest-numbered port whose candidate
    wants it (``banks_wanted[p]`` is port ``p``'s bank, ``None`` for no candidate)."""
    served, granted = set(), set()
    for port, bank in enumerate(banks_wanted):
        if bank is not None and bank not in served:
            served.add(bank)
            granted.add(port)
    return granted


class IndirectionTable(PortModel, config=IndirectionTableConfig):
    """Port-level model: ``step(inputs)`` returns the outputs of the cycle, then clocks.

    The table is a list of ``entries`` packed entries (starting at zero, like the RTL's
    memories; reset does not clear it); each port keeps a FIFO of waiting lookups
    ``(reg, tag)`` and the result it shows next cycle.
    """

    def __init__(self, **params):
        super().__init__(**params)
        self.table = [0] * self.config.entries

    def reset(self):
        ports = self.config.ports
        self.queues = [deque() for _ in range(ports)]
        self.shown = [None] * ports
        self._trace = ""

    def _lookups(self, inputs):
        valid = inputs["lookup_valid"]
        return [(lookup.reg, lookup.tag) if valid >> p & 1 else None
                for p, lookup in enumerate(self.ports["lookup"].unpack(inputs["lookup"]))]

    def _outputs(self):
        results = [{"entry": entry, "tag": tag} for entry, tag in
                   (shown or (0, 0) for shown in self.shown)]
        return {
            "result_valid": sum(1 << p for p, s in enumerate(self.shown) if s),
            "result": self.ports["result"].pack(results),
        }

    def step(self, inputs):
        config = self.config
        outputs = self._outputs()
        incoming = self._lookups(inputs)
        candidates = [queue[0] if queue else offer
                      for queue, offer in zip(self.queues, incoming, strict=True)]
        granted = grant_banks([None if c is None else c[0] % config.banks for c in candidates])
        ready = [self._ready(p, granted) for p in range(config.ports)]
        self.shown = [(self.table[candidates[p][0]], candidates[p][1]) if p in granted else None
                      for p in range(config.ports)]
        for p, queue in enumerate(self.queues):
            served_directly = not queue and p in granted
            if queue and p in granted:
                queue.popleft()
            if incoming[p] is not None and ready[p] and not served_directly:
                queue.append(incoming[p])
        if inputs["load__valid"]:
            load = self.ports["load__payload"].unpack(inputs["load__payload"])
            self.table[load.reg] = _ENTRY.pack(load.entry)
        self._trace = f"granted={sorted(granted)} queued={[len(q) for q in self.queues]}"
        return {**outputs, "lookup_ready": sum(1 << p for p, r in enumerate(ready) if r),
                "load__ready": 1}

    def _ready(self, port, granted):
        """Source: the grant. Destination: room in the FIFO after this cycle's grant."""
        queue, buffer = self.queues[port], self.config.buffer
        if not buffer:
            return port in granted
        return len(queue) < buffer or (bool(queue) and port in granted)

    def line_trace(self):
        return f"indirection_table: {self._trace}"
