# amaranth: UnusedElaboratable=no
"""Warp selector: parameter validation, the paper's key rule, and the tree's structure."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpurf.golden.subcore.warp_selector import select_warp
from gpurf.hw.registry import get_block
from gpurf.hw.subcore.warp_selector import WarpSelector
from gpurf.sim.verilog import verilog_text


@pytest.mark.parametrize(("params", "error", "message"), [
    ({"slots": 1}, ValueError, r"^slots must be an integer in 2\.\.64, not 1$"),
    ({"slots": 65}, ValueError, r"^slots must be an integer in 2\.\.64, not 65$"),
    ({"slots": "16"}, TypeError, r"^slots must be an integer in 2\.\.64, not '16'$"),
    ({"score_width": 0}, ValueError, r"^score_width must be an integer in 1\.\.8, not 0$"),
    ({"score_width": 9}, ValueError, r"^score_width must be an integer in 1\.\.8, not 9$"),
    ({"policy": "lrr"}, ValueError, r"^policy must be one of gto, rba, not 'lrr'$"),
    ({"policy": 1}, TypeError, r"^policy must be one of gto, rba, not 1$"),
    ({"rba_greedy": 1}, TypeError, r"^rba_greedy must be True or False, not 1$"),
])
def test_parameter_validation(params, error, message):
    with pytest.raises(error, match=message):
        WarpSelector(**params)


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
