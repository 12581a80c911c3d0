"""cocotb bench of ``wir.verify_cache`` against its golden model.

Registers come from a pool a little larger than the cache, so hits, misses, FIFO
replacement and re-fills of cached registers are all frequent.
"""

from gpurf.hw.wir.configs import VerifyCacheConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Verify-reads (lookups), fills and register writes (invalidates)."""

    def __init__(self, params, rng):
        self.config = config = VerifyCacheConfig(**params)
        self.rng = rng
        self.pool = rng.sample(range(config.pregs), min(config.pregs, config.entries + 3))

    def value(self) -> int:
        """A random register value (packed: the ``value`` field takes a whole integer)."""
        return self.rng.getrandbits(self.config.value_bits)

    def some_preg(self) -> int:
        if self.rng.random() < 0.9:
            return self.rng.choice(self.pool)
        return self.rng.randrange(self.config.pregs)

    def cycle(self, *, lookup=None, fill=None, writes=()) -> dict:
        """One cycle; ``fill`` is ``(preg, value)``, ``writes`` the invalidated registers."""
        config, rng = self.config, self.rng
        ports = config.invalidate_ports
        writes = list(writes)[:ports]
        pregs = writes + [rng.randrange(config.pregs) for _ in range(ports - len(writes))]
        fill_preg, fill_value = fill if fill is not None else (
            rng.randrange(config.pregs), self.value())
        return {
            "lookup__valid": int(lookup is not None),
            "lookup__payload": rng.randrange(config.pregs) if lookup is None else lookup,
            "fill__valid": int(fill is not None),
            "fill__payload": config.codecs["fill__payload"].pack(
                {"preg": fill_preg, "value": fill_value}),
            "invalidate_valid": (1 << len(writes)) - 1,
            "invalidate_preg": config.codecs["invalidate_preg"].pack(pregs),
        }


def random_streams(params, rng, cycles):
    """Random verify-reads, fills (often of the register just missed) and writes."""
    driver = Driver(params, rng)
    ports = driver.config.invalidate_ports
    missed = []
    p_write = 0.2
    for cycle in range(cycles):
        if cycle % 64 == 0:
            p_write = rng.choice([0.0, 0.1, 0.3])
        lookup = driver.some_preg() if rng.random() < 0.7 else None
        fill = None
        if missed and rng.random() < 0.6:
            fill = (missed.pop(0), driver.value())
        elif rng.random() < 0.1:
            fill = (driver.some_preg(), driver.value())
        writes = [driver.some_preg() for _ in range(ports) if rng.random() < p_write]
        outputs = yield driver.cycle(lookup=lookup, fill=fill, writes=writes)
        if lookup is not None:
            missed.append(lookup)
        if outputs["result__valid"] and missed and rng.random() < 0.3:
            missed.pop(0)


def directed_fifo_and_writes(params, rng, cycles):
    """Fill more registers than entries (the oldest is replaced), re-fill a cached register
    (in place), a write in the cycle of a lookup (miss) and of a fill (dropped), and a
    write on the last invalidate port."""
    driver = Driver(params, rng)
    config = driver.config
    regs = rng.sample(range(config.pregs), min(config.pregs, config.entries + 2))
    for preg in regs:
        yield driver.cycle(lookup=preg, fill=(preg, driver.value()))
    for preg in regs:
        yield driver.cycle(lookup=preg)
    yield driver.cycle(fill=(regs[-1], driver.value()), lookup=regs[-1])
    yield driver.cycle(lookup=regs[-1], writes=[regs[-1]])
    yield driver.cycle(lookup=regs[-1])
    yield driver.cycle(fill=(regs[0], driver.value()), writes=[regs[0]])
    yield driver.cycle(lookup=regs[0])
    yield driver.cycle(fill=(regs[0], driver.value()))
    last = [regs[1]] * config.invalidate_ports
    yield driver.cycle(lookup=regs[0], writes=[rng.randrange(config.pregs)] * (len(last) - 1)
                       + [regs[0]])
    for preg in regs:
        yield driver.cycle(lookup=preg)
    yield driver.cycle()


STIMULI = (random_streams, directed_fifo_and_writes)

globals().update(cocotb_tests(STIMULI))
