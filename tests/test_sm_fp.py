"""The fused multiply-add of the model and the references is correctly rounded."""

from fractions import Fraction

import numpy as np

from gpurf.sim.kernels.fp import fma_f32


def _exact_fma(a, b, c) -> np.float32:
    """float32 nearest to a * b + c (ties to even), by exact rational arithmetic."""
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    guess = np.float32(float(exact))
    candidates = [np.nextafter(guess, np.float32(-np.inf)), guess,
                  np.nextafter(guess, np.float32(np.inf))]
    return min(candidates, key=lambda y: (abs(Fraction(float(y)) - exact),
                                          int(np.array(y).view(np.uint32)) & 1))


def test_fma_f32_is_correctly_rounded(seed):
    rng = np.random.default_rng(seed)
    n = 400
    # short mantissas make a * b land exactly on float32 midpoints; tiny c breaks the tie
    a = (1 + rng.integers(0, 1 << 12, n) / (1 << 12)).astype(np.float32)
    b = (1 + rng.integers(0, 1 << 12, n) / (1 << 12)).astype(np.float32)
    c = (rng.choice([-1, 1], n) * 2.0 ** rng.integers(-70, -20, n)).astype(np.float32)
    rand = [rng.standard_normal(n).astype(np.float32) for _ in range(3)]
    tiny = [np.full(n, 1e-20, np.float32), np.full(n, 1e-19, np.float32),
            (rng.standard_normal(n) * 1e-39).astype(np.float32)]
    for x, y, z in ((a, b, c), rand, tiny):
        got = fma_f32(x, y, z)
        want = np.array([_exact_fma(*t) for t in zip(x, y, z, strict=True)], np.float32)
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_double_rounding_case_differs_from_separate_rounding():
    a = b = np.float32(1 + 2.0 ** -12)
    c = np.float32(2.0 ** -60)
    fused = fma_f32(a, b, c)
    assert fused == _exact_fma(a, b, c)
    assert fused != np.float32(np.float64(a) * np.float64(b) + np.float64(c))
