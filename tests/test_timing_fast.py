"""The timing model's fast path (``_SubCore.fast_cycle``: the golden collector and GTO
selector inlined) against the path that calls the golden blocks' methods one by one
(``_SubCore.cycle``): the same state after every sub-core cycle of a recorded kernel, and a
deliberately broken fast path is caught."""

import pytest

from gpurf.sim.sm import run_kernel
from gpurf.sim.sm import timing as timing_module
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.warp import ExecutionError
from tests.subcore_cycles import after_each_subcore_cycle

CASES = [
    ("reduction", {"scheduler": "gto"}),
    ("reduction", {"scheduler": "rba"}),
    ("matmul", {"preset": "gtx980"}),
    ("bankconflict", {"scheduler": "rba", "score_latency": 3}),
    ("fma_subcore/unbalanced", {"assign": "srr"}),
    ("kmeans", {"scheduler": "gto", "cus": 4}),
]


def _state(sub, now: int, acted: bool) -> tuple:
    """What a sub-core cycle leaves behind: the collector's units, queues, issue register
    and offer, the scheduler's counters, stall reasons and greedy warp."""
    oc = sub.oc
    units = tuple(None if u is None else (u.warp, u.waiting, u.ready_at, u.tag[1])
                  for u in oc.units)
    buffer = None if oc.buffer is None else (oc.buffer[0], oc.buffer[2][1], oc.buffer[2][3])
    return (now, sub.index, acted, oc.cycle, tuple(oc.order), oc.held, buffer, units,
            tuple(tuple(q) for q in oc.queues), oc.queued, sub.issued, sub.reads,
            sub.conflicts, sub.dispatch_stalls, tuple(sub.stalls.values()), sub.greedy,
            tuple(sorted(sub.writes.items())))


def _recorded(monkeypatch, name, config, *, fast):
    """Every sub-core's state after each of its cycles, running the Python fast path
    (``True``; not the compiled core, which ``tests/test_timing_core.py`` checks) or the
    generic one (``False``)."""
    states = []

    def record(sub, now, acted):
        states.append(_state(sub, now, acted))

    with after_each_subcore_cycle(monkeypatch, record):
        run = run_kernel(name, "test", timing=load_config(**config),
                         mechanism=lambda program: (program, {"fast": fast,
                                                              "core": "python"}))
    assert run.passed
    return states, run.stats["timing"]


def _first_difference(fast, generic):
    for a, b in zip(fast, generic, strict=False):
        if a != b:
            return f"cycle {a[0]} sub-core {a[1]}:\n fast    {a}\n generic {b}"
    return None if len(fast) == len(generic) else "different numbers of cycles"


@pytest.mark.parametrize(("name", "config"), CASES)
def test_fast_cycle_equals_the_golden_blocks_cycle_by_cycle(monkeypatch, name, config):
    fast, fast_stats = _recorded(monkeypatch, name, config, fast=True)
    generic, generic_stats = _recorded(monkeypatch, name, config, fast=False)
    assert fast_stats.cycles == generic_stats.cycles
    assert _first_difference(fast, generic) is None
    assert len(fast) > 1000


def test_a_fast_path_ignoring_the_greedy_warp_is_caught(monkeypatch):
    """Mutant: GTO without its greedy warp (oldest ready always) in the fast path only."""
    def oldest_first(sub, now):
        sub.greedy = None
        return original(sub, now)

    original = timing_module._SubCore._gto_pick
    generic, _ = _recorded(monkeypatch, "reduction", {"scheduler": "gto"}, fast=False)
    monkeypatch.setattr(timing_module._SubCore, "_gto_pick", oldest_first)
    fast, _ = _recorded(monkeypatch, "reduction", {"scheduler": "gto"}, fast=True)
    assert _first_difference(fast, generic) is not None


@pytest.mark.parametrize(("method", "scheduler"), [("_gto_pick", "gto"),
                                                   ("_fast_ready", "rba")])
def test_a_scheduler_sleeping_one_cycle_too_long_is_caught(monkeypatch, method, scheduler):
    """Mutant: the bound below which no warp is ready (``soonest``) one cycle late, so the
    scheduler skips a cycle in which a warp was ready."""
    def late(sub, now):
        found = original(sub, now)
        if not found and sub.soonest != float("inf"):
            sub.soonest += 1
        return found

    original = getattr(timing_module._SubCore, method)
    config = {"scheduler": scheduler}
    generic, _ = _recorded(monkeypatch, "reduction", config, fast=False)
    monkeypatch.setattr(timing_module._SubCore, method, late)
    try:
        fast, _ = _recorded(monkeypatch, "reduction", config, fast=True)
    except ExecutionError as error:  # the SM found no cycle to go to: "stuck"
        assert "stuck" in str(error)
    else:
        assert _first_difference(fast, generic) is not None


def test_scorer_operands_changed_in_place_are_caught(monkeypatch):
    """Mutant: the scorer's slot operands updated in place, so the basis the RBA scorer
    kept from the previous cycle (``score_latency`` 1) silently becomes this cycle's."""
    def in_place(sub, slot):
        if sub.scorer is not None:
            sub.slot_ops[slot] = sub._operands(sub.slots[slot])

    config = {"scheduler": "rba"}
    generic, _ = _recorded(monkeypatch, "bankconflict", config, fast=False)
    monkeypatch.setattr(timing_module._SubCore, "_refresh", in_place)
    fast, _ = _recorded(monkeypatch, "bankconflict", config, fast=True)
    assert _first_difference(fast, generic) is not None


def test_a_collector_unit_reused_while_allocated_is_caught(monkeypatch):
    """Mutant: the fast cycle's spare collector units (``spares``) hand out a unit again
    without removing it, so two collector units share one state."""
    class Kept(list):
        def pop(self):
            return self[-1]

    original = timing_module._SubCore.__init__

    def with_kept_spares(sub, *args, **kwargs):
        original(sub, *args, **kwargs)
        sub.spares = Kept()

    config = {"scheduler": "gto"}
    generic, _ = _recorded(monkeypatch, "reduction", config, fast=False)
    monkeypatch.setattr(timing_module._SubCore, "__init__", with_kept_spares)
    try:
        fast, _ = _recorded(monkeypatch, "reduction", config, fast=True)
    except KeyError:  # a read made twice: its warp no longer counts it as pending
        return
    assert _first_difference(fast, generic) is not None


def test_an_rba_pick_breaking_ties_to_the_youngest_warp_is_caught(monkeypatch):
    """Mutant: the fast path's RBA pick (``_rba_pick``) breaks equal scores towards the
    youngest ready warp instead of the oldest."""
    def youngest(sub, ready, slot_ops, queue_len):
        age = sub.age
        sub.age = [-a for a in age]
        try:
            return original(sub, ready, slot_ops, queue_len)
        finally:
            sub.age = age

    original = timing_module._SubCore._rba_pick
    config = {"scheduler": "rba"}
    generic, _ = _recorded(monkeypatch, "reduction", config, fast=False)
    monkeypatch.setattr(timing_module._SubCore, "_rba_pick", youngest)
    fast, _ = _recorded(monkeypatch, "reduction", config, fast=True)
    assert _first_difference(fast, generic) is not None
