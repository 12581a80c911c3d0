"""Stimulus drivers shared by the RegLess benches: :class:`Driver` plays the neighbours of an
OSU bank or of a whole OSU (the register read and writeback units, the capacity manager's
preload queues, the compressor / L1 answering fetches and taking writebacks).

The driver keeps the bench's own view (which registers are in use, which lines are
reserved), so requests are mostly meaningful; every request is held until its transfer
(stream rule). Payloads are packed and outputs read with the codecs of the block's ports
(``config.codecs``); a line is kept as the ``line`` field of the block's payloads (an ``int``
in a bank, a ``{line, bank}`` struct in an OSU).
"""

from collections import defaultdict

__all__ = ["Driver", "cycle", "random_traffic", "registers", "until_taken"]


class Driver:
    """Requests, handshakes and the bench's view of one OSU bank (or of a whole OSU:
    ``port`` maps a stream and a register to the port that carries it)."""

    def __init__(self, config, rng, *, fill_delay=(1, 6), port=None, acked=None,
                 shadow=None):
        self.config, self.rng = config, rng
        self.ports = config.codecs
        self.acked = acked or (lambda outputs, ref: outputs["preloaded__valid"])
        """Whether the preload of ``ref`` taken this cycle was acknowledged at once."""
        self.shadow = shadow
        """A golden model stepped with the bench's inputs, asked which registers are in
        use (so random reads hit and releases take effect)."""
        self.fill_delay = fill_delay
        self.port = port or (lambda stream, ref: stream)
        self.pending: dict[str, tuple[str, dict, tuple | None, int] | None] = {}
        """Per port: ``(stream, fields, register, payload)`` of the request it holds."""
        self.in_use: set[tuple[int, int]] = set()
        self.reserved: list[tuple] = []
        """``(line, register)`` of reservations not yet written."""
        self.written: set[tuple[int, int]] = set()
        """Registers in use whose value the bench has seen written or filled."""
        self.fills: list[tuple[int, dict]] = []
        self.filling: dict = {}
        """Line -> register of the preload misses fetched and not yet filled."""
        self.now = 0
        self.fetch_ready = 0.7
        self.writeback_ready = 0.7

    # --- requests ------------------------------------------------------------------

    def request(self, stream: str, fields: dict, ref=None) -> str | None:
        """Queue a request on its port; returns the port's name, ``None`` if it is busy."""
        name = self.port(stream, ref)
        if name is None or self.pending.get(name):
            return None
        self.pending[name] = (stream, fields, ref, self.ports[f"{name}__payload"].pack(fields))
        return name

    def free_port(self, stream: str, count: int) -> str | None:
        """A random free one of the ``count`` ports ``<stream>__<i>`` of an OSU, or
        ``None``."""
        free = [f"{stream}__{i}" for i in range(count) if not self.pending.get(f"{stream}__{i}")]
        return self.rng.choice(free) if free else None

    def value(self) -> int:
        """A random warp register value (packed: a payload's ``data`` field takes it)."""
        return self.rng.getrandbits(self.config.lanes * self.config.data_width)

    def inputs(self) -> dict:
        if self.fills and self.fills[0][0] <= self.now and self.request("fill", self.fills[0][1]):
            self.fills.pop(0)
        inputs = {}
        for name, held in self.pending.items():
            if held:
                inputs[f"{name}__valid"] = 1
                inputs[f"{name}__payload"] = held[3]
        inputs["fetch__ready"] = int(self.rng.random() < self.fetch_ready)
        inputs["writeback__ready"] = int(self.rng.random() < self.writeback_ready)
        return inputs

    def observe(self, outputs: dict, inputs: dict) -> dict:
        """Follow this cycle's transfers; returns ``{stream: fields}`` of those taken."""
        taken = {}
        for name, held in list(self.pending.items()):
            if held and outputs[f"{name}__ready"]:
                stream, fields, ref, _ = held
                if stream == "fill" and fields["line"] in self.filling:
                    ref = self.filling.pop(fields["line"])
                    self.in_use.add(ref)
                    self.written.add(ref)
                taken[stream] = fields
                self.pending[name] = None
                self._taken(stream, fields, ref, outputs, name)
        if outputs["fetch__valid"] and inputs["fetch__ready"]:
            fetch = self.ports["fetch__payload"].unpack(outputs["fetch__payload"])
            if not fetch.invalidate:
                delay = self.rng.randint(*self.fill_delay)
                self.fills.append((self.now + delay, {"line": fetch.line,
                                                      "data": self.value()}))
                self.fills.sort(key=lambda item: item[0])
                self.filling[fetch.line] = (fetch.warp, fetch.reg)
        self.now += 1
        return taken

    def _taken(self, stream, fields, ref, outputs, name):
        if stream == "reserve":
            resp = name.replace("reserve", "reserve_resp", 1) + "__payload"
            reserved = self.ports[resp].unpack(outputs[resp])
            self.in_use.add(ref)
            self.reserved.append((reserved.line, ref))
        elif (stream == "preload" and not fields["invalidate"]
              and self.acked(outputs, ref)):
            self.in_use.add(ref)
        elif stream == "release" or (stream == "write" and fields["last_use"]):
            self.in_use.discard(ref)
            self.written.discard(ref)
        elif stream == "write" and ref in self.in_use:
            self.written.add(ref)


def cycle(driver: Driver):
    """One cycle: yield the held requests, follow the transfers; returns them."""
    inputs = driver.inputs()
    outputs = yield inputs
    if driver.shadow is not None:
        driver.shadow.follow(defaultdict(int, inputs))
    return driver.observe(outputs, inputs)


def until_taken(driver: Driver, stream: str, fields: dict, ref=None, limit=200):
    """Queue one request and run cycles until it is transferred."""
    while not (name := driver.request(stream, fields, ref)):
        yield from cycle(driver)
    for _ in range(limit):
        taken = yield from cycle(driver)
        if stream in taken and driver.pending.get(name) is None:
            return
    raise AssertionError(f"{stream} {fields} not taken in {limit} cycles")


def registers(config, count):
    """``count`` distinct registers ``(warp, reg)`` of the configuration."""
    every = [(w, r) for r in range(config.regs) for w in range(config.warps)]
    return every[:count]


def random_traffic(driver: Driver, pool: list, rates: dict):
    """New requests on free ports, drawn from the bench's view and ``pool``."""
    rng = driver.rng
    if rng.random() < rates["reserve"]:
        ref = rng.choice(pool)
        driver.request("reserve", {"warp": ref[0], "reg": ref[1],
                                   "last_use": int(rng.random() < 0.2)}, ref)
    if rng.random() < rates["preload"]:
        ref = rng.choice(pool)
        driver.request("preload", {"warp": ref[0], "reg": ref[1],
                                   "invalidate": int(rng.random() < 0.1)}, ref)
    if driver.reserved and rng.random() < rates["write"]:
        line, ref = driver.reserved.pop(rng.randrange(len(driver.reserved)))
        reading = {held[2] for held in driver.pending.values() if held and held[0] == "read"}
        reading |= {r for _, r in driver.reserved}
        driver.request("write", {"line": line, "data": driver.value(),
                                 "last_use": int(rng.random() < 0.3 and ref not in reading)},
                       ref)
    leaving = {held[2] for held in driver.pending.values()
               if held and held[0] in ("release", "write")}
    in_use = driver.shadow.usable_registers()
    usable = [ref for ref in pool if ref in in_use]
    readable = [ref for ref in usable if ref not in leaving]
    if readable and rng.random() < rates["read"]:
        ref = rng.choice(readable)
        driver.request("read", {"warp": ref[0], "reg": ref[1]}, ref)
    busy = {held[2] for held in driver.pending.values() if held}
    busy |= {ref for _, ref in driver.reserved}
    idle = [ref for ref in usable if ref not in busy]
    if idle and rng.random() < rates["release"]:
        ref = rng.choice(idle)
        driver.request("release", {"warp": ref[0], "reg": ref[1],
                                   "erase": int(rng.random() < 0.3)}, ref)
