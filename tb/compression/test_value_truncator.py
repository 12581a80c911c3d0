"""cocotb bench of ``compression.value_truncator`` against its golden model.

Every cycle is one writeback: a legal indirection entry (split or not, sometimes both parts
in one register with disjoint masks) and either a float (fp32 values around the format's
range, exact ties, edges, any bit pattern) or an integer (any 32 bits: the slices above
the operand's width are dropped).
"""

import numpy as np

from gpurf.golden.compression.lanes import from_lanes
from gpurf.hw.compression.configs import ValueTruncatorConfig
from gpurf.tb.harness import cocotb_tests

from .drivers import fp32_edges, random_fp32_lanes, random_writeback_entry

__all__ = ["STIMULI"]


def _inputs(config, entry, is_float, lanes):
    """One cycle's ports; ``lanes`` a list or a numpy array of 32-bit values."""
    return {"entry": config.codecs["entry"].pack(entry), "is_float": int(is_float),
            "operand": from_lanes(lanes)}


def random_writebacks(params, rng, cycles):
    """Random entries; floats of a random handled format (2 in 3) or integers. A warp's
    lanes are drawn at once (:func:`~.drivers.random_fp32_lanes`) from a numpy generator
    seeded by ``rng``."""
    config = ValueTruncatorConfig(**params)
    generator = np.random.default_rng(rng.getrandbits(64))
    for _ in range(cycles):
        if rng.random() < 2 / 3:
            fmt = rng.choice(config.formats)
            entry = random_writeback_entry(rng, fmt.slices)
            lanes = random_fp32_lanes(generator, fmt, config.lanes)
            yield _inputs(config, entry, True, lanes)
        else:
            entry = random_writeback_entry(rng, rng.randrange(1, 9))
            yield _inputs(config, entry, False,
                          generator.integers(0, 1 << 32, config.lanes, dtype=np.uint64))


def directed_fig3(params, rng, cycles):
    """The paper's Fig. 3 placement (data slice 0 in slice 7 of r0, data slices 1-3 in
    slices 2, 3, 6 of r1), for a 16-bit float when the block has that format, and for a
    16-bit integer."""
    config = ValueTruncatorConfig(**params)
    entry = {"r0": 5, "m0": 0b1000_0000, "r1": 9, "m1": 0b0100_1100}
    lanes = [rng.randrange(1 << 32) for _ in range(config.lanes)]
    yield _inputs(config, entry, False, lanes)
    if config.format_for(4) is not None:
        yield _inputs(config, entry, True, [0x3F800000 + lane for lane in range(config.lanes)])


def directed_edges(params, rng, cycles):
    """Each handled format's narrowing edges (ties, overflow, underflow, NaN payloads),
    unsplit and split."""
    config = ValueTruncatorConfig(**params)
    for fmt in config.formats:
        edges = list(fp32_edges(fmt))
        for start in range(0, len(edges), config.lanes):
            chunk = edges[start:start + config.lanes]
            lanes = chunk + [chunk[0]] * (config.lanes - len(chunk))
            yield _inputs(config, random_writeback_entry(rng, fmt.slices), True, lanes)


STIMULI = (random_writebacks, directed_fig3, directed_edges)


globals().update(cocotb_tests(STIMULI))
