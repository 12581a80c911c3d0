"""SymbiYosys proofs of the sub-core blocks' invariants (small configurations, named per test)."""

import pytest

from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.subcore.formal_operand_collector import OperandCollectorFormal
from gpurf.tb.subcore.formal_rba_scorer import RbaScorerFormal
from gpurf.tb.subcore.formal_subcore_assigner import SubcoreAssignerFormal
from gpurf.tb.subcore.formal_warp_selector import WarpSelectorFormal

pytestmark = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))


@pytest.mark.parametrize("params", [
    {"slots": 8, "policy": "rba"},
    pytest.param({"slots": 16, "policy": "rba"}, marks=pytest.mark.slow_formal),
    {"slots": 16, "policy": "gto"},
    {"slots": 5, "score_width": 3, "policy": "rba", "rba_greedy": True},
], ids=["rba8", "rba16", "gto16", "rba5-greedy"])
def test_warp_selector_choice_is_minimal_ready_slot(params):
    """The selector is combinational: k-induction of depth 2 covers every input. RBA at 16
    slots (the default) takes about 4 minutes, so the suite proves 8 and leaves 16 to
    ``pytest -m slow_formal``."""
    name = "warp_selector_" + "_".join(f"{k}{v}" for k, v in params.items())
    result = prove(WarpSelectorFormal(**params), name=name, depth=2, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.parametrize("params", [{}, {"banks": 3, "operands": 2, "read_latency": 2}],
                         ids=["small", "banks3-lat2"])
def test_operand_collector_invariants(params):
    """BMC, depth 20. ``small`` (``formal_operand_collector.SMALL``): 2 CUs x 2 banks x
    3 operands, 1 lane x 2 bits, 2 warp slots, 2-bit register ids, read latency 1;
    ``banks3-lat2``: the same with 3 banks (modulo by 3), 2 operands, read latency 2.
    One grant per bank to the oldest request, no lost request, queue_len = pending count,
    data reaches its CU, dispatch only when complete and held while refused."""
    name = "operand_collector_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(OperandCollectorFormal(**params), name=name, depth=20, mode="bmc")
    assert result.passed, result.log_tail


@pytest.mark.parametrize("latency", [0, 2, 5])
def test_rba_scorer_score_is_saturated_delayed_sum(latency):
    """k-induction (depth ``score_latency + 4``) on ``formal_rba_scorer.SMALL`` with the
    given ``score_latency``: every score is the saturated sum of the delayed queue lengths
    of the slot's valid operands."""
    result = prove(RbaScorerFormal(score_latency=latency), name=f"rba_scorer_small_L{latency}",
                   depth=latency + 4, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.parametrize("shuffle_like", [False, True], ids=["formula", "shuffle"])
def test_subcore_assigner_follows_table(shuffle_like):
    """BMC, depth 20, on a 4-sub-core assigner with a 4-entry table: the spec's table
    formula and the restart on launch; with permutation entries, every group of 4 warps
    covers all 4 sub-cores."""
    label = "shuffle" if shuffle_like else "formula"
    result = prove(SubcoreAssignerFormal(depth=4, shuffle_like=shuffle_like),
                   name=f"subcore_assigner_{label}_d4", depth=20, mode="bmc")
    assert result.passed, result.log_tail
