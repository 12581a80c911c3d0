"""cocotb bench of ``compression.write_path`` against its golden model.

The stimulus loads legal writeback entries (split, sometimes both parts in one register)
into the destination table, then offers writebacks on every port, held until accepted and
crowded into few table banks so conflicts fill the buffers; a float writeback only where
the entry's slice count has a Table 3 format, its data fp32 values at the format's edges.
"""

from gpurf.hw.compression.configs import WritePathConfig
from gpurf.hw.compression.formats import table3_format
from gpurf.tb.harness import cocotb_tests

from .drivers import random_fp32, random_writeback_entry

__all__ = ["STIMULI"]


class _Driver:
    """The table's contents as loaded, and each port's writeback offered until accepted."""

    def __init__(self, params, rng):
        self.config = WritePathConfig(**params)
        self.rng = rng
        self.table: dict[int, dict] = {}
        self.offers = [None] * self.config.ports

    def load(self, reg, entry):
        self.table[reg] = entry
        return {"load__valid": 1, "load__payload": self.config.codecs["load__payload"].pack(
            {"reg": reg, "entry": entry})}

    def writeback(self, reg, *, is_float=None):
        rng, entry = self.rng, self.table[reg]
        fmt = table3_format(entry["m0"].bit_count() + entry["m1"].bit_count())
        is_float = (fmt is not None and rng.random() < 0.5) if is_float is None else is_float
        data = [random_fp32(rng, fmt) if is_float else rng.getrandbits(32)
                for _ in range(self.config.lanes)]
        return {"reg": reg, "float": int(is_float), "data": data}

    def inputs(self):
        return {"write_valid": sum(1 << p for p, o in enumerate(self.offers) if o),
                "write": self.config.codecs["write"].pack([o or {} for o in self.offers])}

    def accepted(self, got):
        for p in range(self.config.ports):
            if got["write_ready"] >> p & 1:
                self.offers[p] = None


def _entry(rng, slices=None):
    return random_writeback_entry(rng, slices or rng.randint(1, 8))


def _reload(driver, rng):
    """A new entry for a random register, of the slice count it had: a writeback accepted
    before the reload may be looked up after it (waiting in the buffer), and its float
    format must still exist."""
    reg = rng.randrange(driver.config.entries)
    old = driver.table[reg]
    return driver.load(reg, _entry(rng, old["m0"].bit_count() + old["m1"].bit_count()))


def random_writebacks(params, rng, cycles):
    """Load every entry, then writebacks on each port (60 % of the cycles it is free),
    70 % of them to three hot banks; a reload now and then (same slice count)."""
    driver = _Driver(params, rng)
    config = driver.config
    for reg in range(config.entries):
        yield driver.load(reg, _entry(rng))
    hot = rng.sample(range(config.banks), min(3, config.banks))
    for _ in range(cycles):
        for p in range(config.ports):
            if driver.offers[p] is None and rng.random() < 0.6:
                bank = rng.choice(hot) if rng.random() < 0.7 else rng.randrange(config.banks)
                reg = rng.randrange(config.entries // config.banks) * config.banks + bank
                driver.offers[p] = driver.writeback(reg)
        step = driver.inputs()
        if rng.random() < 0.1:
            step.update(_reload(driver, rng))
        driver.accepted((yield step))
    for _ in range(6):
        yield driver.inputs()


def directed_same_bank(params, rng, cycles):
    """Every width, float and integer, on port 0 alone; then every port to one bank at once
    (served lowest port first, the others wait in their buffers or with ready low)."""
    driver = _Driver(params, rng)
    config = driver.config
    widths = [(w, f) for w in range(1, 9) for f in (False, w >= 2)]
    for reg in range(config.entries):
        width = widths[reg][0] if reg < len(widths) else rng.randint(1, 8)
        yield driver.load(reg, random_writeback_entry(rng, width))
    for reg, (_, is_float) in enumerate(widths[:config.entries]):
        driver.offers[0] = driver.writeback(reg, is_float=is_float)
        while driver.offers[0] is not None:
            driver.accepted((yield driver.inputs()))
    for p in range(config.ports):
        driver.offers[p] = driver.writeback((p * config.banks) % config.entries)
    while any(driver.offers):
        driver.accepted((yield driver.inputs()))
    for _ in range(6):
        yield driver.inputs()


STIMULI = (random_writebacks, directed_same_bank)


globals().update(cocotb_tests(STIMULI))
