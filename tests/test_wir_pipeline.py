# amaranth: UnusedElaboratable=no
"""WIR's added pipeline latency, measured in the RTL (Amaranth's simulator), and the
compositions' parameter checks.

The paper (Section VII-E) adds 4 cycles: rename 1, reuse 1, register allocation 2 (hash,
table). Each test applies one instruction and counts clock edges until it shows up at the
next stage's boundary; the chained test feeds ``wir.rename_reuse``'s output straight into
``wir.register_alloc`` (execution taking no time) and counts 4 edges end to end.
"""

import pytest
from amaranth import ClockDomain, Module
from amaranth.sim import Simulator

from gpurf.hw.wir.layouts import AllocKind, LoadKind
from gpurf.hw.wir.register_alloc import RegisterAlloc
from gpurf.hw.wir.rename_reuse import RenameReuse

SMALL_RR = {"warps": 4, "regs": 4, "pregs": 16, "entries": 8, "opcode_bits": 4,
            "imm_bits": 6, "blocks": 2, "barrier_bits": 2, "retry_depth": 4}
SMALL_RA = {"lanes": 4, "data_width": 8, "hash_width": 8, "entries": 8, "pregs": 16,
            "ticket_bits": 4}
LIMIT = 20
"""Edges to wait at most for a stage's output."""


def _simulate(top_parts, bench):
    top = Module()
    top.domains.sync = sync = ClockDomain()
    for name, part in top_parts.items():
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


async def _edges_until(ctx, signal) -> int:
    """Clock edges until ``signal`` is high (0 if it is high now)."""
    for edges in range(LIMIT):
        if ctx.get(signal):
            return edges
        await ctx.tick()
    raise AssertionError(f"{signal} not high within {LIMIT} edges")


def _issue(rr, warp, regs=0b011, operand=(0, 1, 0)):
    return rr.config.issue_layout.const({
        "warp": warp, "tb": 0, "opcode": {"op": 1, "regs": regs}, "operand": list(operand),
        "dst": 2, "divergent": 0, "kind": LoadKind.OTHER, "store_shared": 0,
        "store_global": 0, "bypass": 0})


async def _prepare(ctx, rr, warps):
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


async def _rename_reuse_latency(ctx, rr, warp) -> tuple[int, int, object]:
    """Issue one instruction of ``warp``; edges until renamed, then until it leaves."""
    ctx.set(rr.issue.valid, 1)
    ctx.set(rr.issue.payload, _issue(rr, warp))
    assert ctx.get(rr.issue.ready)
    await ctx.tick()
    ctx.set(rr.issue.valid, 0)
    rename = 1 + await _edges_until(ctx, rr.rename.renamed.valid)
    reuse = await _edges_until(ctx, rr.out.valid)
    return rename, reuse, ctx.get(rr.out.payload)


@pytest.mark.parametrize("params", [SMALL_RR, {}], ids=["small", "defaults"])
def test_rename_and_reuse_take_one_cycle_each(params):
    rr = RenameReuse(**params)
    seen = []

    async def bench(ctx):
        await _prepare(ctx, rr, (0, 1))
        first = await _rename_reuse_latency(ctx, rr, 0)
        ctx.set(rr.fill.valid, 1)
        out = first[2]
        ctx.set(rr.fill.payload, rr.config.reuse.fill_layout.const({
            "index": out.response.index, "result": 3,
            "tag": {"opcode": out.lookup.opcode, "tbid": out.lookup.tbid,
                    "barrier": out.lookup.barrier,
                    "operand": [out.lookup.operand[k] for k in range(3)]}}))
        await ctx.tick()
        ctx.set(rr.fill.valid, 0)
        second = await _rename_reuse_latency(ctx, rr, 1)
        seen.extend([first, second])

    _simulate({"rr": rr}, bench)
    (rename_miss, reuse_miss, miss), (rename_hit, reuse_hit, hit) = seen
    assert miss.response.reserved and not miss.response.hit
    assert hit.response.hit and hit.response.result == 3
    assert (rename_miss, reuse_miss) == (1, 1)
    assert (rename_hit, reuse_hit) == (1, 1)


@pytest.mark.parametrize("params", [SMALL_RA, {}], ids=["small", "defaults"])
def test_register_allocation_takes_two_cycles(params):
    ra = RegisterAlloc(**params)
    seen = []

    async def send(ctx, value):
        ctx.set(ra.result.valid, 1)
        ctx.set(ra.result.payload, ra.config.result_layout.const({
            "value": _lanes(ra, value),
            "divergent": 0, "dst": {"preg": 0, "valid": 0, "pin": 0}, "ticket": 1}))
        await ctx.tick()
        ctx.set(ra.result.valid, 0)
        hashed = 1 + await _edges_until(ctx, ra.vsb.lookup.valid)
        table = await _edges_until(ctx, ra.out.valid)
        return hashed, table, ctx.get(ra.out.payload)

    async def bench(ctx):
        first = await send(ctx, 0x1234)
        ctx.set(ra.install.valid, 1)
        ctx.set(ra.install.payload, ra.config.vsb.install_layout.const(
            {"hash": first[2].hash, "preg": 5, "divergent": 0}))
        await ctx.tick()
        ctx.set(ra.install.valid, 0)
        seen.extend([first, await send(ctx, 0x1234)])

    _simulate({"ra": ra}, bench)
    (hash_miss, table_miss, miss), (hash_hit, table_hit, hit) = seen
    assert miss.kind == AllocKind.ALLOCATE
    assert hit.kind == AllocKind.VERIFY and hit.preg == 5
    assert (hash_miss, table_miss) == (1, 1)
    assert (hash_hit, table_hit) == (1, 1)


def _lanes(ra, value):
    config = ra.config
    return [value >> (config.data_width * k) & ((1 << config.data_width) - 1)
            for k in range(config.lanes)]


@pytest.mark.parametrize(("rr_params", "ra_params"), [(SMALL_RR, SMALL_RA), ({}, {})],
                         ids=["small", "defaults"])
def test_added_latency_is_four_cycles(rr_params, ra_params):
    """Issue -> rename -> reuse -> (execution, 0 cycles) -> hash -> table: 4 edges."""
    rr, ra = RenameReuse(**rr_params), RegisterAlloc(**ra_params)
    measured = []

    async def bench(ctx):
        await _prepare(ctx, rr, (0,))
        ctx.set(rr.issue.valid, 1)
        ctx.set(rr.issue.payload, _issue(rr, 0))
        await ctx.tick()
        ctx.set(rr.issue.valid, 0)
        edges = 1 + await _edges_until(ctx, rr.out.valid)
        out = ctx.get(rr.out.payload)
        assert not out.response.hit and not out.response.pending
        ctx.set(ra.result.valid, 1)
        ctx.set(ra.result.payload, ra.config.result_layout.const({
            "value": _lanes(ra, 42), "divergent": 0, "dst": {"preg": 0, "valid": 0, "pin": 0},
            "ticket": 0}))
        await ctx.tick()
        ctx.set(ra.result.valid, 0)
        edges += 1 + await _edges_until(ctx, ra.out.valid)
        measured.append(edges)

    _simulate({"rr": rr, "ra": ra}, bench)
    assert measured == [1 + 1 + 2]


@pytest.mark.parametrize(("name", "value", "message"), [
    ("warps", 0, r"^warps must be an integer in 1\.\.64, not 0$"),
    ("imm_bits", 9, r"^imm_bits must be an integer in 10\.\.32, not 9$"),
    ("retry_depth", 3, r"^retry_depth must be one of 2, 4, 8, 16, 32, 64, not 3$"),
])
def test_rename_reuse_rejects(name, value, message):
    with pytest.raises(ValueError, match=message):
        RenameReuse(**{name: value})


@pytest.mark.parametrize(("name", "value", "message"), [
    ("lanes", 0, r"^lanes must be an integer in 1\.\.32, not 0$"),
    ("ticket_bits", 257, r"^ticket_bits must be an integer in 1\.\.256, not 257$"),
    ("entries", 3, r"^entries must be one of 2, 4, 8, .*, 4096, not 3$"),
])
def test_register_alloc_rejects(name, value, message):
    with pytest.raises(ValueError, match=message):
        RegisterAlloc(**{name: value})
