"""The functional cohorts' row helpers (``gpurf.sim.sm.batch``): a group's register rows as a
slice only when they are evenly spaced, and its active masks stacked a warp per row; a
selector that takes uneven rows for a slice is caught."""

import itertools
from types import SimpleNamespace

import numpy as np

from gpurf.sim.sm import batch

CASES = [[3], [0, 1, 2], [0, 2, 4], [1, 2, 4], [0, 2, 3, 5], [0, 1, 2, 4], [4, 2],
         [5, 5], [0, 3, 6, 9], [0, 3, 6, 10], list(range(0, 256)), [*range(255), 300]]


def _wrong_rows(selector) -> list:
    """The cases whose rows ``selector`` does not pick exactly (a slice for uneven rows
    picks others)."""
    rows = np.arange(400)
    wrong = []
    for indices in CASES:
        sel = selector(indices)
        evenly = len(indices) == 1 or (
            indices[1] > indices[0]
            and len({b - a for a, b in itertools.pairwise(indices)}) == 1)
        if rows[sel].tolist() != indices or isinstance(sel, slice) != evenly:
            wrong.append(indices)
    return wrong


def test_selector_is_a_slice_exactly_for_evenly_spaced_rows():
    assert _wrong_rows(batch._selector) == []


def test_a_selector_checking_only_the_ends_is_caught():
    """Mutant: rows taken as evenly spaced when the first and last steps agree."""
    def ends_only(indices):
        if len(indices) == 1:
            return slice(indices[0], indices[0] + 1)
        step = indices[1] - indices[0]
        if step > 0 and indices[-1] - indices[-2] == step:
            return slice(indices[0], indices[-1] + 1, step)
        return np.array(indices)

    assert _wrong_rows(ends_only) == [[0, 2, 3, 5]]


def test_masks_are_the_warps_active_lanes_a_row_each(seed):
    rng = np.random.default_rng(seed)
    lanes = [rng.random(32) < 0.5 for _ in range(7)]
    warps = [SimpleNamespace(stack=[[0, 9, ~m], [1, 9, m]]) for m in lanes]
    assert np.array_equal(batch._masks(warps), np.stack(lanes))
    assert batch._masks(warps).shape == (7, 32)
