"""Static data compression's compiler pass: range analysis on hand-written PTX with known
answers, float narrowing bit-exact with the golden truncator/converter, slice allocation
and its indirection entries, and safety proved by execution on every kernel."""

import numpy as np
import pytest

from gpurf.golden.compression.value_converter import widen
from gpurf.golden.compression.value_extractor import data_positions, extract_part, unpack_entry
from gpurf.golden.compression.value_truncator import narrow, scatter
from gpurf.hw.compression.formats import TABLE3
from gpurf.sim.compile import (
    compress_workload,
    launch_ranges,
    pressure_table,
    run_compressed,
    tune_precision,
)
from gpurf.sim.kernels import kernel_names
from gpurf.sim.passes.compression.compile_pass import NarrowValueError, compression_pass
from gpurf.sim.passes.compression.precision import (
    narrow_lanes,
    quality_error,
    table3_formats,
    widen_lanes,
)
from gpurf.sim.passes.compression.ranges import (
    Interval,
    LaunchRanges,
    as_type,
    interval_width,
    range_analysis,
)
from gpurf.sim.passes.compression.slices import allocate_slices, slice_interference
from gpurf.sim.ptx import parse_ptx
from gpurf.sim.ptx.liveness import liveness
from gpurf.sim.sm.run import load_workload

HEADER = """.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_p, .param .u32 k_n)
{
  .reg .pred %p<8>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<8>;
  ld.param.u64 %rd1, [k_p];
  ld.param.u32 %r9, [k_n];
"""

LOOP = HEADER + """
  mov.u32 %r1, 0;
$L:
  add.s32 %r1, %r1, 1;
  setp.lt.s32 %p1, %r1, 100;
  @%p1 bra $L;
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
"""A counter bounded by its compare: 0..100, 7 bits."""

MASK = HEADER + """
  ld.global.u32 %r1, [%rd1];
  and.b32 %r2, %r1, 255;
  shr.u32 %r3, %r1, 28;
  st.global.u32 [%rd1], %r2;
  st.global.u32 [%rd1+4], %r3;
  ret;
}
"""

REFINE = HEADER + """
  ld.global.u32 %r1, [%rd1];
  setp.lt.u32 %p1, %r1, 1000;
  @%p1 bra $SMALL;
  st.global.u32 [%rd1], %r1;
  ret;
$SMALL:
  add.s32 %r2, %r1, 0;
  st.global.u32 [%rd1], %r2;
  ret;
}
"""
"""The taken side knows ``%r1 < 1000``: its copy ``%r2`` needs 10 bits; ``%r1`` itself 32."""

FIG8 = HEADER + """
  mov.u32 %r1, 0;
$LOOP:
  setp.ge.s32 %p1, %r1, 100;
  @%p1 bra $END;
  setp.lt.s32 %p2, %r1, 50;
  @!%p2 bra $F;
  add.s32 %r2, %r1, 1;
  bra.uni $NEXT;
$F:
  sub.s32 %r3, %r1, 50;
$NEXT:
  add.s32 %r1, %r1, 1;
  bra.uni $LOOP;
$END:
  st.global.u32 [%rd1], %r1;
  ret;
}
"""
"""Fig. 8's shape: a loop ``k < 100`` with a branch ``k < 50`` giving ``k_t`` (< 50) and
``k_f`` (>= 50) on its two sides."""

PARAM = HEADER + """
  mov.u32 %r1, %tid.x;
  mov.u32 %r2, %ctaid.x;
  mov.u32 %r3, %ntid.x;
  mad.lo.s32 %r4, %r2, %r3, %r1;
  setp.ge.s32 %p1, %r4, %r9;
  @%p1 bra $X;
  mul.wide.s32 %rd2, %r4, 4;
  st.global.u32 [%rd1], %r4;
$X:
  ret;
}
"""


def _kernel(text):
    return parse_ptx(text).kernels["k"]


def _width(text, reg, launch=None):
    w = range_analysis(_kernel(text), launch).widths[reg]
    return (w.range.lo, w.range.hi), w.bits, w.signed


def test_loop_counter_bounded_by_compare():
    assert _width(LOOP, "%r1") == ((0, 100), 7, False)


def test_masked_and_shifted_values():
    assert _width(MASK, "%r2") == ((0, 255), 8, False)
    assert _width(MASK, "%r3") == ((0, 15), 4, False)
    assert _width(MASK, "%r1")[1] == 32


def test_branch_refinement_narrows_one_side():
    assert _width(REFINE, "%r2") == ((0, 999), 10, False)
    assert _width(REFINE, "%r1")[1] == 32


def test_fig8_shape():
    analysis = range_analysis(_kernel(FIG8))
    assert _width(FIG8, "%r1") == ((0, 100), 7, False)
    assert _width(FIG8, "%r2") == ((1, 50), 6, False)
    assert _width(FIG8, "%r3") == ((0, 49), 6, False)
    sub = next(pc for pc, ins in enumerate(analysis.kernel.instructions) if ins.base == "sub")
    assert analysis.before[sub]["%r1"] == Interval(50, 99)


def test_launch_seeds():
    """With the launch known (block 128, grid 24, n = 3000) the global index is
    ``0..3071`` and, past the bounds check, ``0..2999``: its byte offset 14 bits."""
    launch = LaunchRanges((128, 1, 1), (24, 1, 1), {"k_n": 3000})
    assert _width(PARAM, "%r4", launch) == ((0, 3071), 12, False)
    assert _width(PARAM, "%rd2", launch) == ((0, 11996), 14, False)
    assert _width(PARAM, "%r9", launch) == ((3000, 3000), 12, False)
    assert _width(PARAM, "%r1", launch) == ((0, 127), 7, False)
    assert _width(PARAM, "%r9")[1] == 32


def test_wrap_and_widths():
    assert as_type(Interval(-1, -1), "u32") == Interval(2**32 - 1, 2**32 - 1)
    assert as_type(Interval(-1, 1), "u32") == Interval(0, 2**32 - 1)
    assert as_type(Interval(2**31, 2**31 + 5), "s32") == Interval(-2**31, -2**31 + 5)
    assert interval_width(Interval(-1, 0), 32) == (1, True)
    assert interval_width(Interval(-255, 255), 32) == (9, True)
    assert interval_width(Interval(2**32 - 6, 2**32 - 6), 32) == (4, True)
    assert interval_width(Interval(0, 0), 32) == (1, False)


def test_every_kernel_analysed_quickly():
    """The pass runs on every kernel; some integer register of each is narrowed."""
    for name in kernel_names():
        cp = compression_pass(load_workload(name)[1].kernel,
                              launch=launch_ranges(name, "paper"))
        assert any(w.bits < 32 for w in cp.ints.values()), name
        assert cp.after <= cp.before, name


@pytest.mark.parametrize("fmt", table3_formats(), ids=str)
def test_narrowing_matches_golden_models(fmt, seed):
    """The array narrowing/widening equals the truncator's ``narrow`` and the converter's
    ``widen`` bit for bit (random patterns, normal-range values, specials)."""
    rng = np.random.default_rng(seed)
    specials = [0, 0x80000000, 0x7F800000, 0xFF800000, 0x7F800001, 0x7FC00000, 0xFFFFFFFF,
                1, 0x807FFFFF, 0x00800000, 0x3F800000, 0x477FE000, 0x477FF000, 0x7F7FFFFF]
    values = (rng.standard_normal(300) * 2.0 ** rng.integers(-20, 20, 300)).astype(np.float32)
    bits = np.concatenate([rng.integers(0, 2**32, 300, dtype=np.uint64).astype(np.uint32),
                           np.array(specials, np.uint32), values.view(np.uint32)])
    narrowed, widened = narrow_lanes(bits, fmt), widen_lanes(narrow_lanes(bits, fmt), fmt)
    for x, n, w in zip(bits.tolist(), narrowed.tolist(), widened.tolist(), strict=True):
        assert (n, w) == (narrow(x, fmt), widen(narrow(x, fmt), fmt)), hex(x)


def test_quality_metric():
    want = {"y": np.array([1.0, -4.0, 2.0], np.float32)}
    assert quality_error({"y": want["y"].copy()}, want) == 0.0
    assert quality_error({"y": np.array([1.0, -4.0, 2.4], np.float32)}, want) == \
        pytest.approx(0.1, rel=1e-6)
    assert quality_error({"y": np.array([1.0, np.nan, 2.0], np.float32)}, want) == np.inf


def _check_allocation(kernel, alloc):
    """Every entry follows the protocol, holds the register's slices, and registers that
    interfere share no slice."""
    graph = slice_interference(kernel, liveness(kernel), alloc.slices)
    where = {}
    for vreg, words in alloc.entries.items():
        positions = alloc.positions(vreg)
        assert len(positions) == alloc.slices[vreg] == len(set(positions))
        for word in words:
            entry = unpack_entry(word)
            assert 1 <= len(data_positions(entry)) <= 8
            assert entry["m1"] == 0 or entry["r1"] != entry["r0"]
        where[vreg] = set(positions)
        assert all(r < alloc.registers for r, _ in positions)
    for a, others in graph.items():
        for b in others:
            assert not where[a] & where[b], (a, b)


def test_slice_allocation_packs_and_splits():
    """``%rd1`` (16 slices: two architectural registers) and ``%r1``, ``%r2``, ``%r3``
    (5 + 5 + 6 slices) live together: 32 slices in 4 registers, the lower bound, which
    takes a split."""
    kernel = _kernel(HEADER + """
  ld.global.u32 %r1, [%rd1];
  ld.global.u32 %r2, [%rd1+4];
  ld.global.u32 %r3, [%rd1+8];
  add.u32 %r4, %r1, %r2;
  add.u32 %r5, %r4, %r3;
  st.global.u32 [%rd1], %r5;
  ret;
}
""")
    slices = {"%r1": 5, "%r2": 5, "%r3": 6, "%r4": 6, "%r5": 8, "%rd1": 16, "%r9": 8}
    alloc = allocate_slices(kernel, liveness(kernel), slices)
    _check_allocation(kernel, alloc)
    assert alloc.registers == alloc.lower_bound == 4
    split = [v for v, words in alloc.entries.items()
             if any(unpack_entry(w)["m1"] for w in words)]
    assert split
    assert len(alloc.entries["%rd1"]) == 2


def test_entry_placement_is_the_hardware_one():
    """A split operand's slices, scattered by the truncator's ``scatter`` and read back
    by the extractor's ``extract_part`` on both parts, give the value back."""
    kernel = _kernel(LOOP)
    alloc = allocate_slices(kernel, liveness(kernel), {"%r1": 3, "%rd1": 16, "%r9": 7})
    for vreg, value in (("%r9", 0x0ABCDEF1), ("%r1", 0x5A5)):
        (word,) = alloc.entries[vreg]
        entry = unpack_entry(word)
        r0, r1 = scatter(value, entry["m0"], entry["m1"])
        back = extract_part(r0, entry, 0, False) | extract_part(r1, entry, 1, False)
        assert back == value


@pytest.mark.parametrize("name", kernel_names())
def test_enforced_run_every_kernel(name):
    """Every kernel at size test, integers narrowed to their analysed widths and floats
    stored as fp16, values kept in the emulated slices of the allocated registers: every
    value fits, every read comes back from its slices unchanged, and the outputs are
    numpy-exact where no float is narrowed and within the quality threshold (10 %, the
    paper's "high quality") otherwise."""
    kernel = load_workload(name)[1].kernel
    cp = compression_pass(kernel, launch=launch_ranges(name, "test"), floats=TABLE3[16])
    _check_allocation(kernel, cp.allocation)
    run, error = run_compressed(name, cp)
    assert error <= 0.1
    if not cp.floats:
        assert run.passed
    assert cp.after < cp.before


def test_ints_only_is_exact():
    cp = compression_pass(load_workload("narrow")[1].kernel,
                          launch=launch_ranges("narrow", "test"))
    run, error = run_compressed("narrow", cp)
    assert run.passed and error == 0.0


def test_too_narrow_width_fails_the_run():
    """saxpy's global index %r1 is 0..3071 (12 bits); claiming 8 bits fails at its
    first write above 255 (block 2, lane 0: 256), naming kernel, block, warp, pc and
    register."""
    name = "saxpy"
    kernel = load_workload(name)[1].kernel
    cp = compression_pass(kernel, launch=launch_ranges(name, "test"))
    assert cp.ints["%r1"].bits == 12
    cp.ints["%r1"] = type(cp.ints["%r1"])(cp.ints["%r1"].range, 8, False)
    with pytest.raises(NarrowValueError, match=r"^compression: saxpy: block \(2, 0, 0\), "
                                               r"warp 0, pc \d+ \(mad\.lo\.s32, line \d+\) "
                                               r"writes %r1 = 256 in lane 0, outside its "
                                               r"8-bit unsigned width \(range \[0, 3071\]\)$"):
        run_compressed(name, cp)


def test_too_narrow_slices_fail_numpy():
    """Without the width check, a value truncated to too few slices (as the hardware
    would: low bits kept, zero-extended back) makes the outputs wrong."""
    name = "saxpy"
    cp = compression_pass(load_workload(name)[1].kernel, launch=launch_ranges(name, "test"))
    cp.allocation.slices["%r1"] = 2
    run, _ = run_compressed(name, cp, check=False)
    assert not run.passed


def test_shared_slices_are_caught():
    """Two interfering registers given the same slices: the read-back check fails."""
    name = "vecadd"
    kernel = load_workload(name)[1].kernel
    cp = compression_pass(kernel, launch=launch_ranges(name, "test"))
    cp.allocation.entries["%rd5"] = cp.allocation.entries["%rd4"][:1]
    cp.allocation.slices["%rd5"] = 8
    with pytest.raises(NarrowValueError, match=r"reads %rd4 from its slices"):
        run_compressed(name, cp)


def test_precision_tuning():
    """saxpy: perfect quality needs fp32; 10 % allows a narrower format, and the tuned
    run is within the threshold; a too-narrow format is not."""
    kernel = load_workload("saxpy")[1].kernel
    launch = launch_ranges("saxpy", "test")
    assert set(tune_precision("saxpy", 0.0).values()) == {TABLE3[32]}
    high = tune_precision("saxpy", 0.1)
    (fmt,) = set(high.values())
    assert fmt.width < 32
    _, error = run_compressed("saxpy", compression_pass(kernel, launch=launch, floats=high))
    assert error <= 0.1
    narrower = table3_formats()[table3_formats().index(fmt) - 1]
    _, error = run_compressed("saxpy", compression_pass(kernel, launch=launch,
                                                        floats=narrower), emulate=False)
    assert error > 0.1


def test_per_register_tuning():
    """Per register (Section 4.1's per-value search), each register at most as wide as the
    per-kernel choice, and the run still within the threshold."""
    per_kernel = tune_precision("vecadd", 0.1)
    per_register = tune_precision("vecadd", 0.1, per_register=True)
    assert per_register.keys() == per_kernel.keys()
    assert all(per_register[v].width <= per_kernel[v].width for v in per_kernel)
    _, error = run_compressed("vecadd", compress_workload("vecadd", size="test",
                                                          floats=per_register))
    assert error <= 0.1


def test_pressure_table_row():
    (row,) = pressure_table(["vecadd"], threshold=0.1)
    assert row["workload"] == "vecadd"
    assert row["before"] >= row["slices_full"] >= row["ints"] >= row["both_perfect"] \
        >= row["both_high"]
    assert row["floats_high"] <= row["floats_perfect"]


def test_listing_and_json():
    import json

    cp = compression_pass(load_workload("narrow")[1].kernel,
                          launch=launch_ranges("narrow", "test"))
    text = cp.listing()
    assert text.startswith(f"// narrow: {cp.before} -> {cp.after} registers")
    assert "%rs4: u4 [0, 15] R" in text
    data = json.loads(cp.to_json())
    assert data["registers"]["%rs4"]["bits"] == 4
    assert data["registers"]["%rs4"]["slices"] == 1
    assert data["registers"]["%rs4"]["range"] == [0, 15]
    assert data["registers_after"] == cp.after
