"""cocotb bench of ``compression.collector_ext`` against its golden model."""

from gpurf.golden.compression.value_extractor import part_extractor
from gpurf.hw.compression.configs import CollectorExtConfig
from gpurf.hw.compression.layouts import THREAD_BITS
from gpurf.tb.harness import cocotb_tests

from .drivers import random_entry

__all__ = ["STIMULI"]


def _instruction(config, rng, *, lookup_delay=3, idle=0.3, raw=0.2, entries=None):
    """One instruction: allocate, then locations and parts in a random order; yields the
    per-cycle inputs. Parts are real extractor outputs (or, with probability ``raw``,
    random words, which the OR merge must pass bit for bit)."""
    ops = range(config.operands)
    signed = [rng.getrandbits(1) for _ in ops]
    instr = [{"signed": signed[i], "convert": rng.getrandbits(1)} for i in ops]
    entries = entries or [random_entry(rng) for _ in ops]
    yield {"allocate": 1, "instr": config.codecs["instr"].pack(instr)}
    arrive = {i: rng.randint(0, lookup_delay) for i in ops}
    parts = {i: [0, 1] if entries[i]["m1"] else [0] for i in ops}
    for i in ops:
        rng.shuffle(parts[i])
    located, cycle = set(), 0
    while any(parts.values()):
        step = {}
        now = [i for i in ops if arrive[i] == cycle]
        if now:
            step["locate_valid"] = sum(1 << i for i in now)
            step["locate"] = config.codecs["locate"].pack(entries)
        ready = [i for i in located if parts[i]]
        if ready and rng.random() > idle:
            i = rng.choice(ready)
            part = parts[i].pop()
            if rng.random() < raw:
                words = [rng.getrandbits(THREAD_BITS) for _ in range(config.lanes)]
            else:
                extract = part_extractor(entries[i], part, bool(signed[i]))
                words = [extract(rng.getrandbits(THREAD_BITS)) for _ in range(config.lanes)]
            step["fetch_valid"] = 1
            step["fetch"] = config.codecs["fetch"].pack({"operand": i, "data": words})
        located.update(now)
        cycle += 1
        yield step


def random_instructions(params, rng, cycles):
    """Instructions one after another, each operand located after a random delay and its
    parts (1 or 2) fetched one per cycle in a random order; a few idle cycles between."""
    config = CollectorExtConfig(**params)
    done = 0
    while done < cycles:
        for step in _instruction(config, rng):
            done += 1
            yield step
        for _ in range(rng.randint(0, 2)):
            done += 1
            yield {}


def directed_sign_extension(params, rng, cycles):
    """Split operands of every width 2..8 made of random words (top data bit set in about
    half the lanes), both fetch orders: signed ones are sign-extended above the width after
    the OR, unsigned ones pass the OR unchanged."""
    config = CollectorExtConfig(**params)
    for width in range(2, 9):
        for _ in range(2):
            entries = [random_entry(rng, width=width, split=True) for _ in range(config.operands)]
            yield from _instruction(config, rng, lookup_delay=0, idle=0, raw=1.0,
                                    entries=entries)
            yield {}


def directed_allocate_wins(params, rng, cycles):
    """An allocation in the same cycle as a location and a fetch: allocation wins."""
    config = CollectorExtConfig(**params)
    entries = [random_entry(rng, split=False) for _ in range(config.operands)]
    steps = list(_instruction(config, rng, lookup_delay=0, idle=0, entries=entries))
    yield steps[0]
    yield steps[1]
    yield {**steps[2], "allocate": 1} if len(steps) > 2 else {"allocate": 1}
    yield {}
    yield from _instruction(config, rng)
    yield {}


STIMULI = (random_instructions, directed_sign_extension, directed_allocate_wins)


globals().update(cocotb_tests(STIMULI))
