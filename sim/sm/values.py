"""Values through timing: register values recorded functionally, delivered and checked in timing.

The timing model replays traces recorded by the functional pass
(:func:`gpurf.sim.sm.batch.run_blocks`), so a mechanism that stores, reuses or narrows
registers could deliver a wrong value without the kernel's outputs noticing. With values on
(``TimingSM(..., values=...)``, ``run_kernel(..., values=True)``; off by default):

- the functional pass records, per dynamic warp instruction, the 32 lanes of each 32-bit
  source word it read and each destination word it wrote, and the lanes that executed it
  (:class:`TraceValues`, one per :class:`~gpurf.sim.sm.batch.WarpTrace`);
- the timing model hands every register access to a :class:`RegisterStorage`: ``write``
  when a result's writeback completes, ``read`` when the operand collector is granted a
  bank read for an operand, ``result`` when an instruction leaves the collector (a reuse
  or narrowing mechanism may produce the result without executing);
- :class:`ValueCheck` compares, in the lanes that executed the instruction, every value
  ``read`` delivers with the value the functional run read, and every result ``result``
  produces with the functional result (through :meth:`RegisterStorage.matches`, exact
  unless a mechanism says otherwise, e.g. a compression round trip). A difference raises
  :class:`ValueMismatchError` naming the warp (block, warp), pc and PTX line, register,
  cycle, and the expected and actual lanes.

Registers are the physical 32-bit registers of the register allocator
(:func:`gpurf.sim.ptx.regalloc.allocate_registers`): a 64-bit value is two words, its low
half in ``R2k`` and its high half in ``R2k+1``; 8- and 16-bit values are zero-extended to a
word. Predicates live in a separate file (as on the GPU) and are neither recorded nor
checked: they act through the executing lanes (a guard masks the lanes an instruction
executes and writes). A source register the allocator left unassigned (read but never
written: its value is undefined) is recorded but not checked.

Operand reads the collector does not make (operands beyond the ``operands`` a collector
unit holds, the high word of a 64-bit operand while the collector reads a 64-bit operand as
one register) are read and checked in the cycle the instruction dispatches. A write
completing in cycle ``t`` is visible to reads in cycles ``>= t`` (a dependent instruction
issues in cycle ``t`` at the earliest, so it reads later).

Cost: each recorded instruction keeps ``128`` bytes per word plus ``8`` bytes (mask and
offset); see ``docs/sm.md`` ("Values through timing") for figures and their command.
"""

import heapq
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from gpurf.sim.ptx.regalloc import allocate_registers

from .program import Program
from .warp import ExecutionError

__all__ = ["BaselineStorage", "RegisterStorage", "TraceValues", "ValueCheck",
           "ValueMismatchError", "ValueRecorder", "WarpId", "value_check", "word_layout"]

LANES = 32
_LOW = np.uint64(0xFFFFFFFF)
_SHIFT = np.uint64(32)


class ValueMismatchError(ExecutionError):
    """A register storage delivered a value (or a mechanism a result) that differs from the
    functional run's.

    Attributes
    ----------
    warp : WarpId
    pc, cycle : int
    reg : int
        The physical register read, or written by the produced result.
    lanes : list of int
        The executing lanes that differ.
    expected, actual : numpy.ndarray
        The 32 lanes the functional run has, and those delivered.
    """

    def __init__(self, message, *, warp=None, pc=None, reg=None, cycle=None, lanes=(),
                 expected=None, actual=None):
        super().__init__(message)
        self.warp, self.pc, self.reg, self.cycle = warp, pc, reg, cycle
        self.lanes, self.expected, self.actual = list(lanes), expected, actual


@dataclass(frozen=True, slots=True)
class Word:
    """One 32-bit word an instruction reads or writes.

    Attributes
    ----------
    slot : int
        The virtual register's slot (:attr:`gpurf.sim.sm.program.Program.slots`).
    half : int
        0: the value's low 32 bits (or the whole value of 32 bits or less); 1: the high
        32 bits of a 64-bit value.
    name : str
        The virtual register (``%rd4``).
    reg : int or None
        The physical register (``None``: unassigned, see the module docstring).
    """

    slot: int
    half: int
    name: str
    reg: int | None

    def label(self) -> str:
        """``R5 (%r3)`` / ``R9 (%rd4, high word)``."""
        half = ", high word" if self.half else ""
        reg = "unassigned" if self.reg is None else f"R{self.reg}"
        return f"{reg} ({self.name}{half})"


@dataclass(frozen=True)
class WordLayout:
    """Per instruction of a program, the words it reads and writes, in recording order:
    the sources (operand order), then the destinations."""

    sources: tuple
    dests: tuple
    counts: np.ndarray
    """Per instruction, source + destination words (0: nothing recorded)."""


@cache
def word_layout(program: Program) -> WordLayout:
    """The :class:`WordLayout` of ``program`` (computed once)."""
    kernel, slots = program.kernel, program.slots
    physical = allocate_registers(kernel).physical

    def words(names):
        out = []
        for name in names:
            width = kernel.regs[name].width
            if width == 1:
                continue
            first = physical.get(name)
            for half in range(2 if width == 64 else 1):
                reg = None if first is None else first + half
                out.append(Word(slots[name], half, name, reg))
        return tuple(out)

    sources = tuple(words(ins.sources) for ins in program.code)
    dests = tuple(words(ins.dests) for ins in program.code)
    counts = np.array([len(s) + len(d) for s, d in zip(sources, dests, strict=True)],
                      np.int32)
    return WordLayout(sources, dests, counts)


def _as_words(array: np.ndarray, half: int) -> np.ndarray:
    """Word ``half`` of registers stored as ``array`` (any width), as ``uint32``."""
    if array.dtype == np.uint64:
        return ((array >> _SHIFT) if half else (array & _LOW)).astype(np.uint32)
    if array.dtype == np.uint32:
        return array.copy()
    return array.astype(np.uint32)


def _pack_masks(mask: np.ndarray) -> np.ndarray:
    """Lane masks ``(..., 32)`` as ``uint32`` integers (bit l = lane l)."""
    return np.packbits(mask, axis=-1, bitorder="little").view("<u4")[..., 0]


@cache
def lane_mask(bits: int) -> np.ndarray:
    """The 32 booleans of a packed lane mask (read-only, shared)."""
    mask = np.unpackbits(np.array([bits], "<u4").view(np.uint8), bitorder="little")
    mask = mask.astype(bool)
    mask.flags.writeable = False
    return mask


FULL = lane_mask(0xFFFFFFFF)
"""Every lane (the object :func:`lane_mask` gives for a full warp, so ``lanes is FULL``
tests it)."""


@dataclass(slots=True)
class TraceValues:
    """The register values of one warp's dynamic instruction stream.

    While recording, ``words`` and ``masks`` are lists (one entry per recorded
    instruction); :meth:`ValueRecorder.finish` makes them arrays.

    Attributes
    ----------
    words : numpy.ndarray
        ``(rows, 32)`` ``uint32``: each recorded instruction's words, laid out as
        :class:`WordLayout` says, one after another.
    masks : numpy.ndarray
        Per dynamic instruction, its executing lanes as a ``uint32`` (0 where nothing was
        recorded: control instructions and instructions without register words).
    offsets : numpy.ndarray
        Per dynamic instruction, its first row in ``words`` (``int32``).
    """

    words: list | np.ndarray = field(default_factory=list)
    masks: list | np.ndarray = field(default_factory=list)
    offsets: np.ndarray | None = None

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in (self.words, self.masks, self.offsets)
                   if isinstance(a, np.ndarray))


class ValueRecorder:
    """Records register values in the functional pass (:func:`gpurf.sim.sm.batch.run_blocks`).

    The pass calls :meth:`sources` before an instruction executes (a destination may be
    one of its sources) and :meth:`record` after, with the instruction's registers as
    ``(k, 32)`` arrays (a group of ``k`` warps) or ``(32,)`` arrays (one warp).
    """

    def __init__(self, program: Program):
        self.layout = word_layout(program)

    def sources(self, pc: int, regs) -> np.ndarray | None:
        """The source words of instruction ``pc`` before it executes (``None`` if it
        records nothing)."""
        if not self.layout.counts[pc]:
            return None
        return self._stack(self.layout.sources[pc], regs)

    def record(self, values: list, pc: int, before, regs, mask: np.ndarray) -> None:
        """Append instruction ``pc``'s words (``before`` from :meth:`sources`, the
        destinations from ``regs`` now) and ``mask`` to ``values`` (the executing warps'
        :class:`TraceValues`, in the order of the rows of ``regs``)."""
        if before is None:
            return
        words = np.concatenate([before, self._stack(self.layout.dests[pc], regs)], axis=-2)
        masks = _pack_masks(mask)
        if words.ndim == 2:
            values[0].words.append(words)
            values[0].masks.append(int(masks))
            return
        for trace, rows, bits in zip(values, words, masks.tolist(), strict=True):
            trace.words.append(rows)
            trace.masks.append(bits)

    @staticmethod
    def _stack(words, regs) -> np.ndarray:
        if not words:
            shape = regs[next(iter(regs))].shape if isinstance(regs, dict) else (LANES,)
            return np.empty((*shape[:-1], 0, LANES), np.uint32)
        return np.stack([_as_words(regs[w.slot], w.half) for w in words], axis=-2)

    def finish(self, values: TraceValues, pcs: list) -> None:
        """Make ``values`` (recorded for the dynamic instructions ``pcs``) compact arrays."""
        counts = self.layout.counts[np.asarray(pcs, np.intp)]
        recorded = counts > 0
        if int(np.count_nonzero(recorded)) != len(values.masks):
            raise RuntimeError(f"{len(values.masks)} value records for "
                               f"{int(np.count_nonzero(recorded))} recorded instructions")
        masks = np.zeros(len(pcs), np.uint32)
        masks[recorded] = values.masks
        values.masks = masks
        values.offsets = (np.cumsum(counts) - counts).astype(np.int32)
        values.words = (np.concatenate(values.words) if values.words
                        else np.empty((0, LANES), np.uint32))


@dataclass(frozen=True, slots=True)
class WarpId:
    """A warp as register storages see it: its block and index, and where it runs."""

    block: tuple
    warp: int
    subcore: int
    slot: int

    def __str__(self):
        return f"block {self.block}, warp {self.warp}"


class RegisterStorage:
    """What a register-storage mechanism implements (this base is a plain register file
    that stores what is written: :class:`BaselineStorage`).

    The timing model calls, in non-decreasing ``cycle`` order: :meth:`write` when a
    result's writeback completes (for every destination word, reused results included),
    :meth:`read` when the operand collector reads an operand, :meth:`result` when an
    instruction leaves the collector, :meth:`free` when a warp has finished (its last
    write done). Registers are physical 32-bit registers; values ``(32,)`` ``uint32``
    arrays; ``lanes`` the ``(32,)`` booleans of the lanes that execute the instruction
    (read-only: copy what you keep).
    """

    def write(self, warp: WarpId, reg: int, values: np.ndarray, lanes: np.ndarray,
              cycle: int, pc: int) -> None:
        """Instruction ``pc`` writes ``values`` to ``reg`` in ``lanes`` (the others keep
        their value)."""
        raise NotImplementedError

    def read(self, warp: WarpId, reg: int, cycle: int, lanes: np.ndarray) -> np.ndarray:
        """``reg``'s 32 lanes for an instruction executing ``lanes`` (only they are
        checked)."""
        raise NotImplementedError

    def result(self, warp: WarpId, pc: int, cycle: int) -> dict | None:
        """``{register: values}`` a mechanism produces for instruction ``pc`` without
        executing it (reuse, narrowing), or ``None``: it executes."""
        return None

    def matches(self, expected: np.ndarray, actual: np.ndarray, lanes: np.ndarray) -> bool:
        """Whether a produced result ``actual`` stands for the functional ``expected`` in
        ``lanes`` (exact; a compressing mechanism compares its round trip)."""
        return bool(np.array_equal(expected[lanes], actual[lanes]))

    def free(self, warp: WarpId) -> None:
        """``warp`` will not access its registers again."""


class BaselineStorage(RegisterStorage):
    """A plain register file: each warp's registers hold what was last written to them,
    lane by lane."""

    def __init__(self):
        self.registers: dict[tuple, np.ndarray] = {}

    def _file(self, warp: WarpId) -> dict:
        return self.registers.setdefault((warp.block, warp.warp), {})

    def write(self, warp, reg, values, lanes, cycle, pc):
        file = self._file(warp)
        old = file.get(reg)
        file[reg] = (values.copy() if old is None or lanes is FULL
                     else np.where(lanes, values, old))

    def read(self, warp, reg, cycle, lanes):
        value = self._file(warp).get(reg)
        return np.zeros(LANES, np.uint32) if value is None else value

    def free(self, warp):
        self.registers.pop((warp.block, warp.warp), None)


class _WarpState:
    """A replayed warp's values and how far it has got."""

    __slots__ = ("dispatched", "id", "key", "last", "masks", "offsets", "total", "values",
                 "words")

    def __init__(self, warp, values: TraceValues):
        self.key = warp
        self.id = WarpId(warp.block.id, warp.index, warp.sub.index, warp.slot)
        self.values = values
        self.words = values.words
        self.masks = values.masks.tolist()
        self.offsets = values.offsets.tolist()
        self.total = len(warp.pcs)
        self.dispatched = 0
        self.last = 0


_FREE = object()
"""In place of the registers of a write-heap entry: the warp's free."""


class ValueCheck:
    """The timing model's side: hands register accesses to ``storage`` and checks them
    (see the module docstring).

    Parameters
    ----------
    program : Program
    storage : RegisterStorage
    collected : list of dict
        Per instruction, ``{operand index: register}`` of the reads the operand collector
        makes (the others are read at dispatch).
    """

    def __init__(self, program: Program, storage: RegisterStorage, collected):
        self.program = program
        self.storage = storage
        self.layout = layout = word_layout(program)
        self.at_dispatch = []
        """Per instruction, ``(index, word)`` of the source words read at dispatch."""
        self.by_reg = []
        """Per instruction, register -> ``(index, word)`` of its source words."""
        for words, regs in zip(layout.sources, collected, strict=True):
            seen = set(regs.values())
            self.at_dispatch.append(tuple((i, w) for i, w in enumerate(words)
                                          if w.reg is not None and w.reg not in seen))
            by_reg = {}
            for i, w in enumerate(words):
                by_reg.setdefault(w.reg, []).append((i, w))
            self.by_reg.append(by_reg)
        self.warps: dict = {}
        self.writes: list = []
        """Heap of ``(cycle, sequence, warp state, register, values, lanes, pc)``."""
        self.dest_regs = [tuple(w.reg for w in d) if d else None for d in layout.dests]
        """Per instruction, the registers of its destination words (``None``: none)."""
        self.first_dest = [len(sources) for sources in layout.sources]
        self.sequence = 0
        self.reads = self.writes_made = 0
        self.counts = {"results": 0, "recorded_instructions": 0, "dynamic_instructions": 0,
                       "recorded_bytes": 0}

    # -- hooks of the timing model -----------------------------------------------------
    def read(self, sub, grants: dict, now: int) -> None:
        """Check the reads the collector of sub-core ``sub`` was granted in cycle ``now``
        (``grants``: bank -> ``(cu, operand index)``)."""
        writes = self.writes
        if writes and writes[0][0] <= now:
            self._flush(now)
        units, by_reg, warps = sub.oc.units, self.by_reg, self.warps
        for cu, index in grants.values():
            unit = units[cu]
            warp, pc, _, pos = unit.tag
            state = warps.get(warp) or self._state(warp)
            for i, word in by_reg[pc].get(unit.operands[index].reg, ()):
                self._read(state, pc, pos, i, word, now)

    def dispatch(self, warp, pc: int, pos: int, now: int, done: int) -> None:
        """Instruction ``pc`` (dynamic position ``pos``) of ``warp`` left the collector in
        cycle ``now``; its results are written in cycle ``done``."""
        writes = self.writes
        if writes and writes[0][0] <= now:
            self._flush(now)
        state = self.warps.get(warp) or self._state(warp)
        for i, word in self.at_dispatch[pc]:
            self._read(state, pc, pos, i, word, now)
        regs = self.dest_regs[pc]
        if regs is not None:
            self._results(state, pc, pos, now)
            start = state.offsets[pos] + self.first_dest[pc]
            self._schedule(done, state, regs, state.words[start:start + len(regs)],
                           lane_mask(state.masks[pos]), pc)
        state.dispatched += 1
        if done > state.last:
            state.last = done
        if state.dispatched == state.total:
            self._schedule(state.last, state, _FREE, None, None, None)

    def stats(self) -> dict:
        return {"reads": self.reads, "writes": self.writes_made, **self.counts}

    # -- internals ---------------------------------------------------------------------
    def _state(self, warp) -> _WarpState:
        state = self.warps.get(warp)
        if state is None:
            state = self.warps[warp] = _WarpState(warp, warp.values)
            counts = self.counts
            counts["dynamic_instructions"] += state.total
            counts["recorded_instructions"] += int(np.count_nonzero(
                self.layout.counts[np.asarray(warp.pcs, np.intp)]))
            counts["recorded_bytes"] += state.values.nbytes
        return state

    def _words(self, state, pc, pos) -> np.ndarray:
        """The recorded words of dynamic instruction ``pos`` (instruction ``pc``)."""
        start = state.offsets[pos]
        return state.words[start:start + self.layout.counts[pc]]

    @staticmethod
    def _mask(state, pos) -> np.ndarray:
        return lane_mask(state.masks[pos])

    def _read(self, state, pc, pos, index, word, now):
        expected = state.words[state.offsets[pos] + index]
        mask = lane_mask(state.masks[pos])
        actual = np.asarray(self.storage.read(state.id, word.reg, now, mask), np.uint32)
        self.reads += 1
        # Equal in every lane (the usual case) is equal in the executing lanes.
        if actual.shape == expected.shape and actual.tobytes() == expected.tobytes():
            return
        if ((expected != actual) & mask).any():
            raise self._mismatch(state, pc, now, word, "read of", expected, actual, mask)

    def _results(self, state, pc, pos, now):
        produced = self.storage.result(state.id, pc, now)
        if produced is None:
            return
        start = state.offsets[pos] + len(self.layout.sources[pc])
        mask = self._mask(state, pos)
        dests = {w.reg: k for k, w in enumerate(self.layout.dests[pc])}
        for reg, actual in produced.items():
            if reg not in dests:
                regs = ", ".join(f"R{r}" for r in dests)
                raise ValueMismatchError(
                    f"{self._where(state, pc, now)}: result for R{reg}, which the "
                    f"instruction does not write (it writes {regs})", warp=state.id, pc=pc,
                    reg=reg, cycle=now)
            expected = state.words[start + dests[reg]]
            self.counts["results"] += 1
            actual = np.asarray(actual, np.uint32)
            if not self.storage.matches(expected, actual, mask):
                word = self.layout.dests[pc][dests[reg]]
                raise self._mismatch(state, pc, now, word, "result in", expected, actual,
                                     mask)

    def _schedule(self, cycle, state, regs, rows, lanes, pc):
        """Queue the writes of ``regs`` (``rows``: their values) in cycle ``cycle``, or
        with ``regs`` :data:`_FREE` the warp's free."""
        self.sequence += 1
        heapq.heappush(self.writes, (cycle, self.sequence, state, regs, rows, lanes, pc))

    def _flush(self, now: int) -> None:
        """Complete the writes (and frees) due by cycle ``now``."""
        writes, storage = self.writes, self.storage
        while writes and writes[0][0] <= now:
            cycle, _, state, regs, rows, lanes, pc = heapq.heappop(writes)
            if regs is _FREE:
                storage.free(state.id)
                del self.warps[state.key]
                continue
            for reg, values in zip(regs, rows, strict=True):
                if reg is not None:
                    storage.write(state.id, reg, values, lanes, cycle, pc)
                    self.writes_made += 1

    def _where(self, state, pc, now) -> str:
        ins = self.program.code[pc]
        return (f"{self.program.kernel.file}:{ins.line}: {ins.opcode}: {state.id}, pc {pc}, "
                f"cycle {now}")

    def _mismatch(self, state, pc, now, word, what, expected, actual, mask):
        wrong = np.flatnonzero((expected != actual) & mask).tolist()
        shown = ", ".join(f"{lane}: {expected[lane]:#010x} != {actual[lane]:#010x}"
                          for lane in wrong[:4])
        more = f" (+{len(wrong) - 4} more)" if len(wrong) > 4 else ""
        return ValueMismatchError(
            f"{self._where(state, pc, now)}: {what} {word.label()}: {len(wrong)} lane(s) "
            f"differ (lane: expected != actual) {shown}{more}", warp=state.id, pc=pc,
            reg=word.reg, cycle=now, lanes=wrong, expected=expected.copy(),
            actual=actual.copy())


def value_check(program: Program, values, collected) -> ValueCheck | None:
    """The :class:`ValueCheck` for ``values`` (``False``/``None``: off, ``True``: a
    :class:`BaselineStorage`, or a :class:`RegisterStorage`)."""
    if values is None or values is False:
        return None
    storage = BaselineStorage() if values is True else values
    if not isinstance(storage, RegisterStorage):
        raise TypeError(f"values must be a bool or a RegisterStorage, not "
                        f"{type(values).__name__}")
    return ValueCheck(program, storage, collected)
