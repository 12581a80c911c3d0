"""RTL in the loop: the SM's sub-core blocks answered by their Verilog, through a handed port.

:class:`RtlBlocks` is a ``blocks=`` factory (:mod:`gpurf.sim.sm.blocks`) whose blocks named
in ``rtl`` (``operand_collector``, ``rba_scorer``, ``warp_selector``, ``subcore_assigner``)
take their decisions from a simulated RTL instance; the others stay golden. The SM never
imports a simulator: it is handed ``ports(block, index)``, which returns a :class:`Port`
(``gpurf.sim.rtl_loop`` implements it with cocotb, one instance per block and sub-core in a
generated top module).

Per SM cycle a block's adapter writes the inputs it knows, lets same-cycle signals settle
and reads the outputs before the SM uses them (:meth:`Port.evaluate`), then takes the clock
edge (:meth:`Port.tick`). The operand collector needs three phases, because the SM learns
its inputs during the cycle: ``write`` (then the read grants, the dispatch offer and the
queue lengths are read), ``dispatch.ready`` (then ``issue.ready``), ``issue`` (then the
edge).

The SM's decisions are the RTL's: which banks are read, whether and when a collector unit
dispatches, whether the issue register takes the warp, which warp is picked, the scores, the
sub-core of each warp. What the RTL does not show at its ports and the SM keeps per
collector unit (the instruction attached at issue, its operands' registers) lives in a
*shadow* golden collector, advanced with the RTL's decisions. Every output is also compared,
under the golden model's mask, with the golden model of the same block fed the same inputs:
the first difference stops the run with :class:`RtlDivergenceError` (instance, the block's own
cycle, port, expected and RTL values), so a wrong RTL is reported where it first goes wrong
rather than as a changed statistic much later. Each adapter can write the port traffic it
saw into a trace (:class:`~gpurf.sim.sm.record.TraceFolder`), to set beside the all-golden
run's recording.
"""

from typing import Protocol

from gpurf.golden.subcore.operand_collector import OperandCollector
from gpurf.golden.subcore.rba_scorer import RbaScorer
from gpurf.golden.subcore.subcore_assigner import SubcoreAssigner
from gpurf.golden.subcore.warp_selector import WarpSelector, pick_warp

from .blocks import GoldenBlocks
from .config import SMConfig
from .record import (
    TraceFolder,
    assigner_params,
    collector_params,
    scorer_params,
    selector_params,
)

__all__ = ["RTL_BLOCKS", "Port", "RtlBlocks", "RtlDivergenceError", "instances"]

RTL_BLOCKS = ("operand_collector", "rba_scorer", "warp_selector", "subcore_assigner")
"""The blocks ``--rtl`` can put in the loop (``subcore.<name>``)."""


class Port(Protocol):
    """One RTL instance of a block, as the SM drives it."""

    def reset(self) -> None:
        """Reset: inputs 0, ``rst`` high for one rising edge (nothing without a clock)."""

    def evaluate(self, inputs: dict[str, int]) -> dict[str, int]:
        """Apply every input (packed, by Verilog port name), let the logic settle, and return
        every output."""

    def tick(self) -> None:
        """One rising clock edge with the inputs last applied (nothing without a clock)."""


class RtlDivergenceError(AssertionError):
    """An RTL output differs from the golden model's in the loop."""

    def __init__(self, instance: str, cycle: int, port: str, expected: int, actual: int):
        self.instance, self.cycle, self.port = instance, cycle, port
        self.expected, self.actual = expected, actual
        super().__init__(f"{instance}: cycle {cycle}, port {port}: expected {expected:#x}, "
                         f"RTL {actual:#x}")


def instances(config: SMConfig, name: str) -> int:
    """How many instances of block ``name`` an SM of ``config`` has."""
    if name == "subcore_assigner":
        return 1
    if name == "rba_scorer":
        return config.subcores if config.scheduler == "rba" else 0
    if name == "warp_selector":
        return config.subcores if config.scheduler in ("gto", "rba") else 0
    return config.subcores


class _Adapter:
    """Shared by the adapters: the port, the instance's name, its cycle count and trace."""

    def __init__(self, port: Port, instance: str, writer=None):
        self.port, self.instance, self.writer = port, instance, writer
        self.cycle = 0
        port.reset()

    def check(self, got: dict, expected: dict, names=None) -> None:
        for name in names or expected:
            want = expected[name]
            if want is not None and got[name] != want:
                raise RtlDivergenceError(self.instance, self.cycle, name, want, got[name])

    def done(self, inputs: dict, outputs: dict) -> None:
        if self.writer is not None:
            self.writer.append(inputs, outputs)
        self.cycle += 1


class _RtlCollector(_Adapter):
    """The SM's operand collector with the RTL's decisions (see the module docstring)."""

    def __init__(self, port: Port, instance: str, params: dict, writer=None):
        super().__init__(port, instance, writer)
        self.shadow = shadow = OperandCollector(**params)
        shadow.carries_data = False
        self.codec = shadow.ports
        self.zeros = {name: 0 for name in shadow._read_data}
        self.read_ports = shadow._read_ports
        self.operands = shadow.config.operands

    @property
    def idle(self) -> bool:
        return self.shadow.idle

    @property
    def units(self):
        return self.shadow.units

    @property
    def queued(self) -> int:
        return self.shadow.queued

    def grants(self, writes: int = 0):
        shadow = self.shadow
        self.inputs = {"issue__valid": 0, "issue__payload": 0, "dispatch__ready": 0,
                       "write": writes, **self.zeros}
        self.out = out = self.port.evaluate(self.inputs)
        expected, self.expected_offer = shadow.grants(writes), shadow.offer()
        golden = shadow._outputs(expected, self.expected_offer, False)
        golden.pop("issue__ready")
        self.check(out, golden)
        return {bank: shadow.queues[bank][0] for bank, (valid, _) in
                enumerate(self.read_ports) if out[valid]}

    def offer(self):
        return self.expected_offer if self.out["dispatch__valid"] else None

    def queue_lengths(self) -> list[int]:
        return list(self.codec["queue_len"].unpack(self.out["queue_len"]))

    def accepts(self, dispatching: bool) -> bool:
        self.inputs["dispatch__ready"] = int(bool(dispatching))
        ready = self.port.evaluate(self.inputs)["issue__ready"]
        self.out["issue__ready"] = ready
        self.check({"issue__ready": ready},
                   {"issue__ready": int(self.shadow.accepts(bool(dispatching)))})
        return bool(ready)

    def advance(self, grants, offer, dispatch_ready: bool, issue) -> bool:
        inputs = self.inputs
        inputs["dispatch__ready"] = int(bool(dispatch_ready))
        if issue is not None:
            warp, regs = issue[0], issue[1]
            inputs["issue__valid"] = 1
            inputs["issue__payload"] = self.codec["issue__payload"].pack({
                "warp": warp, "operand": [{"valid": int(i in regs), "reg": regs.get(i, 0)}
                                          for i in range(self.operands)]})
        self.port.evaluate(inputs)
        self.port.tick()
        self.done(inputs, self.out)
        return self.shadow.advance(grants, offer, dispatch_ready, issue)


class _RtlScorer(_Adapter):
    def __init__(self, port: Port, instance: str, params: dict, writer=None):
        super().__init__(port, instance, writer)
        self.shadow = RbaScorer(**params)
        self.codec = self.shadow.ports

    def advance(self, slots, queue_len, *, lazy: bool = False):
        codec = self.codec
        inputs = {"slot": codec["slot"].pack([[{"valid": v, "bank": b} for v, b in ops]
                                              for ops in slots]),
                  "queue_len": codec["queue_len"].pack(list(queue_len))}
        out = self.port.evaluate(inputs)
        self.port.tick()
        expected = codec["score"].pack(list(self.shadow.advance(slots, queue_len)))
        self.check(out, {"score": expected})
        self.done(inputs, out)
        return list(codec["score"].unpack(out["score"]))


class _RtlSelector(_Adapter):
    def __init__(self, port: Port, instance: str, params: dict, writer=None):
        super().__init__(port, instance, writer)
        self.codec = WarpSelector(**params).ports
        self.slots = params["slots"]

    def __call__(self, ready, age, score, *, policy, greedy=None, rba_greedy=False):
        chosen = set(ready)
        slots = [{"valid": int(i in chosen), "ready": int(i in chosen), "age": age[i],
                  "score": 0 if score is None else score[i]} for i in range(self.slots)]
        inputs = {"slot": self.codec["slot"].pack(slots), "greedy": greedy or 0,
                  "greedy_valid": int(greedy is not None)}
        out = self.port.evaluate(inputs)
        self.port.tick()
        want = pick_warp(ready, age, score, policy=policy, greedy=greedy,
                         rba_greedy=rba_greedy)
        self.check(out, {"grant_valid": int(want is not None),
                         "grant": None if want is None else want})
        self.done(inputs, out)
        return out["grant"] if out["grant_valid"] else None


class _RtlAssigner(_Adapter):
    def __init__(self, port: Port, instance: str, params: dict, writer=None):
        super().__init__(port, instance, writer)
        self.shadow = SubcoreAssigner(**params)

    def step(self, inputs):
        out = self.port.evaluate(dict(inputs))
        self.port.tick()
        self.check(out, self.shadow.step(inputs))
        self.done(inputs, out)
        return {"subcore_valid": out["subcore_valid"],
                "subcore": out["subcore"] if out["subcore_valid"] else None}


class RtlBlocks(GoldenBlocks):
    """Blocks whose names are in ``rtl`` answered by ``ports(block, index)`` (a
    :class:`Port`; ``index``: the sub-core, 0 for the assigner); the rest golden.
    ``traces`` (optional): write every RTL instance's traffic there, named as
    :class:`~gpurf.sim.sm.record.RecordingBlocks` names its traces.

    Each launch builds a new SM; its blocks reuse the same RTL instances, reset.
    """

    def __init__(self, rtl, ports, traces: TraceFolder | None = None):
        unknown = set(rtl) - set(RTL_BLOCKS)
        if unknown:
            raise ValueError(f"unknown RTL block(s) {sorted(unknown)}; known: "
                             f"{', '.join(RTL_BLOCKS)}")
        self.rtl, self.ports, self.traces = frozenset(rtl), ports, traces
        self.launch = -1

    def _name(self, block: str, subcore: int | None = None) -> str:
        suffix = "" if subcore is None else f"-sc{subcore}"
        return f"launch{self.launch:03d}-{block}{suffix}"

    def _writer(self, block: str, params: dict, name: str, unmodeled=()):
        if self.traces is None:
            return None
        return self.traces.writer(f"subcore.{block}", params, name, unmodeled)

    def collector(self, config: SMConfig, subcore: int):
        if subcore == 0:  # the first block of a new SM (one SM per launch)
            self.launch += 1
        if "operand_collector" not in self.rtl:
            return super().collector(config, subcore)
        params = collector_params(config)
        name = self._name("operand_collector", subcore)
        unmodeled = [f"read__{b}__data" for b in range(config.banks)]
        return _RtlCollector(self.ports("operand_collector", subcore), name, params,
                             self._writer("operand_collector", params, name, unmodeled))

    def scorer(self, config: SMConfig, subcore: int):
        if "rba_scorer" not in self.rtl:
            return super().scorer(config, subcore)
        params, name = scorer_params(config), self._name("rba_scorer", subcore)
        return _RtlScorer(self.ports("rba_scorer", subcore), name, params,
                          self._writer("rba_scorer", params, name))

    def selector(self, config: SMConfig, subcore: int):
        if "warp_selector" not in self.rtl:
            return super().selector(config, subcore)
        params, name = selector_params(config), self._name("warp_selector", subcore)
        return _RtlSelector(self.ports("warp_selector", subcore), name, params,
                            self._writer("warp_selector", params, name))

    def assigner(self, config: SMConfig):
        if "subcore_assigner" not in self.rtl:
            return super().assigner(config)
        params, name = assigner_params(config), self._name("subcore_assigner")
        return _RtlAssigner(self.ports("subcore_assigner", 0), name, params,
                            self._writer("subcore_assigner", params, name))
