"""cocotb bench of ``regless.osu`` against its golden model.

The :class:`~gpurf.tb.regless.drivers.Driver` of the RegLess benches plays the register read
and writeback units, the CM (one preload queue per bank) and the compressor / L1, with the
OSU's port names: ``preload__<bank>``, lines named ``{line, bank}`` and one
acknowledgement per bank in ``preloaded``.
"""

from gpurf.golden.regless.osu import Osu
from gpurf.hw.regless.configs import OsuConfig
from gpurf.tb.harness import cocotb_tests

from .drivers import Driver, cycle, random_traffic, registers, until_taken

__all__ = ["STIMULI"]


def osu_driver(params, rng, **options) -> Driver:
    """A driver whose requests take a random free port of their kind (preloads: their
    bank's queue port)."""
    config = OsuConfig(**params)

    def port(stream, ref):
        if stream == "preload":
            return f"preload__{config.bank_of(*ref)}"
        if stream == "fill":
            return stream
        return driver.free_port(stream, config.port_count(stream))

    def acked(outputs, ref):
        return config.codecs["preloaded"].unpack(outputs["preloaded"])[
            config.bank_of(*ref)].valid

    driver = Driver(config, rng, port=port, acked=acked, **options)
    return driver


def random_stream(params, rng, cycles):
    """Random traffic over all banks from a pool of about twice as many registers as lines;
    rates and the readies of the merged streams change every 100 cycles."""
    driver = osu_driver(params, rng, shadow=Osu(**params))
    config = driver.config
    pool = registers(config.bank, min(config.warps * config.regs, 2 * config.lines + 1))
    for now in range(cycles):
        if now % 100 == 0:
            rates = {op: rng.choice([0.1, 0.3, 0.7]) for op in
                     ("reserve", "preload", "write", "read", "release")}
            driver.fetch_ready = rng.choice([0.3, 0.8, 1.0])
            driver.writeback_ready = rng.choice([0.3, 0.8, 1.0])
        for _ in range(config.read_ports):
            random_traffic(driver, pool, rates)
        for _ in range(config.banks - 1):
            if rng.random() < rates["preload"]:
                ref = rng.choice(pool)
                driver.request("preload", {"warp": ref[0], "reg": ref[1], "invalidate": 0},
                               ref)
        yield from cycle(driver)


def directed_routing(params, rng, cycles):
    """Every bank in turn: a reserve, a write and a read of a register of that bank (the
    answer names the bank); then a preload miss on every bank in the same cycle, fetches
    merged lowest bank first while ``fetch.ready`` is slow, fills routed back by line."""
    driver = osu_driver(params, rng, fill_delay=(1, 3))
    config = driver.config
    every = registers(config.bank, config.warps * config.regs)
    first = {}
    for ref in every:
        first.setdefault(config.bank_of(*ref), ref)
    for bank, ref in sorted(first.items()):
        yield from until_taken(driver, "reserve", {"warp": ref[0], "reg": ref[1],
                                                   "last_use": 0}, ref)
        line, _ = driver.reserved.pop()
        assert line.bank == bank
        yield from until_taken(driver, "write", {"line": line,
                                                 "data": driver.value(),
                                                 "last_use": 0}, ref)
        yield from until_taken(driver, "read", {"warp": ref[0], "reg": ref[1]}, ref)
    driver.fetch_ready = 0.3
    seen = set(first.values())
    fresh = {}
    for ref in every:
        if ref not in seen:
            fresh.setdefault(config.bank_of(*ref), ref)
    for ref in fresh.values():
        driver.request("preload", {"warp": ref[0], "reg": ref[1], "invalidate": 0}, ref)
    for _ in range(10 * config.banks):
        yield from cycle(driver)


def directed_writebacks(params, rng, cycles):
    """Every line of every bank written with last use (all dirty); then new registers on
    every bank force evictions in several banks at once, merged lowest bank first with a
    slow ``writeback.ready``."""
    driver = osu_driver(params, rng)
    config = driver.config
    every = registers(config.bank, config.warps * config.regs)
    per_bank: dict[int, list] = {}
    for ref in every:
        per_bank.setdefault(config.bank_of(*ref), []).append(ref)
    lines = config.bank.lines
    for refs in per_bank.values():
        for ref in refs[:lines]:
            yield from until_taken(driver, "reserve", {"warp": ref[0], "reg": ref[1],
                                                       "last_use": 1}, ref)
    for line, ref in list(driver.reserved):
        yield from until_taken(driver, "write", {"line": line,
                                                 "data": driver.value(),
                                                 "last_use": 1}, ref)
    driver.reserved.clear()
    driver.writeback_ready = 0.3
    for refs in per_bank.values():
        for ref in refs[lines:lines + 2]:
            driver.request("preload", {"warp": ref[0], "reg": ref[1], "invalidate": 0}, ref)
    for _ in range(20 * config.banks):
        yield from cycle(driver)


STIMULI = (random_stream, directed_routing, directed_writebacks)

globals().update(cocotb_tests(STIMULI))
