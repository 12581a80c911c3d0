"""``subcore.subcore_assigner`` and the assignment policies: table builders, golden model and
RTL against the equations, the proof.

N=2 is represented by a table that uses sub-cores 0 and 1 only, run by a 4-sub-core
assigner in hashed mode (the table path exists only for 4 sub-cores); N=4 is the table
path proper. Both are checked against equation (1) for every W < 256.
"""

import gc
import random
import warnings

import pytest
from amaranth.hdl import Fragment, UnusedElaboratable
from amaranth.sim import Simulator
from hypothesis import given
from hypothesis import strategies as st

from gpurf.golden.subcore.assignment import (
    decode_table,
    encode_table,
    rr_subcore,
    rr_table,
    shuffle_table,
    srr_subcore,
    srr_table,
    table_subcore,
)
from gpurf.golden.subcore.subcore_assigner import SubcoreAssigner as GoldenSubcoreAssigner
from gpurf.hw.subcore.configs import MODE_HASHED, MODE_ROUND_ROBIN, RR_ENTRY
from gpurf.hw.subcore.subcore_assigner import SubcoreAssigner
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.subcore.formal_subcore_assigner import SubcoreAssignerFormal
from gpurf.tb.subcore.mutants import TableReversed

WARPS = 256


def kernel_inputs(table, mode, warps=WARPS):
    """Load ``table``, launch, then ``warps`` back-to-back warp strobes in ``mode``."""
    steps = [{"table_we": 1, "table_index": k, "table_data": byte}
             for k, byte in enumerate(table)]
    steps.append({"launch": 1, "mode": mode})
    steps += [{"warp": 1, "mode": mode}] * warps
    return steps


def golden_assignment(model, steps):
    full = [{"warp": 0, "launch": 0, "mode": 0, "table_we": 0, "table_index": 0,
             "table_data": 0, **step} for step in steps]
    if not model.config.hashed:
        full = [{k: step[k] for k in ("warp", "launch")} for step in full]
    outputs = [model.step(step) for step in full]
    return [out["subcore"] for out in outputs if out["subcore_valid"]]


def rtl_assignment(component, steps):
    """Sub-cores the RTL chose, in Amaranth's simulator, for ``steps`` of inputs."""
    chosen = []

    async def bench(ctx):
        for step in steps:
            for name, value in step.items():
                ctx.set(getattr(component, name), value)
            if ctx.get(component.subcore_valid):
                chosen.append(ctx.get(component.subcore))
            await ctx.tick()
            for name in step:
                ctx.set(getattr(component, name), 0)

    sim = Simulator(component)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return chosen


def rejects(call, error, message):
    """``call()`` raises ``error`` matching ``message``; a half-built component is
    collected here so Amaranth's unused-elaboratable warning does not leak."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(error, match=message):
            call()
        gc.collect()


@pytest.mark.parametrize("subcores", [2, 4])
def test_srr_builders_equal_equation_1(subcores):
    table = srr_table(subcores=subcores)
    assert decode_table(table, WARPS) == [srr_subcore(w, subcores) for w in range(WARPS)]


@pytest.mark.parametrize("subcores", [2, 4])
def test_srr_golden_table_path_equals_equation_1(subcores):
    model = GoldenSubcoreAssigner(subcores=4)
    chosen = golden_assignment(model, kernel_inputs(srr_table(subcores=subcores), MODE_HASHED))
    assert chosen == [srr_subcore(w, subcores) for w in range(WARPS)]


@pytest.mark.parametrize("subcores", [2, 4])
def test_srr_rtl_table_path_equals_equation_1(subcores):
    chosen = rtl_assignment(SubcoreAssigner(subcores=4),
                            kernel_inputs(srr_table(subcores=subcores), MODE_HASHED))
    assert chosen == [srr_subcore(w, subcores) for w in range(WARPS)]


def test_srr_equation_values():
    """Equation (1) itself: the sub-core index shifts by one every N warps."""
    assert [srr_subcore(w, 4) for w in range(8)] == [0, 1, 2, 3, 1, 2, 3, 0]
    assert [srr_subcore(w, 2) for w in range(6)] == [0, 1, 1, 0, 0, 1]
    assert [rr_subcore(w, 3) for w in range(6)] == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("subcores", range(2, 9))
def test_round_robin_is_w_mod_n(subcores):
    mode = {"mode": MODE_ROUND_ROBIN} if subcores == 4 else {}
    steps = [{"launch": 1, **mode}] + [{"warp": 1, **mode}] * 40
    expected = [w % subcores for w in range(40)]
    assert golden_assignment(GoldenSubcoreAssigner(subcores=subcores), steps) == expected
    assert rtl_assignment(SubcoreAssigner(subcores=subcores), steps) == expected


@pytest.mark.parametrize("subcores", [2, 4])
@pytest.mark.parametrize("depth", [4, 8, 16])
def test_rr_table_is_w_mod_n(subcores, depth):
    table = rr_table(subcores=subcores, depth=depth)
    assert decode_table(table, WARPS) == [w % subcores for w in range(WARPS)]


def test_reset_table_is_round_robin():
    assert rr_table() == [RR_ENTRY] * 4
    model = GoldenSubcoreAssigner()
    chosen = golden_assignment(model, [{"launch": 1}] + [{"warp": 1, "mode": MODE_HASHED}] * 20)
    assert chosen == [w % 4 for w in range(20)]


def test_table_bit_order_follows_the_spec():
    """Warp j of an entry takes bit 7-j (select line 0) and bit 3-j (select line 1)."""
    assert decode_table([0b1000_0000]) == [1, 0, 0, 0]
    assert decode_table([0b0000_1000]) == [2, 0, 0, 0]
    assert decode_table([0b0001_0001]) == [0, 0, 0, 3]
    assert encode_table([1, 0, 0, 0]) == [0b1000_0000]
    assert encode_table([0, 0, 0, 3]) == [0b0001_0001]


@given(st.lists(st.integers(0, 3), min_size=4, max_size=64).filter(lambda a: len(a) % 4 == 0))
def test_encode_decode_round_trip(assignment):
    assert decode_table(encode_table(assignment)) == assignment


@given(st.lists(st.integers(0, 255), min_size=4, max_size=4), st.integers(0, 300))
def test_golden_follows_table_formula(table, warps):
    model = GoldenSubcoreAssigner()
    chosen = golden_assignment(model, kernel_inputs(table, MODE_HASHED, warps))
    assert chosen == [table_subcore(table, w) for w in range(warps)]


@given(st.integers(0, 2**32 - 1), st.sampled_from([4, 8, 16]), st.integers(0, 300))
def test_shuffle_counts_differ_by_at_most_one(seed, depth, warps):
    table = shuffle_table(seed, depth=depth)
    counts = [0] * 4
    for subcore in decode_table(table, warps):
        counts[subcore] += 1
    assert max(counts) - min(counts) <= 1


@given(st.integers(0, 2**32 - 1), st.sampled_from([4, 8, 16]))
def test_shuffle_entries_are_permutations_and_seeded(seed, depth):
    table = shuffle_table(seed, depth=depth)
    assert len(table) == depth
    assignment = decode_table(table)
    assert all(sorted(assignment[k:k + 4]) == [0, 1, 2, 3] for k in range(0, 4 * depth, 4))
    assert shuffle_table(seed, depth=depth) == table


def test_shuffle_rtl_balances(seed):
    """RTL in hashed mode with a shuffle table: per-sub-core counts never differ by more
    than one after any number of warps."""
    table = shuffle_table(random.Random(seed).randrange(1 << 30))
    chosen = rtl_assignment(SubcoreAssigner(), kernel_inputs(table, MODE_HASHED, 100))
    counts = [0] * 4
    for subcore in chosen:
        counts[subcore] += 1
        assert max(counts) - min(counts) <= 1
    assert chosen == decode_table(table, 100)


def test_ports_follow_the_sub_core_count():
    hashed, plain = SubcoreAssigner(), SubcoreAssigner(subcores=3)
    for component in (hashed, plain):
        Fragment.get(component, None)
    assert {"mode", "table_we", "table_index", "table_data"} <= set(hashed.signature.members)
    assert set(plain.signature.members) == {"warp", "launch", "subcore_valid", "subcore"}
    assert (len(hashed.table_index), len(hashed.subcore), len(plain.subcore)) == (2, 2, 2)
    assert hashed.config.table_bits == 32


@pytest.mark.parametrize(("call", "error", "message"), [
    (lambda: rr_table(subcores=3), ValueError, r"^subcores must be one of 2, 4, not 3$"),
    (lambda: srr_table(subcores=8), ValueError, r"^subcores must be one of 2, 4, not 8$"),
    (lambda: srr_table(depth=2), ValueError, r"^depth must be one of 4, 8, 16, not 2$"),
    (lambda: shuffle_table(1, depth=6), ValueError, r"^depth must be one of 4, 8, 16, not 6$"),
    (lambda: encode_table([0, 1, 2]), ValueError,
     r"^assignment length must be a multiple of 4, not 3$"),
    (lambda: encode_table([0, 1, 2, 4]), ValueError,
     r"^subcore must be an integer in 0\.\.3, not 4$"),
])
def test_builders_reject_bad_arguments(call, error, message):
    rejects(call, error, message)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("shuffle_like", [
    False, pytest.param(True, marks=pytest.mark.slow_formal)], ids=["formula", "shuffle"])
def test_formal_follows_table(shuffle_like):
    """BMC, depth 20, on a 4-sub-core assigner with a 4-entry table: the spec's table
    formula and the restart on launch; with permutation entries, every group of 4 warps
    covers all 4 sub-cores."""
    label = "shuffle" if shuffle_like else "formula"
    result = prove(SubcoreAssignerFormal(depth=4, shuffle_like=shuffle_like),
                   name=f"subcore_assigner_{label}_d4", depth=20, mode="bmc")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 8, on the 4-entry shuffle-like assigner: every event the
    harness claims (hashed group after a table write, launch mid-group) is reached from reset
    under its assumptions."""
    result = prove(SubcoreAssignerFormal(depth=4),
                   name="subcore_assigner_cover", depth=8, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 20, the ``shuffle`` proof of :func:`test_formal_follows_table` (which passes on
    the block) fails on ``mutants.TableReversed`` (the hash table read in reverse order)."""
    result = prove(SubcoreAssignerFormal(block=TableReversed), name="subcore_assigner_mutant",
                   depth=20, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_shuffle_groups_short():
    """BMC, depth 12, the ``shuffle`` harness of :func:`test_formal_follows_table` (whose
    depth-20 run, about 2 minutes, is under ``slow_formal``): three groups of 4 warps."""
    result = prove(SubcoreAssignerFormal(depth=4, shuffle_like=True),
                   name="subcore_assigner_shuffle_d4_b12", depth=12, mode="bmc")
    assert result.passed, result.log_tail
