"""PTX front end: parser errors, CFG, dominators, post-dominators, liveness, allocation —
on small hand-written PTX whose answers are known."""

import re

import numpy as np
import pytest

from gpurf.sim.passes.compression.compile_pass import compression_pass
from gpurf.sim.passes.greener.power_pass import power_pass, sleep_reg_pass
from gpurf.sim.passes.regless.regions import regless_pass
from gpurf.sim.ptx import PtxError, parse_ptx, parser
from gpurf.sim.ptx.cfg import EXIT, build_cfg, dominator_tree
from gpurf.sim.ptx.liveness import liveness
from gpurf.sim.ptx.regalloc import allocate_registers, interference
from gpurf.sim.sm.program import Program
from gpurf.sim.sm.warp import ExecutionError

from .ptx_launch import DATA, launch, program_of

HEADER = ".version 9.0\n.target sm_80\n.address_size 64\n\n"

# Blocks: B0 = 0..3 (entry, divergent branch), B1 = 4..5 (else), B2 = 6 (then),
# B3 = 7 (join), B4 = 8..10 (self loop), B5 = 11 (ret).
DIAMOND_LOOP = HEADER + """\
.visible .entry k(
\t.param .u32 k_param_0
)
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<6>;
\tld.param.u32 %r1, [k_param_0];
\tmov.u32 %r2, %tid.x;
\tsetp.lt.u32 %p1, %r2, %r1;
\t@%p1 bra $THEN;
\tadd.s32 %r3, %r2, 1;
\tbra.uni $JOIN;
$THEN:
\tadd.s32 %r3, %r2, 2;
$JOIN:
\tmov.u32 %r4, 0;
$LOOP:
\tadd.s32 %r4, %r4, %r3;
\tsetp.lt.u32 %p2, %r4, 100;
\t@%p2 bra $LOOP;
\tret;
}
"""


@pytest.fixture(scope="module")
def kernel():
    return parse_ptx(DIAMOND_LOOP, "diamond.ptx").kernels["k"]


def test_blocks_and_edges(kernel):
    cfg = build_cfg(kernel)
    assert [(b.start, b.end) for b in cfg.blocks] == [(0, 4), (4, 6), (6, 7), (7, 8), (8, 11),
                                                      (11, 12)]
    assert [b.succs for b in cfg.blocks] == [[2, 1], [3], [3], [4], [4, 5], [EXIT]]
    assert [b.preds for b in cfg.blocks] == [[], [0], [0], [1, 2], [3, 4], [4]]
    assert cfg.back_edges() == [(4, 4)]


def test_dominators_and_post_dominators(kernel):
    cfg = build_cfg(kernel)
    assert cfg.idom == {0: 0, 1: 0, 2: 0, 3: 0, 4: 3, 5: 4}
    assert cfg.ipdom == {EXIT: EXIT, 5: EXIT, 4: 5, 3: 4, 1: 3, 2: 3, 0: 3}
    assert cfg.dominates(0, 5) and not cfg.dominates(1, 3)
    assert cfg.post_dominates(3, 0) and not cfg.post_dominates(1, 0)
    assert cfg.reconvergence_pc(3) == 7
    assert cfg.reconvergence_pc(10) == 11


def test_dominator_tree_on_an_irreducible_graph():
    # Cooper/Harvey/Kennedy Fig. 4: 5 -> 4, 3; 4 -> 1; 3 -> 2; 1 <-> 2.
    succ = {5: [4, 3], 4: [1], 3: [2], 2: [1], 1: [2]}
    pred = {5: [], 4: [5], 3: [5], 2: [3, 1], 1: [4, 2]}
    assert dominator_tree(5, succ.__getitem__, pred.__getitem__) == {5: 5, 4: 5, 3: 5,
                                                                     2: 5, 1: 5}


def test_liveness(kernel):
    live = liveness(kernel)
    assert live.live_in == [set(), {"%r2"}, {"%r2"}, {"%r3"}, {"%r3", "%r4"}, set()]
    assert live.live_out[4] == {"%r3", "%r4"}
    assert live.live_out[0] == {"%r2"}
    assert live.live_after[2] == {"%p1", "%r2"}
    assert live.live_before[0] == set()
    assert live.max_live() == 3


def test_guarded_definition_does_not_kill():
    text = DIAMOND_LOOP.replace("\tmov.u32 %r4, 0;", "\t@%p1 mov.u32 %r4, 0;")
    live = liveness(parse_ptx(text).kernels["k"])
    assert "%r4" in live.live_before[7] and "%r4" in live.live_in[0]


def test_allocation_packs_the_known_answer(kernel):
    alloc = allocate_registers(kernel)
    assert alloc.registers == 2 and alloc.predicates == 1
    graph = interference(kernel, liveness(kernel))
    assert "%r4" in graph["%r3"] and "%r1" in graph["%r2"]
    for a, others in graph.items():
        for b in others:
            if alloc.units[a] and alloc.units[b]:
                assert alloc.physical[a] != alloc.physical[b], (a, b)


def test_64_bit_values_take_aligned_pairs():
    text = HEADER + """.visible .entry w(.param .u64 w_param_0)
{
\t.reg .b32 %r<3>;
\t.reg .b64 %rd<3>;
\tmov.u32 %r1, %tid.x;
\tld.param.u64 %rd1, [w_param_0];
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd1, %rd1, %rd2;
\tst.global.u32 [%rd1], %r1;
\tret;
}
"""
    alloc = allocate_registers(parse_ptx(text).kernels["w"])
    assert alloc.units["%rd1"] == 2 and alloc.physical["%rd1"] % 2 == 0
    assert alloc.physical["%rd2"] % 2 == 0
    # In definition order %r1 takes R0 and the pairs R2:R3, R4:R5 (6 registers); the
    # 64-bit-first order packs the pairs at R0-R3 and %r1 at R4.
    assert alloc.registers == 5
    assert alloc.name("%rd1") == f"R{alloc.physical['%rd1']}:R{alloc.physical['%rd1'] + 1}"


BODY = ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n"


@pytest.mark.parametrize(("body", "message"), [
    ("\tmma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r1, %r2}, {%r3}, {%r1}, {%r2};\n",
     r"^bad\.ptx:9: unsupported instruction 'mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.f16"
     r"\.f16\.f32' \(tensor instructions are outside gpurf's PTX subset\)$"),
    ("\tadd.rn.f16 %r1, %r2, %r3;\n", r"^bad\.ptx:9: unsupported instruction 'add\.rn\.f16' "
     r"\(f16/bf16 arithmetic is outside gpurf's PTX subset\)$"),
    ("\ttex.2d.v4.f32.s32 {%r1, %r2, %r3, %r0}, [t, {%r1, %r2}];\n",
     r"^bad\.ptx:9: unsupported instruction 'tex\.2d\.v4\.f32\.s32' \(texture instructions "
     r"are outside gpurf's PTX subset\)$"),
    ("\tshfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31;\n",
     r"^bad\.ptx:9: expected 5 operands, found 4 in 'shfl\.sync\.bfly\.b32'$"),
    ("\tadd.rna.f32 %r1, %r2, %r3;\n",
     r"^bad\.ptx:9: expected a type \(u16, s16, .*\) after 'add', found '\.rna' in "
     r"'add\.rna\.f32'$"),
    ("\tadd.s32 %r1, %r2;\n", r"^bad\.ptx:9: expected 3 operands, found 2 in 'add\.s32'$"),
    ("\tadd.s32 %r1, %r2, %r3\n\tret;\n",
     r"^bad\.ptx:9: expected ',' or ';' after the operands of 'add\.s32', found 'ret'$"),
    ("\t.surfref s;\n", r"^bad\.ptx:9: unsupported directive '\.surfref' in a function body$"),
    ("\tadd.s32 %r1, %r9, 1;\n", r"^bad\.ptx:9: undeclared register '%r9' in 'add\.s32'$"),
    ("\tbra $NOWHERE;\n", r"^bad\.ptx:9: unknown label '\$NOWHERE' in 'bra'$"),
    ("\tld.global.v8.f32 %r1, [%r3];\n",
     r"^bad\.ptx:9: expected a type \(.*\) after 'ld', found '\.v8' in 'ld\.global\.v8\.f32'$"),
    ("\tbar.sync.aligned 0;\n", r"^bad\.ptx:9: unsupported modifier '\.aligned' in "
     r"'bar\.sync\.aligned'$"),
    ("\tmov.u32 %r1, {%r2, [%r3]};\n",
     r"^bad\.ptx:9: a vector operand holds registers or immediates in 'mov\.u32'$"),
    ("\tsetp.lt.and.s32 %p1, %r1, %r2, %p0, %p1;\n",
     r"^bad\.ptx:9: expected 3 or 4 operands, found 5 in 'setp\.lt\.and\.s32'$"),
    ("\t.reg .b32 %big<200000000>;\n", r"^bad\.ptx:9: \.reg range %big<200000000>: a kernel "
     r"declares between 1 and 65,536 registers of a name$"),
    ("\t.reg .b32 %none<0>;\n", r"^bad\.ptx:9: \.reg range %none<0>: "),
    ("\t.shared .b32 huge[1000000];\n", r"^bad\.ptx:9: \.shared array huge\[1000000\]: "
     r"between 1 and 233,472 bytes are allowed$"),
])
def test_malformed_ptx_names_file_line_and_instruction(body, message):
    text = HEADER + BODY + body + "\tret;\n}\n"
    with pytest.raises(PtxError, match=message):
        parse_ptx(text, "bad.ptx")


@pytest.mark.parametrize(("text", "message"), [
    (".version 9.0\n.target sm_80\n.address_size 32\n",
     r"^bad\.ptx:3: expected \.address_size 64, found 32$"),
    (HEADER + ".surfref s;\n",
     r"^bad\.ptx:5: unsupported module-level directive '\.surfref' \(expected '\.entry', "
     r"'\.func', '\.global', '\.const', '\.shared', '\.file' or '\.section'\)$"),
    (HEADER + BODY, r"^bad\.ptx:9: expected '}' to close kernel 'k', found end of file$"),
    (".target sm_80\n", r"^bad\.ptx:1: expected '\.version', found '\.target'$"),
])
def test_malformed_module_structure(text, message):
    with pytest.raises(PtxError, match=message):
        parse_ptx(text, "bad.ptx")


@pytest.mark.parametrize(("body", "message"), [
    ("\t.reg .b16 %rs<2>;\n\t.reg .f32 %f<2>;\n\tcvt.f16.f32 %rs1, %f1;\n",
     r"^bad\.ptx:11: unsupported: cvt from \.f32 to \.f16 needs \.rn, not no rounding in "
     r"'cvt\.f16\.f32'$"),
    ("\tadd.f32 %r1, %r2, %p1;\n",
     r"^bad\.ptx:9: unsupported: register %p1 of 1 bits used as \.f32 in 'add\.f32'$"),
    ("\tmul.s32 %r1, %r2, %r3;\n",
     r"^bad\.ptx:9: unsupported: integer mul without \.lo, \.hi or \.wide in 'mul\.s32'$"),
    ("\tld.global.v4.f32 {%r1, %r2}, [%r3];\n",
     r"^bad\.ptx:9: unsupported: 2 data operands for 4 vector elements in 'ld\.global\.v4\.f32'$"),
    ("\tsetp.lt.and.s32 %p1, %r1, %r2;\n",
     r"^bad\.ptx:9: unsupported: a fourth \(predicate\) operand goes with \.and, \.or or \.xor "
     r"in 'setp\.lt\.and\.s32'$"),
    ("\t.reg .b64 %rd<2>;\n\t.reg .f32 %f<2>;\n\tadd.f32 %f1, %rd1, %f1;\n",
     r"^bad\.ptx:11: unsupported: register %rd1 of 64 bits used as a \.f32 source \(ptxas "
     r"rejects it: only ld, st and cvt take a register of another width\) in 'add\.f32'$"),
    ("\tatom.global.inc.s32 %r1, [%r2], 1;\n",
     r"^bad\.ptx:9: unsupported: atomic \.inc on \.s32 \(PTX has it on \.u32\) in "
     r"'atom\.global\.inc\.s32'$"),
])
def test_instructions_the_model_cannot_run_are_errors_at_compile(body, message):
    kernel = parse_ptx(HEADER + BODY + body + "\tret;\n}\n", "bad.ptx").kernels["k"]
    with pytest.raises(PtxError, match=message):
        Program(kernel)


def test_error_carries_file_and_line_attributes():
    with pytest.raises(PtxError) as caught:
        parse_ptx(HEADER + BODY + "\tfoo.bar %r1;\n\tret;\n}\n", "x.ptx")
    assert (caught.value.file, caught.value.line) == ("x.ptx", 9)
    assert re.fullmatch(r"unsupported instruction 'foo\.bar'", caught.value.reason)


def test_binary_and_oversized_ptx_files_are_named(tmp_path, monkeypatch):
    from gpurf.sim.ptx import parser

    binary = tmp_path / "bin.ptx"
    binary.write_bytes(b".version 8.0\n\xff\xfe")
    with pytest.raises(PtxError, match=rf"^{binary}:1: not PTX text \(byte 13 is not UTF-8\)$"):
        parser.load_ptx(binary)
    monkeypatch.setattr(parser, "MAX_PTX_BYTES", 8)
    with pytest.raises(PtxError, match=rf"^{binary}:1: 15 bytes of PTX; at most 8$"):
        parser.load_ptx(binary)


# -- constructs of issue 15: what passes see -----------------------------------------------
PAIR_AND_CARRY = HEADER + """\
.visible .entry k(.param .u64 k_param_0)
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<6>;
\t.reg .b64 %rd<5>;
\tld.param.u64 %rd1, [k_param_0];
\tmov.u32 %r1, %tid.x;
\tsetp.lt.u32 %p1|%p2, %r1, 16;
\tadd.cc.u32 %r2, %r1, -1;
\taddc.u32 %r3, %r1, 0;
\tselp.u32 %r4, %r2, %r3, %p1;
\t@%p2 add.u32 %r4, %r4, 1;
\tcvta.to.global.u64 %rd2, %rd1;
\tmul.wide.u32 %rd3, %r1, 4;
\tadd.s64 %rd4, %rd2, %rd3;
\tst.global.u32 [%rd4], %r4;
\tret;
}
"""


def test_pair_destinations_and_the_carry_flag_are_registers_to_every_pass():
    kernel = parse_ptx(PAIR_AND_CARRY, "pair.ptx").kernels["k"]
    setp, add_cc, addc = kernel.instructions[2:5]
    assert setp.dests == ("%p1", "%p2") and add_cc.dests == ("%r2", "%cc")
    assert "%cc" in addc.sources and kernel.regs["%cc"].type == "pred"
    live = liveness(kernel)
    assert "%cc" in live.live_after[3] and "%cc" not in live.live_after[4]
    assert {"%p1", "%p2"} <= live.live_after[4]
    alloc = allocate_registers(kernel)
    assert alloc.physical["%p1"] != alloc.physical["%p2"]
    out = launch(program_of(PAIR_AND_CARRY, "pair.ptx"), [np.zeros(32, np.uint32)], 32)[0]
    tid = np.arange(32, dtype=np.uint64)
    carried = tid + (tid >= 1)
    assert np.array_equal(out, np.where(tid < 16, (tid - 1) & 0xFFFFFFFF, carried + 1))


GENERIC = HEADER + """\
.visible .entry g(.param .u64 g_param_0)
{
\t.local .align 4 .b8 frame[8];
\t.shared .align 4 .b32 sh[32];
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<12>;
\tld.param.u64 %rd1, [g_param_0];
\tmov.u32 %r1, %tid.x;
\tmov.u64 %rd2, sh;
\tcvta.shared.u64 %rd3, %rd2;
\tmov.u64 %rd4, frame;
\tcvta.local.u64 %rd5, %rd4;
\tmul.wide.u32 %rd6, %r1, 4;
\tadd.s64 %rd7, %rd3, %rd6;
\tst.u32 [%rd7], %r1;
\tst.u32 [%rd5+4], %r1;
\tbar.sync 0;
\txor.b32 %r2, %r1, 1;
\tmul.wide.u32 %rd8, %r2, 4;
\tadd.s64 %rd9, %rd3, %rd8;
\tld.u32 %r3, [%rd9];
\tld.u32 %r4, [%rd5+4];
\tatom.add.u32 %r5, [%rd9], 100;
\tadd.s64 %rd10, %rd1, %rd6;
\tmad.lo.u32 %r6, %r3, 1000, %r4;
\tst.u32 [%rd10], %r6;
\tadd.u32 %r7, %r5, %r4;
\tst.u32 [%rd10+128], %r7;
\tcvta.to.shared.u64 %rd11, %rd7;
\tld.volatile.shared.u32 %r7, [%rd11];
\tst.u32 [%rd10+256], %r7;
\tret;
}
"""


def test_generic_addresses_reach_global_shared_and_local_memory():
    out = launch(program_of(GENERIC, "generic.ptx"), [np.zeros(96, np.uint32)], 32)[0]
    tid = np.arange(32)
    assert np.array_equal(out[:32], (tid ^ 1) * 1000 + tid)
    assert np.array_equal(out[32:64], (tid ^ 1) + tid)
    assert np.array_equal(out[64:], tid + 100)


def test_a_lane_outside_its_member_mask_is_a_fault():
    text = HEADER + (".visible .entry s(.param .u64 s_param_0)\n{\n\t.reg .pred %p<2>;\n"
                     "\t.reg .b32 %r<3>;\n\tmov.u32 %r1, %laneid;\n"
                     "\tshfl.sync.idx.b32 %r2|%p1, %r1, 0, 31, 65535;\n\tret;\n}\n")
    with pytest.raises(ExecutionError, match=r"^s\.ptx:10: shfl\.sync\.idx\.b32: lane 16 "
                                             r"executes it outside its member mask \(block "):
        launch(program_of(text, "s.ptx"), [np.zeros(1, np.uint32)], 32, warp_by_warp=True)


def test_votes_in_divergent_code_see_only_their_lanes():
    text = HEADER + """\
.visible .entry v(.param .u64 v_param_0)
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<6>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [v_param_0];
\tmov.u32 %r1, %laneid;
\tsetp.ge.u32 %p1, %r1, 8;
\t@%p1 bra $SKIP;
\tand.b32 %r2, %r1, 1;
\tsetp.eq.u32 %p2, %r2, 1;
\tvote.sync.ballot.b32 %r3, %p2, 255;
\tactivemask.b32 %r4;
\tvote.sync.any.pred %p2, %p2, 255;
\tselp.u32 %r5, 1, 0, %p2;
\tmul.wide.u32 %rd2, %r1, 16;
\tadd.s64 %rd3, %rd1, %rd2;
\tst.global.v2.u32 [%rd3], {%r3, %r4};
\tst.global.u32 [%rd3+8], %r5;
$SKIP:
\tret;
}
"""
    out = launch(program_of(text, "v.ptx"), [np.zeros(128, np.uint32)], 32)[0].reshape(32, 4)
    assert (out[:8] == [0xAA, 0xFF, 1, 0]).all() and not out[8:].any()


STATICS = HEADER + """\
.global .align 4 .b8 tab[8] = {1, 0, 0, 0, 2, 0, 0, 0};
.const .align 4 .f32 one = 0f3F800000;
.global .align 4 .u32 counter;
.visible .entry s(.param .u64 s_param_0)
{
\t.reg .b32 %r<5>;
\t.reg .f32 %f<2>;
\t.reg .b64 %rd<3>;
\tld.param.u64 %rd1, [s_param_0];
\tld.global.u32 %r1, [tab+4];
\tld.const.f32 %f1, [one];
\tmov.u64 %rd2, counter;
\tatom.global.add.u32 %r2, [%rd2], 1;
\tmov.b32 %r3, %f1;
\tadd.u32 %r4, %r1, %r3;
\tst.global.v2.u32 [%rd1], {%r4, %r2};
\tret;
}
"""


def test_module_variables_are_initialized_and_keep_their_values():
    prog = program_of(STATICS, "statics.ptx")
    first = launch(prog, [np.zeros(2, np.uint32)], 1)[0]
    second = launch(prog, [np.zeros(2, np.uint32)], 1)[0]
    assert first.tolist() == [2 + 0x3F800000, 0] and second.tolist() == [2 + 0x3F800000, 1]


def test_calls_are_inlined_so_passes_see_one_body():
    kernel = next(iter(parse_ptx((DATA / "spaces.ptx").read_text(), "spaces.ptx")
                       .kernels.values()))
    assert not any(ins.base == "call" for ins in kernel.instructions)
    assert [ins.base for ins in kernel.instructions].count("ret") == 1
    assert {name.split("$c")[1] for name in kernel.regs if "$c" in name} == {"0", "1"}
    assert any(v.name.startswith("retval0$") for v in kernel.local)
    alloc = allocate_registers(kernel)
    assert 0 < alloc.registers < 64
    assert build_cfg(kernel).reconvergence_pc(0) is not None


CALLS = HEADER + """\
.func (.param .b32 func_retval0) f(.param .b32 f_param_0)
{
\t.reg .b32 %r<3>;
\tld.param.b32 %r1, [f_param_0];
\tadd.s32 %r2, %r1, 1;
\tst.param.b32 [func_retval0+0], %r2;
\tret;
}
.visible .entry k()
{
\t.reg .b32 %r<3>;
\tmov.u32 %r1, 1;
\t{
\t.param .b32 param0;
\tst.param.b32 [param0+0], %r1;
\t.param .b32 retval0;
\tCALL
\tld.param.b32 %r2, [retval0+0];
\t}
\tret;
}
"""


@pytest.mark.parametrize(("call", "message"), [
    ("call.uni (retval0), g, (param0);", r"^c\.ptx:21: call of 'g', which the module does not "
                                         r"define$"),
    ("call.uni (retval0), f, (param0, param0);",
     r"^c\.ptx:21: 'f' takes 1 parameters and returns 1 values; the call passes 2 and receives "
     r"1$"),
    ("call.uni (retval0), %r1, (param0), proto;",
     r"^c\.ptx:21: unsupported: an indirect call \('call\.uni' through %r1\)$"),
    ("@%r1 call.uni (retval0), f, (param0);", r"^c\.ptx:21: unsupported: a guarded "),
])
def test_bad_calls_are_named(call, message):
    with pytest.raises(PtxError, match=message):
        parse_ptx(CALLS.replace("CALL", call), "c.ptx")


def test_recursion_is_rejected():
    recursive = CALLS.replace("\tret;\n}\n.visible", "\t{\n\t.param .b32 param0;\n\t.param .b32 "
                              "retval0;\n\tcall.uni (retval0), f, (param0);\n\t}\n\tret;\n}\n"
                              ".visible", 1).replace("CALL", "call.uni (retval0), f, (param0);")
    with pytest.raises(PtxError, match=r"^r\.ptx:\d+: unsupported: recursive call of 'f' "):
        parse_ptx(recursive, "r.ptx")


def test_lineinfo_keeps_each_instruction_on_its_own_line():
    for path in sorted(DATA.glob("*.ptx")):
        text = path.read_text()
        assert ".loc" in text and ".file" in text
        lines = text.splitlines()
        kernel = next(iter(parse_ptx(text, path.name).kernels.values()))
        for ins in kernel.instructions:
            if "$c" not in str(ins) and ins.base != "bra":
                assert ins.base in lines[ins.line - 1], (path.name, ins.line, ins.opcode)


@pytest.mark.parametrize("name", ["atomics", "bits", "math", "spaces", "warp"])
def test_the_passes_take_the_new_constructs(name):
    kernel = next(iter(parse_ptx((DATA / f"{name}.ptx").read_text(), name).kernels.values()))
    regless = regless_pass(kernel)
    assert sum(r.instructions for r in regless.regions) == len(kernel.instructions)
    power_pass(kernel)
    sleep_reg_pass(kernel)
    compression_pass(kernel)


REDUCTIONS = HEADER + """\
.visible .entry r(.param .u64 r_param_0, .param .u64 r_param_1)
{
\t.shared .align 8 .b64 top[1];
\t.reg .pred %p<2>;
\t.reg .b32 %r<6>;
\t.reg .f32 %f<2>;
\t.reg .b64 %rd<9>;
\t.reg .f64 %fd<3>;
\tld.param.u64 %rd1, [r_param_0];
\tld.param.u64 %rd2, [r_param_1];
\tmov.u32 %r1, %tid.x;
\tsetp.eq.u32 %p1, %r1, 0;
\t@%p1 st.shared.u64 [top], 0;
\tbar.sync 0;
\tcvt.u64.u32 %rd3, %r1;
\tmul.lo.u64 %rd4, %rd3, 3000000000;
\tred.shared.max.u64 [top], %rd4;
\tred.global.add.u32 [%rd1], %r1;
\tcvt.rn.f32.u32 %f1, %r1;
\tred.global.add.f32 [%rd1+4], %f1;
\tand.b32 %r2, %r1, 3;
\tmul.wide.u32 %rd5, %r2, 8;
\tadd.s64 %rd6, %rd2, %rd5;
\tcvt.rn.f64.u32 %fd1, %r1;
\tatom.global.add.f64 %fd2, [%rd6], %fd1;
\tatom.global.min.s64 %rd7, [%rd1+8], %rd4;
\tatom.global.cas.b32 %r3, [%rd1+16], %r1, 100;
\tbar.sync 0;
\t@%p1 ld.shared.u64 %rd8, [top];
\t@%p1 st.global.u64 [%rd1+24], %rd8;
\tret;
}
"""


@pytest.mark.parametrize("warp_by_warp", [False, True])
def test_reductions_and_contended_atomics(warp_by_warp):
    counters = np.zeros(8, np.uint32)
    counters[2:4] = np.array([-1], np.int64).view(np.uint32) >> 1
    counters[4] = 0
    kernel = parse_ptx(REDUCTIONS, "red.ptx").kernels["r"]
    assert [ins.dests for ins in kernel.instructions if ins.base == "red"] == [()] * 3
    out, sums = launch(program_of(REDUCTIONS, "red.ptx"), [counters, np.zeros(4)], 64,
                       warp_by_warp=warp_by_warp)
    tid = np.arange(64)
    assert out[0] == tid.sum() and out[1].view(np.float32) == np.float32(tid.sum())
    assert out[2:4].view(np.int64)[0] == 0
    assert out[4] == 100
    assert out[6:8].view(np.uint64)[0] == np.uint64(63 * 3000000000)
    assert sums.tolist() == [tid[tid % 4 == k].sum() for k in range(4)]


@pytest.mark.parametrize(("access", "message"), [
    ("ld.local.u32 %r2, [frame+8];",
     r"ld\.local\.u32: local access at 0x8, outside the 8-byte frame of each thread"),
    ("ld.global.v2.u32 {%r2, %r3}, [%rd1+4];",
     r"ld\.global\.v2\.u32: misaligned vector access of 8 bytes at 0x100000004"),
    ("ld.u32 %r2, [%rd2+8];",
     r"ld\.u32: local access at 0x8, outside the 8-byte frame of each thread"),
])
def test_accesses_outside_their_memory_fault(access, message):
    text = HEADER + (".visible .entry f(.param .u64 f_param_0)\n{\n\t.local .align 4 .b8 frame[8];"
                     "\n\t.reg .b32 %r<4>;\n\t.reg .b64 %rd<3>;\n\tld.param.u64 %rd1, [f_param_0];"
                     "\n\tmov.u64 %rd2, frame;\n\tcvta.local.u64 %rd2, %rd2;\n\t" + access
                     + "\n\tret;\n}\n")
    with pytest.raises(ExecutionError, match=r"^f\.ptx:13: " + message + r" \(block "):
        launch(program_of(text, "f.ptx"), [np.zeros(4, np.uint32)], 32)


def test_lop3_computes_any_table(seed):
    rng = np.random.default_rng(seed)
    luts = [*rng.integers(0, 256, 6).tolist(), 0x00, 0xFF]
    lines = [f"\tlop3.b32 %r{5 + i}, %r2, %r3, %r4, {lut};" for i, lut in enumerate(luts)]
    stores = [f"\tst.global.u32 [%rd3+{4 * (64 + 32 * i)}], %r{5 + i};" for i in range(len(luts))]
    text = HEADER + (".visible .entry l(.param .u64 l_param_0)\n{\n\t.reg .b32 %r<16>;\n"
                     "\t.reg .b64 %rd<4>;\n\tld.param.u64 %rd1, [l_param_0];\n"
                     "\tmov.u32 %r1, %tid.x;\n\tmul.wide.u32 %rd2, %r1, 4;\n"
                     "\tadd.s64 %rd3, %rd1, %rd2;\n\tld.global.u32 %r2, [%rd3];\n"
                     "\tld.global.u32 %r3, [%rd3+128];\n\tmov.u32 %r4, %r1;\n"
                     + "\n".join(lines + stores) + "\n\tret;\n}\n")
    words = rng.integers(0, 1 << 32, 64, dtype=np.uint64).astype(np.uint32)
    buffer = np.concatenate([words, np.zeros(32 * len(luts), np.uint32)])
    out = launch(program_of(text, "l.ptx"), [buffer], 32)[0]
    for i, lut in enumerate(luts):
        got = out[64 + 32 * i:96 + 32 * i]
        for lane in range(32):
            a, b, c = int(words[lane]), int(words[32 + lane]), lane
            want = sum(((lut >> ((a >> k & 1) << 2 | (b >> k & 1) << 1 | (c >> k & 1))) & 1) << k
                       for k in range(32))
            assert int(got[lane]) == want, (lut, lane)


def test_ld_st_cvt_take_registers_of_another_width_others_do_not():
    text = HEADER + """\
.visible .entry w(.param .u64 w_param_0)
{
\t.reg .b16 %rs<2>;
\t.reg .b32 %r<3>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [w_param_0];
\tld.global.u64 %rd2, [%rd1];
\tst.global.u32 [%rd1+8], %rd2;
\tld.global.s8 %r1, [%rd1+1];
\tst.global.u32 [%rd1+12], %r1;
\tld.global.u8 %rs1, [%rd1+1];
\tcvt.u32.u16 %r2, %rs1;
\tst.global.u32 [%rd1+16], %r2;
\tret;
}
"""
    memory = np.zeros(5, np.uint32)
    memory[0:2] = [0x1234_80FF, 0xDEAD_BEEF]
    out = launch(program_of(text, "w.ptx"), [memory], 1)[0]
    assert out[2:].tolist() == [0x1234_80FF, 0xFFFF_FF80, 0x80]
    for bad in ("mov.b32 %r1, %rd1;", "add.u32 %r1, %rd1, 1;", "shl.b32 %r1, %rd1, 2;"):
        broken = text.replace("\tret;", f"\t{bad}\n\tret;")
        with pytest.raises(PtxError, match=r"^w\.ptx:18: unsupported: register %rd1 of 64 bits "
                                           r"used as a \.[bu]32 source \(ptxas rejects it"):
            program_of(broken, "w.ptx")


def test_calls_that_nest_and_repeat_are_bounded(monkeypatch):
    funcs = [".func f0()\n{\n\tret;\n}\n"]
    for i in range(1, 12):
        funcs.append(f".func f{i}()\n{{\n\tcall.uni f{i - 1};\n\tcall.uni f{i - 1};\n\tret;\n}}\n")
    text = HEADER + "".join(funcs) + ".visible .entry k()\n{\n\tcall.uni f11;\n\tret;\n}\n"
    kernel = parse_ptx(text, "n.ptx").kernels["k"]
    assert sum(ins.base == "bra" for ins in kernel.instructions) == 2 ** 12 - 1
    monkeypatch.setattr(parser, "MAX_INLINED", 1000)
    with pytest.raises(PtxError, match=r"^n\.ptx:\d+: inlining the calls of 'f\d+' takes more "
                                       r"than 1,000 instructions$"):
        parse_ptx(text, "n.ptx")


def test_negated_predicate_sources():
    text = HEADER + """\
.visible .entry n(.param .u64 n_param_0)
{
\t.reg .pred %p<5>;
\t.reg .b32 %r<5>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [n_param_0];
\tmov.u32 %r1, %laneid;
\tsetp.lt.u32 %p1, %r1, 8;
\tsetp.ge.and.u32 %p2, %r1, 4, !%p1;
\tvote.sync.any.pred %p3, !%p1, -1;
\tvote.sync.ballot.b32 %r2, !%p2, -1;
\tselp.u32 %r3, 1, 0, %p2;
\tselp.u32 %r4, 2, 0, %p3;
\tadd.u32 %r3, %r3, %r4;
\tmul.wide.u32 %rd2, %r1, 8;
\tadd.s64 %rd3, %rd1, %rd2;
\tst.global.v2.u32 [%rd3], {%r3, %r2};
\tret;
}
"""
    kernel = parse_ptx(text, "n.ptx").kernels["n"]
    assert kernel.instructions[3].sources == ("%r1", "%p1")
    out = launch(program_of(text, "n.ptx"), [np.zeros(64, np.uint32)], 32)[0].reshape(32, 2)
    lane = np.arange(32)
    assert np.array_equal(out[:, 0], (lane >= 8) + 2)
    assert np.array_equal(out[:, 1], np.full(32, 0xFF))


def test_testp_mul24_mad24_sad_copysign():
    text = HEADER + """\
.visible .entry t(.param .u64 t_param_0)
{
\t.reg .pred %p<3>;
\t.reg .b32 %r<9>;
\t.reg .f32 %f<4>;
\t.reg .b64 %rd<4>;
\tld.param.u64 %rd1, [t_param_0];
\tmov.u32 %r1, %laneid;
\tmul.wide.u32 %rd2, %r1, 4;
\tadd.s64 %rd3, %rd1, %rd2;
\tld.global.f32 %f1, [%rd3];
\ttestp.finite.f32 %p1, %f1;
\ttestp.subnormal.f32 %p2, %f1;
\tselp.u32 %r2, 1, 0, %p1;
\tselp.u32 %r3, 2, 0, %p2;
\tadd.u32 %r2, %r2, %r3;
\tst.global.u32 [%rd3+128], %r2;
\tadd.s32 %r4, %r1, -16;
\tmul24.lo.s32 %r5, %r4, 16777215;
\tst.global.u32 [%rd3+256], %r5;
\tmad24.hi.u32 %r6, %r1, 16777215, 7;
\tst.global.u32 [%rd3+384], %r6;
\tsad.s32 %r7, %r4, 3, 100;
\tst.global.u32 [%rd3+512], %r7;
\tcopysign.f32 %f2, %f1, 0f40000000;
\tst.global.f32 [%rd3+640], %f2;
\tret;
}
"""
    values = np.array([1.0, -1.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 0.0] * 4, np.float32)
    buffer = np.zeros(192, np.uint32)
    buffer[:32] = values.view(np.uint32)
    out = launch(program_of(text, "t.ptx"), [buffer], 32)[0]
    lane = np.arange(32, dtype=np.int64)
    assert out[32:64].tolist() == (np.isfinite(values) + 2 * ((values != 0) & (np.abs(values)
                                   < np.finfo(np.float32).tiny))).tolist()
    # -1 in 24 bits times 16777215 (= -1 as s24): the product of the sign-extended fields
    assert out[64:96].view(np.int32).tolist() == ((lane - 16) * -1 & 0xFFFFFFFF).astype(
        np.uint32).view(np.int32).tolist()
    assert out[96:128].tolist() == ((lane * 16777215 >> 16) + 7).tolist()
    assert out[128:160].view(np.int32).tolist() == (np.abs(lane - 19) + 100).tolist()
    assert np.array_equal(out[160:].view(np.float32), np.copysign(np.float32(2), values))
