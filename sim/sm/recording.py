"""One functional run of a kernel shared by its timing runs.

The timing model (:class:`~gpurf.sim.sm.timing.TimingSM`) replays traces that the functional
pass records (:func:`gpurf.sim.sm.batch.run_blocks`): each warp's dynamic instructions, its L1
requests and, with values, its register values. None of it depends on the timing
configuration, the scheduler or a register-storage mechanism, so a reproduction that runs one
kernel many times (a baseline and every configuration of a mechanism) needs the functional
pass once. Inside :func:`shared_functional_runs`, :func:`~gpurf.sim.sm.run.run_kernel` records
its first run of a (kernel, size, program, values on/off, cohort) into a
:class:`KernelRecording` and replays it in later runs with the same key instead of running the
blocks again:

- the key holds the program actually run (a mechanism may hand ``run_kernel`` another one,
  ``mechanism(program)``): a run of another program records its own;
- a host loop's launches are recorded in order and replayed in order, each on a fresh SM as
  before; the outputs, the expected outputs and the inputs are those of the recorded run
  (the functional pass alone makes them, so a fresh run gives the same);
- a recording is compact: per cohort of blocks, the warps' instructions as one ``int16`` or
  ``int32`` array, the L1 requests as two arrays, the values as the recorder's arrays
  (:class:`~gpurf.sim.sm.values.TraceValues`), the blocks as counters (their register files
  are dropped); every array is read-only, and a digest taken when the recording completes is
  checked before every replay (:class:`RecordingError`), so a timing run that changed the
  recording, or a replay of a recording for another program or launch, stops the run;
- the scope holds its recordings until it exits (a reproduction's per-kernel measurement:
  ``with shared_functional_runs(): ...``), and a recording larger than ``max_bytes`` is not
  kept (its runs then repeat the functional pass, as without a scope).

Cost: ``KernelRecording.nbytes / KernelRecording.instructions`` bytes per warp instruction;
see ``docs/sm.md`` ("Shared functional run and value-check cost") for figures and commands.
"""

import hashlib
import itertools
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import numpy as np

from .batch import WarpTrace, new_traces, run_blocks
from .program import Program
from .values import TraceValues
from .warp import ThreadBlock

__all__ = ["CohortRecord", "KernelRecording", "LaunchRecording", "RecordedBlock",
           "RecordingError", "SharedRuns", "current_scope", "run_cohort",
           "shared_functional_runs"]

MAX_BYTES = 6 << 30
"""Default limit of one recording (bytes): the paper-size suite's largest with values fits."""


class RecordingError(RuntimeError):
    """A recording replayed for another program or launch, or changed since it was made."""


@dataclass(frozen=True, slots=True)
class RecordedBlock:
    """What the timing model and the run's statistics need of a block that has run
    functionally (its register files, shared and local memory are not kept)."""

    block_id: tuple
    warp_count: int
    barriers: int
    instructions: int
    thread_instructions: int

    @classmethod
    def of(cls, block: ThreadBlock) -> "RecordedBlock":
        """The counters of ``block`` (run to completion)."""
        return cls(block.block_id, block.warp_count, block.barriers,
                   sum(w.instructions for w in block.warps),
                   sum(w.thread_instructions for w in block.warps))


def run_cohort(make_block: Callable, ids: list, *, values: bool
               ) -> list[tuple[RecordedBlock, list[WarpTrace]]]:
    """Blocks ``ids`` (``make_block(id) -> ThreadBlock``) run functionally together
    (:func:`~gpurf.sim.sm.batch.run_blocks`): per block its counters and warp traces."""
    blocks = [make_block(b) for b in ids]
    traces = [new_traces(block) for block in blocks]
    run_blocks(blocks, traces, values=values)
    return [(RecordedBlock.of(b), t) for b, t in zip(blocks, traces, strict=True)]


def _frozen(array: np.ndarray) -> np.ndarray:
    array.flags.writeable = False
    return array


def _encode_requests(traces: list[WarpTrace]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The requests of ``traces``: per record its size (``n >= 0``: a global access's ``n``
    lines; ``-n``: a shared access's ``n`` requests), the lines, per warp its first record."""
    sizes, lines, bounds = [], [], [0]
    for trace in traces:
        for record in trace.requests:
            if isinstance(record, int):
                sizes.append(-record)
            else:
                sizes.append(len(record))
                lines.extend(record)
        bounds.append(len(sizes))
    return (np.array(sizes, np.int32), np.array(lines, np.uint64),
            np.array(bounds, np.int64))


def _decode_requests(sizes: list, lines: list) -> list:
    out, at = [], 0
    for n in sizes:
        if n < 0:
            out.append(-n)
        else:
            out.append(tuple(lines[at:at + n]))
            at += n
    return out


@dataclass(frozen=True)
class CohortRecord:
    """The traces of one cohort of blocks, compact (see the module docstring).

    Attributes
    ----------
    blocks : tuple of RecordedBlock
    pcs : numpy.ndarray
        Every warp's instructions, warp after warp (block order, then warp order).
    pc_bounds : numpy.ndarray
        Per warp its first entry in ``pcs``, and the end.
    sizes, lines, request_bounds : numpy.ndarray
        The L1 requests (:func:`_encode_requests`).
    values : tuple of TraceValues, or None
        Per warp its values (arrays read-only).
    """

    blocks: tuple
    pcs: np.ndarray
    pc_bounds: np.ndarray
    sizes: np.ndarray
    lines: np.ndarray
    request_bounds: np.ndarray
    values: tuple | None

    @classmethod
    def of(cls, cohort: list[tuple[RecordedBlock, list[WarpTrace]]]) -> "CohortRecord":
        """The record of a cohort :func:`run_cohort` ran; its value arrays become
        read-only (they are shared, not copied)."""
        traces = [t for _, block_traces in cohort for t in block_traces]
        lengths = [len(t.pcs) for t in traces]
        pcs = list(itertools.chain.from_iterable(t.pcs for t in traces))
        dtype = np.int16 if max(pcs, default=0) < (1 << 15) else np.int32
        values = None
        if traces and traces[0].values is not None:
            for v in (t.values for t in traces):
                for array in (v.words, v.masks, v.offsets):
                    _frozen(array)
            values = tuple(t.values for t in traces)
        sizes, lines, request_bounds = _encode_requests(traces)
        return cls(tuple(block for block, _ in cohort), _frozen(np.array(pcs, dtype)),
                   _frozen(np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)),
                   _frozen(sizes), _frozen(lines), _frozen(request_bounds), values)

    def arrays(self) -> Iterator[np.ndarray]:
        """Every array of the record (what its digest and size cover)."""
        yield from (self.pcs, self.pc_bounds, self.sizes, self.lines, self.request_bounds)
        for v in self.values or ():
            yield from (v.words, v.masks, v.offsets)

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in self.arrays())

    def replay(self) -> list[tuple[RecordedBlock, list[WarpTrace]]]:
        """Fresh traces (lists the timing model may consume) per block, as recorded."""
        pcs, bounds = self.pcs.tolist(), self.pc_bounds.tolist()
        sizes, rbounds = self.sizes.tolist(), self.request_bounds.tolist()
        lines = self.lines.tolist()
        line_at = np.concatenate([[0], np.cumsum(np.maximum(self.sizes, 0))]).tolist()
        out, warp = [], 0
        for block in self.blocks:
            traces = []
            for _ in range(block.warp_count):
                first, last = rbounds[warp], rbounds[warp + 1]
                requests = _decode_requests(sizes[first:last],
                                            lines[line_at[first]:line_at[last]])
                values = None
                if self.values is not None:
                    v = self.values[warp]
                    values = TraceValues(v.words, v.masks, v.offsets)
                traces.append(WarpTrace(pcs[bounds[warp]:bounds[warp + 1]], requests,
                                        values))
                warp += 1
            out.append((block, traces))
        return out


@dataclass
class LaunchRecording:
    """One launch's cohorts in the order the timing model ran them."""

    cohorts: list = field(default_factory=list)

    def recorder(self, make_block: Callable, *, values: bool) -> Callable:
        """A ``functional(ids)`` for :class:`~gpurf.sim.sm.timing.TimingSM` that runs the
        cohort (:func:`run_cohort`) and records it here."""
        def functional(ids):
            cohort = run_cohort(make_block, ids, values=values)
            self.cohorts.append(CohortRecord.of(cohort))
            return cohort
        return functional

    def replayer(self) -> Callable:
        """A ``functional(ids)`` that hands out the recorded cohorts in order; a cohort of
        other block ids than recorded raises :class:`RecordingError`."""
        cohorts = iter(self.cohorts)

        def functional(ids):
            record = next(cohorts, None)
            recorded = [] if record is None else [b.block_id for b in record.blocks]
            if recorded != [tuple(b) for b in ids]:
                raise RecordingError(f"replayed blocks {ids[:3]}... are not the recorded "
                                     f"{recorded[:3]}...")
            return record.replay()
        return functional

    @property
    def block_ids(self) -> list:
        return [b.block_id for c in self.cohorts for b in c.blocks]


@dataclass
class KernelRecording:
    """A kernel run's functional pass: its launches, outputs, expected outputs and inputs.

    Attributes
    ----------
    program : Program
        The program that ran (a replay for another raises :class:`RecordingError`).
    launches : list of LaunchRecording
    outputs, expected, inputs : dict of numpy.ndarray
        Read-only.
    rtol : float
    digest : bytes
        Of every array, taken by :meth:`seal`.
    """

    program: Program
    launches: list = field(default_factory=list)
    outputs: dict = field(default_factory=dict)
    expected: dict = field(default_factory=dict)
    inputs: dict = field(default_factory=dict)
    rtol: float = 0.0
    digest: bytes = b""

    def _arrays(self) -> Iterator[np.ndarray]:
        for launch in self.launches:
            for cohort in launch.cohorts:
                yield from cohort.arrays()
        for buffers in (self.outputs, self.expected, self.inputs):
            for name in sorted(buffers):
                yield buffers[name]

    def _digest(self) -> bytes:
        digest = hashlib.blake2b(digest_size=16)
        for launch in self.launches:
            for cohort in launch.cohorts:
                digest.update(repr(cohort.blocks).encode())
        for array in self._arrays():
            digest.update(array.dtype.str.encode())
            digest.update(repr(array.shape).encode())
            digest.update(np.ascontiguousarray(array).data)
        return digest.digest()

    def seal(self, outputs: dict, expected: dict, inputs: dict, rtol: float) -> None:
        """Keep the run's buffers (read-only copies) and take the digest."""
        for name, buffers in (("outputs", outputs), ("expected", expected),
                              ("inputs", inputs)):
            setattr(self, name, {k: _frozen(np.array(v, copy=True)) for k, v in
                                 buffers.items()})
        self.rtol = rtol
        self.digest = self._digest()

    def check(self, program: Program) -> None:
        """Raise :class:`RecordingError` unless this recording is of ``program`` and
        unchanged since :meth:`seal`."""
        if program is not self.program:
            raise RecordingError(f"a recording of {self.program.kernel.name} replayed for "
                                 f"another program ({program.kernel.name})")
        if not self.digest or self._digest() != self.digest:
            raise RecordingError(f"the recording of {self.program.kernel.name} changed "
                                 "since it was made (or was never completed)")

    @property
    def nbytes(self) -> int:
        return sum(c.nbytes for launch in self.launches for c in launch.cohorts)

    @property
    def instructions(self) -> int:
        """Warp instructions recorded."""
        return sum(b.instructions for launch in self.launches for c in launch.cohorts
                   for b in c.blocks)


class SharedRuns:
    """The recordings of one :func:`shared_functional_runs` scope, by key.

    Parameters
    ----------
    max_bytes : int
        A recording larger than this is not kept.
    """

    def __init__(self, *, max_bytes: int = MAX_BYTES):
        if not isinstance(max_bytes, int) or max_bytes < 0:
            raise ValueError(f"max_bytes must be a non-negative integer, not {max_bytes!r}")
        self.max_bytes = max_bytes
        self.recordings: dict = {}
        self.counts = {"recorded": 0, "replayed": 0, "too_large": 0}

    def get(self, key) -> KernelRecording | None:
        found = self.recordings.get(key)
        if found is not None:
            self.counts["replayed"] += 1
        return found

    def put(self, key, recording: KernelRecording) -> None:
        """Keep ``recording`` (sealed) unless it is larger than :attr:`max_bytes`."""
        if recording.nbytes > self.max_bytes:
            self.counts["too_large"] += 1
            return
        self.counts["recorded"] += 1
        self.recordings[key] = recording

    @property
    def nbytes(self) -> int:
        return sum(r.nbytes for r in self.recordings.values())


_SCOPE: ContextVar[SharedRuns | None] = ContextVar("gpurf_shared_runs", default=None)


def current_scope() -> SharedRuns | None:
    """The innermost :func:`shared_functional_runs` scope, or ``None``."""
    return _SCOPE.get()


@contextmanager
def shared_functional_runs(*, max_bytes: int = MAX_BYTES) -> Iterator[SharedRuns]:
    """A scope in which :func:`~gpurf.sim.sm.run.run_kernel` shares one functional run per
    key between its timing runs (module docstring); its recordings are dropped on exit."""
    scope = SharedRuns(max_bytes=max_bytes)
    token = _SCOPE.set(scope)
    try:
        yield scope
    finally:
        _SCOPE.reset(token)
        scope.recordings.clear()
