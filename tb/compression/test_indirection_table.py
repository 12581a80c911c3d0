"""cocotb bench of ``compression.indirection_table`` against its golden model."""

from gpurf.hw.compression.configs import IndirectionTableConfig
from gpurf.tb.harness import cocotb_tests

from .drivers import random_entry

__all__ = ["STIMULI"]


class _Ports:
    """Per-port offers held until accepted (the stream rule), packed for the ports."""

    def __init__(self, params):
        self.config = IndirectionTableConfig(**params)
        self.offers = [None] * self.config.ports

    def inputs(self):
        lookups = [{"reg": o[0], "tag": o[1]} if o else {} for o in self.offers]
        return {"lookup_valid": sum(1 << p for p, o in enumerate(self.offers) if o),
                "lookup": self.config.codecs["lookup"].pack(lookups)}

    def accepted(self, got):
        for p in range(self.config.ports):
            if got["lookup_ready"] >> p & 1:
                self.offers[p] = None


def _load(config, reg, entry):
    return {"load__valid": 1,
            "load__payload": config.codecs["load__payload"].pack({"reg": reg, "entry": entry})}


def random_lookups(params, rng, cycles):
    """Random loads and lookups; lookups crowd into a few banks so conflicts are common, and
    each port holds its offer until it is accepted."""
    ports = _Ports(params)
    config = ports.config
    hot = rng.sample(range(config.banks), min(3, config.banks))
    for _ in range(cycles):
        for p in range(config.ports):
            if ports.offers[p] is None and rng.random() < 0.6:
                bank = rng.choice(hot) if rng.random() < 0.7 else rng.randrange(config.banks)
                reg = rng.randrange(config.rows) * config.banks + bank
                ports.offers[p] = (reg, rng.getrandbits(config.tag_width))
        step = ports.inputs()
        if rng.random() < 0.3:
            step.update(_load(config, rng.randrange(config.entries), random_entry(rng)))
        ports.accepted((yield step))


def directed_load_and_read(params, rng, cycles):
    """Load every entry, then read each back, every port reading its own bank; then every
    port asks the same bank at once (served lowest port first); then a load and a lookup of
    the same register in one cycle (the lookup sees the old entry)."""
    ports = _Ports(params)
    config = ports.config
    for reg in range(config.entries):
        yield _load(config, reg, random_entry(rng))
    for first in range(0, config.entries, config.ports):
        for p in range(config.ports):
            reg = first + p
            ports.offers[p] = (reg, reg % (1 << config.tag_width)) if reg < config.entries \
                else None
        while any(ports.offers):
            ports.accepted((yield ports.inputs()))
    for p in range(config.ports):
        ports.offers[p] = ((p * config.banks) % config.entries, p % (1 << config.tag_width))
    while any(ports.offers):
        ports.accepted((yield ports.inputs()))
    ports.offers[0] = (3 % config.entries, 1)
    step = {**ports.inputs(), **_load(config, 3 % config.entries, random_entry(rng))}
    ports.accepted((yield step))
    while any(ports.offers):
        ports.accepted((yield ports.inputs()))
    yield {}
    yield {}


STIMULI = (random_lookups, directed_load_and_read)


globals().update(cocotb_tests(STIMULI))
