"""RegLess' compiler pass: hand-built regions with known answers, soft definitions, and
safety proved by execution (every workload with the annotations enforced as poison)."""

import dataclasses

import pytest

import gpurf.sim.passes.regless.regions as regions_module
import gpurf.sim.sm.run as run_module
from gpurf.sim.compile import invalidation_table
from gpurf.sim.kernels import workload_names
from gpurf.sim.passes.dataflow import kernel_flow
from gpurf.sim.passes.regless.invalidation import post_dominator_invalidations, region_graph
from gpurf.sim.passes.regless.regions import (
    INVALIDATION_CHOICES,
    RegionConfig,
    global_load_uses,
    is_soft_def,
    regless_pass,
    soft_definitions,
)
from gpurf.sim.ptx import parse_ptx
from gpurf.sim.sm.poison import PoisonReadError, run_enforced
from gpurf.sim.sm.program import Program
from gpurf.sim.sm.run import load_workload

HEADER = """.version 7.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_p)
{
  .reg .pred %p<4>;
  .reg .b32 %r<40>;
  .reg .b64 %rd<4>;
  ld.param.u64 %rd1, [k_p];
"""

SPLIT = HEADER + """
  mov.u32 %r1, 1;
  mov.u32 %r2, 2;
  mov.u32 %r3, 3;
  mov.u32 %r4, 4;
  add.u32 %r5, %r1, %r2;
  add.u32 %r6, %r3, %r4;
  add.u32 %r7, %r5, %r6;
  mov.u32 %r11, 11;
  mov.u32 %r12, 12;
  mov.u32 %r13, 13;
  add.u32 %r14, %r11, %r12;
  add.u32 %r15, %r14, %r13;
  add.u32 %r16, %r15, %r7;
  st.global.u32 [%rd1], %r16;
  ret;
}
"""

LOAD = HEADER + """
  ld.global.u32 %r1, [%rd1];
  mov.u32 %r2, 2;
  mov.u32 %r3, 3;
  add.u32 %r4, %r2, %r3;
  add.u32 %r5, %r4, %r3;
  add.u32 %r6, %r5, %r2;
  add.u32 %r7, %r6, %r1;
  st.global.u32 [%rd1], %r7;
  ret;
}
"""

LOOP = HEADER + """
  mov.u32 %r1, 0;
  mov.u32 %r2, 0;
$L:
  add.u32 %r2, %r2, %r1;
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, %r2;
  @%p1 bra $L;
  st.global.u32 [%rd1], %r2;
  ret;
}
"""

FIG7 = HEADER + """
  mov.u32 %r1, 7;
  setp.eq.u32 %p1, %r1, 0;
  @%p1 bra $C;
  mov.u32 %r1, 5;
  bra.uni $J;
$C:
  add.u32 %r2, %r1, 1;
  st.global.u32 [%rd1], %r2;
$J:
  ret;
}
"""
"""Fig. 7: ``r1`` defined in B0 and read on the C side; B's redefinition of it is soft."""

IF_ELSE = HEADER + """
  setp.eq.u32 %p1, %r9, 0;
  @%p1 bra $E;
  mov.u32 %r1, 1;
  bra.uni $J;
$E:
  mov.u32 %r1, 2;
$J:
  st.global.u32 [%rd1], %r1;
  ret;
}
"""


DIAMOND = HEADER + """
  mov.u32 %r8, %tid.x;
  and.b32 %r9, %r8, 1;
  setp.eq.u32 %p1, %r9, 0;
  mov.u32 %r1, 7;
  @%p1 bra $E;
  add.u32 %r2, %r1, 1;
  bra.uni $J;
$E:
  add.u32 %r2, %r1, 2;
$J:
  st.global.u32 [%rd1], %r2;
  ret;
}
"""
"""``r1`` read last on both sides of a divergent branch."""

LOOP_IF = HEADER + """
  mov.u32 %r1, 0;
  mov.u32 %r2, 0;
  mov.u32 %r8, %tid.x;
$L:
  and.b32 %r3, %r1, 1;
  setp.eq.u32 %p2, %r3, 0;
  @%p2 bra $SKIP;
  add.u32 %r2, %r2, %r8;
$SKIP:
  add.u32 %r1, %r1, 1;
  setp.lt.u32 %p1, %r1, %r8;
  @%p1 bra $L;
  st.global.u32 [%rd1], %r2;
  ret;
}
"""
"""A loop of three regions; ``r1`` and ``r8`` are live around the back edge."""

ONE_SIDE = HEADER + """
  mov.u32 %r8, %tid.x;
  and.b32 %r9, %r8, 1;
  setp.eq.u32 %p1, %r9, 0;
  mov.u32 %r1, 7;
  @%p1 bra $E;
  add.u32 %r2, %r1, 1;
  st.global.u32 [%rd1], %r2;
  bra.uni $J;
$E:
  st.global.u32 [%rd1], %r9;
$J:
  st.global.u32 [%rd1], %r8;
  ret;
}
"""
"""``r1`` read on the fall-through side only, ``r9`` on the taken side only."""

EARLY_EXIT = HEADER + """
  mov.u32 %r8, %tid.x;
  mov.u32 %r1, 3;
  mov.u32 %r2, 0;
  setp.gt.u32 %p1, %r8, 20;
  @%p1 bra $DONE;
$L:
  add.u32 %r2, %r2, %r1;
  setp.lt.u32 %p2, %r2, %r8;
  @%p2 bra $L;
  st.global.u32 [%rd1], %r2;
$DONE:
  ret;
}
"""
"""``r1`` dies on the loop's exit edge and on the early exit's edge."""


def _invalidated(rp, key):
    """Regions (by first pc) invalidating ``key``."""
    return [r.start for r in rp.regions if key in r.invalidations]


def _flow(text):
    return kernel_flow(parse_ptx(text).kernels["k"], physical=False)


def _spans(rp):
    return [(r.start, r.end) for r in rp.regions]


def test_split_at_live_register_limit():
    """Four registers at most: the block splits where a fifth would be held, at the start
    of the window (six instructions), and again before r7 would be held across r11..r14."""
    rp = regless_pass(_flow(SPLIT), max_live_registers=4)
    assert _spans(rp) == [(0, 6), (6, 13), (13, 16)]
    first, second, third = rp.regions
    assert first.max_live == 3 and second.max_live == 4 and third.max_live == 4
    assert second.preloads == ("%r3", "%r4", "%r5")
    assert second.invalidating == {"%r3", "%r4", "%r5"}
    assert third.preloads == ("%rd1", "%r7", "%r15")
    assert first.outputs == ("%rd1", "%r3", "%r4", "%r5")
    assert first.interiors == ("%r1", "%r2")
    assert first.last_use[5] == {"%r1": "erase", "%r2": "erase", "%r5": "evict"}
    assert first.last_use[3] == {"%r3": "evict"}
    assert regless_pass(_flow(SPLIT)).regions[0].end == 16


def test_split_per_bank_limit():
    """Two banks of two lines: r1, r3 (bank 1) and r11, r13 would be three in bank 1."""
    rp = regless_pass(_flow(SPLIT), banks=2, lines_per_bank=2, max_live_registers=4)
    assert all(max(r.bank_usage) <= 2 for r in rp.regions)
    assert len(rp.regions) > len(regless_pass(_flow(SPLIT), max_live_registers=4).regions)


def test_global_load_separated_from_first_use():
    """ld at pc 1, first use at pc 7: the window is pc 6..7 (six instructions from the
    start), and pc 7 gives fewer inputs + outputs (6 against 8). With a one-instruction
    window (pc 2..7) the split is right after the load (4)."""
    flow = _flow(LOAD)
    assert global_load_uses(flow) == [(1, 7)]
    rp = regless_pass(flow)
    assert _spans(rp) == [(0, 7), (7, 10)]
    assert rp.regions[1].preloads == ("%r1", "%rd1", "%r6")
    assert rp.regions[0].last_use[1] == {"%rd1": "evict", "%r1": "evict"}
    short = regless_pass(flow, min_region_instructions=1)
    assert short.regions[0].end == 2


def test_loop():
    """The loop body is one region re-entered every iteration: its loop-carried registers
    are preloads (r1's is invalidating: the body overwrites it in every lane), the exited
    lanes' sum makes r2's definition soft, and r1 is invalidated at the loop exit."""
    rp = regless_pass(_flow(LOOP))
    assert _spans(rp) == [(0, 3), (3, 7), (7, 9)]
    body, exit_ = rp.regions[1], rp.regions[2]
    assert body.preloads == ("%r1", "%r2") and body.invalidating == {"%r1"}
    assert body.soft == {"%r2"}
    assert body.last_use == {5: {"%r1": "evict", "%r2": "evict"}}
    assert exit_.invalidations == ("%r1",)
    assert exit_.preloads == ("%rd1", "%r2")


def test_soft_definition_fig7():
    flow = _flow(FIG7)
    live_in = [frozenset(s) for s in flow.live.live_in]
    redefine = 4
    assert is_soft_def(flow.cfg, live_in, redefine, "%r1")
    assert not is_soft_def(flow.cfg, live_in, 1, "%r1")
    assert "%r1" in soft_definitions(flow, parked=False)[redefine]
    assert "%r1" in regless_pass(flow).region_of(redefine).preloads


def test_if_else_definitions_soft_only_with_parked_rule():
    """Both sides write r1 without reading it: Algorithm 2 finds no soft definition, the
    divergent-region rule makes both soft (and preloaded)."""
    flow = _flow(IF_ELSE)
    live_in = [frozenset(s) for s in flow.live.live_in]
    defs = [pc for pc, ins in enumerate(flow.kernel.instructions) if "%r1" in ins.dests]
    assert not any(is_soft_def(flow.cfg, live_in, pc, "%r1") for pc in defs)
    soft = soft_definitions(flow)
    assert all("%r1" in soft[pc] for pc in defs)
    assert all("%r1" in regless_pass(flow).region_of(pc).preloads for pc in defs)
    assert not any("%r1" in regless_pass(flow, parked_soft_defs=False).region_of(pc).preloads
                   for pc in defs)


def test_descriptor_rotates_banks_by_warp():
    region = regless_pass(_flow(SPLIT), max_live_registers=4).regions[1]
    d0, d3 = region.descriptor(0), region.descriptor(3)
    assert d3["bank_usage"] == d0["bank_usage"][-3:] + d0["bank_usage"][:-3]
    assert d0["entries"] == [(3, "preload"), (3, "invalidate"), (4, "preload"),
                             (4, "invalidate"), (5, "preload"), (5, "invalidate")]
    assert d0["n_entries"] == 6


@pytest.mark.parametrize(("name", "value", "message"), [
    ("max_live_registers", 0, r"max_live_registers must be an integer in 1\.\.128, not 0"),
    ("max_live_registers", 129, r"max_live_registers must be an integer in 1\.\.128, not 129"),
    ("banks", 3, r"banks must be one of 1, 2, 4, 8, 16, 32, not 3"),
    ("lines_per_bank", 0, r"lines_per_bank must be an integer in 1\.\.256, not 0"),
    ("min_region_instructions", 65,
     r"min_region_instructions must be an integer in 1\.\.64, not 65"),
    ("parked_soft_defs", 1, r"parked_soft_defs must be True or False, not 1"),
    ("max_live_registers", "4", r"max_live_registers must be an integer in 1\.\.128, not '4'"),
])
def test_parameters_validated(name, value, message):
    error = TypeError if isinstance(value, str) or name == "parked_soft_defs" else ValueError
    with pytest.raises(error, match=rf"^{message}$"):
        RegionConfig(**{name: value})


def test_invalidation_choice_validated():
    assert RegionConfig().invalidation == "post_dominator"
    with pytest.raises(ValueError, match=r"^invalidation must be one of post_dominator, entry, "
                                         r"not 'later'$"):
        RegionConfig(invalidation="later")
    with pytest.raises(TypeError, match=r"^invalidation must be one of post_dominator, entry, "
                                        r"not 1$"):
        RegionConfig(invalidation=1)


def test_unsplittable_instruction_rejected():
    with pytest.raises(ValueError, match=r"^k: pc 5 alone holds 3 registers .*"
                                         r"max_live_registers=2 "):
        regless_pass(_flow(SPLIT), max_live_registers=2)


@pytest.mark.parametrize("invalidation", INVALIDATION_CHOICES)
@pytest.mark.parametrize("workload", workload_names())
def test_enforced_run_is_correct(workload, invalidation):
    """Every workload with the annotations enforced (each invalidation placement): no
    poisoned read, outputs = numpy."""
    _, program, _ = load_workload(workload)
    rp = regless_pass(program.kernel, invalidation=invalidation)
    run, checked = run_enforced(workload, rp.enforcement())
    assert run.passed and checked > 0
    assert all(r.max_live <= 32 and max(r.bank_usage) <= 16 for r in rp.regions)
    assert sum(r.instructions for r in rp.regions) == len(program.kernel.instructions)


def _replace_region(rp, index, **changes):
    regions = list(rp.regions)
    regions[index] = dataclasses.replace(regions[index], **changes)
    return dataclasses.replace(rp, regions=tuple(regions))


def _saxpy():
    rp = regless_pass(load_workload("saxpy")[1].kernel)
    code = rp.flow.kernel.instructions
    fma = next(pc for pc, ins in enumerate(code) if ins.base == "fma")
    key = rp.flow.keys["%f1"][0]
    return rp, fma, key


def test_missing_preload_fails():
    """saxpy's fma region without the preload of a (%f1): the fma reads poison."""
    rp, fma, key = _saxpy()
    region = rp.region_of(fma)
    assert key in region.preloads
    bad = _replace_region(rp, region.index,
                          preloads=tuple(k for k in region.preloads if k != key))
    with pytest.raises(PoisonReadError, match=rf"^saxpy: regless: block \(0, 0, 0\), warp 0, "
                                              rf"pc {fma} \(fma\.rn\.f32, line \d+\) reads "
                                              rf"%f1 \({key}\) poisoned in lanes 0xffffffff$"):
        run_enforced("saxpy", bad.enforcement())


def test_erase_instead_of_evict_fails():
    """%f1 erased (not evicted) at its last use in its defining region."""
    rp, fma, key = _saxpy()
    region = next(r for r in rp.regions if any(key in f for f in r.last_use.values()))
    pc = next(pc for pc, f in region.last_use.items() if key in f)
    assert region.last_use[pc][key] == "evict"
    last_use = {**region.last_use, pc: {**region.last_use[pc], key: "erase"}}
    with pytest.raises(PoisonReadError, match=rf"pc {fma} .* reads %f1 "):
        run_enforced("saxpy", _replace_region(rp, region.index, last_use=last_use)
                     .enforcement())


def test_early_invalidation_fails():
    """Invalidating %f1 at the entry of the region that preloads it loses it."""
    rp, fma, key = _saxpy()
    region = rp.region_of(fma)
    bad = _replace_region(rp, region.index, invalidations=(key,))
    with pytest.raises(PoisonReadError, match=rf"pc {fma} .* reads %f1 "):
        run_enforced("saxpy", bad.enforcement())


VECADD_IF_ELSE = """.version 9.0
.target sm_80
.address_size 64
.visible .entry vecadd(.param .u64 vecadd_param_0, .param .u64 vecadd_param_1,
                       .param .u64 vecadd_param_2, .param .u32 vecadd_param_3)
{
  .reg .pred %p<3>;
  .reg .f32 %f<5>;
  .reg .b32 %r<7>;
  .reg .b64 %rd<11>;
  ld.param.u64 %rd1, [vecadd_param_0];
  ld.param.u64 %rd2, [vecadd_param_1];
  ld.param.u64 %rd3, [vecadd_param_2];
  ld.param.u32 %r2, [vecadd_param_3];
  mov.u32 %r3, %ctaid.x;
  mov.u32 %r4, %ntid.x;
  mov.u32 %r5, %tid.x;
  mad.lo.s32 %r1, %r3, %r4, %r5;
  setp.ge.s32 %p1, %r1, %r2;
  @%p1 bra $DONE;
  cvta.to.global.u64 %rd4, %rd1;
  mul.wide.s32 %rd5, %r1, 4;
  add.s64 %rd6, %rd4, %rd5;
  cvta.to.global.u64 %rd7, %rd2;
  add.s64 %rd8, %rd7, %rd5;
  ld.global.nc.f32 %f1, [%rd8];
  ld.global.nc.f32 %f2, [%rd6];
  and.b32 %r6, %r1, 1;
  setp.eq.u32 %p2, %r6, 0;
  @%p2 bra $EVEN;
  add.f32 %f3, %f2, %f1;
  bra.uni $JOIN;
$EVEN:
  add.f32 %f3, %f1, %f2;
$JOIN:
  cvta.to.global.u64 %rd9, %rd3;
  add.s64 %rd10, %rd9, %rd5;
  st.global.f32 [%rd10], %f3;
  add.f32 %f4, %f1, %f2;
  st.global.f32 [%rd10], %f4;
$DONE:
  ret;
}
"""
"""vecadd with the sum computed on both sides of a lane-parity branch (no read of %f3
before either write): the shape Algorithm 2 alone gets wrong. The sum is stored twice so
that %f1 and %f2 stay live past the join and the allocator gives %f3 a register of its own
(sharing %f2's, it would be a preloaded input anyway)."""


@pytest.mark.parametrize("parked", [True, False])
def test_if_else_by_execution(monkeypatch, parked):
    """Without the divergent-region rule the side that runs second writes %f3 into a
    fresh line, and the other side's lanes are lost at its eviction: the store reads
    poison. With it, the run is clean."""
    spec, _, variant = load_workload("vecadd")
    program = Program(parse_ptx(VECADD_IF_ELSE).kernels["vecadd"])
    monkeypatch.setattr(run_module, "load_workload", lambda name: (spec, program, variant))
    rp = regless_pass(program.kernel, parked_soft_defs=parked)
    if parked:
        run, _ = run_enforced("vecadd", rp.enforcement())
        assert run.passed
    else:
        with pytest.raises(PoisonReadError, match=r"st\.global\.f32.* reads %f3 .* lanes "
                                                  r"0x(55555555|aaaaaaaa)$"):
            run_enforced("vecadd", rp.enforcement())


VECADD_SIDES = VECADD_IF_ELSE.replace("""  add.f32 %f3, %f1, %f2;
$JOIN:""", """  ld.global.nc.f32 %f5, [%rd8];
  ld.global.nc.f32 %f6, [%rd6];
  add.f32 %f3, %f6, %f5;
$JOIN:""").replace(".reg .f32 %f<5>;", ".reg .f32 %f<7>;").replace("""  add.f32 %f4, %f1, %f2;
  st.global.f32 [%rd10], %f4;
""", "")
"""The even side loads its own operands: %f1 and %f2 are needed only by the odd
(fall-through) lanes, which wait while the even (taken) side runs first."""


def _sides(monkeypatch):
    spec, _, variant = load_workload("vecadd")
    program = Program(parse_ptx(VECADD_SIDES).kernels["vecadd"])
    monkeypatch.setattr(run_module, "load_workload", lambda name: (spec, program, variant))
    return program


def _even_side(rp):
    return next(r for r in rp.regions if r.start > 0
                and rp.flow.kernel.instructions[r.start].opcode == "ld.global.nc.f32")


@pytest.mark.parametrize("invalidation", INVALIDATION_CHOICES)
def test_waiting_lanes_needs_by_execution(monkeypatch, invalidation):
    """Registers dying on one side only (%f1/%f2, needed by the odd lanes alone). With
    :func:`parking` (waiting lanes' needs) the run is clean with both placements. Without
    it they are dead at the even side's entry: the entry placement invalidates them there
    and the odd lanes, waiting, read poison; the post-dominator placement puts the
    invalidation at the join (which post-dominates both sides) and stays clean."""
    program = _sides(monkeypatch)
    run, _ = run_enforced("vecadd", regless_pass(program.kernel, invalidation=invalidation)
                          .enforcement())
    assert run.passed
    monkeypatch.setattr(regions_module, "parking", lambda flow: [])
    rp = regless_pass(program.kernel, invalidation=invalidation)
    f2 = rp.flow.keys["%f2"][0]
    join = rp.region_of(rp.flow.kernel.labels["$JOIN"])
    if invalidation == "entry":
        assert f2 in _even_side(rp).invalidations
        with pytest.raises(PoisonReadError, match=r"add\.f32.* reads %f2 .* lanes 0xaaaaaaaa$"):
            run_enforced("vecadd", rp.enforcement())
    else:
        assert not _even_side(rp).invalidations and f2 in join.invalidations
        assert run_enforced("vecadd", rp.enforcement())[0].passed


def test_listing_and_json():
    """The fma's flags: a (%f1) and y (%f3) die there; %f2 shares its register with the
    result %f4, whose last use (the store) carries the register's flag."""
    rp = regless_pass(load_workload("saxpy")[1].kernel)
    assert "// region 0: preload []" in rp.listing()
    assert '"bank_usage"' in rp.to_json()
    assert rp.summary()["regions"] == len(rp.regions)
    flags = rp.operand_flags(next(pc for pc, ins in enumerate(rp.flow.kernel.instructions)
                                  if ins.base == "fma"))
    assert flags == [("%f4", "dst", None), ("%f2", "src", None), ("%f1", "src", "erase"),
                     ("%f3", "src", "erase")]


def test_diamond_invalidated_once_at_the_join():
    """r1 dies on both sides; the lanes of the side that runs second still need it while
    the first runs, so neither side may invalidate it (nor preload it invalidating): one
    invalidation, at the join's region, with either placement."""
    flow = _flow(DIAMOND)
    join = flow.kernel.labels["$J"]
    for invalidation in INVALIDATION_CHOICES:
        rp = regless_pass(flow, invalidation=invalidation)
        assert _invalidated(rp, "%r1") == [join]
        assert rp.region_of(join).start == join
        assert not any("%r1" in r.invalidating for r in rp.regions)
        assert rp.invalidation_count() == 1


def test_loop_carried_register_not_invalidated_inside_the_loop():
    """r1 and r8 live around the back edge of a three-region loop: their only death
    points are the loop's exit edge, so their invalidation is at the exit region, none
    inside the loop."""
    flow = _flow(LOOP_IF)
    rp = regless_pass(flow)
    head, tail = flow.kernel.labels["$L"], 11
    assert [(r.start, r.end) for r in rp.regions if head <= r.start < tail] == [
        (4, 7), (7, 8), (8, 11)]
    assert rp.region_of(tail).invalidations == ("%r1", "%r8")
    assert all(not r.invalidations for r in rp.regions if r.start < tail)
    assert regless_pass(flow, invalidation="entry").regions == rp.regions


def test_register_dying_on_one_side_only():
    """r1 is read on the fall-through side only: its last use there is an invalidating
    preload; the taken side never reads it, but its lanes wait for the fall-through's
    while it runs, so it is invalidated at the join, not at the taken side's entry. r9
    (read on the taken side only) likewise."""
    flow = _flow(ONE_SIDE)
    rp = regless_pass(flow)
    fall, taken, join = 6, flow.kernel.labels["$E"], flow.kernel.labels["$J"]
    assert rp.region_of(fall).invalidating >= {"%r1"}
    assert rp.region_of(taken).invalidating >= {"%r9"}
    assert _invalidated(rp, "%r1") == _invalidated(rp, "%r9") == [join]


def test_post_dominator_joins_the_death_edges():
    """r1 dies on the loop's exit edge (into the store's region) and on the early exit's
    edge (into the ret's region): the entry placement invalidates it at both, the
    post-dominator placement once, at the ret's region, which post-dominates both."""
    flow = _flow(EARLY_EXIT)
    store, done = 9, flow.kernel.labels["$DONE"]
    assert _invalidated(regless_pass(flow, invalidation="entry"), "%r1") == [store, done]
    rp = regless_pass(flow)
    assert _invalidated(rp, "%r1") == [done]
    assert rp.invalidation_count() == 4 and rp.summary()["invalidations"] == 4


def test_post_dominator_live_there_moves_up():
    """If the register is live at the post-dominator's entry (another value of the same
    physical register), the invalidation moves up the post-dominator tree to a region
    where it is dead for every lane. EARLY_EXIT with r1 made live at the ret's region
    (the post-dominator of its definition and of the death edge into the store's region):
    the next post-dominator is the exit, so none is placed."""
    rp = regless_pass(_flow(EARLY_EXIT))
    facts = regions_module._Facts(rp.flow, rp.config)
    spans = [(r.block, r.start, r.end) for r in rp.regions]
    assert region_graph(rp.flow.cfg, spans)[-1] == (-1,)
    uses = [r | s for r, s in zip(facts.reads, facts.soft, strict=True)]
    kills = [w - s for w, s in zip(facts.writes, facts.soft, strict=True)]

    def place(before):
        return post_dominator_invalidations(rp.flow.cfg, spans, uses, facts.writes, kills,
                                            before, facts.after)

    done = rp.region_of(rp.flow.kernel.labels["$DONE"])
    assert [i for i, s in enumerate(place(facts.before)) if "%r1" in s] == [done.index]
    before = list(facts.before)
    before[done.start] |= {"%r1"}
    assert not any("%r1" in s for s in place(before))


def test_invalidation_inside_loop_fails():
    """divergent: its loop counter register (%r30, live around the back edge) invalidated
    in a region inside the loop that does not read it, where the post-dominator rule
    never places it: the next region that preloads it reads poison."""
    rp = regless_pass(load_workload("divergent")[1].kernel)
    labels, key = rp.flow.kernel.labels, rp.flow.keys["%r30"][0]
    head, exit_ = (rp.region_of(labels[name]) for name in ("$L__BB0_3", "$L__BB0_7"))
    assert key in exit_.invalidations
    inside = [r for r in rp.regions if head.start < r.start < exit_.start]
    assert not any(key in r.invalidations for r in inside)
    region = next(r for r in inside if key not in r.preloads and key in rp.live_before[r.start])
    bad = _replace_region(rp, region.index, invalidations=(*region.invalidations, key))
    with pytest.raises(PoisonReadError, match=r"^divergent: regless: .* reads %r30 "):
        run_enforced("divergent", bad.enforcement())


def test_invalidation_table():
    """Per kernel, both placements' counts; the post-dominator never adds one here and
    joins divergent's (the loop exit's and the early exit's)."""
    rows = {row["workload"]: row for row in invalidation_table(["divergent", "saxpy"])}
    assert set(rows) == {"divergent", "saxpy"}
    div = rows["divergent"]
    assert div["post_dominator invalidations"] < div["entry invalidations"]
    assert div["moved"] == 0 and div["regions"] == 11
    assert rows["saxpy"]["post_dominator invalidations"] == rows["saxpy"]["entry invalidations"]


def test_a_barrier_ends_its_region():
    """A warp waiting at a barrier holds no OSU lines (docs/regless.md, RegLess in the SM):
    every ``bar`` is the last instruction of its region."""
    _, program, _ = run_module.load_workload("backprop_forward")
    code = program.kernel.instructions
    result = regless_pass(program.kernel)
    bars = [pc for pc, ins in enumerate(code) if ins.base == "bar"]
    assert bars
    for region in result.regions:
        inside = [pc for pc in bars if region.start <= pc < region.end]
        assert inside in ([], [region.end - 1]), (region.start, region.end, inside)
