# amaranth: UnusedElaboratable=no
"""H3 hash: the matrix parameter, the one matrix generator, linearity, a numpy reference, forced
collisions, and the XOR2 depth of the synthesized network."""

import random

import numpy as np
import pytest
from amaranth.sim import Simulator

from gpurf.golden.wir.h3_hash import h3
from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import H3HashConfig, h3_matrix
from gpurf.hw.wir.h3_hash import H3Hash
from gpurf.synth.wir import xor_depth
from gpurf.tb.wir.test_h3_hash import zero_hash_differences


def golden(**params):
    return get_block("wir.h3_hash").golden(params)


@pytest.mark.parametrize("build", [H3Hash, golden], ids=["hw", "golden"])
def test_matrix_is_validated(build):
    with pytest.raises(ValueError, match=r"^matrix must have width_out = 4 masks, not 3$"):
        build(width_in=8, width_out=4, matrix=[1, 2, 3])
    with pytest.raises(ValueError, match=r"^matrix\[2\] must be an integer in 0\.\.255, "
                                         r"not 256$"):
        build(width_in=8, width_out=4, matrix=[1, 2, 256, 3])
    with pytest.raises(TypeError, match=r"^matrix\[0\] must be an integer in 0\.\.255, "
                                        r"not 1\.0$"):
        build(width_in=8, width_out=4, matrix=[1.0, 2, 3, 4])
    with pytest.raises(TypeError, match=r"^matrix must be None or a sequence of width_out = "
                                        r"4 integers, not 'abcd'$"):
        build(width_in=8, width_out=4, matrix="abcd")


def test_one_matrix_generator_for_rtl_and_golden():
    defaults = get_block("wir.h3_hash").defaults
    assert defaults == {"width_in": 1024, "width_out": 32, "seed": 0, "matrix": None}
    masks = h3_matrix(1024, 32, 0)
    assert H3Hash().config.masks == golden().masks == masks
    assert len(masks) == 32 and all(0 <= mask < 1 << 1024 for mask in masks)
    assert h3_matrix(1024, 32, 1) != masks
    assert H3HashConfig(8, 4, 5, matrix=[1, 2, 3, 4]).masks == (1, 2, 3, 4)


def test_golden_matches_a_numpy_parity_reference(seed):
    rng = random.Random(seed)
    config = H3HashConfig(width_in=1024, width_out=32, seed=rng.randrange(1 << 32))
    q = np.array([[(mask >> i) & 1 for mask in config.masks] for i in range(1024)],
                 dtype=np.int64)
    for _ in range(50):
        value = rng.getrandbits(1024)
        bits = np.array([(value >> i) & 1 for i in range(1024)], dtype=np.int64)
        expected = sum(int(b) << j for j, b in enumerate((bits @ q) % 2))
        assert h3(value, config.masks) == expected


def test_hash_is_linear(seed):
    rng = random.Random(seed)
    masks = h3_matrix(1024, 32, rng.randrange(1 << 32))
    for _ in range(200):
        a, b = rng.getrandbits(1024), rng.getrandbits(1024)
        assert h3(a ^ b, masks) == h3(a, masks) ^ h3(b, masks)
    assert h3(0, masks) == 0


def _rtl_hashes(params, values):
    """The RTL's hash of each value (Amaranth simulator, combinational)."""
    dut = H3Hash(**params)
    out = []

    async def bench(ctx):
        for value in values:
            ctx.set(dut.value, value)
            out.append(ctx.get(dut.hash))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return out


def test_rtl_is_linear_and_matches_golden(seed):
    rng = random.Random(seed)
    params = {"width_in": 64, "width_out": 16, "seed": rng.randrange(1 << 32)}
    pairs = [(rng.getrandbits(64), rng.getrandbits(64)) for _ in range(40)]
    values = [v for a, b in pairs for v in (a, b, a ^ b)]
    hashes = _rtl_hashes(params, values)
    masks = H3HashConfig(**params).masks
    assert hashes == [h3(v, masks) for v in values]
    for k in range(len(pairs)):
        a, b, both = hashes[3 * k:3 * k + 3]
        assert both == a ^ b


def test_chosen_matrix_forces_collisions():
    """A matrix that ignores input bit 7: values differing only there collide; the
    golden model and the RTL agree."""
    matrix = [0x0F, 0x70, 0x33, 0x41]
    params = {"width_in": 8, "width_out": 4, "matrix": matrix}
    model = golden(**params)
    for value in (0x00, 0x15, 0x7F):
        assert model.step({"value": value}) == model.step({"value": value ^ 0x80})
    assert _rtl_hashes(params, [0x15, 0x95]) == [h3(0x15, matrix)] * 2
    ds = zero_hash_differences(matrix, 8, 8)
    assert 0x80 in ds and all(h3(d, matrix) == 0 for d in ds)


def test_default_xor_depth_is_a_balanced_tree_of_the_widest_bit():
    """The default seed's widest output bit XORs 543 inputs: ceil(log2(543)) = 10 XOR2
    levels (the paper estimates 13 cascaded XOR2 for its hash)."""
    config = H3Hash().config
    assert (config.widest, config.xor_levels) == (543, 10)
    assert xor_depth("wir.h3_hash") == 10


@pytest.mark.parametrize(("params", "levels"), [
    ({"width_in": 64, "width_out": 8, "seed": 7}, None),
    ({"width_in": 8, "width_out": 4, "matrix": [0xFF, 0x01, 0x03, 0x00]}, 3),
    ({"width_in": 8, "width_out": 2, "matrix": [0x01, 0x00]}, 0),
])
def test_xor_depth_follows_the_widest_bit(params, levels):
    config = H3HashConfig(**{"seed": 0, **params})
    assert xor_depth("wir.h3_hash", params) == config.xor_levels
    if levels is not None:
        assert config.xor_levels == levels
