"""Drive an RTL block and its golden model from one stimulus and compare every cycle.

A *stimulus* is a generator function ``stimulus(params, rng, cycles)``; random stimuli
run for ``cycles`` cycles, directed ones for as long as their cases take. Each ``yield`` hands the
harness the input ports for one cycle (a dict keyed by Verilog port name; ports left out
are driven 0) and receives back the outputs the RTL showed in that cycle, so a stimulus
can follow handshakes. The generator ends the run by returning.

The golden model is stepped with the same inputs; ``model.step(inputs)`` returns the
outputs of the cycle (``None`` for a payload that is not valid and so not compared)
and then takes the clock edge. The same stimulus runs on the generated Verilog under
cocotb (:func:`cosimulate`) and on the Amaranth simulator (:func:`simulate_amaranth`).
"""

import json
import os
import random
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass

from amaranth.hdl import Value
from amaranth.lib import wiring

__all__ = ["CLOCK_PERIOD_NS", "BenchConfig", "MismatchError", "cocotb_tests", "cosimulate",
           "run_golden", "simulate_amaranth"]

CLOCK_PERIOD_NS = 10
"""Clock period of cocotb runs; combinational blocks advance by the same step."""

Stimulus = Callable[[dict, random.Random, int], Generator[dict, dict, None]]


class MismatchError(AssertionError):
    """The RTL and the golden model disagree on an output port."""


@dataclass(frozen=True)
class BenchConfig:
    """What a run is asked to do; set by :mod:`gpurf.sim.runner` through the environment."""

    block: str
    params: dict
    seed: int
    cycles: int

    @classmethod
    def from_env(cls) -> "BenchConfig":
        return cls(block=os.environ["GPURF_BLOCK"],
                   params=json.loads(os.environ.get("GPURF_PARAMS", "{}")),
                   seed=int(os.environ.get("GPURF_SEED", "1")),
                   cycles=int(os.environ.get("GPURF_CYCLES", "2000")))

    def to_env(self) -> dict[str, str]:
        return {"GPURF_BLOCK": self.block, "GPURF_PARAMS": json.dumps(self.params),
                "GPURF_SEED": str(self.seed), "GPURF_CYCLES": str(self.cycles)}


def port_map(component: wiring.Component) -> dict[str, tuple[wiring.Flow, Value]]:
    """Ports of ``component`` by Verilog name (signature path joined with ``__``)."""
    return {"__".join(str(p) for p in path): (member.flow, Value.cast(value))
            for path, member, value in component.signature.flatten(component)}


class _Checker:
    """Compares one cycle's outputs and keeps the context a failure report needs."""

    def __init__(self, model, output_names, seed, label):
        self.model, self.outputs, self.seed, self.label = model, set(output_names), seed, label

    def check(self, cycle: int, inputs: Mapping, got: Mapping) -> None:
        expected = self.model.step(dict(inputs))
        if set(expected) != self.outputs:
            raise MismatchError(f"{self.label}: golden model returned ports {sorted(expected)}, "
                           f"RTL has {sorted(self.outputs)}")
        for name, want in expected.items():
            if want is not None and got[name] != want:
                raise MismatchError(
                    f"{self.label}: cycle {cycle}, port {name}: RTL {got[name]:#x}, "
                    f"golden {want:#x} (seed {self.seed})\n"
                    f"  inputs: { {k: hex(v) for k, v in inputs.items()} }\n"
                    f"  golden: {self.model.line_trace()}")


def _full_inputs(inputs: Mapping, input_names) -> dict:
    unknown = set(inputs) - set(input_names)
    if unknown:
        raise KeyError(f"stimulus drives unknown input ports {sorted(unknown)}")
    return {name: int(inputs.get(name, 0)) for name in input_names}


def _sample(handle, name: str, cycle: int) -> int:
    """A port's value as an unsigned int; an X or Z bit raises ``ValueError`` naming the
    port and the cycle."""
    value = handle.value
    try:
        return value.to_unsigned() if hasattr(value, "to_unsigned") else int(value)
    except ValueError:
        raise ValueError(f"cycle {cycle}: output {name} is {value} (X or Z bits)") from None


async def cosimulate(dut, stimulus: Stimulus, config: BenchConfig | None = None) -> int:
    """Run ``stimulus`` on ``dut`` (cocotb) and the block's golden model.

    The block, its parameters, the seed and the cycle budget come from ``config``
    (by default from the environment :mod:`gpurf.sim.runner` sets). Returns the cycles compared.
    """
    from cocotb.clock import Clock
    from cocotb.triggers import ReadOnly, RisingEdge, Timer

    from gpurf.hw.registry import get_block

    config = config or BenchConfig.from_env()
    block = get_block(config.block)
    model = block.golden(config.params)
    label = f"{block.qualname}/{stimulus.__name__}"
    ports = port_map(block.build(config.params))
    inputs_ = [n for n, (flow, _) in ports.items() if flow == wiring.In]
    outputs = [n for n, (flow, _) in ports.items() if flow == wiring.Out]
    clocked = hasattr(dut, "clk")
    rng = random.Random(config.seed)
    dut._log.info("%s: seed %d (set GPURF_SEED / --seed to repeat)", label, config.seed)
    checker = _Checker(model, outputs, config.seed, label)
    for name in inputs_:
        getattr(dut, name).value = 0
    if clocked:
        Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns").start()
        dut.rst.value = 1
        await RisingEdge(dut.clk)
        dut.rst.value = 0
    else:
        await Timer(1, unit="ns")
    model.reset()
    generator = stimulus(config.params, rng, config.cycles)
    got, cycle = None, 0
    try:
        while True:
            applied = _full_inputs(generator.send(got), inputs_)
            for name, value in applied.items():
                getattr(dut, name).value = value
            await ReadOnly()
            got = {name: _sample(getattr(dut, name), name, cycle) for name in outputs}
            checker.check(cycle, applied, got)
            cycle += 1
            await (RisingEdge(dut.clk) if clocked else Timer(CLOCK_PERIOD_NS, unit="ns"))
    except StopIteration:
        pass
    return cycle


def cocotb_tests(stimuli) -> dict:
    """One ``@cocotb.test`` named ``test_<stimulus>`` per stimulus, for a bench module's
    namespace: ``globals().update(cocotb_tests(STIMULI))``."""
    import cocotb

    tests = {}
    for stimulus in stimuli:
        async def run(dut, stimulus=stimulus):
            await cosimulate(dut, stimulus)

        run.__name__ = run.__qualname__ = f"test_{stimulus.__name__}"
        run.__doc__ = stimulus.__doc__
        tests[run.__name__] = cocotb.test(run)
    return tests


def simulate_amaranth(component: wiring.Component, model, stimulus: Stimulus,
                      params: dict, seed: int, cycles: int, *, label: str = "") -> int:
    """Run ``stimulus`` on ``component`` in Amaranth's simulator and ``model``.

    The component sits in a top module with its own ``sync`` domain, so combinational
    blocks are stepped by the same clock as stateful ones.
    """
    from amaranth import ClockDomain, Module
    from amaranth.sim import Simulator

    ports = port_map(component)
    inputs_ = {n: v for n, (flow, v) in ports.items() if flow == wiring.In}
    outputs = {n: v for n, (flow, v) in ports.items() if flow == wiring.Out}
    checker = _Checker(model, outputs, seed, label)
    top = Module()
    top.domains.sync = sync = ClockDomain()
    top.submodules.dut = component
    compared = 0

    async def bench(ctx):
        nonlocal compared
        ctx.set(sync.rst, 1)
        await ctx.tick()
        ctx.set(sync.rst, 0)
        model.reset()
        generator = stimulus(params, random.Random(seed), cycles)
        got = None
        try:
            while True:
                applied = _full_inputs(generator.send(got), inputs_)
                for name, value in applied.items():
                    ctx.set(inputs_[name], value)
                got = {name: ctx.get(value) for name, value in outputs.items()}
                checker.check(compared, applied, got)
                compared += 1
                await ctx.tick()
        except StopIteration:
            pass

    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return compared


def run_golden(model, stimulus: Stimulus, params: dict, seed: int, cycles: int) -> int:
    """Run ``stimulus`` on the golden model alone (its outputs answer the stimulus): for
    system-level checks the stimulus makes itself, at sizes the simulators are slow for.
    Inputs the stimulus leaves out are 0; returns the cycles run."""
    model.reset()
    generator = stimulus(params, random.Random(seed), cycles)
    outputs, steps = None, 0
    try:
        while True:
            inputs = generator.send(outputs)
            outputs = _Defaults(model.step(_Defaults(inputs)))
            steps += 1
    except StopIteration:
        pass
    return steps


class _Defaults(dict):
    """A port dict in which a port left out reads 0."""

    def __missing__(self, key):
        return 0
