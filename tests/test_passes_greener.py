"""GReEneR's compiler pass: the paper's worked examples, and safety proved by execution."""

import dataclasses

import pytest

from gpurf.hw.greener.layouts import PowerState
from gpurf.sim.compile import operand_cycles
from gpurf.sim.kernels import workload_names
from gpurf.sim.passes.dataflow import kernel_flow
from gpurf.sim.passes.enforcement import Enforcement
from gpurf.sim.passes.greener.power_pass import power_pass, sleep_reg_pass
from gpurf.sim.ptx import parse_ptx
from gpurf.sim.sm.poison import PoisonReadError, run_enforced
from gpurf.sim.sm.run import load_workload

ON, SLEEP, OFF = PowerState.ON, PowerState.SLEEP, PowerState.OFF

HEADER = """.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_p)
{
  .reg .pred %p<4>;
  .reg .b32 %r<130>;
"""

FIG3 = HEADER + """
$B4:
  setp.le.s32 %p2, %r8, %r0;
  bar.sync 0;
  mov.u32 %r1, %r0;
  @%p2 bra $B8;
  shl.b32 %r10, %r0, 2;
  mov.u32 %r12, %r124;
  add.u32 %r11, %r10, 24;
  add.u32 %r10, %r10, 32;
$B6:
  ld.global.u32 %r14, [%r11];
  ld.global.u32 %r13, [%r10];
  mad.lo.u32 %r12, %r14, %r13, %r12;
  add.u32 %r1, %r1, 1024;
  setp.gt.s32 %p2, %r8, %r1;
  add.u32 %r10, %r10, 4096;
  add.u32 %r11, %r11, 4096;
  @%p2 bra $B6;
  bra $B9;
$B8:
  mov.u32 %r12, %r124;
$B9:
  add.u32 %r0, %r0, %r5;
  shl.b32 %r50, %r9, 0;
  setp.le.s32 %p2, %r0, %r6;
  st.shared.u32 [%r50], %r12;
  add.u32 %r9, %r9, %r7;
  @%p2 bra $B4;
""" + "  bar.sync 0;\n" * 8 + """  mov.u32 %r8, 0;
  ret;
}
"""
"""Fig. 3a of the paper (SP benchmark) line for line: ``ssy`` is a register-free
``bar.sync``, shared-memory operands are immediates, ``$ofs1`` is ``%r50``, and the code after
B9 (not shown in the paper) is register-free padding and the definition of ``r8`` the
example mentions."""

FIG3_STATES = {
    1: [("%p2", ON), ("%r8", SLEEP), ("%r0", ON)],
    3: [("%r1", SLEEP), ("%r0", ON)],
    5: [("%r10", ON), ("%r0", SLEEP)],
    6: [("%r12", ON), ("%r124", SLEEP)],
    7: [("%r11", ON), ("%r10", ON)],
    8: [("%r10", ON), ("%r10", ON)],
    9: [("%r14", ON), ("%r11", ON)],
    11: [("%r12", SLEEP), ("%r14", OFF), ("%r13", OFF), ("%r12", SLEEP)],
    12: [("%r1", ON), ("%r1", ON)],
    13: [("%p2", ON), ("%r8", SLEEP), ("%r1", SLEEP)],
    14: [("%r10", SLEEP), ("%r10", SLEEP)],
    15: [("%r11", SLEEP), ("%r11", SLEEP)],
    18: [("%r12", ON), ("%r124", SLEEP)],
    19: [("%r0", ON), ("%r0", ON), ("%r5", SLEEP)],
    20: [("%r50", ON), ("%r9", ON)],
    21: [("%p2", ON), ("%r0", SLEEP), ("%r6", SLEEP)],
    23: [("%r9", SLEEP), ("%r9", SLEEP), ("%r7", SLEEP)],
}
"""Paper line -> (register, state) in our operand order (destination, then sources). Lines
9 and 22 print one state in the paper (address registers unencoded); here the address
register has its own (line 9: ``r11`` next used 6 instructions later, ON; line 22 below)."""


def _kernel(text):
    return parse_ptx(text).kernels["k"]


def _states(pp, pc):
    return [(op.register, op.state) for op in pp.operands[pc]]


def test_example_3_1_reproduced():
    """Example 3.1 (W = 7) on the paper's own registers: every printed state of Fig. 3a."""
    pp = power_pass(kernel_flow(_kernel(FIG3), physical=False), 7)
    for line, want in FIG3_STATES.items():
        assert _states(pp, line - 1) == want, f"line {line}"
    assert _states(pp, 21)[1] == ("%r12", OFF)


def test_example_3_1_distances():
    """The example's reasons: r0 next accessed at distance 2 (line 3), r8 beyond 7 on the
    B5 path, r13 never again before its redefinition (inf, dead)."""
    flow = kernel_flow(_kernel(FIG3), physical=False)
    pp = power_pass(flow, 7)
    col = {k: i for i, k in enumerate(pp.registers)}
    assert pp.dist_out[0, col["%r0"]] == 2
    assert pp.dist_out[0, col["%p2"]] == 3
    assert pp.dist_out[0, col["%r8"]] == 8
    assert pp.dist_out[10, col["%r13"]] == 8


STRAIGHT = HEADER + """
  mov.u32 %r1, 5;
  add.u32 %r2, %r1, 1;
  add.u32 %r3, %r1, 2;
  add.u32 %r4, %r1, 3;
  add.u32 %r5, %r1, 4;
  add.u32 %r6, %r5, %r4;
  add.u32 %r7, %r6, %r3;
  add.u32 %r8, %r7, %r2;
  add.u32 %r8, %r8, %r1;
  ret;
}
"""


@pytest.mark.parametrize("threshold", [1, 2, 3, 4])
def test_inc_saturates_at_threshold(threshold):
    """Dist(OUT(S0), r1) is 1, 2, 3, 4 to the next uses of r1 (``INC`` saturating at W)
    and r8's last write is followed by nothing (inf, dead: OFF)."""
    flow = kernel_flow(_kernel(STRAIGHT), physical=False)
    pp = power_pass(flow, threshold)
    col = pp.registers.index("%r1")
    inf = threshold + 1
    assert [int(pp.dist_out[pc, col]) for pc in range(4)] == [1, 1, 1, 1]
    assert int(pp.dist_out[4, col]) == (4 if threshold >= 4 else inf)
    want = ON if threshold >= 4 else SLEEP
    assert _states(pp, 4)[1] == ("%r1", want)
    assert _states(pp, 8)[0] == ("%r8", OFF)


DIVERGE = HEADER + """
  mov.u32 %r0, %r9;
  setp.eq.u32 %p1, %r9, 0;
  @%p1 bra $S10;
""" + "  add.u32 %r2, %r2, 1;\n" * 8 + """  add.u32 %r3, %r0, 1;
  ret;
$S10:
  add.u32 %r3, %r0, 2;
  ret;
}
"""


def test_example_3_2_max_over_successors():
    """Example 3.2 (Fig. 4a): r0 used 2 instructions later on one path and > W on the other:
    the max over successors makes it SLEEP after its definition."""
    pp = power_pass(kernel_flow(_kernel(DIVERGE), physical=False), 7)
    assert _states(pp, 0)[0] == ("%r0", SLEEP)
    assert power_pass(kernel_flow(_kernel(DIVERGE), physical=False), 12).operands[0][0].state \
        is ON


LOOP = HEADER + """
  mov.u32 %r1, 0;
$L:
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, 100;
  @%p1 bra $L;
  add.u32 %r2, %r9, 1;
  ret;
}
"""


def test_loop_without_access_saturates():
    """r9 is read only after a loop that never touches it: every path around the loop
    grows its distance, so it saturates to inf even for a large W."""
    pp = power_pass(kernel_flow(_kernel(LOOP), physical=False), 50)
    col = pp.registers.index("%r9")
    assert all(int(pp.dist_out[pc, col]) == 51 for pc in range(4))
    assert _states(pp, 1)[0] == ("%r1", ON)
    assert _states(pp, 4)[1] == ("%r9", OFF)


@pytest.mark.parametrize("threshold", [1, 0, 2000, True, "3"])
def test_threshold_validated(threshold):
    kernel = _kernel(STRAIGHT)
    if threshold == 1 and threshold is not True:
        power_pass(kernel, threshold)
        return
    error = TypeError if not isinstance(threshold, int) or threshold is True else ValueError
    with pytest.raises(error, match=rf"^threshold must be an integer in 1\.\.1024, not "
                                    rf"{threshold!r}$"):
        power_pass(kernel, threshold)


def test_encoding_two_sources_one_destination():
    """fma with three distinct sources: the third gets SLEEP whatever its computed state."""
    _, program, _ = load_workload("saxpy")
    pp = power_pass(program.kernel)
    fma = next(pc for pc, ins in enumerate(program.kernel.instructions) if ins.base == "fma")
    roles = [(op.role, op.encoded) for op in pp.operands[fma]]
    assert roles == [("dst", True), ("src", True), ("src", True), ("src", False)]
    assert pp.operands[fma][3].state is SLEEP


@pytest.mark.parametrize("threshold", [1, 3])
@pytest.mark.parametrize("workload", workload_names())
def test_enforced_run_is_correct(workload, threshold):
    """Every workload with GReEneR's OFF registers poisoned: no poisoned read, and the
    outputs still match numpy."""
    _, program, _ = load_workload(workload)
    pp = power_pass(program.kernel, threshold)
    run, checked = run_enforced(workload, pp.enforcement())
    assert run.passed and checked > 0
    assert any(PowerState.OFF in pp.after(pc).values() for pc in range(len(pp.operands)))


def test_per_thread_liveness_is_unsafe():
    """The paper's per-thread isLive turns off a register a parked lane still needs
    (sobel at W = 1): the enforcement catches it, which is why the pass uses warp liveness."""
    _, program, _ = load_workload("sobel")
    flow = kernel_flow(program.kernel)
    flow = dataclasses.replace(flow, warp_live_after=flow.live.live_after)
    with pytest.raises(PoisonReadError, match=r"^sobel: greener: block \(0, 0, 0\), warp \d+, "
                                              r"pc \d+ .* reads %\w+ \(R\d+\) poisoned"):
        run_enforced("sobel", power_pass(flow, 1).enforcement())


def test_wrong_annotation_fails_clearly():
    """Poisoning saxpy's %f1 (the scalar a) right after its load fails at the fma."""
    _, program, _ = load_workload("saxpy")
    flow = kernel_flow(program.kernel)
    code = program.kernel.instructions
    load = next(pc for pc, ins in enumerate(code) if "%f1" in ins.dests)
    fma = next(pc for pc, ins in enumerate(code) if ins.base == "fma")
    key = flow.keys["%f1"][0]
    poison = [frozenset({key}) if pc == load else frozenset() for pc in range(len(code))]
    with pytest.raises(PoisonReadError, match=rf"^saxpy: bad: block \(0, 0, 0\), warp 0, "
                                              rf"pc {fma} \(fma\.rn\.f32, line \d+\) reads "
                                              rf"%f1 \({key}\) poisoned in lanes 0xffffffff$"):
        run_enforced("saxpy", Enforcement(flow.keys, poison, "bad"))


def test_masked_write_leaves_other_lanes_poisoned():
    """A register poisoned, then written by a subset of lanes, is still poison in the
    others: poison %r1 of saxpy (the global index) after the bounds check's setp, where the
    out-of-range lanes have already branched away — the in-range lanes read it."""
    _, program, _ = load_workload("saxpy")
    flow = kernel_flow(program.kernel)
    code = program.kernel.instructions
    setp = next(pc for pc, ins in enumerate(code) if ins.base == "setp")
    poison = [frozenset(flow.keys["%r1"]) if pc == setp else frozenset()
              for pc in range(len(code))]
    with pytest.raises(PoisonReadError, match=r"reads %r1 "):
        run_enforced("saxpy", Enforcement(flow.keys, poison, "bad"))


def test_sleep_reg_never_off_and_fractions():
    """Sleep-Reg puts every access to SLEEP (never OFF); GReEneR turns some registers
    OFF and keeps more ON in the dynamic operand-cycles of saxpy."""
    _, program, _ = load_workload("saxpy")
    base = sleep_reg_pass(program.kernel)
    assert base.static_counts()["OFF"] == base.static_counts()["ON"] == 0
    run, sleep_reg = operand_cycles(base, "saxpy")
    assert run.passed and sleep_reg["OFF"] == 0
    run, greener = operand_cycles(power_pass(program.kernel), "saxpy")
    assert run.passed and greener["OFF"] > 0
    assert sum(greener.values()) == pytest.approx(1)


def test_listing_and_json():
    pp = power_pass(load_workload("saxpy")[1].kernel)
    listing = pp.listing()
    assert "$L__BB0_2:" in listing and "SLEEP*" in listing
    assert '"state": "OFF"' in pp.to_json()
