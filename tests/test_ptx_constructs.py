"""The PTX constructs of issue 15 item 3, run on the functional model against numpy.

Each kernel of ``tests/data/ptx`` is nvcc's PTX (``-lineinfo``, so ``.loc``/``.file`` too) of
the ``.cu`` beside it; the references here are written from the CUDA and PTX documentation,
not from the model. Randomized inputs come from the session seed (``--seed``)."""

import numpy as np
import pytest

from gpurf.sim.sm import semantics
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.memory import GlobalMemory
from gpurf.sim.sm.timing import TimingSM
from gpurf.sim.sm.warp import ExecutionError, ThreadBlock

from .ptx_launch import launch, pack, program

WIDTHS = [32, 8, 4]


def _edgy_u32(rng, n):
    """Random ``uint32`` with 0, 1, all ones and the sign bit mixed in."""
    values = rng.integers(0, 1 << 32, n, dtype=np.uint64).astype(np.uint32)
    special = np.array([0, 1, 0xFFFFFFFF, 0x80000000, 0x7FFFFFFF], np.uint32)
    values[rng.integers(0, n, n // 4)] = rng.choice(special, n // 4)
    return values


# -- atomics ---------------------------------------------------------------------------------
@pytest.mark.parametrize("warp_by_warp", [False, True], ids=["grouped", "warp-by-warp"])
def test_atomics_are_exact_under_either_interleaving(seed, warp_by_warp):
    rng = np.random.default_rng(seed)
    n, block, grid = 250, 64, 4
    keys = rng.integers(0, 1000, block * grid).astype(np.uint32)
    ints = np.array([-10**6, 10**6, -1, 0, 0, 0, 0, 0, 0], np.int32)
    args = [np.zeros(24, np.uint32), ints, np.zeros(1, np.float32),
            np.zeros(block * grid, np.uint32), np.zeros(1, np.uint64), keys, n]
    hist, ints, fsum, old, wide, _, _ = launch(program("atomics"), args, block, grid,
                                               warp_by_warp=warp_by_warp)
    k = keys[:n].astype(np.int64)
    assert np.array_equal(hist[:16], np.bincount(k % 16, minlength=16))
    for b in range(16):
        assert np.array_equal(np.sort(old[:n][k % 16 == b]), np.arange(np.sum(k % 16 == b)))
    assert np.array_equal(hist[16:], [k[k % 8 == i].sum() for i in range(8)])
    assert ints[0] == (k - 500).max() and ints[1] == (k - 500).min()
    assert ints[2].view(np.uint32) == np.bitwise_and.reduce(keys[:n] | np.uint32(0xFFFF0000))
    assert ints[3].view(np.uint32) == np.bitwise_or.reduce(np.uint32(1) << (keys[:n] % 32))
    assert ints[4].view(np.uint32) == np.bitwise_xor.reduce(keys[:n])
    assert ints[5] == n % 38 and ints[6] == (-n) % 38
    assert 1 <= ints[7] <= n and ints[8] == 5
    assert fsum[0] == np.float32(0.5 * (k % 4).sum())
    assert wide[0] == np.uint64((k << 20).sum())


# -- shuffles and votes ----------------------------------------------------------------------
def _warp_mismatches(seed, width) -> list[str]:
    """The outputs of ``warp.ptx`` that differ from the CUDA Programming Guide's shuffle
    and vote semantics."""
    rng = np.random.default_rng(seed)
    block, grid = 64, 2
    count = block * grid
    values = rng.integers(-1000, 1001, count).astype(np.int32)
    deltas = rng.integers(0, 32, count).astype(np.int32)
    out, sums = launch(program("warp"), [values, deltas, np.zeros(7 * count, np.int32),
                                         np.zeros(count // 32, np.int32), width],
                       block, grid)[2:4]
    out = out.reshape(count, 7)
    t = np.arange(count)
    lane, base, d = t % 32, t - t % 32, deltas.astype(np.int64)
    up = np.where(lane % width >= d, t - d, t)
    down = np.where(lane % width + d < width, t + d, t)
    xor = np.where((lane ^ d) // width <= lane // width, base + (lane ^ d), t)
    idx = base + lane // width * width + d % width
    warps = values.reshape(-1, 32)
    ballot = (((warps & 1) != 0) * (1 << np.arange(32, dtype=np.int64))).sum(axis=1)
    bits = (warps & 2) != 0
    vote = ((warps > -1000).all(axis=1) + 2 * (warps > 900).any(axis=1)
            + 4 * (bits.all(axis=1) | ~bits.any(axis=1)))
    expected = {"up": values[up], "down": values[down], "xor": values[xor], "idx": values[idx],
                "ballot": np.repeat(ballot, 32).astype(np.uint32).view(np.int32),
                "vote": np.repeat(vote, 32), "activemask": np.full(count, -1)}
    got = dict(zip(expected, out.T, strict=True))
    wrong = [name for name in expected if not np.array_equal(got[name], expected[name])]
    if not np.array_equal(sums, warps.sum(axis=1)):
        wrong.append("reduction")
    return wrong


@pytest.mark.parametrize("width", WIDTHS)
def test_shuffles_and_votes_follow_cuda(seed, width):
    assert _warp_mismatches(seed, width) == []


def test_a_wrong_shuffle_clamp_is_caught(seed, monkeypatch):
    right = semantics._shfl_source

    def off_by_one(mode, b, c):
        source, valid = right(mode, b, c)
        if mode == "down":
            valid = valid & (source != semantics._LANE + b)
        return np.where(valid, source, semantics._LANE), valid

    monkeypatch.setattr(semantics, "_shfl_source", lambda mode, b, c: off_by_one(mode, b, c))
    assert "down" in _warp_mismatches(seed, 8)


# -- vector memory and SFU math --------------------------------------------------------------
def _ulp_ratio(got, exact):
    """|got - exact| relative to |exact| (exact in float64)."""
    return np.abs(got.astype(np.float64) - exact) / np.abs(exact)


def test_vector_access_and_math_within_ptx_precision(seed):
    rng = np.random.default_rng(seed)
    n, block = 96, 64
    count = 2 * block
    q = np.empty((count, 4), np.float32)
    q[:, 0] = np.exp(rng.uniform(-20, 20, count))
    q[:, 1] = rng.uniform(-100 * np.pi, 100 * np.pi, count)
    q[:, 2] = np.exp(rng.uniform(-20, 20, count))
    q[:, 3] = rng.uniform(-20, 20, count)
    wide = np.empty((count, 2), np.float64)
    wide[:, 0] = rng.uniform(-1e3, 1e3, count)
    wide[:, 1] = np.exp(rng.uniform(-50, 50, count))
    before = wide.copy()
    exact, approx, trig, wide = launch(
        program("math"), [q, np.zeros_like(q), np.zeros_like(q),
                          np.zeros(3 * count, np.float32), wide, n], block, 2)[1:5]
    x, y, z, w = (q[:n, i] for i in range(4))
    one = np.float32(1)
    for got, want in zip(exact[:n].T, (np.sqrt(x), one / y, np.sqrt(z), one / w), strict=True):
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    x64, y64, z64 = (v.astype(np.float64) for v in (x, y, z))
    assert (_ulp_ratio(approx[:n, 0], np.sqrt(x64)) <= 2.0 ** -23).all()
    assert (_ulp_ratio(approx[:n, 1], 1 / y64) <= 2.0 ** -23).all()
    assert (_ulp_ratio(approx[:n, 2], 1 / np.sqrt(z64)) <= 2.0 ** -22.9).all()
    assert (_ulp_ratio(approx[:n, 3], np.exp2(np.float32(w - 2).astype(np.float64)))
            <= 2.0 ** -22).all()
    trig = trig.reshape(count, 3)[:n]
    assert (np.abs(trig[:, 0] - np.log2(x64)) <= 2.0 ** -22 * np.maximum(1, np.abs(
        np.log2(x64)))).all()
    assert (np.abs(trig[:, 1] - np.sin(y64)) <= 2.0 ** -20.5).all()
    assert (np.abs(trig[:, 2] - np.cos(z64)) <= 2.0 ** -20.5).all()
    assert np.array_equal(wide[:n, 0], np.sqrt(before[:n, 1]))
    assert np.array_equal(wide[:n, 1], 1 / before[:n, 0])
    assert np.array_equal(wide[n:], before[n:]) and not exact[n:].any()


# -- bit and carry instructions --------------------------------------------------------------
def _bit(x, i):
    return (x >> i) & 1


def _bfe(x, pos, length, signed):
    sbit = 0 if not signed or length == 0 else _bit(x, min(pos + length - 1, 31))
    return sum((_bit(x, pos + i) if i < length and pos + i <= 31 else sbit) << i
               for i in range(32))


def _bfi(f, b, pos, length):
    for i in range(length):
        if pos + i <= 31:
            b = b & ~(1 << (pos + i)) | _bit(f, i) << (pos + i)
    return b


def _prmt(x, y, s):
    source = y << 32 | x
    out = 0
    for i in range(4):
        nibble = s >> 4 * i & 15
        byte = source >> 8 * (nibble & 7) & 0xFF
        if nibble & 8:
            byte = 0xFF if byte & 0x80 else 0
        out |= byte << 8 * i
    return out


def _signed32(v):
    return v - (1 << 32) if v >> 31 else v


def _bits_reference(x, y, z):
    """One thread's 17 ``uint32`` and 4 ``uint64`` results of ``bits.ptx`` (``__byte_perm``
    masks its selector with ``0x7777``; the inline ``prmt`` keeps the sign flags)."""
    m32, m64 = (1 << 32) - 1, (1 << 64) - 1
    wide = y << 32 | x
    out = [bin(x).count("1"), 32 - x.bit_length(), int(f"{x:032b}"[::-1], 2),
           _prmt(x, y, z & 0x7777),
           (wide << (z & 31)) >> 32 & m32, wide >> min(z, 32) & m32,
           _bfe(x, y & 0x3F, z & 0x3F, False), _bfe(x, y & 0x3F, z & 0x3F, True),
           _bfi(x, y, z & 0x3F, z >> 8 & 0x3F), x ^ y ^ z, (x & y) | (x & z) | (y & z),
           sum((wide >> 8 * ((z & 3) + i) % 64 & 0xFF) << 8 * i for i in range(4)),
           1 if _signed32(x) < _signed32(y) else 12]
    total = (wide + ((x ^ z) << 32 | z)) & m64
    difference = (wide - ((x ^ z) << 32 | z)) & m64
    out += [total & m32, total >> 32, (difference & m32) ^ (difference >> 32), _prmt(x, y, z)]
    product = (x * y + z + ((x ^ y) << 32)) & m64
    out64 = [product, bin(wide).count("1") + 100 * (64 - wide.bit_length()),
             int(f"{wide:064b}"[::-1], 2), (wide + (z << 32 | y)) & m64]
    return out, out64


def _bits_mismatches(seed) -> list[int]:
    """Threads of ``bits.ptx`` whose results differ from the Python-integer reference."""
    rng = np.random.default_rng(seed)
    n, block = 100, 64
    x, y, z = (_edgy_u32(rng, 2 * block) for _ in range(3))
    out, out64 = launch(program("bits"), [x, y, z, np.zeros(34 * block, np.uint32),
                                          np.zeros(8 * block, np.uint64), n], block, 2)[3:5]
    out, out64 = out.reshape(-1, 17), out64.reshape(-1, 4)
    wrong = []
    for t in range(n):
        want, want64 = _bits_reference(int(x[t]), int(y[t]), int(z[t]))
        if out[t].tolist() != want or out64[t].tolist() != want64:
            wrong.append(t)
    return wrong


def test_bit_carry_and_setp_pair_match_python_integers(seed):
    assert _bits_mismatches(seed) == []


def test_a_wrong_popc_is_caught(seed, monkeypatch):
    monkeypatch.setattr(semantics, "_popc",
                        lambda x: np.bitwise_count(x & ~x.dtype.type(1)).astype(np.uint32))
    assert _bits_mismatches(seed)


# -- state spaces, struct parameters, calls --------------------------------------------------
@pytest.mark.parametrize("use_shared", [0, 1], ids=["global", "shared"])
def test_local_const_generic_dynamic_shared_struct_and_calls(seed, use_shared):
    rng = np.random.default_rng(seed)
    block, grid = 64, 2
    n = block * grid
    values = rng.uniform(0, 64, n).astype(np.float32)
    scale, offset, bias = np.float32(rng.uniform(-2, 2)), int(rng.integers(-9, 9)), \
        rng.uniform(-1, 1)
    struct = np.float32(scale).tobytes() + np.int32(offset).tobytes() + np.float64(bias).tobytes()
    out = launch(program("spaces"), [values, np.zeros(n, np.float32), struct, n, use_shared],
                 block, grid, dynamic_shared=4 * block)[1]
    t = np.arange(n)
    table = np.arange(1, 9, dtype=np.float32)
    shared = values + np.float32(offset)
    neighbour = shared[t - t % block + ((t % block) ^ 1)]
    a = neighbour if use_shared else values[np.clip(t - 3, 0, n - 1)]
    k = values.astype(np.int32) & 15
    frame = values[(t + k) % n] * scale
    expected = a + frame + table[t % 8] + np.float32(bias)
    assert np.array_equal(out, expected)


def test_dynamic_shared_and_local_frames_are_bounded():
    prog = program("spaces")
    with pytest.raises(ExecutionError, match=r"spaces\.ptx:\d+: st\.shared\.f32: shared "
                                             r"access of 4 bytes out of bounds"):
        launch(prog, [np.zeros(64, np.float32), np.zeros(64, np.float32), bytes(16), 64, 0], 64,
               dynamic_shared=4)


# -- the timing model replays them ---------------------------------------------------------
@pytest.mark.parametrize("name", ["atomics", "warp", "spaces", "math"])
def test_timing_model_runs_the_new_constructs(name):
    prog = program(name)
    block = 64
    args = {"atomics": [np.zeros(24, np.uint32), np.zeros(9, np.int32), np.zeros(1, np.float32),
                        np.zeros(128, np.uint32), np.zeros(1, np.uint64),
                        np.arange(128, dtype=np.uint32), 100],
            "warp": [np.arange(128, dtype=np.int32), np.ones(128, np.int32),
                     np.zeros(7 * 128, np.int32), np.zeros(4, np.int32), 16],
            "spaces": [np.arange(128, dtype=np.float32), np.zeros(128, np.float32),
                       bytes(16), 128, 1],
            "math": [np.ones((128, 4), np.float32), np.zeros((128, 4), np.float32),
                     np.zeros((128, 4), np.float32), np.zeros(384, np.float32),
                     np.ones((128, 2)), 100]}[name]
    functional = launch(prog, args, block, 2, dynamic_shared=4 * block)
    memory = GlobalMemory({f"arg{i}": a for i, a in enumerate(args) if isinstance(a, np.ndarray)})
    params = pack(prog, args, memory)
    sm = TimingSM(prog, load_config(), lambda b: ThreadBlock(
        prog, b, (block, 1, 1), (2, 1, 1), memory, params, 4 * block))
    stats = sm.run_blocks([(0, 0, 0), (1, 0, 0)], 2)
    assert stats.cycles > 0
    for i, value in enumerate(functional):
        if isinstance(value, np.ndarray) and name != "atomics":
            assert np.array_equal(memory.read(f"arg{i}"), value)
