# amaranth: UnusedElaboratable=no
"""Widths, the golden model's rules, the energy model, a wake-up latency sweep (Amaranth
simulator) and the proof of ``greener.power_controller``."""

import itertools
import random

import pytest

from gpurf.golden.greener.energy import (
    E_OFF_ON,
    E_SLEEP_ON,
    always_on_energy,
    counters_from_ports,
    leakage_energy,
    leakage_energy_range,
)
from gpurf.golden.greener.power_controller import Ports, decode_state, next_state
from gpurf.hw.greener.configs import PowerControllerConfig
from gpurf.hw.greener.layouts import PowerState
from gpurf.hw.registry import get_block
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.greener.formal_power_controller import PowerControllerFormal
from gpurf.tb.greener.mutants import KeepOnIgnored
from gpurf.tb.greener.test_power_controller import (
    OFF,
    ON,
    SLEEP,
    directed_back_to_back,
    directed_wakeup,
    random_pipeline,
    random_ports,
)
from gpurf.tb.harness import run_golden, simulate_amaranth

BLOCK = get_block("greener.power_controller")


def golden(**params):
    return BLOCK.golden(params)


def test_default_widths():
    config = PowerControllerConfig(**BLOCK.defaults)
    assert config == PowerControllerConfig(warps=64, regs=64, src_ports=4, dst_ports=4,
                                           sleep_wakeup=1, off_wakeup=2, policy="greener",
                                           counter_width=32)
    assert (config.warp_bits, config.reg_bits, config.operands) == (6, 6, 8)
    assert (config.timer_bits, config.registers, config.pop_bits) == (1, 4096, 13)
    assert (config.acct_bits, config.count_bits) == (32 + 12, 13)
    assert config.set_layout.size == 1 + 6 + 6 + 2
    assert config.head_layout.size == 1 + 8 * (1 + 6)
    assert config.codecs["head"].width == 64 * 57
    assert config.keep_on_layout.size == 8
    assert PowerControllerConfig(off_wakeup=8).timer_bits == 3
    assert PowerControllerConfig(off_wakeup=5).timer_bits == 3
    assert PowerControllerConfig(sleep_wakeup=3).timer_bits == 2


def test_state_codes():
    """Spec encoding: OFF 00, SLEEP 01, ON 11, the reserved 10 read as ON."""
    assert [decode_state(c) for c in range(4)] == [PowerState.OFF, PowerState.SLEEP,
                                                   PowerState.ON, PowerState.ON]
    assert next_state(OFF, True, policy="greener") is PowerState.ON
    assert next_state(SLEEP, False, policy="greener") is PowerState.SLEEP
    for code, keep in itertools.product(range(4), (False, True)):
        assert next_state(code, keep, policy="sleep_reg") is PowerState.SLEEP


def _step(model, ports, **kwargs):
    return model.step(ports.inputs(**kwargs))


def test_golden_wakeup_and_accounting_by_hand():
    """Two warps x 2 registers, SLEEP->ON 2, OFF->ON 3: every output worked out by hand."""
    params = {"warps": 2, "regs": 2, "src_ports": 1, "dst_ports": 1, "sleep_wakeup": 2,
              "off_wakeup": 3, "counter_width": 4}
    model, ports = golden(**params), Ports(BLOCK.resolve(params))
    out = _step(model, ports, dst=[(0, 0, SLEEP)])          # cycle 0: (0,0) OFF -> SLEEP
    assert (out["acct__pop_off"], out["acct__cycles_off"]) == (4, 0)
    out = _step(model, ports, heads={0: [0], 1: [1]})       # cycle 1: both wake-ups start
    assert out["ready"] == 0 and out["acct__off_sleep"] == 1
    assert (out["acct__pop_off"], out["acct__pop_sleep"], out["acct__cycles_off"]) == (3, 1, 4)
    out = _step(model, ports, heads={0: [0], 1: [1]})       # cycle 2
    assert out["ready"] == 0 and (out["acct__sleep_on"], out["acct__off_on"]) == (1, 1)
    assert out["acct__pop_on"] == 2 and out["acct__cycles_sleep"] == 1
    out = _step(model, ports, heads={0: [0], 1: [1]})       # cycle 3: SLEEP one is usable
    assert out["ready"] == 0b01
    out = _step(model, ports, heads={0: [0], 1: [1]})       # cycle 4: OFF one too
    assert out["ready"] == 0b11
    assert model.counters() == {"cycles_off": 4 + 3 + 2 + 2 + 2, "cycles_sleep": 1,
                                "cycles_on": 2 + 2 + 2, "sleep_on": 1, "on_sleep": 0,
                                "off_on": 1, "on_off": 0, "sleep_off": 0, "off_sleep": 1}


@pytest.mark.parametrize("stimulus", [random_pipeline, random_ports])
def test_kept_populations_equal_the_state_counts_every_cycle(stimulus, seed):
    """The model's populations, kept by its transitions, against a count of its states after
    every edge of a random stream; a kept count broken on purpose is caught."""
    params = BLOCK.resolve({"warps": 8, "regs": 16})
    model = golden(**params)
    step = model.step

    def checked(inputs):
        outputs = step(inputs)
        assert model.kept == model.population(), f"cycle {model.cycle} (seed {seed})"
        return outputs

    model.step = checked
    assert run_golden(model, stimulus, params, seed, 500) > 500
    model.kept["on"] += 1
    with pytest.raises(AssertionError, match="cycle"):
        checked(Ports(params).inputs())


def test_golden_records_off_read():
    params = {"warps": 2, "regs": 2, "src_ports": 2, "dst_ports": 1}
    model, ports = golden(**params), Ports(BLOCK.resolve(params))
    _step(model, ports, dst=[(1, 1, OFF)])                    # writing an OFF register: fine
    out = _step(model, ports, src=[None, (1, 0, ON)])            # port 1 reads OFF (1, 0)
    assert out["error"] == 0
    out = _step(model, ports, src=[(0, 1, ON)])
    assert (out["error"], out["error_warp"], out["error_reg"]) == (1, 1, 0)
    assert model.error == (1, 0)


# -- energy model --------------------------------------------------------------------------

COUNTERS = {"cycles_on": 1000, "cycles_sleep": 3000, "cycles_off": 6000, "sleep_on": 10,
            "on_sleep": 12, "off_on": 4, "on_off": 3, "sleep_off": 2, "off_sleep": 1}


def test_energy_by_hand():
    energy = leakage_energy(COUNTERS, leak_sleep=0.25, leak_off=0.02)
    assert energy.leakage == pytest.approx(1000 + 750 + 120)
    estimate = 0.198e-9 - 0.0633e-9
    assert energy.transition == pytest.approx(22 * 0.0633e-9 + 7 * 0.198e-9 + 3 * estimate)
    assert energy.total(2e-12) == pytest.approx(1870 * 2e-12 + energy.transition)
    assert (E_SLEEP_ON, E_OFF_ON) == (0.0633e-9, 0.198e-9)


def test_energy_parameters():
    energy = leakage_energy(COUNTERS, leak_on=2.0, leak_sleep=1.0, leak_off=0.0,
                            e_sleep_on=1.0, e_off_on=10.0, e_sleep_off=100.0)
    assert energy.leakage == 2000 + 3000
    assert energy.transition == 22 * 1.0 + 7 * 10.0 + 3 * 100.0
    assert always_on_energy(COUNTERS) == 10000
    assert always_on_energy(COUNTERS, leak_on=0.5, register_cycles=400) == 200
    best, worst = leakage_energy_range(COUNTERS)
    assert best.leakage == pytest.approx(1000 + 300 + 0)
    assert worst.leakage == pytest.approx(1000 + 1500 + 300)
    assert best.transition == worst.transition


def test_energy_validation():
    with pytest.raises(ValueError, match=r"^leak_sleep must be a non-negative number, not -0\.1$"):
        leakage_energy(COUNTERS, leak_sleep=-0.1, leak_off=0.0)
    with pytest.raises(TypeError, match=r"^leak_off must be a non-negative number, not '0'$"):
        leakage_energy(COUNTERS, leak_sleep=0.1, leak_off="0")
    with pytest.raises(TypeError, match=r"leak_sleep"):
        leakage_energy(COUNTERS, leak_off=0.0)  # no default: the paper gives no number
    with pytest.raises(KeyError, match=r"counters lack 'off_sleep'"):
        leakage_energy({k: v for k, v in COUNTERS.items() if k != "off_sleep"},
                       leak_sleep=0.1, leak_off=0.0)
    with pytest.raises(ValueError, match=r"^counter cycles_on must be a non-negative integer, "
                                         r"not -1$"):
        leakage_energy({**COUNTERS, "cycles_on": -1}, leak_sleep=0.1, leak_off=0.0)


def test_energy_from_a_cosimulated_run(seed):
    """The golden model's counters, read back from its output ports, give the energy; a
    GReEneR run leaks less than always-ON whenever registers sleep."""
    from gpurf.tb.greener.test_power_controller import random_pipeline

    params = {"warps": 4, "regs": 8, "src_ports": 2, "dst_ports": 2}
    model = golden(**params)
    generator = random_pipeline(BLOCK.resolve(params), random.Random(seed), 300)
    outputs = None
    try:
        while True:
            inputs = generator.send(outputs)
            outputs = model.step({k: inputs.get(k, 0) for k in
                                  ("src_set", "dst_set", "keep_on", "head")})
    except StopIteration:
        pass
    counters = counters_from_ports(outputs)
    assert sum(counters[f"cycles_{s}"] for s in ("on", "sleep", "off")) == 32 * (model.cycle - 1)
    best, worst = leakage_energy_range(counters)
    assert best.leakage <= worst.leakage < always_on_energy(counters)


# -- wake-up latency sweep -----------------------------------------------------------------

SWEEP = {"warps": 2, "regs": 4, "src_ports": 1, "dst_ports": 1, "counter_width": 4}


@pytest.mark.parametrize(("sleep_wakeup", "off_wakeup"),
                         [(s, o) for s in range(1, 5) for o in range(2, 9)])
def test_latency_sweep(sleep_wakeup, off_wakeup, seed):
    """Every latency pair of Section 5.7 on a 2-warp x 4-register controller: the directed
    wake-up timing (the stimulus asserts the latencies itself), colliding sets and free
    ports, RTL against the golden model."""
    params = {**SWEEP, "sleep_wakeup": sleep_wakeup, "off_wakeup": off_wakeup}
    for stimulus in (directed_wakeup, directed_back_to_back, random_ports):
        compared = simulate_amaranth(BLOCK.build(params), BLOCK.golden(params), stimulus,
                                     BLOCK.resolve(params), seed, 150,
                                     label=f"sweep/{stimulus.__name__}")
        assert compared > 0


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [
    {"regs": 2},
    {"regs": 2, "policy": "sleep_reg"},
], ids=["greener", "sleep_reg"])
def test_formal_ready_wakeup_and_population(params):
    """k-induction, depth 6, on ``formal_power_controller.SMALL`` with 2 registers per warp:
    2 warps x 2 registers, 1 source + 1 destination port, SLEEP->ON 2 and OFF->ON 3
    cycles, every input free. A warp is ready exactly when every register its head names
    is ON with its wake-up over (so never with a non-ON operand); a wake-up ends exactly
    ``latency`` cycles after it starts unless a set moves the register out of ON; the
    populations sum to ``warps x regs`` and equal the state counts."""
    name = "power_controller_" + "_".join(f"{k}{v}" for k, v in params.items())
    result = prove(PowerControllerFormal(**params), name=name, depth=6, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 10, on ``formal_power_controller.SMALL`` with 2 registers per
    warp: every event the harness claims (ready after a wake-up from OFF, wake-up from SLEEP,
    set kept ON) is reached from reset under its assumptions."""
    result = prove(PowerControllerFormal(regs=2),
                   name="power_controller_cover", depth=10, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 6 (the base case of the ``greener`` k-induction of
    :func:`test_formal_ready_wakeup_and_population`), fails on ``mutants.KeepOnIgnored``
    (keep_on ignored by a set)."""
    result = prove(PowerControllerFormal(block=KeepOnIgnored, regs=2),
                   name="power_controller_mutant", depth=6, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
