# amaranth: UnusedElaboratable=no
"""``wir.register_alloc``: the rules between its parameters and its added pipeline latency,
measured in the RTL (Amaranth's simulator), alone and chained after ``wir.rename_reuse``.

The paper (Section VII-E) adds 4 cycles: rename 1, reuse 1, register allocation 2 (hash,
table). The chained test feeds ``wir.rename_reuse``'s output straight into
``wir.register_alloc`` (execution taking no time) and counts 4 edges end to end.
"""

import pytest

from gpurf.golden.wir.register_alloc import RegisterAlloc as GoldenRegisterAlloc
from gpurf.hw.wir.layouts import AllocKind
from gpurf.hw.wir.register_alloc import RegisterAlloc
from gpurf.hw.wir.rename_reuse import RenameReuse
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.wir.formal_register_alloc import RegisterAllocFormal
from gpurf.tb.wir.mutants import SaturatedHitVerifies

from .test_wir_rename_reuse import SMALL as SMALL_RR
from .test_wir_rename_reuse import edges_until, issue, prepare, simulate

SMALL = {"lanes": 4, "data_width": 8, "hash_width": 8, "entries": 8, "pregs": 16,
         "ticket_bits": 4}


def _result(ra, value, ticket):
    """The ``result`` payload of a convergent result ``value`` with no destination entry."""
    return ra.config.codecs["result__payload"].pack({
        "value": value, "divergent": 0, "dst": {"preg": 0, "valid": 0, "pin": 0},
        "ticket": ticket})


@pytest.mark.parametrize("params", [SMALL, {}], ids=["small", "defaults"])
def test_register_allocation_takes_two_cycles(params):
    ra = RegisterAlloc(**params)
    seen = []

    async def send(ctx, value):
        ctx.set(ra.result.valid, 1)
        ctx.set(ra.result.payload.as_value(), _result(ra, value, 1))
        await ctx.tick()
        ctx.set(ra.result.valid, 0)
        hashed = 1 + await edges_until(ctx, ra.vsb.lookup.valid)
        table = await edges_until(ctx, ra.out.valid)
        return hashed, table, ctx.get(ra.out.payload)

    async def bench(ctx):
        first = await send(ctx, 0x1234)
        ctx.set(ra.install.valid, 1)
        ctx.set(ra.install.payload, ra.config.vsb.install_layout.const(
            {"hash": first[2].hash, "preg": 5, "divergent": 0}))
        await ctx.tick()
        ctx.set(ra.install.valid, 0)
        seen.extend([first, await send(ctx, 0x1234)])

    simulate({"ra": ra}, bench)
    (hash_miss, table_miss, miss), (hash_hit, table_hit, hit) = seen
    assert miss.kind == AllocKind.ALLOCATE
    assert hit.kind == AllocKind.VERIFY and hit.preg == 5
    assert (hash_miss, table_miss) == (1, 1)
    assert (hash_hit, table_hit) == (1, 1)


@pytest.mark.parametrize(("rr_params", "ra_params"), [(SMALL_RR, SMALL), ({}, {})],
                         ids=["small", "defaults"])
def test_added_latency_is_four_cycles(rr_params, ra_params):
    """Issue -> rename -> reuse -> (execution, 0 cycles) -> hash -> table: 4 edges."""
    rr, ra = RenameReuse(**rr_params), RegisterAlloc(**ra_params)
    measured = []

    async def bench(ctx):
        await prepare(ctx, rr, (0,))
        ctx.set(rr.issue.valid, 1)
        ctx.set(rr.issue.payload, issue(rr, 0))
        await ctx.tick()
        ctx.set(rr.issue.valid, 0)
        edges = 1 + await edges_until(ctx, rr.out.valid)
        out = ctx.get(rr.out.payload)
        assert not out.response.hit and not out.response.pending
        ctx.set(ra.result.valid, 1)
        ctx.set(ra.result.payload.as_value(), _result(ra, 42, 0))
        await ctx.tick()
        ctx.set(ra.result.valid, 0)
        edges += 1 + await edges_until(ctx, ra.out.valid)
        measured.append(edges)

    simulate({"rr": rr, "ra": ra}, bench)
    assert measured == [1 + 1 + 2]


@pytest.mark.parametrize("build", [RegisterAlloc, GoldenRegisterAlloc], ids=["hw", "golden"])
@pytest.mark.parametrize(("params", "message"), [
    ({"hash_width": 7}, r"^hash_width must be at least log2\(entries\) = 8, not 7$"),
    ({"lanes": 1, "data_width": 4, "hash_width": 4, "entries": 4, "matrix": [1, 2, 16, 4]},
     r"^matrix\[2\] must be an integer in 0\.\.15, not 16$"),
    ({"hash_width": 4, "entries": 4, "matrix": [1, 2, 3]},
     r"^matrix must have width_out = 4 masks, not 3$"),
], ids=["hash-below-index", "mask-wider-than-value", "masks-per-hash-bit"])
def test_rules_between_parameters(build, params, message):
    """The VSB's hash covers its index; a chosen H3 matrix has one mask per hash bit, each
    no wider than the ``lanes x data_width`` value."""
    with pytest.raises(ValueError, match=message):
        build(**params)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_assume_guarantee_k_induction():
    """k-induction, depth 3, on ``formal_register_alloc.SMALL`` (4-bit values, 2-bit
    hashes under a chosen matrix, 2 entries, 4 registers), the VSB's proven table
    invariant assumed: each request two cycles after its result with the H3 hash, the
    kind and register of the spec (PINNED, VERIFY on an equal-hash entry unless
    saturated, else ALLOCATE), the VSB's reference events and their balance."""
    result = prove(RegisterAllocFormal(), name="register_alloc_ag", depth=3, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """Cover mode, depth 8: a verify request, a pinned write, a saturated hit, a convergent
    allocation, an install replacing an entry, an eviction."""
    result = prove(RegisterAllocFormal(), name="register_alloc_cover", depth=8, mode="cover")
    assert result.passed and set(result.reached) == set(result.covers), result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 6, fails on ``mutants.SaturatedHitVerifies`` (a saturated hit verifies)."""
    result = prove(RegisterAllocFormal(block=SaturatedHitVerifies), name="register_alloc_mutant",
                   depth=6, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
