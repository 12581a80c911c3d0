"""cocotb bench of ``regless.osu_bank`` against its golden model.

The bench plays the register read units (reads, reserves, releases), the writeback units
(writes to reserved lines), the capacity manager (preloads and invalidations) and the
compressor / L1 (fetches answered by fills after a random delay, writebacks taken with a
random ready), with the :class:`~gpurf.tb.regless.drivers.Driver` of the RegLess benches.
"""

from gpurf.golden.regless.osu_bank import OsuBank
from gpurf.hw.regless.configs import OsuBankConfig
from gpurf.tb.harness import cocotb_tests

from .drivers import Driver, cycle, random_traffic, registers, until_taken

__all__ = ["STIMULI"]


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
        yield from until_taken(ops, "write", {"line": line, "data": driver.value(),
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
    yield from until_taken(ops, "write", {"line": line, "data": driver.value(),
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
                                                 "data": driver.value(),
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
