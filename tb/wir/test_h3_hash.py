"""cocotb bench of ``wir.h3_hash`` against its golden model."""

from gpurf.hw.wir.configs import H3HashConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


def _config(params):
    return H3HashConfig(**params)


def random_values(params, rng, cycles):
    """Uniform random values, and sparse or dense ones (few bits set or clear)."""
    width = _config(params).width_in
    ones = (1 << width) - 1
    for _ in range(cycles):
        value = rng.getrandbits(width)
        kind = rng.random()
        if kind < 0.2:
            value &= rng.getrandbits(width) & rng.getrandbits(width)
        elif kind < 0.4:
            value |= rng.getrandbits(width) | rng.getrandbits(width)
        yield {"value": value & ones}


def directed_bits(params, rng, cycles):
    """Zero, all ones, single bits (each shows one row of the matrix: every bit up to 256
    inputs, else the two ends and a random 128), lane patterns and equal-lane values."""
    config = _config(params)
    width = config.width_in
    yield {"value": 0}
    yield {"value": (1 << width) - 1}
    bits = range(width) if width <= 256 else [0, width - 1, *rng.sample(range(width), 128)]
    for i in bits:
        yield {"value": 1 << i}
    for lane_bits in (8, 32):
        lanes = -(-width // lane_bits)
        lane = rng.getrandbits(lane_bits)
        yield {"value": sum(lane << (lane_bits * k) for k in range(lanes)) & ((1 << width) - 1)}


def zero_hash_differences(masks, width: int, count: int) -> list[int]:
    """Up to ``count`` nonzero ``d`` with ``h3(d) = 0`` (so ``h3(a) = h3(a ^ d)`` for every
    ``a``): Gaussian elimination over GF(2) on the input bits' columns of the matrix; each
    input bit whose column depends on earlier ones gives one ``d``."""
    basis = {}
    found = []
    for i in range(width):
        column = sum(((mask >> i) & 1) << j for j, mask in enumerate(masks))
        combo = 1 << i
        while column:
            pivot = column.bit_length() - 1
            if pivot not in basis:
                basis[pivot] = (column, combo)
                break
            column ^= basis[pivot][0]
            combo ^= basis[pivot][1]
        if not column:
            found.append(combo)
            if len(found) == count:
                break
    return found


def directed_collisions(params, rng, cycles):
    """Colliding pairs ``a`` and ``a ^ d`` (``d`` from :func:`zero_hash_differences`): the
    hash cannot tell them apart, which the VSB's verify-read must catch."""
    config = _config(params)
    width = config.width_in
    for d in zero_hash_differences(config.masks, width, 32):
        base = rng.getrandbits(width)
        yield {"value": base}
        yield {"value": base ^ d}


STIMULI = (random_values, directed_bits, directed_collisions)

globals().update(cocotb_tests(STIMULI))
