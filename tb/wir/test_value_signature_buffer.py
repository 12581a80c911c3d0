"""cocotb bench of ``wir.value_signature_buffer`` against its golden model.

Hashes come from a small pool in which several hashes share an index (same low bits,
different high bits), so hits, index conflicts (a miss on a valid entry) and displacements
are all frequent.
"""

from gpurf.hw.wir.configs import ValueSignatureBufferConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Lookups, installs and evictions of a VSB (all valid-only but evict)."""

    def __init__(self, params, rng):
        self.config = config = ValueSignatureBufferConfig(**params)
        self.rng = rng
        indices = rng.sample(range(config.entries), min(6, config.entries))
        self.pool = [self.hash_at(i) for i in indices for _ in range(3)]

    def hash_at(self, index: int) -> int:
        """A random hash whose entry is ``index``."""
        high = self.rng.getrandbits(self.config.hash_width - self.config.index_bits)
        return (high << self.config.index_bits) | index

    def some_hash(self) -> int:
        if self.rng.random() < 0.85:
            return self.rng.choice(self.pool)
        return self.rng.getrandbits(self.config.hash_width)

    def install(self, hash_value, preg, divergent=0) -> dict:
        payload = self.config.codecs["install__payload"].pack(
            {"hash": hash_value, "preg": preg, "divergent": divergent})
        return {"install__valid": 1, "install__payload": payload}

    def preg(self) -> int:
        return self.rng.randrange(self.config.pregs)

    def cycle(self, *, lookup=None, install=None, evict=None) -> dict:
        """One cycle's inputs; unused payloads carry random bits."""
        rng, config = self.rng, self.config
        ins = {"lookup__valid": int(lookup is not None),
               "lookup__payload": rng.getrandbits(config.hash_width) if lookup is None
               else lookup,
               "evict__valid": int(evict is not None),
               "evict__payload": rng.randrange(config.entries) if evict is None else evict,
               "install__valid": 0,
               "install__payload": rng.getrandbits(config.codecs["install__payload"].width)}
        if install is not None:
            ins.update(self.install(*install))
        return ins


def random_streams(params, rng, cycles):
    """Random lookups, installs (10% divergent) and evictions; rates change every 64
    cycles. An evict offer is held until taken."""
    driver = Driver(params, rng)
    config = driver.config
    p_lookup, p_install, p_evict = 0.6, 0.4, 0.1
    evict = None
    for cycle in range(cycles):
        if cycle % 64 == 0:
            p_lookup, p_install, p_evict = (rng.choice([0.2, 0.6, 1.0]),
                                            rng.choice([0.1, 0.4, 0.9]),
                                            rng.choice([0.0, 0.1, 0.4]))
        lookup = driver.some_hash() if rng.random() < p_lookup else None
        install = ((driver.some_hash(), driver.preg(), int(rng.random() < 0.1))
                   if rng.random() < p_install else None)
        if evict is None and rng.random() < p_evict:
            evict = (config.index(rng.choice(driver.pool)) if rng.random() < 0.8
                     else rng.randrange(config.entries))
        outputs = yield driver.cycle(lookup=lookup, install=install, evict=evict)
        if evict is not None and outputs["evict__ready"]:
            evict = None


def directed_hit_miss_displace(params, rng, cycles):
    """Install, hit, a same-index different hash misses (when the hash is wider than the
    index), its install displaces the first
    register, a divergent install changes nothing, evictions (one blocked by an install),
    and a lookup in the cycle of an install of the same hash (misses: old table)."""
    driver = Driver(params, rng)
    config = driver.config
    index = rng.randrange(config.entries)
    first = driver.hash_at(index)
    second = first ^ (1 << config.index_bits) if config.hash_width > config.index_bits \
        else first
    p1, p2, p3 = rng.sample(range(config.pregs), 3)
    yield driver.cycle(lookup=first)
    yield driver.cycle(install=(first, p1), lookup=first)
    yield driver.cycle(lookup=first)
    yield driver.cycle(lookup=second)
    yield driver.cycle(install=(second, p2, 1), lookup=second)
    yield driver.cycle(lookup=second)
    yield driver.cycle(install=(second, p2))
    yield driver.cycle(lookup=first)
    yield driver.cycle(lookup=second)
    yield driver.cycle(install=(second, p2))
    yield driver.cycle(install=(first, p3), evict=index)
    yield driver.cycle(evict=index, lookup=first)
    yield driver.cycle(lookup=first, evict=index)
    yield driver.cycle(lookup=first)
    yield driver.cycle()


def directed_fill_every_entry(params, rng, cycles):
    """Install into every entry, look every hash up, then overwrite them all and evict
    every entry, looking up as entries go."""
    driver = Driver(params, rng)
    config = driver.config
    hashes = [driver.hash_at(i) for i in range(config.entries)]
    for h in hashes:
        yield driver.cycle(install=(h, driver.preg()))
    for h in hashes:
        yield driver.cycle(lookup=h)
    for h in hashes:
        yield driver.cycle(install=(driver.hash_at(config.index(h)), driver.preg()), lookup=h)
    for i, h in enumerate(hashes):
        yield driver.cycle(evict=i, lookup=h)
    yield driver.cycle()


STIMULI = (random_streams, directed_hit_miss_displace, directed_fill_every_entry)

globals().update(cocotb_tests(STIMULI))
