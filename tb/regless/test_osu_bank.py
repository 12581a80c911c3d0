"""cocotb bench of ``regless.osu_bank`` against its golden model.

The bench plays the register read units (reads, reserves, releases), the writeback units
(writes to reserved lines), the capacity manager (preloads and invalidations) and the
compressor / L1 (fetches answered by fills after a random delay, writebacks taken with a
random ready). :class:`Driver` keeps the bench's own view (which registers are in use,
which lines are reserved), so requests are mostly meaningful; every request is held until
its transfer (stream rule).
"""

from collections import defaultdict

from gpurf.golden.regless.osu_bank import OsuBank
from gpurf.hw.regless.configs import OsuBankConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI", "Driver"]

STREAMS = ("read", "reserve", "write", "preload", "release", "fill")


class Driver:
    """Requests, handshakes and the bench's view of one OSU bank (or of a whole OSU:
    ``port`` maps a stream and a register to the port that carries it)."""

    def __init__(self, config, rng, *, fill_delay=(1, 6), port=None, line_of=None,
                 line_field=None, acked=None, shadow=None):
        self.config, self.rng = config, rng
        self.line_field = line_field or (lambda line: line)
        """Packed line number -> the ``line`` field value of a payload."""
        self.acked = acked or (lambda outputs, ref: outputs["preloaded__valid"])
        """Whether the preload of ``ref`` taken this cycle was acknowledged at once."""
        self.shadow = shadow
        """A golden model stepped with the bench's inputs, asked which registers are in
        use (so random reads hit and releases take effect)."""
        self.fill_delay = fill_delay
        self.port = port or (lambda stream, ref: stream)
        self.line_of = line_of or (lambda view: int(view))
        self.pending: dict[str, tuple[str, dict, tuple | None] | None] = {}
        """Per port: ``(stream, fields, register)`` of the request it holds."""
        self.in_use: set[tuple[int, int]] = set()
        self.reserved: list[tuple[int, tuple[int, int]]] = []
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

    def layout(self, stream):
        return getattr(self.config, {"read": "ref_layout"}.get(stream, f"{stream}_layout"))

    def request(self, stream: str, fields: dict, ref=None) -> bool:
        """Queue a request on its port; ``False`` if the port is busy."""
        name = self.port(stream, ref)
        if self.pending.get(name):
            return False
        self.pending[name] = (stream, fields, ref)
        return True

    def value(self) -> int:
        return self.rng.getrandbits(self.config.lanes * self.config.data_width)

    def inputs(self) -> dict:
        fill = self.port("fill", None)
        if self.fills and self.fills[0][0] <= self.now and not self.pending.get(fill):
            self.pending[fill] = ("fill", self.fills.pop(0)[1], None)
        inputs = {}
        for name, held in self.pending.items():
            if held:
                stream, fields, _ = held
                if "line" in fields:
                    fields = {**fields, "line": self.line_field(fields["line"])}
                inputs[f"{name}__valid"] = 1
                inputs[f"{name}__payload"] = self.layout(stream).const(fields).as_value().value
        inputs["fetch__ready"] = int(self.rng.random() < self.fetch_ready)
        inputs["writeback__ready"] = int(self.rng.random() < self.writeback_ready)
        return inputs

    def observe(self, outputs: dict, inputs: dict) -> dict:
        """Follow this cycle's transfers; returns ``{stream: fields}`` of those taken."""
        taken = {}
        for name, held in list(self.pending.items()):
            if held and outputs[f"{name}__ready"]:
                stream, fields, ref = held
                if stream == "fill" and fields["line"] in self.filling:
                    ref = self.filling.pop(fields["line"])
                    self.in_use.add(ref)
                    self.written.add(ref)
                taken[stream] = fields
                self.pending[name] = None
                self._taken(stream, fields, ref, outputs)
        if outputs["fetch__valid"] and inputs["fetch__ready"]:
            view = self.config.fetch_layout.from_bits(outputs["fetch__payload"])
            if not view.invalidate:
                delay = self.rng.randint(*self.fill_delay)
                line = self.line_of(view.line)
                self.fills.append((self.now + delay, {"line": line,
                                                      "data": self._lanes(self.value())}))
                self.fills.sort(key=lambda item: item[0])
                self.filling[line] = (int(view.warp), int(view.reg))
        self.now += 1
        return taken

    def _lanes(self, bits):
        return self.config.value_layout.from_bits(bits)

    def _taken(self, stream, fields, ref, outputs):
        if stream == "reserve":
            view = self.config.reserved_layout.from_bits(outputs["reserve_resp__payload"])
            self.in_use.add(ref)
            self.reserved.append((self.line_of(view.line), ref))
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
        driver.shadow.step(defaultdict(int, inputs))
    return driver.observe(outputs, inputs)


def until_taken(driver: Driver, stream: str, fields: dict, ref=None, limit=200):
    """Queue one request and run cycles until it is transferred."""
    while not driver.request(stream, fields, ref):
        yield from cycle(driver)
    for _ in range(limit):
        taken = yield from cycle(driver)
        if stream in taken and driver.pending.get(driver.port(stream, ref)) is None:
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
        driver.request("write", {"line": line, "data": driver._lanes(driver.value()),
                                 "last_use": int(rng.random() < 0.3 and ref not in reading)},
                       ref)
    leaving = {held[2] for held in driver.pending.values()
               if held and held[0] in ("release", "write")}
    usable = [ref for ref in pool if driver.shadow.usable(*ref)]
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


def random_stream(params, rng, cycles):
    """Random reads, reserves, writes, preloads, releases, fills and handshakes from a pool
    of about twice as many registers as lines; rates change every 100 cycles."""
    config = OsuBankConfig(**params)
    driver = Driver(config, rng, shadow=OsuBank(**params))
    pool = registers(config, min(config.warps * config.regs, 2 * config.lines + 1))
    for now in range(cycles):
        if now % 100 == 0:
            rates = {op: rng.choice([0.1, 0.3, 0.7]) for op in
                     ("reserve", "preload", "write", "read", "release")}
            driver.fetch_ready = rng.choice([0.3, 0.8, 1.0])
            driver.writeback_ready = rng.choice([0.3, 0.8, 1.0])
        random_traffic(driver, pool, rates)
        yield from cycle(driver)


def directed_operations(params, rng, cycles):
    """Every operation and list transition: reserve (free -> in use), write, read, evict of a
    clean line (-> clean) and of a written one (-> dirty), write with last use (-> dirty),
    erase (-> free), preload hits on clean and dirty lines (-> in use, acknowledged at
    once), preload miss (fetch, fill, acknowledgement), invalidation, reserve of a line
    still in use, priorities of one cycle (read + reserve + preload + release)."""
    config = OsuBankConfig(**params)
    driver = Driver(config, rng, fill_delay=(2, 2))
    a, b, c, d = registers(config, 4)
    ops = driver

    def reg(ref, **extra):
        return {"warp": ref[0], "reg": ref[1], **extra}

    for ref in (a, b):
        yield from until_taken(ops, "reserve", reg(ref, last_use=0), ref)
    yield from until_taken(ops, "reserve", reg(a, last_use=1), a)
    for line, ref in list(driver.reserved):
        yield from until_taken(ops, "write", {"line": line, "data": driver._lanes(driver.value()),
                                              "last_use": 0}, ref)
    driver.reserved.clear()
    for ref in (a, b):
        yield from until_taken(ops, "read", reg(ref), ref)
    yield from until_taken(ops, "release", reg(a, erase=0), a)     # written -> dirty
    yield from until_taken(ops, "preload", reg(c, invalidate=0), c)  # miss -> fetch
    for _ in range(6):
        yield from cycle(driver)
    yield from until_taken(ops, "release", reg(c, erase=0), c)     # filled -> clean
    yield from until_taken(ops, "preload", reg(c, invalidate=0), c)  # clean hit
    yield from until_taken(ops, "preload", reg(a, invalidate=0), a)  # dirty hit
    yield from until_taken(ops, "read", reg(a), a)
    yield from until_taken(ops, "release", reg(b, erase=1), b)     # erase -> free
    yield from until_taken(ops, "preload", reg(d, invalidate=1), d)  # invalidate
    yield from until_taken(ops, "reserve", reg(d, last_use=1), d)
    line, ref = driver.reserved.pop()
    yield from until_taken(ops, "write", {"line": line, "data": driver._lanes(driver.value()),
                                          "last_use": 1}, ref)        # last use -> dirty
    yield from until_taken(ops, "preload", reg(d, invalidate=0), d)  # dirty hit again
    driver.request("read", reg(a), a)
    driver.request("reserve", reg(b, last_use=0), b)
    driver.request("preload", reg(b, invalidate=0), b)
    driver.request("release", reg(c, erase=0), c)
    for _ in range(12):
        yield from cycle(driver)


def directed_exhaustion(params, rng, cycles):
    """List exhaustion and dirty-line recycling: every line in use, a further reserve
    waits; a release lets it through. Then every line dirty (written with last use): each
    reserve of a new register chooses the first dirty line, which is written back (slow
    writeback ready) and becomes clean before it is taken; meanwhile a preload of the
    chosen line's register waits for it and a read stalls while the evicted value is
    held."""
    config = OsuBankConfig(**params)
    driver = Driver(config, rng)
    every = registers(config, config.warps * config.regs)
    owned = every[:config.lines]
    for ref in owned:
        yield from until_taken(driver, "reserve", {"warp": ref[0], "reg": ref[1],
                                                   "last_use": 0}, ref)
    if len(every) > config.lines:
        extra = every[config.lines]
        driver.request("reserve", {"warp": extra[0], "reg": extra[1], "last_use": 0}, extra)
        for _ in range(5):
            yield from cycle(driver)
        yield from until_taken(driver, "release", {"warp": owned[0][0], "reg": owned[0][1],
                                                   "erase": 1}, owned[0])
        for _ in range(3):
            yield from cycle(driver)
    keep = driver.reserved[-1]
    for line, ref in list(driver.reserved):
        yield from until_taken(driver, "write", {"line": line,
                                                 "data": driver._lanes(driver.value()),
                                                 "last_use": int((line, ref) != keep)}, ref)
    lines = {line: ref for line, ref in driver.reserved}
    driver.reserved.clear()
    driver.writeback_ready = 0.2
    held = set(lines.values())
    fresh = [r for r in every if r not in held][:max(0, len(lines) - 2)]
    for index, ref in enumerate(fresh):
        driver.request("reserve", {"warp": ref[0], "reg": ref[1], "last_use": 0}, ref)
        driver.request("read", {"warp": keep[1][0], "reg": keep[1][1]}, keep[1])
        if index == 0:
            for _ in range(2):
                yield from cycle(driver)
            victim = lines[min(line for line, r in lines.items() if r != keep[1])]
            driver.request("preload", {"warp": victim[0], "reg": victim[1], "invalidate": 0},
                           victim)
        while driver.pending.get("reserve"):
            yield from cycle(driver)
    for _ in range(30):
        yield from cycle(driver)


def directed_protocol_error(params, rng, cycles):
    """A read of a register never reserved or preloaded misses: the sticky error rises and
    stays."""
    config = OsuBankConfig(**params)
    driver = Driver(config, rng)
    ref = registers(config, 1)[0]
    yield from until_taken(driver, "read", {"warp": ref[0], "reg": ref[1]}, ref)
    for _ in range(3):
        yield from cycle(driver)


STIMULI = (random_stream, directed_operations, directed_exhaustion, directed_protocol_error)

globals().update(cocotb_tests(STIMULI))
