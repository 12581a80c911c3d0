"""PTX front end: parser errors, CFG, dominators, post-dominators, liveness, allocation —
on small hand-written PTX whose answers are known."""

import re

import pytest

from gpurf.sim.ptx import PtxError, parse_ptx
from gpurf.sim.ptx.cfg import EXIT, build_cfg, dominator_tree
from gpurf.sim.ptx.liveness import liveness
from gpurf.sim.ptx.regalloc import allocate_registers, interference
from gpurf.sim.sm.program import Program

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
    assert alloc.physical["%rd2"] % 2 == 0 and alloc.registers == 6
    assert alloc.name("%rd1") == f"R{alloc.physical['%rd1']}:R{alloc.physical['%rd1'] + 1}"


BODY = ".visible .entry k()\n{\n\t.reg .b32 %r<4>;\n\t.reg .pred %p<2>;\n"


@pytest.mark.parametrize(("body", "message"), [
    ("\tmma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {%r1, %r2}, {%r3}, {%r1}, {%r2};\n",
     r"^bad\.ptx:9: unsupported instruction 'mma\.sync\.aligned\.m16n8k8\.row\.col\.f32\.f16"
     r"\.f16\.f32'$"),
    ("\tshfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31;\n",
     r"^bad\.ptx:9: expected 5 operands, found 4 in 'shfl\.sync\.bfly\.b32'$"),
    ("\tadd.rz.f32 %r1, %r2, %r3;\n",
     r"^bad\.ptx:9: expected a type \(u16, s16, .*\) after 'add', found '\.rz' in "
     r"'add\.rz\.f32'$"),
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
