# amaranth: UnusedElaboratable=no
"""Warp selector: the paper's key rule, the tree's structure, and its proof."""

import re

import pytest
from amaranth.sim import Simulator
from hypothesis import given
from hypothesis import strategies as st

from gpurf.golden.subcore.warp_selector import select_warp
from gpurf.hw.registry import get_block
from gpurf.hw.subcore.warp_selector import WarpSelector
from gpurf.sim.formal import missing_solver, prove
from gpurf.sim.verilog import verilog_text
from gpurf.tb.subcore.formal_warp_selector import WarpSelectorFormal
from gpurf.tb.subcore.mutants import TieToHigherIndex


def _slot(score, age, ready=1):
    return {"valid": 1, "ready": ready, "age": age, "score": score}


def test_rba_lowest_score_wins_over_age():
    slots = [_slot(score=4, age=3), _slot(score=1, age=0), _slot(score=2, age=2)]
    assert select_warp(slots, policy="rba") == 1


def test_rba_ties_go_to_the_older_warp():
    slots = [_slot(score=2, age=0), _slot(score=2, age=2), _slot(score=5, age=3)]
    assert select_warp(slots, policy="rba") == 1


def test_gto_prefers_greedy_then_oldest():
    slots = [_slot(score=0, age=1), _slot(score=0, age=3), _slot(score=0, age=2)]
    assert select_warp(slots, policy="gto", greedy=2) == 2
    slots[2]["ready"] = 0
    assert select_warp(slots, policy="gto", greedy=2) == 1


def _rtl_grant(slots, *, block=WarpSelector, greedy=None, **params):
    """``grant`` of the RTL (Amaranth's simulator) for ``slots``, or ``None``."""
    dut = block(slots=len(slots), **params)
    granted = []

    async def bench(ctx):
        for i, slot in enumerate(slots):
            for field in ("valid", "ready", "age", "score"):
                ctx.set(getattr(dut.slot[i], field), slot[field])
        ctx.set(dut.greedy_valid, int(greedy is not None))
        ctx.set(dut.greedy, greedy or 0)
        granted.append(ctx.get(dut.grant) if ctx.get(dut.grant_valid) else None)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return granted[0]


TIES = {
    # Equal scores, different ages: the older slot, wherever it sits in the tree.
    "score-tie-older-right": ("rba", [(2, 1), (2, 3), (5, 7), (2, 0)], 1),
    "score-tie-older-left": ("rba", [(6, 0), (3, 3), (3, 2), (3, 1)], 1),
    "score-tie-across-halves": ("rba", [(1, 2), (4, 0), (4, 0), (4, 0),
                                        (4, 0), (4, 0), (4, 0), (1, 6)], 7),
    # Equal scores and equal ages (a full-key tie): the lower index.
    "key-tie-adjacent": ("rba", [(3, 2), (3, 2), (7, 0), (7, 1)], 0),
    "key-tie-across-halves": ("rba", [(5, 0), (2, 4), (5, 0), (5, 0),
                                      (5, 0), (2, 4), (5, 0), (5, 0)], 1),
    "key-tie-lower-not-ready": ("rba", [(1, 3, 0), (4, 1), (4, 1), (6, 3)], 1),
    "key-tie-among-three": ("rba", [(6, 1), (0, 5), (3, 5), (0, 5), (0, 5)], 1),
    "gto-age-tie": ("gto", [(0, 1), (9, 3), (0, 3), (0, 2)], 1),
}
"""Tie cases: ``policy``, slots as ``(score, age[, ready])`` (ages below the slot count:
``age_bits`` is ``ceil(log2(slots))``), the expected grant."""


@pytest.mark.parametrize("case", TIES.values(), ids=TIES.keys())
def test_ties_golden_and_rtl(case):
    """Score ties (the age decides) and full-key ties (the lower index wins), in the
    golden model and the RTL at 4, 5 and 8 slots (a 3-stage tree for 8)."""
    policy, cells, expected = case
    slots = [_slot(*cell) for cell in cells]
    assert select_warp(slots, policy=policy) == expected
    assert _rtl_grant(slots, policy=policy) == expected


def test_ties_kill_the_tie_break_mutant():
    """``mutants.TieToHigherIndex`` (equal keys to the higher index) passes the score-tie
    cases, which the age decides, and fails the full-key ties: the unit tests alone catch
    the tie-break bug that only the cosimulation's directed ties used to."""
    failed = [name for name, (policy, cells, expected) in TIES.items()
              if _rtl_grant([_slot(*cell) for cell in cells], block=TieToHigherIndex,
                            policy=policy) != expected]
    assert failed and all(name.startswith(("key-tie", "gto")) for name in failed), failed


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 31)), min_size=2, max_size=16))
def test_rba_choice_has_minimal_score(entries):
    slots = [_slot(score=s, age=i, ready=r) for i, (r, s) in enumerate(entries)]
    choice = select_warp(slots, policy="rba")
    ready = [s for s in slots if s["ready"]]
    if not ready:
        assert choice is None
    else:
        assert slots[choice]["score"] == min(s["score"] for s in ready)


@pytest.mark.parametrize("slots", [2, 3, 5, 8, 16, 33, 64])
def test_tree_has_ceil_log2_compare_select_stages(slots):
    """Structural: the generated netlist has exactly ``ceil(log2(slots))`` stages of cells."""
    text = verilog_text(get_block("subcore.warp_selector"), {"slots": slots})
    stages = {int(s) for s in re.findall(r"\btake_right_s(\d+)_\d+\b", text)}
    assert stages == set(range((slots - 1).bit_length()))


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [
    {"slots": 8, "policy": "rba"},
    pytest.param({"slots": 16, "policy": "rba"}, marks=pytest.mark.slow_formal),
    {"slots": 16, "policy": "gto"},
    {"slots": 5, "score_width": 3, "policy": "rba", "rba_greedy": True},
], ids=["rba8", "rba16", "gto16", "rba5-greedy"])
def test_formal_choice_is_minimal_ready_slot(params):
    """The selector is combinational: k-induction of depth 2 covers every input. RBA at 16
    slots (the default) takes about 4 minutes, so the suite proves 8 and leaves 16 to
    ``pytest -m slow_formal``."""
    name = "warp_selector_" + "_".join(f"{k}{v}" for k, v in params.items())
    result = prove(WarpSelectorFormal(**params), name=name, depth=2, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 1, on the 5-slot RBA selector with greedy override: every event
    the harness claims (tie on the full key, score tie decided by age, greedy override) is
    reached from reset under its assumptions."""
    result = prove(WarpSelectorFormal(slots=5, score_width=3, policy="rba", rba_greedy=True),
                   name="warp_selector_cover", depth=1, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 2 (the base case of the ``rba5-greedy`` k-induction of
    :func:`test_formal_choice_is_minimal_ready_slot`), fails on ``mutants.TieToHigherIndex``
    (equal keys go to the higher index)."""
    result = prove(WarpSelectorFormal(block=TieToHigherIndex, slots=5, score_width=3,
                                      policy="rba", rba_greedy=True),
                   name="warp_selector_mutant", depth=2, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
