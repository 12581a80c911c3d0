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
from typing import NamedTuple

import numpy as np

from gpurf.hw.wir.configs import SOURCES
from gpurf.hw.wir.layouts import Outcome

__all__ = ["BACKEND_PARAMS", "TAP_PARAMS", "BackendTap", "Issued", "PipelineTap", "fold_value"]

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
    verify_cache : int
        The pipeline's verify-cache entries: the SM run's (8 in the V configurations, 0
        else), so the trace carries its verify-reads answered by the cache
        (``verify_cached``, counted in :attr:`verify_cached`).
    """

    def __init__(self, path, source: dict, seed: int = 0, *, verify_cache: int = 0):
        from gpurf.golden.trace import Recorder, TraceWriter, layout_of
        from gpurf.hw.registry import get_block

        block = get_block("wir.pipeline")
        params = block.resolve({**TAP_PARAMS, "verify_cache": verify_cache})
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
        self.verify_cached = 0
        """Verify-reads the verify cache answered (bank reads saved)."""

    def _reg(self, key, reg) -> dict:
        warp = self.warps.setdefault(key, len(self.warps) % self.config.warps)
        return {"warp": warp, "reg": reg % self.config.regs}

    def result(self, key, reg, values, lanes) -> None:
        """A register writeback of ``values`` (32 lanes) with active ``lanes``."""
        config = self.config
        folded, mask = fold_value(values, lanes, groups=config.lanes, width=config.data_width)
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
        self.verify_cached += outputs["verify_cached"]
        if outputs["retired__valid"]:
            retired = self.model.ports["retired__payload"].unpack(outputs["retired__payload"])
            self.outcomes[Outcome(retired.outcome).name] += 1
        return outputs


BACKEND_PARAMS = {"warps": 8, "regs": 8, "pregs": 64, "lanes": 4, "data_width": 8,
                  "hash_width": 8, "entries": 16, "reuse_entries": 16, "opcode_bits": 8,
                  "imm_bits": 8, "blocks": 4, "barrier_bits": 2, "retry_depth": 4,
                  "count_width": 8, "low_water": 4}
"""The ``wir.backend`` configuration a kernel is recorded at: 64 mappings, 16 VSB entries
and 16 reuse-buffer entries (up to four references each) can hold more than the 64
registers, so low-register mode and its evictions are exercised."""


def fold_value(values, lanes, *, groups: int, width: int) -> tuple[list, int]:
    """32 lanes of ``values`` XOR-folded into ``groups`` lanes of ``width`` bits (equal
    values stay equal), and the mask of the groups whose lanes are all active."""
    words = np.asarray(values, np.uint32).reshape(groups, -1)
    active = np.asarray(lanes, bool).reshape(groups, -1).all(axis=1)
    folded = []
    for group in words:
        word = int(np.bitwise_xor.reduce(group))
        lane = 0
        while word:
            lane ^= word & ((1 << width) - 1)
            word >>= width
        folded.append(lane)
    return folded, sum(1 << i for i, on in enumerate(active) if on)


class Issued(NamedTuple):
    """A warp instruction as the SM issues it, in the SM's terms."""

    key: tuple
    """The SM warp ``(block, index)``."""
    block: object
    """Its thread block's id."""
    opcode: int
    regs: int
    """Bit ``k``: operand ``k`` is a register."""
    operand: list
    """Logical registers (where ``regs``) and immediates."""
    dst: int | None
    """The first destination register (``None``: no register result)."""
    value: object
    """The result's 32 lanes (``None``: no register result)."""
    lanes: object
    """The executing lanes (32 booleans)."""
    kind: int
    store: str | None
    barrier: bool
    bypass: bool


class BackendTap:
    """Plays a kernel's instruction stream into the golden ``wir.backend`` behind a trace
    recorder (:data:`BACKEND_PARAMS`).

    The tap is the SM around the composed backend, one instruction at a time: each issued
    warp instruction is offered on ``issue`` until taken; its ``out`` is followed (a reuse
    hit retires by itself; a pending hit waits for its re-check, ``retried``); an executed
    one gets its functional result (the value the functional run computed, folded as
    :func:`fold_value`) on ``result`` with the reservation fields of its ``out``, and the
    source references handed on ``sources`` end on ``release`` in the next cycle (the
    operand read). The tap then steps until nothing is in flight. SM warps and thread
    blocks fold onto the backend's warps and block slots in order of first appearance,
    logical registers modulo ``regs``, immediates to ``imm_bits``, opcode codes modulo the
    ``op`` field. A warp's first instruction sends ``launch`` for its slot (with its warp),
    a ``bar`` sends ``barrier``, an exiting SM warp ``exit``. Instructions the SM's reuse
    buffer would not look up go with ``bypass``; those without a register destination get
    no result. The backend decides reuse with its own state, so the trace is the kernel's
    stream through the RTL, not a mirror of the SM model's WIR decisions.

    Parameters
    ----------
    path : str or Path
    source : dict
        What the trace records, for its header.
    seed : int
        The trace header's seed.
    verify_cache : int
        The pipeline's verify-cache entries (the SM run's, as :class:`PipelineTap`).
    """

    def __init__(self, path, source: dict, seed: int = 0, *, verify_cache: int = 0):
        from gpurf.golden.trace import Recorder, TraceWriter, layout_of
        from gpurf.hw.ports import codec
        from gpurf.hw.registry import get_block

        block = get_block("wir.backend")
        params = block.resolve({**BACKEND_PARAMS, "seed": seed, "verify_cache": verify_cache})
        self.model = block.golden(params)
        self.config = config = self.model.config
        header = {"block": block.qualname, "params": params, "seed": seed, "sm": None,
                  "unmodeled": [], "source": source}
        self.writer = TraceWriter(path, layout_of(block.build(params)), header)
        self.recorder = Recorder(self.model, self.writer)
        self.codecs = config.codecs
        self.tags = codec(config.front.reuse.tag_layout)
        self.idle = {f"{port}__{part}": 0 for port in ("issue", "barrier", "launch", "result",
                                                       "hold", "drop", "exit")
                     for part in ("valid", "payload")}
        self.idle["release"] = self.codecs["release"].pack([])
        self.warps: dict = {}
        self.blocks: dict = {}
        self.expected: deque = deque()
        """Per issued instruction whose ``out`` has not left, its result fields (``None``:
        no register result)."""
        self.pending: list = []
        """Result fields of pending hits waiting for their re-check."""
        self.results: deque = deque()
        self.handed: list = []
        self.outcomes: Counter = Counter()
        """Retirements per outcome name."""
        self.responses: Counter = Counter()
        """``out`` answers: ``hit``, ``pending``, ``executed`` (re-checks included)."""

    def _waiting(self, out) -> int:
        """The pending hit a re-check answers: the oldest of its warp and register."""
        return next((k for k, result in enumerate(self.pending) if result is not None
                     and (result["warp"], result["reg"]) == (out.warp, out.dst)), 0)

    def issue(self, ins: Issued) -> None:
        """Play one warp instruction through the backend until nothing is in flight."""
        config = self.config
        if ins.key not in self.warps:
            self.warps[ins.key] = len(self.warps) % config.warps
            self._offer("launch", self._block(ins))
        warp = self.warps[ins.key]
        if ins.barrier:
            self._offer("barrier", self._block(ins))
        divergent = not np.asarray(ins.lanes, bool).all()
        payload = {
            "warp": warp, "tb": self._slot(ins),
            "opcode": {"op": ins.opcode % (1 << config.opcode_bits - 3), "regs": ins.regs},
            "operand": [value % config.regs if ins.regs >> k & 1
                        else value & (1 << config.imm_bits) - 1
                        for k, value in enumerate(ins.operand)],
            "dst": (ins.dst or 0) % config.regs, "divergent": int(divergent),
            "kind": ins.kind, "store_shared": int(ins.store == "shared"),
            "store_global": int(ins.store == "global"), "bypass": int(ins.bypass)}
        result = None
        if ins.dst is not None:
            value, mask = fold_value(ins.value, ins.lanes, groups=config.lanes,
                                     width=config.data_width)
            result = {"warp": warp, "reg": payload["dst"], "value": value, "mask": mask}
        self.expected.append(result)
        self._offer("issue", self.codecs["issue__payload"].pack(payload))
        self._settle()

    def _block(self, ins: Issued) -> int:
        return self.codecs["launch__payload"].pack(
            {"tb": self._slot(ins), "warps": 1 << self.warps[ins.key]})

    def _slot(self, ins: Issued) -> int:
        """The block slot: blocks in order of first appearance modulo ``blocks``."""
        return self.blocks.setdefault(ins.block, len(self.blocks) % self.config.blocks)

    def exit(self, key) -> None:
        """SM warp ``key`` exits: its backend warp's mappings are swept."""
        if key in self.warps:
            self._offer("exit", self.warps[key])
            self._settle()

    def new_launch(self) -> None:
        """A launch ends: every backend warp in use exits (the SM model empties its
        structures), and the next launch's warps fold afresh."""
        self._settle()
        for warp in sorted(set(self.warps.values())):
            self._offer("exit", warp)
            self._settle()
        self.warps.clear()
        self.blocks.clear()

    def close(self) -> int:
        """Idle a few cycles; close the trace and return its cycle count."""
        self._settle()
        for _ in range(4):
            self._cycle({})
        self.writer.close()
        return self.writer.cycles

    def _offer(self, port, payload) -> None:
        for _ in range(STALL_LIMIT):
            if self._cycle({f"{port}__valid": 1, f"{port}__payload": payload}).get(
                    f"{port}__ready", 1):
                return
        raise RuntimeError(f"wir.backend: {port} not taken in {STALL_LIMIT} cycles")

    def _settle(self) -> None:
        for _ in range(STALL_LIMIT):
            if not (self.expected or self.pending or self.results or self.handed
                    or self.model.queue):
                return
            self._cycle({})
        raise RuntimeError(f"wir.backend: still busy after {STALL_LIMIT} cycles")

    def _cycle(self, inputs: dict) -> dict:
        codecs = self.codecs
        inputs = {**self.idle, **inputs}
        if self.handed:
            inputs["release"] = codecs["release"].pack(
                [{"valid": 1, "preg": preg} for preg in self.handed[:3]])
        if self.results:
            inputs.update(result__valid=1,
                          result__payload=codecs["result__payload"].pack(self.results[0]))
        outputs = self.recorder.step(inputs)
        del self.handed[:3]
        if inputs["result__valid"] and outputs["result__ready"]:
            self.results.popleft()
        self.handed += [ref.preg for ref in codecs["sources"].unpack(outputs["sources"])
                        if ref.valid]
        if outputs["retired__valid"]:
            retired = codecs["retired__payload"].unpack(outputs["retired__payload"])
            self.outcomes[Outcome(retired.outcome).name] += 1
        if outputs["out__valid"]:
            self._out(codecs["out__payload"].unpack(outputs["out__payload"]))
        return outputs

    def _out(self, out) -> None:
        if out.retried:
            result = self.pending.pop(self._waiting(out)) if self.pending else None
        else:
            result = self.expected.popleft()
        if out.response.hit:
            self.responses["hit"] += 1
            return
        if out.response.pending:
            self.responses["pending"] += 1
            self.pending.append(result)
            return
        self.responses["executed"] += 1
        if result is None:
            return
        reservation = {"reserved": 0, "index": 0, "tag": 0}
        if out.response.reserved:
            mask = (1 << self.config.preg_bits) - 1
            reservation = {"reserved": 1, "index": out.response.index, "tag": self.tags.pack({
                "opcode": out.lookup.opcode,
                "operand": [out.lookup.operand[k] & mask for k in range(SOURCES)],
                "tbid": out.lookup.tbid, "barrier": out.lookup.barrier})}
        self.results.append({**result, **reservation})
