"""The timing model's fast path with register power states riding on it
(``_SubCore.fast_cycle`` under LRR, the paper's scheduler, and RBA) against the generic
path (``_SubCore.cycle``): the same sub-core and power state after every cycle, the same
counters, and a fast path with a deliberately wrong hook is caught."""

import pytest

from gpurf.sim.greener import CONFIG
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm import timing as timing_module
from gpurf.sim.sm.power import PowerError, PowerSettings, RegisterPower
from tests.subcore_cycles import after_each_subcore_cycle
from tests.test_timing_fast import _first_difference, _state

CASES = [
    ("fma_subcore", "greener", {}),
    ("reduction", "sleep_reg", {}),
    ("saxpy", "oracle", {}),
    pytest.param("bfs", "greener", {}, marks=pytest.mark.soak),
    pytest.param("backprop_forward", "oracle", {}, marks=pytest.mark.soak),
    ("gaussian", "runtime", {}),
    ("hotspot", "compiler", {}),
    ("reduction", "greener", {"scheduler": "rba"}),
]


def _power_state(power: RegisterPower) -> tuple:
    """What the power states hold: each domain's clock, counters and dropped values."""
    return (power.wakeup_stalls,
            tuple((d.controller.cycle, tuple(sorted(d.controller.counters().items())),
                   tuple(sorted(d.dropped))) for d in power.domains))


class _TooLongError(RuntimeError):
    """A run went past its cycle limit (a broken path can starve a warp for ever)."""


def _recorded(monkeypatch, name, policy, config, *, fast, latency=1, limit=None):
    """Every sub-core's state (and the power states) after each of its cycles, and the
    run's cycles and summed counters; :class:`_TooLongError` past cycle ``limit``."""
    states, launches = [], []
    settings = PowerSettings(policy, "issue", latency, 2 * latency)

    def power(sm):
        launches.append(RegisterPower(settings))
        return launches[-1](sm)

    def record(sub, now, acted):
        states.append((*_state(sub, now, acted), _power_state(sub.sm.power)))
        if limit is not None and now > limit:
            raise _TooLongError(f"{name}: past cycle {limit}")

    with after_each_subcore_cycle(monkeypatch, record):
        run = run_kernel(name, "test", timing=CONFIG.replace(**config), power=power,
                         mechanism=lambda program: (program, {"fast": fast}))
    assert run.passed
    for launch in launches:
        launch.finish(launch.sm.now)
    return states, run.stats["timing"].cycles, [launch.counters() for launch in launches]


@pytest.mark.parametrize(("name", "policy", "config"), CASES)
def test_fast_cycle_with_power_states_equals_the_generic_cycle(monkeypatch, name, policy,
                                                               config):
    fast, fast_cycles, fast_counters = _recorded(monkeypatch, name, policy, config, fast=True)
    generic, cycles, counters = _recorded(monkeypatch, name, policy, config, fast=False)
    assert (fast_cycles, fast_counters) == (cycles, counters)
    assert _first_difference(fast, generic) is None
    assert len(fast) > 500


def test_fast_cycle_with_slow_wakeups_equals_the_generic_cycle(monkeypatch):
    """X = 4 (SLEEP->ON 4 cycles, OFF->ON 8): wake-ups stall issue for several cycles."""
    fast, *fast_totals = _recorded(monkeypatch, "fma_subcore", "sleep_reg", {}, fast=True,
                                   latency=4)
    generic, *totals = _recorded(monkeypatch, "fma_subcore", "sleep_reg", {}, fast=False,
                                 latency=4)
    assert fast_totals == totals
    assert _first_difference(fast, generic) is None


def test_the_power_runs_take_the_fast_cycle():
    """LRR (the k20x preset) and RBA with power states run :meth:`fast_cycle`; GTO does not
    (its inlined pick does not consult the power states)."""
    for scheduler, fast in (("lrr", True), ("rba", True), ("gto", False)):
        sms = []

        def power(sm, sms=sms):
            sms.append(sm)
            return RegisterPower(PowerSettings())(sm)

        run_kernel("fma_subcore", "test", timing=CONFIG.replace(scheduler=scheduler),
                   power=power)
        sub = sms[0].subcores[0]
        assert (sub.cycle == sub.fast_cycle) is fast, scheduler


def test_a_fast_path_forgetting_the_dispatch_hook_is_caught(monkeypatch):
    """Mutant: the fast path's dispatch does not tell the power states (their sets at read
    operands and writeback never happen), so states, counters or cycles part from the
    generic path's, a register is read after it was set OFF, or a reservation never
    released starves a warp (the run passes twice the generic path's cycles)."""
    def forgetful(sub, dispatched, now):
        power, sub.sm.power = sub.sm.power, None
        try:
            original(sub, dispatched, now)
        finally:
            sub.sm.power = power

    original = timing_module._SubCore._fast_dispatch
    generic, cycles, _ = _recorded(monkeypatch, "fma_subcore", "greener", {}, fast=False)
    monkeypatch.setattr(timing_module._SubCore, "_fast_dispatch", forgetful)
    try:
        fast, *_ = _recorded(monkeypatch, "fma_subcore", "greener", {}, fast=True,
                             limit=2 * cycles)
    except (PowerError, _TooLongError):
        return
    assert _first_difference(fast, generic) is not None
