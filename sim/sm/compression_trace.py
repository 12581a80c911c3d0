"""A kernel's operand reads through the composed read path, recorded as a port trace.

:class:`ReadPathRecording` is the compressed register file of :mod:`.compression` whose
every read of a 32-bit register also goes, as a request, through the golden model of
``compression.read_path`` (the RTL block's reference, cycle-exact at its ports): the
kernel's table is loaded through the ``load`` port first (one architectural register per
distinct entry, in table order), then the reads follow back to back in timing order, and
each register-file read the path issues is answered with the physical warp register as
it was when the SM read it. Every port of every cycle goes to a trace file
(``docs/traces.md``), which ``gpurf replay`` drives into the block's Verilog.

Each collected operand is also checked against the SM's own read: in the lanes the SM
read, its low ``width`` bits equal the value the compressed file returned (the golden
path and the SM's storage agree). Reads of 64-bit registers (two entries) and predicates
are not recorded: the path reads one 32-bit operand.
"""

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gpurf.golden.compression.read_path import ReadPath
from gpurf.golden.compression.value_extractor import unpack_entry
from gpurf.golden.trace import Recorder, TraceWriter, layout_of
from gpurf.hw.registry import get_block

from .compression import CompressedStorage, compile_kernel, mechanism
from .config import SMConfig

__all__ = ["ReadPathRecording", "RecordedReads", "record_read_path"]

BLOCK = "compression.read_path"

QUEUE = 256
"""Reads buffered before they are pumped through the path."""


@dataclass
class _Read:
    """One operand read: the request, the physical registers it needs as the SM read
    them, and the SM's value in its lanes."""

    request: dict
    words: dict
    reads: int
    want: np.ndarray
    lanes: np.ndarray
    width: int


@dataclass
class RecordedReads:
    """What a recording holds: its trace ``path``, ``cycles``, the ``reads`` recorded and
    the table ``entries`` loaded."""

    path: Path
    cycles: int
    reads: int
    entries: int
    skipped: dict = field(default_factory=dict)


class ReadPathRecording(CompressedStorage):
    """:class:`~.compression.CompressedStorage` recording its reads through the read path
    (module docstring) into the trace ``path``; :meth:`close` ends it."""

    def __init__(self, program, cp, path, source: dict):
        super().__init__(program, cp)
        block = get_block(BLOCK)
        self.params = block.resolve()
        self.model = ReadPath(**self.params)
        header = {"block": BLOCK, "params": self.params, "seed": None, "sm": None,
                  "unmodeled": [], "source": source}
        self.writer = TraceWriter(path, layout_of(block.build(self.params)), header)
        self.recorder = Recorder(self.model, self.writer)
        self.ports = self.model.ports
        self.numbers, self.arch = self._table(cp)
        self.queue: deque[_Read] = deque()
        self.fetching: deque[_Read] = deque()
        self.inflight: deque[_Read] = deque()
        self.rf_data = 0
        self.recorded = 0
        self.skipped = {"wide or predicate": 0, "unwritten": 0}
        self._load()

    def _table(self, cp):
        """Architectural register per distinct entry (table order), and per recordable
        virtual register (one entry, at most 32 bits, not a predicate) its number."""
        numbers: dict[int, int] = {}
        arch = {}
        for row in cp.allocation.table():
            numbers.setdefault(row["word"], len(numbers))
        for vreg, words in cp.allocation.entries.items():
            reg = cp.kernel.regs[vreg]
            if len(words) == 1 and reg.width <= 32 and reg.type != "pred":
                arch[vreg] = numbers[words[0]]
        if len(numbers) > self.params["entries"]:
            raise ValueError(f"{len(numbers)} table entries, the block has "
                             f"{self.params['entries']}")
        return numbers, arch

    def _load(self):
        codec = self.ports["load__payload"]
        for word, number in self.numbers.items():
            self._step({"load__valid": 1,
                        "load__payload": codec.pack({"reg": number, "entry": word})})

    def read(self, warp, reg, cycle, lanes):
        got = super().read(warp, reg, cycle, lanes)
        phys, owner = self._file(warp)
        if reg not in owner:
            self.skipped["unwritten"] += 1
            return got
        vreg, _ = owner[reg]
        if vreg not in self.arch:
            self.skipped["wide or predicate"] += 1
            return got
        entry = unpack_entry(self.cp.allocation.entries[vreg][0])
        plan = self.plans[vreg]
        request = {"reg": self.arch[vreg], "signed": int(plan.signed),
                   "convert": int(plan.fmt is not None), "tag": self.recorded & 0xFF}
        words = {entry["r0"]: phys[entry["r0"]].copy(), entry["r1"]: phys[entry["r1"]].copy()}
        self.queue.append(_Read(request, words, 2 if entry["m1"] else 1, got.copy(),
                                np.asarray(lanes, bool).copy(), plan.width))
        self.recorded += 1
        if len(self.queue) >= QUEUE:
            self._pump()
        return got

    def _pump(self, *, drain: bool = False):
        """Step the path until the queue is empty (and, with ``drain``, every operand has
        come out)."""
        while self.queue or (drain and (self.fetching or self.inflight)):
            offer = self.queue[0] if self.queue else None
            inputs = {"rf_data": self.rf_data}
            if offer is not None:
                inputs.update(request_valid=1,
                              request=self.ports["request"].pack(offer.request))
            out = self._step(inputs)
            if offer is not None and out["request_ready"]:
                self.fetching.append(self.queue.popleft())
            self.rf_data = self._answer(out)
            if out["result_valid"]:
                self._check(self.ports["result"].unpack(out["result"]))

    def _answer(self, out) -> int:
        """The register-file data for this cycle's read, on ``rf_data`` next cycle."""
        if not out["rf_valid"]:
            return 0
        read = self.fetching[0]
        data = read.words[out["rf_reg"]]
        read.reads -= 1
        if read.reads == 0:
            self.inflight.append(self.fetching.popleft())
        return self.ports["rf_data"].pack(data.tolist())

    def _check(self, result):
        read = self.inflight.popleft()
        low = np.uint64((1 << read.width) - 1)
        got = np.asarray(result.data, np.uint64) & low
        want = read.want.astype(np.uint64) & low
        lanes = read.lanes
        if result.tag != read.request["tag"] or not np.array_equal(got[lanes], want[lanes]):
            bad = int(np.flatnonzero((got != want) & lanes)[0]) if np.any(
                (got != want) & lanes) else None
            raise AssertionError(f"read path: operand {read.request}: lane {bad} gives "
                                 f"{int(got[bad]) if bad is not None else None:#x}, the "
                                 f"compressed file read "
                                 f"{int(want[bad]) if bad is not None else 0:#x}")

    def _step(self, inputs) -> dict:
        full = {"request_valid": 0, "request": 0, "load__valid": 0, "load__payload": 0,
                "rf_data": 0, **inputs}
        return self.recorder.step(full)

    def close(self) -> RecordedReads:
        """Pump the remaining reads through, let the path empty, close the trace."""
        self._pump(drain=True)
        for _ in range(2):
            self.rf_data = self._answer(self._step({"rf_data": self.rf_data}))
        self.writer.close()
        return RecordedReads(Path(self.writer.path), self.writer.cycles, self.recorded,
                             len(self.numbers), dict(self.skipped))


def record_read_path(name: str, size: str, path, *, floats=None,
                     config: SMConfig | None = None) -> tuple[object, RecordedReads]:
    """Run kernel ``name`` at ``size`` with the compressed file (``floats``: the float
    formats, see :func:`~.compression.compile_kernel`; fermi, 8 blocks per SM by default)
    and record its reads through the read path into ``path``. Returns the run and what was
    recorded."""
    from .config import load_config
    from .run import run_kernel

    cp = compile_kernel(name, floats=floats)
    config = config or load_config(preset="fermi", max_blocks=8)
    source = {"kind": "kernel", "kernel": name, "size": size, "mechanism": "compression",
              "ports": "operand reads of 32-bit registers, table loaded first"}
    holder = {}

    def prepare(program):
        narrowed, options = mechanism(cp)(program)
        options["values"] = holder["storage"] = ReadPathRecording(narrowed, cp, path, source)
        return narrowed, options

    try:
        run = run_kernel(name, size, timing=config, mechanism=prepare)
    except BaseException:
        if "storage" in holder:
            holder["storage"].writer.abandon()
        raise
    return run, holder["storage"].close()
