"""Recording a kernel's block traffic: one port trace per block instance the SM consults.

``gpurf sm run KERNEL --record DIR`` hands :class:`~gpurf.sim.sm.timing.TimingSM` a
:class:`RecordingBlocks` factory (the ``blocks=`` seam, :mod:`gpurf.sim.sm.blocks`): the
same golden blocks, each wrapped so that every cycle the SM runs it is also written, at the
block's ports, to a trace (:mod:`gpurf.golden.trace`, format in ``docs/traces.md``) that
``gpurf replay`` drives through the block's Verilog. Recording is opt-in: the default
factory is untouched and keeps the SM's inlined fast path.

The SM calls its blocks through methods, not ports; the wrappers turn each cycle's calls
into the port values the block's ``step`` would have seen and returned:

- operand collector: ``grants(writes)`` gives ``write``, ``advance(grants, offer,
  dispatch_ready, issue)`` the cycle (``issue`` packed into ``issue.payload``); the outputs
  are the model's own port outputs of that cycle. The timing model carries no register
  data, so ``read[b].data`` are recorded as zeros (the header names them ``unmodeled``) and
  the dispatched operand data is zero on both sides;
- RBA scorer: every ``advance(slot_ops, queue_len)``, scores read in full;
- warp selector: every pick, a slot valid and ready when it is in ``ready``, with the SM's
  ages and scores (0 under GTO) and the greedy slot;
- sub-core assigner: its ``step`` as it is (:class:`~gpurf.golden.trace.Recorder`).

**Cycles.** A trace holds the cycles the block was *run*: the SM skips the cycles where a
sub-core's collector is idle and no warp is ready (nothing changes in them), so a collector
trace leaves them out; the scorer is fed at most ``score_latency + 1`` idle cycles after such
a stretch (enough for its outputs to settle, as in the SM); the selector is a combinational
block stepped at each pick; the assigner at each warp, launch and table write. Each trace
is a dense, exact run of the golden model's ``step`` (``source.cycles`` in the header says
which cycles), so the replay compares every recorded cycle.

**Mechanisms join** through :meth:`TraceFolder.wrap` ``(qualname, params, model, instance)
-> model``: a mechanism that steps golden models by ports (GReEneR's power controller,
:func:`gpurf.sim.greener.record_traces` uses the same shape) wraps each one it builds and
steps the returned object instead; the folder writes and closes the trace.
"""

import dataclasses
from pathlib import Path

from gpurf.golden.subcore.operand_collector import OperandCollector
from gpurf.golden.subcore.rba_scorer import RbaScorer
from gpurf.golden.subcore.warp_selector import WarpSelector, pick_warp
from gpurf.golden.trace import Recorder, TraceWriter, layout_of
from gpurf.hw.registry import get_block

from .blocks import GoldenBlocks
from .config import SMConfig

__all__ = ["RecordingBlocks", "TraceFolder", "collector_params", "scorer_params",
           "selector_params"]


class TraceFolder:
    """The traces of one run, in ``folder``: :meth:`wrap` opens one per block instance,
    :meth:`close` finishes them all (writing their cycle counts).

    ``source`` (kernel, size, ...) and ``sm`` (the SM configuration) go into every header;
    ``seed`` is the run's seed.
    """

    def __init__(self, folder, *, source: dict, sm: dict | None, seed: int = 0):
        self.folder = Path(folder)
        self.source, self.sm, self.seed = source, sm, seed
        self.writers: list[TraceWriter] = []

    def writer(self, qualname: str, params: dict, instance: str,
               unmodeled=()) -> TraceWriter:
        """A new trace ``<folder>/<instance>.trace`` of block ``qualname``."""
        block = get_block(qualname)
        params = block.resolve(params)
        header = {"block": qualname, "params": params, "seed": self.seed, "sm": self.sm,
                  "unmodeled": sorted(unmodeled),
                  "source": {**self.source, "instance": instance,
                             "cycles": "the cycles the SM ran the block (docs/traces.md)"}}
        writer = TraceWriter(self.folder / f"{instance}.trace", layout_of(block.build(params)),
                             header)
        self.writers.append(writer)
        return writer

    def wrap(self, qualname: str, params: dict, model, instance: str):
        """``model`` (a golden model stepped by ports) recording into a new trace."""
        return Recorder(model, self.writer(qualname, params, instance))

    def close(self) -> list[Path]:
        """Finish every trace; their paths."""
        for writer in self.writers:
            writer.close()
        return [writer.path for writer in self.writers]

    def abandon(self) -> None:
        for writer in self.writers:
            writer.abandon()


def collector_params(config: SMConfig) -> dict:
    """The ``subcore.operand_collector`` parameters of ``config``'s collectors."""
    return {"cus": config.cus, "banks": config.banks, "operands": config.operands,
            "lanes": 32, "data_width": 32, "slots": config.slots, "reg_bits": 8,
            "read_latency": config.read_latency, "bank_map": config.bank_map}


def scorer_params(config: SMConfig) -> dict:
    return {"slots": config.slots, "operands": config.operands, "banks": config.banks,
            "cus": config.cus, "score_width": config.score_width,
            "score_latency": config.score_latency}


def selector_params(config: SMConfig) -> dict:
    return {"slots": config.slots, "score_width": config.score_width,
            "policy": config.scheduler, "rba_greedy": config.rba_greedy}


def assigner_params(config: SMConfig) -> dict:
    return {"subcores": max(2, config.subcores), "depth": config.hash_depth}


class _RecordingCollector(OperandCollector):
    """The golden collector, writing each cycle the SM advances it at its ports."""

    def attach(self, writer: TraceWriter) -> "_RecordingCollector":
        self.writer = writer
        self._writes = 0
        self._zeros = {name: 0 for name in self._read_data}
        return self

    def grants(self, writes: int = 0):
        self._writes = writes
        return super().grants(writes)

    def advance(self, grants, offer, dispatch_ready: bool, issue) -> bool:
        dispatching = offer is not None and bool(dispatch_ready)
        outputs = self._outputs(grants, offer, dispatching)
        payload = 0
        if issue is not None:
            warp, regs = issue[0], issue[1]
            payload = self.ports["issue__payload"].pack({
                "warp": warp,
                "operand": [{"valid": int(i in regs), "reg": regs.get(i, 0)}
                            for i in range(self.config.operands)]})
        inputs = {"issue__valid": int(issue is not None), "issue__payload": payload,
                  "dispatch__ready": int(bool(dispatch_ready)), "write": self._writes,
                  **self._zeros}
        self._writes = 0
        self.writer.append(inputs, outputs)
        return super().advance(grants, offer, dispatch_ready, issue)


class _RecordingScorer(RbaScorer):
    """The golden RBA scorer, writing each ``advance`` at its ports."""

    def attach(self, writer: TraceWriter) -> "_RecordingScorer":
        self.writer = writer
        return self

    def advance(self, slots, queue_len, *, lazy: bool = False):
        scores = super().advance(slots, queue_len, lazy=lazy)
        ports = self.ports
        inputs = {"slot": ports["slot"].pack([[{"valid": v, "bank": b} for v, b in ops]
                                              for ops in slots]),
                  "queue_len": ports["queue_len"].pack(list(queue_len))}
        self.writer.append(inputs, {"score": ports["score"].pack(list(scores))})
        return scores


class _RecordingSelector:
    """:func:`pick_warp` with the signature the SM calls, writing each pick at the warp
    selector's ports."""

    def __init__(self, config: SMConfig, writer: TraceWriter):
        self.model = WarpSelector(**selector_params(config))
        self.writer = writer
        self.slots = config.slots

    def __call__(self, ready, age, score, *, policy, greedy=None, rba_greedy=False):
        choice = pick_warp(ready, age, score, policy=policy, greedy=greedy,
                           rba_greedy=rba_greedy)
        chosen = set(ready)
        slots = [{"valid": int(i in chosen), "ready": int(i in chosen), "age": age[i],
                  "score": 0 if score is None else score[i]} for i in range(self.slots)]
        inputs = {"slot": self.model.ports["slot"].pack(slots),
                  "greedy": greedy or 0, "greedy_valid": int(greedy is not None)}
        self.writer.append(inputs, {"grant_valid": int(choice is not None),
                                    "grant": choice or 0})
        return choice


class _IdlePortsDropped(Recorder):
    """A recorder leaving out the inputs the block does not have while they are 0: the SM
    drives every assigner the 4-sub-core ports (``mode``, ``table_*``), which a 2-sub-core
    assigner (built for a 1-sub-core SM, round robin) lacks. A non-zero value on a port the
    block lacks is still an error of the trace writer."""

    def step(self, inputs):
        outputs = self.model.step(inputs)
        names = self.writer._input_names
        self.writer.append({k: v for k, v in inputs.items() if k in names or v}, outputs)
        return outputs


class RecordingBlocks(GoldenBlocks):
    """The golden blocks, each recording into ``folder`` (a :class:`TraceFolder`).

    Trace names: ``launch<L>-<block>[-sc<S>]`` (``L``: the SM built for the run's ``L``-th
    launch, from 0; ``S``: the sub-core).
    """

    def __init__(self, folder: TraceFolder):
        self.folder = folder
        self.launch = -1

    def _name(self, block: str, subcore: int | None = None) -> str:
        suffix = "" if subcore is None else f"-sc{subcore}"
        return f"launch{self.launch:03d}-{block}{suffix}"

    def assigner(self, config: SMConfig):
        model = super().assigner(config)
        recorder = self.folder.wrap("subcore.subcore_assigner", assigner_params(config), model,
                                    self._name("subcore_assigner"))
        return _IdlePortsDropped(recorder.model, recorder.writer)

    def collector(self, config: SMConfig, subcore: int):
        if subcore == 0:  # the first block of a new SM (one SM per launch)
            self.launch += 1
        params = collector_params(config)
        writer = self.folder.writer(
            "subcore.operand_collector", params, self._name("operand_collector", subcore),
            unmodeled=[f"read__{b}__data" for b in range(config.banks)])
        oc = _RecordingCollector(**params).attach(writer)
        oc.carries_data = False
        return oc

    def scorer(self, config: SMConfig, subcore: int):
        params = scorer_params(config)
        writer = self.folder.writer("subcore.rba_scorer", params,
                                    self._name("rba_scorer", subcore))
        return _RecordingScorer(**params).attach(writer)

    def selector(self, config: SMConfig, subcore: int):
        writer = self.folder.writer("subcore.warp_selector", selector_params(config),
                                    self._name("warp_selector", subcore))
        return _RecordingSelector(config, writer)

    def mechanism_recorder(self, subcore: int):
        """``wrap(qualname, params, model)`` for a mechanism's blocks of sub-core
        ``subcore`` in the current launch's SM (the ``record(sub_core)`` hook of
        :class:`~gpurf.sim.sm.power.RegisterPower`), named like the sub-core blocks."""
        def wrap(qualname: str, params: dict, model):
            name = self._name(qualname.partition(".")[2], subcore)
            return self.folder.wrap(qualname, params, model, name)
        return wrap


def sm_header(config: SMConfig) -> dict:
    """The SM configuration as a trace header holds it."""
    return dataclasses.asdict(config)


def record_run(folder, kernel: str, size: str, config: SMConfig, *, seed: int = 0):
    """A :class:`TraceFolder` in ``folder`` for ``kernel`` at ``size`` on ``config`` and the
    ``mechanism=`` option of :func:`~gpurf.sim.sm.run.run_kernel` that records into it; call
    the folder's :meth:`~TraceFolder.close` after the run.

    Raises ``OSError`` when ``folder`` cannot be made, ``FileExistsError`` when ``folder``
    already holds traces (a later replay of the folder would mix runs).
    """
    folder = Path(folder)
    if folder.is_dir() and any(folder.glob("*.trace")):
        raise FileExistsError(f"{folder} already holds traces; give an empty or new folder")
    folder.mkdir(parents=True, exist_ok=True)
    traces = TraceFolder(folder, source={"kind": "kernel", "kernel": kernel, "size": size},
                         sm=sm_header(config), seed=seed)
    blocks = RecordingBlocks(traces)
    return traces, lambda program: (program, {"blocks": blocks})


GREENER_PRESET = "k20x"
"""The configuration GReEneR runs on (as :data:`gpurf.sim.greener.CONFIG`)."""


def record_greener(folder, kernel: str, size: str, policy: str = "greener", *,
                   latency: int = 1):
    """Run ``kernel`` with GReEneR's ``policy`` on its k20x configuration, recording the
    sub-core blocks and, per sub-core, the power controller, scoreboard extension and
    correction table (if the policy has one) into ``folder``. Returns ``(run, paths)``.

    GReEneR's blocks join through :meth:`RecordingBlocks.mechanism_recorder`, the same
    ``record(sub_core)`` hook :func:`gpurf.sim.greener.record_traces` uses.
    """
    from .config import load_config
    from .power import PowerSettings, RegisterPower
    from .run import run_kernel

    config = load_config(preset=GREENER_PRESET)
    traces, mechanism = record_run(folder, kernel, size, config)
    traces.source["mechanism"] = f"greener:{policy}"
    blocks = mechanism(None)[1]["blocks"]
    power = RegisterPower(PowerSettings(policy, "issue", latency, 2 * latency),
                          record=blocks.mechanism_recorder)
    try:
        run = run_kernel(kernel, size, timing=config, power=power, mechanism=mechanism)
        power.finish(run.stats["timing"].cycles)
    except BaseException:
        traces.abandon()
        raise
    return run, traces.close()
