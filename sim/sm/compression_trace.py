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
path and the SM's storage agree).

**64-bit registers.** The SM reads a 64-bit register as two 32-bit words (its low half,
then its high half: :mod:`.values`). A 64-bit value of more than 8 slices has two entries
(:mod:`gpurf.sim.passes.compression.slices`: its low 8 slices and the rest, two
architectural registers as in SASS), so each half is one request on its own entry, all 32
bits compared. A 64-bit value of at most 8 slices has one entry: its low half is a request
on it; its high half is that request again (the operand collector fills the high word
from the operand's sign, or with zeros), checked as the fill of the collected operand.
**Predicates** are not stored in the compressed file (they live in their own file, as on
the GPU, and take no slices); the SM neither reads nor checks them through the storage,
so there is no predicate read to record.
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

__all__ = ["PathsRecording", "ReadPathRecording", "RecordedReads", "record_read_path",
           "trace_file"]

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
    fill: bool = False
    """The high word of a one-entry 64-bit value: the SM's word is the operand's fill."""


@dataclass
class RecordedReads:
    """What a recording holds: its trace ``path``, ``cycles``, the ``reads`` recorded and
    the table ``entries`` loaded."""

    path: Path
    cycles: int
    reads: int
    entries: int
    skipped: dict = field(default_factory=dict)
    wide: int = 0
    """Of ``reads``, the halves of 64-bit registers."""
    writes: object = None
    """The write path's recording (:class:`~.compression_write_trace.RecordedWrites`) when
    the storage also recorded it (:class:`PathsRecording`)."""


def trace_file(path, source: dict):
    """``wrap(qualname, params, model)`` recording into the one trace file ``path`` (the
    shape of :meth:`gpurf.sim.sm.record.TraceFolder.wrap` without a folder)."""
    def wrap(qualname: str, params: dict, model) -> Recorder:
        block = get_block(qualname)
        header = {"block": qualname, "params": params, "seed": None, "sm": None,
                  "unmodeled": [], "source": source}
        return Recorder(model, TraceWriter(path, layout_of(block.build(params)), header))
    return wrap


class ReadPathRecording(CompressedStorage):
    """:class:`~.compression.CompressedStorage` recording its reads through the read path
    (module docstring); ``wrap(qualname, params, model)`` gives the recording model
    (:func:`trace_file`, :meth:`gpurf.sim.sm.record.TraceFolder.wrap`). :meth:`finish`
    lets the path empty, :meth:`close` also closes the trace."""

    def __init__(self, program, cp, wrap):
        super().__init__(program, cp)
        self.params = get_block(BLOCK).resolve()
        self.model = ReadPath(**self.params)
        self.recorder = wrap(BLOCK, self.params, self.model)
        self.writer = self.recorder.writer
        self.ports = self.model.ports
        self.numbers, self.arch = self._table(cp)
        self.queue: deque[_Read] = deque()
        self.fetching: deque[_Read] = deque()
        self.inflight: deque[_Read] = deque()
        self.rf_data = 0
        self.recorded = 0
        self.wide = 0
        self.skipped = {"unwritten": 0}
        self._load()

    def _table(self, cp):
        """Architectural register per distinct entry (table order), and per virtual
        register and entry (``(vreg, k)``) its number."""
        numbers: dict[int, int] = {}
        for row in cp.allocation.table():
            numbers.setdefault(row["word"], len(numbers))
        arch = {(vreg, k): numbers[word] for vreg, words in cp.allocation.entries.items()
                for k, word in enumerate(words)}
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
        vreg, half = owner[reg]
        words = self.cp.allocation.entries[vreg]
        k = self._entry(half, words)
        entry = unpack_entry(words[k])
        plan = self.plans[vreg]
        request = {"reg": self.arch[vreg, k], "signed": int(plan.signed),
                   "convert": int(plan.fmt is not None), "tag": self.recorded & 0xFF}
        rows = {entry["r0"]: phys[entry["r0"]].copy(), entry["r1"]: phys[entry["r1"]].copy()}
        self.queue.append(_Read(request, rows, 2 if entry["m1"] else 1, got.copy(),
                                np.asarray(lanes, bool).copy(), min(plan.width, 32),
                                fill=half > k))
        self.recorded += 1
        self.wide += plan.width == 64
        if len(self.queue) >= QUEUE:
            self._pump()
        return got

    @staticmethod
    def _entry(half: int, words: tuple) -> int:
        """The entry a read of word ``half`` of a register with entries ``words`` goes to
        (the last one for the high word of a one-entry 64-bit value)."""
        return min(half, len(words) - 1)

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
        if read.fill:
            negative = (got >> np.uint64(31)) & np.uint64(read.request["signed"])
            got = np.where(negative == 1, low, np.uint64(0))
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

    def finish(self) -> RecordedReads:
        """Pump the remaining reads through and let the path empty (the trace stays
        open: its folder closes it)."""
        self._pump(drain=True)
        for _ in range(2):
            self.rf_data = self._answer(self._step({"rf_data": self.rf_data}))
        return RecordedReads(Path(self.writer.path), self.writer.cycles, self.recorded,
                             len(self.numbers), dict(self.skipped), self.wide)

    def close(self) -> RecordedReads:
        """:meth:`finish`, then close the trace."""
        recorded = self.finish()
        self.writer.close()
        return recorded


class PathsRecording(ReadPathRecording):
    """:class:`ReadPathRecording` that also records every write through the write-back
    path (:class:`~.compression_write_trace.WritePathRecorder`), each checked against the
    file the SM wrote."""

    def __init__(self, program, cp, wrap):
        from .compression_write_trace import WritePathRecorder

        super().__init__(program, cp, wrap)
        self.writes = WritePathRecorder(cp, self.plans, self.numbers, self.arch, wrap)

    def write(self, warp, reg, values, lanes, cycle, pc):
        super().write(warp, reg, values, lanes, cycle, pc)
        vreg, half = self.dests[pc][reg]
        key = (warp.block, warp.warp)
        self.writes.write(key, self.files[key][0], vreg, half, values, lanes)

    def free(self, warp):
        key = (warp.block, warp.warp)
        if key in self.files:
            self.writes.retire(key, self.files[key][0])
        super().free(warp)

    def finish(self) -> RecordedReads:
        reads = super().finish()
        reads.writes = self.writes.finish(self.files)
        return reads


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
        options["values"] = holder["storage"] = ReadPathRecording(narrowed, cp,
                                                                  trace_file(path, source))
        return narrowed, options

    try:
        run = run_kernel(name, size, timing=config, mechanism=prepare)
    except BaseException:
        if "storage" in holder:
            holder["storage"].writer.abandon()
        raise
    return run, holder["storage"].close()
