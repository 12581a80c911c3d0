"""The fast paths of GReEneR's golden blocks (``fast_step``: plain values, no ports), which
the golden SM drives, against their ``step`` at the ports: a twin of the three blocks
driven through its ports every cycle of a kernel, its whole state compared with the fast
path's after every edge (``RegisterPower(check_fast=True)``); a fast path broken on purpose
is caught at the cycle it goes wrong."""

import pytest

from gpurf.golden.greener.correction_table import CorrectionTable
from gpurf.golden.greener.power_controller import PowerController
from gpurf.golden.greener.scoreboard_ext import ScoreboardExt
from gpurf.sim.greener import CONFIG
from gpurf.sim.sm.power import POLICIES, FastPathError, PowerSettings, RegisterPower
from gpurf.sim.sm.run import run_kernel


def _run_checked(kernel: str, settings: PowerSettings) -> list[RegisterPower]:
    launches = []

    def power(sm):
        launches.append(RegisterPower(settings, check_fast=True))
        return launches[-1](sm)

    run = run_kernel(kernel, "test", timing=CONFIG, power=power)
    assert run.passed
    for launch in launches:
        launch.finish(launch.sm.now)
    return launches


@pytest.mark.parametrize("policy", POLICIES)
def test_fast_paths_agree_with_step_every_cycle_of_a_kernel(policy):
    (launch,) = _run_checked("hotspot", PowerSettings(policy, sleep_wakeup=2, off_wakeup=4))
    cycles = launch.sm.now
    assert all(d.controller.cycle == cycles for d in launch.domains)
    assert launch.counters()["sleep_on"] + launch.counters()["off_on"] > 0


def test_fast_paths_agree_waking_at_decode_over_a_host_loop():
    launches = _run_checked("pathfinder", PowerSettings("greener", wake_at="decode"))
    assert len(launches) > 1


CONTROLLER_FAST, TABLE_FAST, EXT_FAST = (PowerController.fast_step,
                                        CorrectionTable.fast_step, ScoreboardExt.fast_step)


def _late_wake_up(self, sets, heads):
    """The controller's fast path with every wake-up a cycle late."""
    CONTROLLER_FAST(self, sets, heads)
    for key, cycle in self.usable_from.items():
        if cycle >= self.cycle:
            self.usable_from[key] = cycle + 1


def _forgets_removes(self, queries, insert=None, remove=None):
    return TABLE_FAST(self, queries, insert, None)


def _drops_reservations(self, releases, reserve=None):
    EXT_FAST(self, releases, None)


@pytest.mark.parametrize(("model", "broken", "what"), [
    (PowerController, _late_wake_up, "usable_from"),
    (CorrectionTable, _forgets_removes, "in_flight|keep_on"),
    (ScoreboardExt, _drops_reservations, "reserved")])
def test_a_broken_fast_path_is_caught(monkeypatch, model, broken, what):
    monkeypatch.setattr(model, "fast_step", broken)
    with pytest.raises(FastPathError, match=what):
        _run_checked("hotspot", PowerSettings("greener"))
