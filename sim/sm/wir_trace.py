"""A kernel's register traffic through the composed WIR allocation pipeline
(``wir.pipeline``), recorded as a trace to replay on its RTL (``gpurf replay``).

:class:`PipelineTap` is fed by :class:`~gpurf.sim.sm.wir.WirStorage` during a kernel run:
every register writeback becomes a ``result``, every in-flight source reference taken at
issue a ``hold`` and its end at the operand read a ``drop``, every register of an exiting
warp an ``unmap``. The pipeline is a small configuration (:data:`TAP_PARAMS`), so the
SM's state folds onto it: warps in order of first appearance modulo ``warps``, registers
modulo ``regs``, each value's 32 lanes XOR-folded into ``lanes`` lanes of ``data_width``
bits (equal values stay equal; different values may fold together, which the verify
comparator then rejects), a lane group active only if all of its lanes are. Events are
played one per cycle in the SM's order, each held until its port takes it. The pipeline
makes its own decisions (its own VSB, pool and mappings), so the trace is the kernel's
value stream through the RTL, not a mirror of the SM model's WIR state.
"""

from collections import Counter, deque

import numpy as np

from gpurf.hw.wir.layouts import Outcome

__all__ = ["TAP_PARAMS", "PipelineTap"]

TAP_PARAMS = {"warps": 8, "regs": 4, "lanes": 4, "data_width": 8, "hash_width": 8,
              "entries": 16, "pregs": 64, "count_width": 8, "low_water": 2}
"""The pipeline configuration a kernel is recorded at: 32 mappings and 16 VSB entries
hold at most 48 of the 64 registers, so in-flight references always leave some free."""

STALL_LIMIT = 10_000
"""Cycles an event may wait for its port before the tap gives up (a deadlock)."""


class PipelineTap:
    """Plays SM events into the golden ``wir.pipeline`` behind a trace recorder.

    Parameters
    ----------
    path : str or Path
        The trace file.
    source : dict
        What the trace records (kernel, size, configuration), for its header.
    seed : int
        The trace header's seed.
    """

    def __init__(self, path, source: dict, seed: int = 0):
        from gpurf.golden.trace import Recorder, TraceWriter, layout_of
        from gpurf.hw.registry import get_block

        block = get_block("wir.pipeline")
        params = block.resolve(TAP_PARAMS)
        self.model = block.golden(params)
        self.config = self.model.config
        header = {"block": block.qualname, "params": params, "seed": seed, "sm": None,
                  "unmodeled": [], "source": source}
        self.writer = TraceWriter(path, layout_of(block.build(params)), header)
        self.recorder = Recorder(self.model, self.writer)
        self.idle = {f"{port}__{part}": 0 for port in ("result", "reuse", "hold", "drop",
                                                       "unmap") for part in ("valid", "payload")}
        self.warps: dict = {}
        self.held: dict = {}
        """(SM warp key, SM register) -> the pipeline registers held, oldest first."""
        self.events: deque = deque()
        self.outcomes: Counter = Counter()
        """Retirements per outcome name (``SHARED``, ``ALLOCATED``, ...)."""

    def _reg(self, key, reg) -> dict:
        warp = self.warps.setdefault(key, len(self.warps) % self.config.warps)
        return {"warp": warp, "reg": reg % self.config.regs}

    def result(self, key, reg, values, lanes) -> None:
        """A register writeback of ``values`` (32 lanes) with active ``lanes``."""
        config = self.config
        groups = np.asarray(values, np.uint32).reshape(config.lanes, -1)
        active = np.asarray(lanes, bool).reshape(config.lanes, -1).all(axis=1)
        folded = []
        for group in groups:
            word = int(np.bitwise_xor.reduce(group))
            lane = 0
            while word:
                lane ^= word & ((1 << config.data_width) - 1)
                word >>= config.data_width
            folded.append(lane)
        mask = sum(1 << i for i, on in enumerate(active) if on)
        payload = {**self._reg(key, reg), "value": folded, "mask": mask}
        self._play("result", self.model.ports["result__payload"].pack(payload))

    def hold(self, key, reg) -> None:
        """An in-flight source reference taken at issue."""
        self._play("hold", self.model.ports["hold__payload"].pack(self._reg(key, reg)),
                   (key, reg))

    def drop(self, key, reg) -> None:
        """The oldest in-flight source reference of ``reg`` ends (the operand read)."""
        self._drain()
        held = self.held.get((key, reg))
        if held:
            preg = held.popleft()
            if preg is not None:
                self._cycle({"drop__valid": 1, "drop__payload": preg})

    def unmap(self, key, regs) -> None:
        """An exiting warp's registers."""
        for reg in regs:
            self._play("unmap", self.model.ports["unmap__payload"].pack(self._reg(key, reg)))

    def close(self) -> int:
        """Drain the events, drop every reference still held, idle a few cycles; close
        the trace and return its cycle count."""
        self.drop_all()
        for _ in range(4):
            self._cycle({})
        self.writer.close()
        return self.writer.cycles

    def drop_all(self) -> None:
        """Drain the events and drop every reference still held (a launch ends: the SM
        model empties its structures)."""
        self._drain()
        for held in self.held.values():
            for preg in held:
                if preg is not None:
                    self._cycle({"drop__valid": 1, "drop__payload": preg})
        self.held.clear()

    def _play(self, port, payload, hold_key=None) -> None:
        self.events.append((port, payload, hold_key))
        self._drain()

    def _drain(self) -> None:
        """Offer the events in order, one per cycle, each until taken."""
        waited = 0
        while self.events:
            port, payload, hold_key = self.events[0]
            outputs = self._cycle({f"{port}__valid": 1, f"{port}__payload": payload})
            if not outputs[f"{port}__ready"]:
                waited += 1
                if waited > STALL_LIMIT:
                    raise RuntimeError(f"wir.pipeline: {port} not taken in {STALL_LIMIT} "
                                       "cycles")
                continue
            waited = 0
            self.events.popleft()
            if hold_key is not None:
                preg = outputs["held__payload"] if outputs["held__valid"] else None
                self.held.setdefault(hold_key, deque()).append(preg)

    def _cycle(self, inputs: dict) -> dict:
        outputs = self.recorder.step({**self.idle, **inputs})
        if outputs["retired__valid"]:
            retired = self.model.ports["retired__payload"].unpack(outputs["retired__payload"])
            self.outcomes[Outcome(retired.outcome).name] += 1
        return outputs
