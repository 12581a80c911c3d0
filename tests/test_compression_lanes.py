"""The warp-wide float functions of golden/compression/lanes.py (the golden models' step and
the compressed SM use them) against the scalar reference functions, bit for bit: every
encoding of the formats of at most 16 bits, edges and random values of the wider ones;
the vectorized slice scatter against :func:`scatter`; warp registers against the codec."""

import random

import numpy as np
import pytest

from gpurf.golden.compression.lanes import from_lanes, narrow_lanes, to_lanes, widen_lanes
from gpurf.golden.compression.value_converter import widen
from gpurf.golden.compression.value_truncator import narrow, scatter, scatter_lanes
from gpurf.hw.compression.formats import TABLE3, FloatFormat
from gpurf.hw.compression.layouts import warp_register_layout
from gpurf.hw.ports import codec
from gpurf.tb.compression.drivers import (
    fp32_edges,
    narrow_edges,
    random_fp32_lanes,
    random_writeback_entry,
)

FORMATS = [*TABLE3.values(), FloatFormat(4, 4), FloatFormat(8, 7), FloatFormat(2, 1)]


def _codes(fmt, rng):
    """Every encoding of ``fmt`` up to 16 bits; else its edges and 20,000 random ones,
    with random bits above the format (the converter ignores them)."""
    if fmt.width <= 16:
        codes = np.arange(1 << fmt.width, dtype=np.uint64)
    else:
        codes = np.concatenate([np.array(narrow_edges(fmt), np.uint64),
                                rng.integers(0, 1 << fmt.width, 20000, dtype=np.uint64)])
    garbage = rng.integers(0, 1 << (32 - fmt.width), len(codes), dtype=np.uint64) \
        if fmt.width < 32 else 0
    return (codes | (garbage << np.uint64(fmt.width))).astype(np.uint32)


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_widen_lanes_is_widen(fmt, seed):
    codes = _codes(fmt, np.random.default_rng(seed))
    got = widen_lanes(codes, fmt).tolist()
    want = [widen(code, fmt) for code in codes.tolist()]
    assert got == want, fmt


@pytest.mark.parametrize("fmt", FORMATS, ids=str)
def test_narrow_lanes_is_narrow(fmt, seed):
    generator = np.random.default_rng(seed)
    values = np.concatenate([np.array(fp32_edges(fmt), np.uint32),
                             random_fp32_lanes(generator, fmt, 20000),
                             generator.integers(0, 1 << 32, 5000, dtype=np.uint64)
                             .astype(np.uint32)])
    got = narrow_lanes(values, fmt).tolist()
    want = [narrow(value, fmt) for value in values.tolist()]
    assert got == want, fmt


def test_scatter_lanes_is_scatter(seed):
    rng = random.Random(seed)
    for _ in range(300):
        entry = random_writeback_entry(rng, rng.randint(1, 8))
        values = [rng.getrandbits(32) for _ in range(4)]
        got = scatter_lanes(from_lanes(np.array(values, np.uint32)), 4, entry["m0"],
                            entry["m1"])
        want = [scatter(v, entry["m0"], entry["m1"]) for v in values]
        assert [tuple(int(to_lanes(p, 4)[i]) for p in got) for i in range(4)] == want, entry


@pytest.mark.parametrize("lanes", [1, 2, 32])
def test_warp_registers_follow_the_layout(lanes, seed):
    rng = random.Random(seed)
    warp = codec(warp_register_layout(lanes=lanes))
    for _ in range(50):
        words = [rng.getrandbits(32) for _ in range(lanes)]
        assert from_lanes(np.array(words, np.uint32)) == warp.pack(words)
        assert to_lanes(warp.pack(words), lanes).tolist() == words
