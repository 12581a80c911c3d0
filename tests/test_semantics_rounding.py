"""Directed rounding (``.rz``/``.rm``/``.rp``) of float32 ``fma``/``add``/``mul`` against exact
rational arithmetic; randomized from the session seed (``--seed``)."""

from fractions import Fraction

import numpy as np
import pytest

from gpurf.sim.sm.semantics import fma_directed_f32

from .ptx_launch import launch, program_of

_MAX = np.finfo(np.float32).max


def _bracket(exact: Fraction):
    """The float32 values just below and just above ``exact`` (equal if it is one)."""
    guess = np.float32(float(exact)) if abs(exact) <= Fraction(float(_MAX)) else \
        np.float32(np.copysign(_MAX, float(exact)))
    while Fraction(float(guess)) > exact:
        guess = np.nextafter(guess, np.float32(-np.inf))
    below = guess
    while Fraction(float(below)) < exact and Fraction(float(np.nextafter(
            below, np.float32(np.inf)))) <= exact:
        below = np.nextafter(below, np.float32(np.inf))
    above = below if Fraction(float(below)) == exact else np.nextafter(below, np.float32(np.inf))
    return below, above


def _directed(a, b, c, mode):
    exact = Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c))
    below, above = _bracket(exact)
    if mode == "rm":
        return below
    if mode == "rp":
        return above
    return below if exact > 0 else above


def _operands(rng, n):
    a = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    b = (rng.standard_normal(n) * 2.0 ** rng.integers(-30, 30, n)).astype(np.float32)
    c = (rng.standard_normal(n) * 2.0 ** rng.integers(-60, 60, n)).astype(np.float32)
    c[: n // 4] = -(a[: n // 4].astype(np.float64) * b[: n // 4]).astype(np.float32)
    tiny = n // 8
    a[-tiny:] = (rng.standard_normal(tiny) * 1e-20).astype(np.float32)
    b[-tiny:] = (rng.standard_normal(tiny) * 1e-20).astype(np.float32)
    return a, b, c


@pytest.mark.parametrize("mode", ["rz", "rm", "rp"])
def test_fma_directed_is_exact(seed, mode):
    rng = np.random.default_rng(seed)
    a, b, c = _operands(rng, 400)
    got = fma_directed_f32(a, b, c, mode)
    want = np.array([_directed(*t, mode) for t in zip(a, b, c, strict=True)], np.float32)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))


def test_overflow_and_exact_zero():
    big = np.float32(_MAX)
    with np.errstate(over="ignore"):
        assert fma_directed_f32(big, np.float32(2), np.float32(0), "rz") == big
        assert fma_directed_f32(big, np.float32(2), np.float32(0), "rm") == big
        assert np.isinf(fma_directed_f32(big, np.float32(2), np.float32(0), "rp"))
    zero = fma_directed_f32(np.float32(2), np.float32(3), np.float32(-6), "rm")
    assert zero == 0 and np.signbit(zero)
    assert not np.signbit(fma_directed_f32(np.float32(0), np.float32(1), np.float32(0), "rm"))


def test_expf_fast_path_floor_runs(seed):
    """``fma.rm.f32`` with nvcc's magic constant 12582913 is ``expf``'s floor; ``add.rz``,
    ``mul.rp``, ``sub.rm`` through a kernel."""
    text = """.version 9.0
.target sm_80
.address_size 64
.visible .entry d(.param .u64 d_param_0, .param .u64 d_param_1)
{
\t.reg .f32 %f<8>;
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<6>;
\tld.param.u64 %rd1, [d_param_0];
\tld.param.u64 %rd2, [d_param_1];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd3, %r1, 8;
\tadd.s64 %rd4, %rd1, %rd3;
\tld.global.v2.f32 {%f1, %f2}, [%rd4+0];
\tfma.rm.f32 %f3, %f1, 0f437C0000, 0f4B400001;
\tadd.rz.f32 %f4, %f1, %f2;
\tmul.rp.f32 %f5, %f1, %f2;
\tsub.rm.f32 %f6, %f1, %f2;
\tmul.wide.u32 %rd3, %r1, 16;
\tadd.s64 %rd5, %rd2, %rd3;
\tst.global.v4.f32 [%rd5], {%f3, %f4, %f5, %f6};
\tret;
}
"""
    rng = np.random.default_rng(seed)
    pairs = rng.standard_normal((32, 2)).astype(np.float32) * np.float32(50)
    out = launch(program_of(text, "d.ptx"), [pairs, np.zeros((32, 4), np.float32)], 32)[1]
    x, y = pairs[:, 0], pairs[:, 1]
    one, zero = np.float32(1), np.float32(0)
    for col, (p, q, r, mode) in enumerate([(x, np.float32(252), np.float32(12582913), "rm"),
                                           (x, one, y, "rz"), (x, y, zero, "rp"),
                                           (x, one, -y, "rm")]):
        want = [_directed(*t, mode) for t in np.broadcast(p, q, r)]
        assert np.array_equal(out[:, col].view(np.uint32), np.array(want, np.float32)
                              .view(np.uint32)), col


def test_cvt_sat_clamps_floats_to_the_unit_interval():
    text = """.version 9.0
.target sm_80
.address_size 64
.visible .entry c(.param .u64 c_param_0)
{
\t.reg .f32 %f<3>;
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [c_param_0];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tld.global.f32 %f1, [%rd3];
\tcvt.sat.f32.f32 %f2, %f1;
\tst.global.f32 [%rd3], %f2;
\tret;
}
"""
    values = np.array([-2, -0.0, 0.25, 1, 7, np.inf, -np.inf, np.nan], np.float32)
    out = launch(program_of(text, "c.ptx"), [values], 8)[0]
    assert out.tolist() == [0, 0, 0.25, 1, 1, 1, 0, 0]


SPECIAL = """.version 9.0
.target sm_80
.address_size 64
.visible .entry m(.param .u64 m_param_0, .param .u64 m_param_1)
{
\t.reg .f32 %f<8>;
\t.reg .f64 %fd<4>;
\t.reg .b32 %r<2>;
\t.reg .b64 %rd<8>;
\tld.param.u64 %rd1, [m_param_0];
\tld.param.u64 %rd2, [m_param_1];
\tmov.u32 %r1, %tid.x;
\tmul.wide.u32 %rd3, %r1, 4;
\tadd.s64 %rd4, %rd1, %rd3;
\tld.global.f32 %f1, [%rd4];
\ttanh.approx.f32 %f2, %f1;
\tex2.approx.ftz.f32 %f3, %f1;
\tlg2.approx.f32 %f4, %f1;
\trsqrt.approx.f32 %f5, %f1;
\tcvt.f64.f32 %fd1, %f1;
\trsqrt.approx.f64 %fd2, %fd1;
\tsqrt.rn.f64 %fd3, %fd1;
\tmul.wide.u32 %rd5, %r1, 32;
\tadd.s64 %rd6, %rd2, %rd5;
\tst.global.v4.f32 [%rd6], {%f2, %f3, %f4, %f5};
\tst.global.v2.f64 [%rd6+16], {%fd2, %fd3};
\tret;
}
"""


def test_sfu_functions_at_special_values():
    x = np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, -126.5, 4, 0.25, -149.5, 1e-40],
                 np.float32)
    n = len(x)
    out = launch(program_of(SPECIAL, "m.ptx"), [x, np.zeros(8 * n, np.float32)], n)[1]
    f32 = out.reshape(n, 8)[:, :4]
    f64 = out.reshape(n, 8)[:, 4:].copy().view(np.float64)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        want = [np.tanh(x64), np.exp2(x64), np.log2(x64), 1 / np.sqrt(x64)]
    for got, exact in zip(f32.T, want, strict=True):
        assert np.array_equal(np.isnan(got), np.isnan(exact))
        close = ~np.isnan(exact) & np.isfinite(exact)
        assert (np.abs(got[close] - exact[close]) <= 2.0 ** -22 * np.maximum(1, np.abs(
            exact[close]))).all()
        assert np.array_equal(got[np.isinf(exact)], exact[np.isinf(exact)])
    assert f32[-1, 1] == 1 and f32[-2, 1] == 0 and not np.signbit(f32[-2, 1])
    with np.errstate(all="ignore"):
        assert np.array_equal(f64[:, 1], np.sqrt(x64), equal_nan=True)
        assert np.allclose(f64[:, 0], 1 / np.sqrt(x64), equal_nan=True, rtol=2.0 ** -50)
