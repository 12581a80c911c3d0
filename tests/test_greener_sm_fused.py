"""The power domains' fused edge (``_Domain.fast_step``: :meth:`_Domain.step` and
:meth:`_Domain.apply` in one, what every reproduction run takes) against the two taken
apart: the same blocks' state after every sub-core cycle of a kernel under every policy,
and a fused edge broken on purpose is caught."""

import pytest

from gpurf.sim.sm import power as power_module
from gpurf.sim.sm.power import POLICIES, PowerError
from tests import test_greener_sm_fast as fast_module
from tests.test_timing_fast import _first_difference

CASES = [("fma_subcore", "greener"), ("saxpy", "oracle"), ("reduction", "sleep_reg"),
         ("saxpy", "runtime"), ("fma_subcore", "compiler"),
         pytest.param("hotspot", "greener", marks=pytest.mark.soak),
         pytest.param("hotspot", "oracle", marks=pytest.mark.soak)]
"""Every policy once (:data:`~gpurf.sim.sm.power.POLICIES`)."""


def _blocks(power) -> tuple:
    """Every domain's blocks and queues, in full (the states as a tuple: one per
    register)."""
    out = [power.wakeup_stalls]
    for d in power.domains:
        c, t = d.controller, d.table
        out.append((c.cycle, tuple(c.state.values()), tuple(sorted(c.usable_from.items())),
                    tuple(sorted(c.counters().items())), tuple(sorted(d.dropped)),
                    tuple(map(tuple, d.ext.reserved)), tuple(d.src_queue),
                    tuple(d.inserts), tuple(d.removes),
                    None if t is None else (t.clear_left, tuple(map(tuple, t.in_flight)))))
    return tuple(out)


def _taken_apart(domain, cycle: int) -> None:
    domain.apply(*domain.step(cycle), cycle)


def _run(monkeypatch, name: str, policy: str, *, fused=True, latency: int = 1):
    with monkeypatch.context() as patch:
        patch.setattr(fast_module, "_power_state", _blocks)
        if fused is not True:
            patch.setattr(power_module._Domain, "fast_step", fused or _taken_apart)
        return fast_module._recorded(monkeypatch, name, policy, {}, fast=True,
                                     latency=latency)


def test_the_cases_cover_every_policy():
    policies = {getattr(case, "values", case)[1] for case in CASES}
    assert policies == set(POLICIES)


@pytest.mark.parametrize(("name", "policy"), CASES)
def test_fused_edge_equals_step_and_apply_every_cycle(monkeypatch, name, policy):
    fused, *fused_totals = _run(monkeypatch, name, policy)
    apart, *totals = _run(monkeypatch, name, policy, fused=False)
    assert fused_totals == totals
    assert _first_difference(fused, apart) is None
    assert len(fused) > 500


def test_fused_edge_with_slow_wakeups(monkeypatch):
    fused, *fused_totals = _run(monkeypatch, "fma_subcore", "greener", latency=4)
    apart, *totals = _run(monkeypatch, "fma_subcore", "greener", fused=False, latency=4)
    assert fused_totals == totals
    assert _first_difference(fused, apart) is None


def test_a_fused_edge_keeping_finished_entries_is_caught(monkeypatch):
    """Mutant: the fused edge never frees a correction entry at writeback (its removes are
    dropped), so the table keeps registers ON it should let sleep."""
    original = power_module._Domain.fast_step

    def keeps_entries(domain, cycle):
        original(domain, cycle)
        domain.removes.clear()

    apart, *_ = _run(monkeypatch, "fma_subcore", "greener", fused=False)
    try:
        broken, *_ = _run(monkeypatch, "fma_subcore", "greener", fused=keeps_entries)
    except PowerError:
        return
    assert _first_difference(broken, apart) is not None
