# amaranth: UnusedElaboratable=no
"""``wir.rename_reuse``: the rules between its parameters and its added pipeline latency,
measured in the RTL (Amaranth's simulator).

The paper (Section VII-E) adds 4 cycles: rename 1, reuse 1, register allocation 2 (hash,
table). The latency test applies one instruction and counts clock edges until it shows up at
each stage's boundary. The helpers here also drive ``tests/test_wir_register_alloc.py``'s
end-to-end test, which chains this composition into ``wir.register_alloc``.
"""

import pytest
from amaranth import ClockDomain, Module
from amaranth.sim import Simulator

from gpurf.golden.wir.rename_reuse import RenameReuse as GoldenRenameReuse
from gpurf.hw.wir.layouts import LoadKind
from gpurf.hw.wir.rename_reuse import RenameReuse
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.wir import mutants
from gpurf.tb.wir.formal_rename_reuse import RenameReuseFormal

SMALL = {"warps": 4, "regs": 4, "pregs": 16, "entries": 8, "opcode_bits": 4,
         "imm_bits": 6, "blocks": 2, "barrier_bits": 2, "retry_depth": 4}
LIMIT = 20
"""Edges to wait at most for a stage's output."""


def simulate(parts, bench):
    """Run ``bench(ctx)`` on the components ``parts`` (by name) after a reset cycle."""
    top = Module()
    top.domains.sync = sync = ClockDomain()
    for name, part in parts.items():
        top.submodules[name] = part
    sim = Simulator(top)
    sim.add_clock(1e-8)

    async def run(ctx):
        ctx.set(sync.rst, 1)
        await ctx.tick()
        ctx.set(sync.rst, 0)
        await bench(ctx)

    sim.add_testbench(run)
    sim.run()


async def edges_until(ctx, signal) -> int:
    """Clock edges until ``signal`` is high (0 if it is high now)."""
    for edges in range(LIMIT):
        if ctx.get(signal):
            return edges
        await ctx.tick()
    raise AssertionError(f"{signal} not high within {LIMIT} edges")


def issue(rr, warp, regs=0b011, operand=(0, 1, 0)):
    """The ``issue`` payload of an ``add`` of ``warp`` on registers ``r0`` and ``r1``."""
    return rr.config.issue_layout.const({
        "warp": warp, "tb": 0, "opcode": {"op": 1, "regs": regs}, "operand": list(operand),
        "dst": 2, "divergent": 0, "kind": LoadKind.OTHER, "store_shared": 0,
        "store_global": 0, "bypass": 0})


async def prepare(ctx, rr, warps):
    """Wait for the rename tables' clear, then map r0 -> p1, r1 -> p2 in ``warps``."""
    while not ctx.get(rr.ready):
        await ctx.tick()
    for warp in warps:
        for reg, preg in ((0, 1), (1, 2)):
            ctx.set(rr.retire.valid, 1)
            ctx.set(rr.retire.payload, rr.config.rename.retire_layout.const(
                {"warp": warp, "reg": reg, "preg": preg, "divergent": 0}))
            await ctx.tick()
    ctx.set(rr.retire.valid, 0)


async def _latency(ctx, rr, warp) -> tuple[int, int, object]:
    """Issue one instruction of ``warp``; edges until renamed, then until it leaves."""
    ctx.set(rr.issue.valid, 1)
    ctx.set(rr.issue.payload, issue(rr, warp))
    assert ctx.get(rr.issue.ready)
    await ctx.tick()
    ctx.set(rr.issue.valid, 0)
    rename = 1 + await edges_until(ctx, rr.rename.renamed.valid)
    reuse = await edges_until(ctx, rr.out.valid)
    return rename, reuse, ctx.get(rr.out.payload)


@pytest.mark.parametrize("params", [SMALL, {}], ids=["small", "defaults"])
def test_rename_and_reuse_take_one_cycle_each(params):
    rr = RenameReuse(**params)
    seen = []

    async def bench(ctx):
        await prepare(ctx, rr, (0, 1))
        first = await _latency(ctx, rr, 0)
        ctx.set(rr.fill.valid, 1)
        out = first[2]
        ctx.set(rr.fill.payload, rr.config.reuse.fill_layout.const({
            "index": out.response.index, "result": 3,
            "tag": {"opcode": out.lookup.opcode, "tbid": out.lookup.tbid,
                    "barrier": out.lookup.barrier,
                    "operand": [out.lookup.operand[k] for k in range(3)]}}))
        await ctx.tick()
        ctx.set(rr.fill.valid, 0)
        second = await _latency(ctx, rr, 1)
        seen.extend([first, second])

    simulate({"rr": rr}, bench)
    (rename_miss, reuse_miss, miss), (rename_hit, reuse_hit, hit) = seen
    assert miss.response.reserved and not miss.response.hit
    assert hit.response.hit and hit.response.result == 3
    assert (rename_miss, reuse_miss) == (1, 1)
    assert (rename_hit, reuse_hit) == (1, 1)


@pytest.mark.parametrize("build", [RenameReuse, GoldenRenameReuse], ids=["hw", "golden"])
@pytest.mark.parametrize(("params", "message"), [
    ({"imm_bits": 9}, r"^imm_bits must be an integer in 10\.\.32, not 9$"),
    ({"regs": 255, "pregs": 16, "imm_bits": 7},
     r"^imm_bits must be an integer in 8\.\.32, not 7$"),
    ({"pregs": 2}, r"^preg_bits must be an integer in 2\.\.12, not 1$"),
], ids=["imm-below-preg", "imm-below-reg", "pregs-too-few-for-reuse"])
def test_rules_between_parameters(build, params, message):
    """``imm_bits`` holds a physical and a logical register id; the reuse buffer needs
    2-bit register ids."""
    with pytest.raises(ValueError, match=message):
        build(**params)


needs_solver = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))


@needs_solver
def test_formal_balance_bmc_20():
    """BMC, depth 20, on ``formal_rename_reuse.SMALL`` with ABC's ``bmc3`` (assume-guarantee:
    the rename table's clear and the queue bound assumed): per register, the composition's
    reference events equal the references held by the rename table, the reuse buffer and
    the hits it delivered; an issue leaves on ``out`` 2 cycles later; the queue bound.
    smtbmc passed steps 0-14 in 50 minutes; bmc3 takes about 160 s wall, 39 s CPU
    (docs/reliability.md)."""
    result = prove(RenameReuseFormal(), name="wir_rename_reuse_bmc20", depth=20, mode="bmc",
                   engine="abc bmc3")
    assert result.passed, result.log_tail


@needs_solver
def test_formal_covers_reached():
    """Cover mode, depth 14: a reuse hit, a pending hit queued, a full queue, a re-check
    hit, miss and reservation, a fill, a remap release, an exit sweep release, a
    low-register eviction and a load bypassing after a store are all reached."""
    result = prove(RenameReuseFormal(), name="wir_rename_reuse_cover", depth=14, mode="cover")
    assert result.passed and set(result.reached) == set(result.covers), result.log_tail


@needs_solver
def test_formal_kills_mutant():
    """BMC, depth 10, fails on ``mutants.HitNotCounted`` (the hit's in-flight reference
    left off ``inc``)."""
    result = prove(RenameReuseFormal(block=mutants.HitNotCounted),
                   name="wir_rename_reuse_HitNotCounted", depth=10, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
