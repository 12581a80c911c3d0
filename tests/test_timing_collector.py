"""The timing model's view of the operand collector: 64-bit sources read as two registers,
an unplaced register an error, out-of-order dispatch, the scorer's cached inputs."""

import dataclasses

import pytest

from gpurf.sim.ptx.parser import parse_ptx
from gpurf.sim.ptx.regalloc import allocate_registers
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.program import Program
from gpurf.sim.sm.timing import _physical, _SubCore, static_info
from gpurf.sim.sm.warp import ExecutionError

HEAD = ".version 9.0\n.target sm_80\n.address_size 64\n"
BODY = """.visible .entry k(.param .u64 p)
{
.reg .b64 %rd<4>;
.reg .f32 %f<3>;
.reg .pred %p<2>;
ld.param.u64 %rd1, [p];
mov.b64 %rd2, 8;
add.s64 %rd3, %rd1, %rd2;
ld.global.f32 %f1, [%rd3];
setp.gt.f32 %p1, %f1, %f1;
@%p1 add.f32 %f2, %f1, %f1;
st.global.f32 [%rd3], %f2;
ret;
}
"""


def _program():
    return Program(parse_ptx(HEAD + BODY, "k.ptx").kernels["k"])


def _line_of(program, opcode):
    return next(pc for pc, ins in enumerate(program.code) if ins.opcode == opcode)


def test_a_64_bit_source_is_two_register_reads():
    program = _program()
    info = static_info(program)
    alloc = allocate_registers(program.kernel)
    rd1, rd2 = alloc.physical["%rd1"], alloc.physical["%rd2"]
    add = _line_of(program, "add.s64")
    assert info.reads[add] == (rd1, rd1 + 1, rd2, rd2 + 1)
    assert info.writes[add] == (alloc.physical["%rd3"], alloc.physical["%rd3"] + 1)
    store = _line_of(program, "st.global.f32")
    rd3, f2 = alloc.physical["%rd3"], alloc.physical["%f2"]
    assert info.reads[store] == (rd3, rd3 + 1, f2)


def test_predicates_are_not_bank_reads_and_a_repeated_source_is_read_once():
    program = _program()
    info = static_info(program)
    f1 = allocate_registers(program.kernel).physical["%f1"]
    assert info.reads[_line_of(program, "setp.gt.f32")] == (f1,)
    assert info.writes[_line_of(program, "setp.gt.f32")] == ()
    assert info.reads[_line_of(program, "add.f32")] == (f1,)


def test_an_unplaced_register_is_an_error():
    program = _program()
    kernel = program.kernel
    alloc = allocate_registers(kernel)
    broken = dataclasses.replace(alloc, physical={k: v for k, v in alloc.physical.items()
                                                  if k != "%rd2"})
    add = program.code[_line_of(program, "add.s64")]
    with pytest.raises(ExecutionError, match=rf"k\.ptx: line {add.line}: register %rd2 "):
        _physical(kernel, broken, add, add.sources)


def _figures(name, **config):
    """The figures of the Python timing loop (the one whose scorer inputs are tested)."""
    timing = run_kernel(name, "test", timing=load_config(**config),
                        mechanism=lambda program: (program, {"core": "python"})
                        ).stats["timing"]
    return (timing.cycles, timing.issued, timing.bank_conflicts, timing.register_reads,
            timing.dispatch_stalls, timing.stalls, timing.l1_hits)


def test_out_of_order_dispatch_keeps_each_instructions_l1_requests():
    """On the GTX 980 preset (4 CUs) matmul's global load can dispatch before the same
    warp's earlier shared access: each takes its own request record (counted at issue)."""
    run = run_kernel("matmul", "test", timing=load_config(preset="gtx980"))
    assert run.passed
    assert run.stats["timing"].instructions == run.stats["warp_instructions"]


@pytest.mark.parametrize(("name", "config"), [
    ("bankconflict", {"scheduler": "rba"}),
    ("sobel", {"scheduler": "rba", "cus": 4}),
    ("fma_subcore/unbalanced", {"scheduler": "rba", "assign": "shuffle"}),
    ("reduction", {"scheduler": "rba", "score_latency": 3}),
])
def test_cached_scorer_inputs_decide_as_recomputed_ones(monkeypatch, name, config):
    """The sub-core keeps each slot's scorer operands as warps move (``slot_ops``); the
    reference rebuilds them every cycle. Every figure of the run is the same."""
    cached = _figures(name, **config)

    def recomputed(sub, queue_len):
        return sub.scorer.advance([sub._operands(w) for w in sub.slots], queue_len)

    monkeypatch.setattr(_SubCore, "_scores", recomputed)
    assert _figures(name, **config) == cached
