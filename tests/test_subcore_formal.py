"""SymbiYosys proofs of the sub-core blocks' invariants (small configurations, named per test)."""

import pytest

from sim.formal import missing_solver, prove
from tb.subcore.formal_warp_selector import WarpSelectorFormal

pytestmark = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))


@pytest.mark.parametrize("params", [
    {"slots": 16, "policy": "rba"},
    {"slots": 16, "policy": "gto"},
    {"slots": 5, "score_width": 3, "policy": "rba", "rba_greedy": True},
], ids=["rba16", "gto16", "rba5-greedy"])
def test_warp_selector_choice_is_minimal_ready_slot(params):
    """The selector is combinational: k-induction of depth 2 covers every input."""
    name = "warp_selector_" + "_".join(f"{k}{v}" for k, v in params.items())
    result = prove(WarpSelectorFormal(**params), name=name, depth=2, mode="prove")
    assert result.passed, result.log_tail
