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
import math
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
    stop_at: int = 0
    """Stop comparing after this many cycles even if the stimulus goes on (0: run it to its
    end). The per-cycle bench times stimuli that end on their own with it."""

    @classmethod
    def from_env(cls) -> "BenchConfig":
        return cls(block=os.environ["GPURF_BLOCK"],
                   params=json.loads(os.environ.get("GPURF_PARAMS", "{}")),
                   seed=int(os.environ.get("GPURF_SEED", "1")),
                   cycles=int(os.environ.get("GPURF_CYCLES", "2000")),
                   stop_at=int(os.environ.get("GPURF_STOP_AT", "0")))

    def to_env(self) -> dict[str, str]:
        return {"GPURF_BLOCK": self.block, "GPURF_PARAMS": json.dumps(self.params),
                "GPURF_SEED": str(self.seed), "GPURF_CYCLES": str(self.cycles),
                "GPURF_STOP_AT": str(self.stop_at)}


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
        if expected.keys() != self.outputs:
            raise MismatchError(f"{self.label}: golden model returned ports {sorted(expected)}, "
                                f"RTL has {sorted(self.outputs)}")
        for name, want in expected.items():
            if want is not None and got[name] != want:
                raise MismatchError(
                    f"{self.label}: cycle {cycle}, port {name}: RTL {got[name]:#x}, "
                    f"golden {want:#x} (seed {self.seed})\n"
                    f"  inputs: { {k: hex(v) for k, v in inputs.items()} }\n"
                    f"  golden: {self.model.line_trace()}")


def _full_inputs(inputs: Mapping, input_names: Mapping) -> dict:
    """Every input port of ``input_names`` (a mapping keyed by port name, in port order), 0
    where ``inputs`` leaves it out, as ``int``."""
    if not inputs.keys() <= input_names.keys():
        unknown = set(inputs) - set(input_names)
        raise KeyError(f"stimulus drives unknown input ports {sorted(unknown)}")
    return {name: int(inputs.get(name, 0)) for name in input_names}


_DEPOSIT = 0
"""cocotb's ``_GPISetAction.DEPOSIT``: the write a plain ``handle.value = v`` makes."""


class _InputPort:
    """One input port written through its raw simulator handle, only when its value changes.

    ``handle.value = v`` costs a range check, a type dispatch, and a write queued for the
    next ReadWrite phase in a dictionary; the harness writes in the ReadWrite phase itself
    (where cocotb would apply the queue), so it calls the simulator's setter directly. An
    input nobody else drives keeps its last value, so an unchanged value is not written.
    """

    def __init__(self, name: str, handle):
        self.name, self.width = name, len(handle)
        raw = handle._handle
        self.setter = raw.set_signal_val_int if self.width <= 32 else raw.set_signal_val_binstr
        self.format = None if self.width <= 32 else f"0{self.width}b"
        self.value = 0

    def changed(self, value: int) -> bool:
        """Whether ``value`` (checked to fit the port) differs from the value last written."""
        if value == self.value:
            return False
        if value < 0 or value >> self.width:
            raise ValueError(f"input {self.name}: {value:#x} does not fit {self.width} bits")
        self.value = value
        return True

    def write(self) -> None:
        value = self.value
        self.setter(_DEPOSIT, value if self.format is None else format(value, self.format))


def _output_readers(dut, names, *, two_state: bool = False) -> list[tuple]:
    """``(name, read, mask)`` per output. ``read()`` is the port's binary string from the
    simulator (``0``/``1``, or ``x``/``z`` bits), bypassing cocotb's ``LogicArray``; with
    ``two_state`` (Verilator, which has no X or Z), a port of up to 32 bits is read as an
    integer instead (the simulator's signed 32-bit value; ``mask`` makes it unsigned),
    which skips building and parsing a string (``mask`` is ``None`` for a string read)."""
    readers = []
    for name in names:
        handle = getattr(dut, name)
        raw, width = handle._handle, len(handle)
        if two_state and width <= 32:
            readers.append((name, raw.get_signal_val_long, (1 << width) - 1))
        else:
            readers.append((name, raw.get_signal_val_binstr, None))
    return readers


def _sample_all(readers, cycle: int) -> dict[str, int]:
    """Every output as an unsigned int; an X or Z bit raises ``ValueError`` naming the
    port and the cycle."""
    got = {}
    for name, read, mask in readers:
        if mask is not None:
            got[name] = read() & mask
            continue
        bits = read()
        try:
            got[name] = int(bits, 2)
        except ValueError:
            raise ValueError(f"cycle {cycle}: output {name} is {bits} (X or Z bits)") from None
    return got


def _write_phase():
    """The trigger to await before writing a cycle's inputs after the clock edge: none on
    Verilator, ``ReadWrite`` elsewhere.

    Verilator evaluates a clock edge whole (every register takes its new value) before it
    calls cocotb back on the rising edge, so inputs written there count only from the next
    edge on. Icarus calls back on the edge before the ``always @(posedge clk)`` processes
    have run, and an input written then would be sampled by the edge it follows
    (``compression.indirection_table`` fails at its first stall); cocotb itself queues a
    plain ``handle.value = v`` for the ReadWrite phase, where the harness writes too.
    """
    import cocotb
    from cocotb.triggers import ReadWrite

    return None if cocotb.SIM_NAME.lower().startswith("verilator") else ReadWrite()


async def cosimulate(dut, stimulus: Stimulus, config: BenchConfig | None = None) -> int:
    """Run ``stimulus`` on ``dut`` (cocotb) and the block's golden model.

    The block, its parameters, the seed and the cycle budget come from ``config``
    (by default from the environment :mod:`gpurf.sim.runner` sets). Returns the cycles compared.

    Per cycle: the inputs the stimulus changed are written after the clock edge (see
    :func:`_write_phase`), every output is read in the ReadOnly phase and compared with the
    golden model's under its mask (``None``: not compared), then the next rising edge. Port
    handles are looked up once and read and written through the simulator's own integer and
    binary-string calls, not through ``LogicArray``.
    """
    from cocotb.clock import Clock
    from cocotb.triggers import ReadOnly, RisingEdge, Timer

    from gpurf.hw.registry import get_block

    config = config or BenchConfig.from_env()
    block = get_block(config.block)
    model = block.golden(config.params)
    label = f"{block.qualname}/{stimulus.__name__}"
    ports = port_map(block.build(config.params))
    input_names = [n for n, (flow, _) in ports.items() if flow == wiring.In]
    outputs = [n for n, (flow, _) in ports.items() if flow == wiring.Out]
    clocked = hasattr(dut, "clk")
    rng = random.Random(config.seed)
    dut._log.info("%s: seed %d (set GPURF_SEED / --seed to repeat)", label, config.seed)
    checker = _Checker(model, outputs, config.seed, label)
    for name in input_names:
        getattr(dut, name).value = 0
    if clocked:
        Clock(dut.clk, CLOCK_PERIOD_NS, unit="ns").start()
        dut.rst.value = 1
        await RisingEdge(dut.clk)
        dut.rst.value = 0
        next_cycle = RisingEdge(dut.clk)
    else:
        await Timer(1, unit="ns")
        next_cycle = Timer(CLOCK_PERIOD_NS, unit="ns")
    model.reset()
    inputs_ = [_InputPort(name, getattr(dut, name)) for name in input_names]
    write_phase, read_only = _write_phase(), ReadOnly()
    input_order = dict.fromkeys(input_names)
    readers = _output_readers(dut, outputs, two_state=write_phase is None)
    generator = stimulus(config.params, rng, config.cycles)
    got, cycle, limit = None, 0, config.stop_at or math.inf
    try:
        while cycle < limit:
            applied = _full_inputs(generator.send(got), input_order)
            changed = [port for port in inputs_ if port.changed(applied[port.name])]
            if changed and write_phase is not None:
                await write_phase
            for port in changed:
                port.write()
            await read_only
            got = _sample_all(readers, cycle)
            checker.check(cycle, applied, got)
            cycle += 1
            await next_cycle
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
