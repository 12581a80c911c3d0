"""Static data compression in the golden SM (paper Sections 3 and 5; issue 18 item 2).

A compressed register file stores each register in the 4-bit slices the compression pass
gave it (:mod:`gpurf.sim.passes.compression.compile_pass`), so a thread needs
:attr:`~gpurf.sim.passes.compression.compile_pass.CompressionPass.after` physical registers
instead of ``before``. Here the timing model (:class:`~gpurf.sim.sm.timing.TimingSM`) runs
with that:

- **Admission**: blocks are admitted while warp slots, blocks, shared memory and
  ``after x 32 x warps`` registers allow (:func:`resident_blocks` is the same rule,
  statically).
- **Values**: the functional pass runs a program that stores every register it writes as
  the hardware stores it (:func:`narrowing_program`: a float rounded to its Table 3 format
  and widened back, an integer truncated to its slices and extended), so its trace holds
  the values the kernel computes with on the compressed file. With values through timing
  (:mod:`gpurf.sim.sm.values`) the register accesses go to a :class:`CompressedStorage`:
  an emulated physical file of ``after`` registers per warp where a write is truncated
  and scattered to its slices (per lane) and a read gathers the slices back and extends
  or converts them; every read must equal the trace's value, which checks the widths,
  formats, slice allocation and indirection entries in timing order.
- **Added stages** (paper Sections 3.2.7-3.2.8, Fig. 6; :class:`CompressionTiming`, per
  instruction :func:`added_cycles`): an instruction that reads registers spends
  ``table_read`` cycles in the source indirection table, ``convert`` in the value
  converter (the extractor works inside the register read: Section 3.2.8), one cycle per
  extra entry in its most used table bank (the table is banked like the register file,
  ``table_banks`` banks by architectural register), and ``double_fetch`` cycles per split
  source operand (a collector unit collects one operand per cycle, Section 3.1, and a
  split operand is two register reads); an instruction that writes registers completes
  ``writeback`` cycles later (the paper's default 3, swept 0, 2, 4, 8 in Fig. 12).
- **Hazards** (:func:`hazards`): a register dead after an older instruction may give its
  slices to a younger instruction's result, a hazard an uncompressed file does not have;
  the younger instruction waits for older pending writes to registers sharing its
  destinations' slices and does not overtake their pending reads. (The value check found
  both on ``histogram``: an atomic's late result landing on a younger register's slices.)

The pass and its precision search on workloads: :func:`compile_kernel` (without launch
knowledge by default; an error beyond :data:`TABLE_ENTRIES`), :func:`tune_formats` (per
value by default), :func:`within_quality`; :func:`run_compressed` puts them together.

**Interpretation.** The added cycles are added to the instruction's completion (as its
dependants see it) and not to its stay in the collector unit, and the double fetch's
second read does not occupy a register bank: the paper's GPGPU-Sim modification is not
published at that level; the write-back delay is, like the paper's, the same for every
operand. Registers keep the uncompressed allocation's bank mapping.
"""

import copy
import dataclasses
from dataclasses import dataclass

import numpy as np

from gpurf.hw.compression.formats import FP32
from gpurf.hw.compression.layouts import SLICE_BITS
from gpurf.sim.passes.compression.compile_pass import CompressionPass
from gpurf.sim.passes.compression.precision import narrow_lanes, widen_lanes

from .config import SMConfig
from .program import Program
from .values import LANES, RegisterStorage, word_layout

__all__ = ["IMAGE_KERNELS", "QUALITY", "TABLE_ENTRIES", "CompressedStorage",
           "CompressionTiming", "TableOverflowError", "added_cycles", "baseline",
           "compile_kernel",
           "functional_run", "hazards", "mechanism", "narrowing_program",
           "resident_blocks", "run_compressed", "ssim", "table_entries", "tune_formats",
           "within_quality"]

_NIBBLE = np.uint32(0xF)


@dataclass(frozen=True)
class CompressionTiming:
    """The cycles a compressed register file adds (module docstring; paper defaults).

    Attributes
    ----------
    table_read, convert : int
        Stages of the operand-read path: source indirection table, value converter.
    writeback : int
        Write-back delay of every result (conversion, destination table, its conflicts).
    double_fetch : int
        Cycles per split source operand.
    table_banks : int
        Banks of the source indirection table.
    """

    table_read: int = 1
    convert: int = 1
    writeback: int = 3
    double_fetch: int = 1
    table_banks: int = 16

    def __post_init__(self):
        for name in ("table_read", "convert", "writeback", "double_fetch"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, not {getattr(self, name)}")
        if self.table_banks < 1:
            raise ValueError(f"table_banks must be >= 1, not {self.table_banks}")


@dataclass(frozen=True)
class _Plan:
    """How one virtual register is stored: its data slices' physical register rows and
    bit shifts, and how its stored bits come back (float format or integer extension)."""

    rows: np.ndarray
    shifts: np.ndarray
    data: np.ndarray
    fmt: object
    bits: int
    signed: bool
    width: int

    def store(self, value: np.ndarray) -> np.ndarray:
        """The stored bits (``uint64``) of register values ``value`` (any shape)."""
        if self.fmt is not None:
            return narrow_lanes(value.astype(np.uint32), self.fmt).astype(np.uint64)
        stored = value.astype(np.uint64)
        if self.bits < 64:
            stored &= np.uint64((1 << self.bits) - 1)
        return stored

    def load(self, stored: np.ndarray) -> np.ndarray:
        """The register value (``uint64``) of stored bits ``stored``."""
        if self.fmt is not None:
            return widen_lanes(stored.astype(np.uint32), self.fmt).astype(np.uint64)
        if self.signed and self.bits < self.width:
            top = np.uint64(1 << (self.bits - 1))
            fill = np.uint64(((1 << self.width) - 1) ^ ((1 << self.bits) - 1))
            stored = np.where(stored & top, stored | fill, stored)
        return stored

    def scatter(self, phys: np.ndarray, stored: np.ndarray, lanes: np.ndarray) -> None:
        """Write ``stored`` (32 lanes) to its slices of ``phys`` in ``lanes`` only."""
        nibbles = ((stored[None, :] >> self.data[:, None]) & np.uint64(0xF)).astype(np.uint32)
        for row, shift, nibble in zip(self.rows.tolist(), self.shifts.tolist(), nibbles,
                                      strict=True):
            cleared = phys[row] & ~np.uint32(0xF << shift)
            phys[row] = np.where(lanes, cleared | (nibble << np.uint32(shift)), phys[row])

    def gather(self, phys: np.ndarray) -> np.ndarray:
        """The stored bits (``uint64``, 32 lanes) read back from ``phys``."""
        nibbles = ((phys[self.rows] >> self.shifts[:, None]) & _NIBBLE).astype(np.uint64)
        return np.bitwise_or.reduce(nibbles << self.data[:, None], axis=0)


def _plans(cp: CompressionPass) -> dict:
    plans = {}
    for vreg in cp.allocation.entries:
        positions = cp.allocation.positions(vreg)
        width = cp.kernel.regs[vreg].width
        fmt = cp.floats.get(vreg)
        plans[vreg] = _Plan(
            np.array([r for r, _ in positions], np.intp),
            np.array([SLICE_BITS * s for _, s in positions], np.uint32),
            np.array([SLICE_BITS * k for k in range(len(positions))], np.uint64),
            None if fmt is None or fmt == FP32 else fmt, cp.bits(vreg), cp.signed(vreg),
            width)
    return plans


# -- the functional side ----------------------------------------------------------------
def narrowing_program(program: Program, cp: CompressionPass) -> Program:
    """``program`` storing every register it writes as the compressed file stores it
    (a copy whose instructions narrow their destinations in the executing lanes; the
    same for a warp and for a group of warps, :mod:`gpurf.sim.sm.batch`)."""
    plans = _plans(cp)
    narrowed = copy.copy(program)
    narrowed.ops = [_narrowing(op, [(program.slots[d], plans[d]) for d in ins.dests
                                    if d in plans and _narrows(plans[d])])
                    for op, ins in zip(program.ops, program.code, strict=True)]
    return narrowed


def _narrows(plan: _Plan) -> bool:
    return plan.fmt is not None or plan.bits < plan.width


def _narrowing(op, dests):
    if not dests:
        return op

    def run(warp, mask):
        touched = op(warp, mask)
        for slot, plan in dests:
            reg = warp.regs[slot]
            np.copyto(reg, plan.load(plan.store(reg)).astype(reg.dtype), where=mask)
        return touched

    return run


# -- the timing side --------------------------------------------------------------------
class CompressedStorage(RegisterStorage):
    """The register accesses of a compressed register file (module docstring).

    Parameters
    ----------
    program : Program
        The program the timing model replays (its registers are the uncompressed
        allocation's: each write names the virtual register it stores through its pc).
    cp : CompressionPass
        The widths, formats and slices this file stores with.
    """

    def __init__(self, program: Program, cp: CompressionPass):
        self.cp = cp
        self.plans = _plans(cp)
        self.dests = [{w.reg: (w.name, w.half) for w in words}
                      for words in word_layout(program).dests]
        self.files: dict[tuple, tuple[np.ndarray, dict]] = {}
        self.accesses = {"reads": 0, "writes": 0}

    def _file(self, warp) -> tuple[np.ndarray, dict]:
        key = (warp.block, warp.warp)
        if key not in self.files:
            self.files[key] = (np.zeros((max(1, self.cp.after), LANES), np.uint32), {})
        return self.files[key]

    def write(self, warp, reg, values, lanes, cycle, pc):
        phys, owner = self._file(warp)
        vreg, half = self.dests[pc][reg]
        owner[reg] = (vreg, half)
        plan = self.plans[vreg]
        value = plan.load(plan.gather(phys))
        word = values.astype(np.uint64)
        if plan.width == 64:
            keep = np.uint64(0xFFFFFFFF << (32 * (1 - half)))
            word = (value & keep) | (word << np.uint64(32 * half))
        plan.scatter(phys, plan.store(word), lanes)
        self.accesses["writes"] += 1

    def read(self, warp, reg, cycle, lanes):
        phys, owner = self._file(warp)
        self.accesses["reads"] += 1
        if reg not in owner:
            return np.zeros(LANES, np.uint32)
        vreg, half = owner[reg]
        plan = self.plans[vreg]
        value = plan.load(plan.gather(phys))
        return ((value >> np.uint64(32 * half)) & np.uint64(0xFFFFFFFF)).astype(np.uint32)

    def free(self, warp):
        self.files.pop((warp.block, warp.warp), None)


def _split_and_banks(cp: CompressionPass, banks: int) -> tuple[dict, dict]:
    """Per virtual register: its split entries, and the table banks of its entries (an
    architectural register per distinct entry, numbered in table order)."""
    numbers: dict[int, int] = {}
    split, table_banks = {}, {}
    for row in cp.allocation.table():
        number = numbers.setdefault(row["word"], len(numbers))
        split[row["vreg"]] = split.get(row["vreg"], 0) + (1 if row["m1"] else 0)
        table_banks.setdefault(row["vreg"], []).append(number % banks)
    return split, table_banks


def added_cycles(program: Program, cp: CompressionPass, timing: CompressionTiming) -> list:
    """Per instruction, the cycles the compressed file adds to its completion."""
    split, table_banks = _split_and_banks(cp, timing.table_banks)
    cycles = []
    for ins in program.code:
        sources = [s for s in dict.fromkeys(ins.sources) if s in cp.allocation.entries]
        dests = [d for d in ins.dests if d in cp.allocation.entries]
        added = timing.writeback if dests else 0
        if sources:
            banks = [b for s in sources for b in table_banks[s]]
            conflicts = max(banks.count(b) for b in banks) - 1
            added += (timing.table_read + timing.convert + conflicts
                      + timing.double_fetch * sum(split[s] for s in sources))
        cycles.append(added)
    return cycles


def _sharing(cp: CompressionPass) -> dict:
    """Virtual register -> the registers that share one of its slices (itself included)."""
    by_slice: dict[tuple, set] = {}
    for vreg in cp.allocation.entries:
        for position in cp.allocation.positions(vreg):
            by_slice.setdefault(position, set()).add(vreg)
    return {vreg: set().union(*(by_slice[p] for p in cp.allocation.positions(vreg)))
            for vreg in cp.allocation.entries}


def _words(kernel, vreg: str, first: int) -> tuple:
    """The uncompressed 32-bit registers of ``vreg`` placed at ``first``."""
    width = kernel.regs[vreg].width
    return () if width == 1 else (first, first + 1) if width == 64 else (first,)


def hazards(program: Program, cp: CompressionPass | None = None) -> tuple[list, list]:
    """Per instruction, ``(needs, overwrites)`` of :class:`~gpurf.sim.sm.timing.TimingSM`
    for a compressed file: a register dead after an older instruction may give its slices
    to a younger one's result, so the younger one waits for the older one's pending write
    to any register sharing its destinations' slices (write-after-write: a load's late
    result would land on them), and does not overtake a pending read of one
    (write-after-read: the collector may write the younger result back first). The same
    holds for registers sharing an uncompressed register (the storage names registers
    by those): a dead result (an atomic's) shares its register with a live one, and the
    scoreboard, which tracks virtual registers, would let the live one's write go first.
    Without ``cp``: that rule alone, for an uncompressed file (:func:`baseline`)."""
    from gpurf.sim.ptx.regalloc import allocate_registers

    from .timing import static_info

    kernel = program.kernel
    physical = allocate_registers(kernel).physical
    sharing = _sharing(cp) if cp is not None else {}
    by_register: dict[int, set] = {}
    for vreg, first in physical.items():
        for reg in _words(kernel, vreg, first):
            by_register.setdefault(reg, set()).add(vreg)
    info = static_info(program)
    needs, overwrites = [], []
    for pc, ins in enumerate(program.code):
        others = set().union(*(sharing.get(d, ()) for d in ins.dests),
                             *(by_register[r] for r in info.writes[pc]))
        regs = set(info.writes[pc])
        for other in others:
            first = physical.get(other)
            if first is not None:
                regs.update(_words(kernel, other, first))
        slots = dict.fromkeys((*info.needs[pc], *sorted(program.slots[o] for o in others)))
        needs.append(tuple(slots))
        overwrites.append(frozenset(regs))
    return needs, overwrites


def table_entries(cp: CompressionPass) -> int:
    """Architectural registers the kernel's indirection table needs: one per distinct
    entry (registers with the same entry hold the same slices, so never live together)."""
    return len({row["word"] for row in cp.allocation.table()})


def baseline(program: Program):
    """The ``mechanism`` of the uncompressed baseline the compressed runs are compared
    with: the workload's program and the uncompressed hazards of :func:`hazards` (the same
    scoreboard rule the compressed runs have)."""
    needs, overwrites = hazards(program)
    return program, {"needs": needs, "overwrites": overwrites}


def mechanism(cp: CompressionPass, timing: CompressionTiming | None = None, *,
              values: bool = True, storage: CompressionPass | None = None):
    """The ``mechanism`` of :func:`gpurf.sim.sm.run.run_kernel` running ``cp`` on the
    timing model: narrowing program, registers, added stages and (with ``values``) a
    :class:`CompressedStorage` storing with ``storage`` (default ``cp``: another pass
    there is a deliberately wrong file, caught by the value check)."""
    timing = timing or CompressionTiming()

    def prepare(program: Program):
        narrowed = narrowing_program(program, cp)
        needs, overwrites = hazards(narrowed, cp)
        options = {"registers": cp.after, "stages": added_cycles(program, cp, timing),
                   "needs": needs, "overwrites": overwrites}
        if values:
            options["values"] = CompressedStorage(narrowed, storage or cp)
        return narrowed, options

    return prepare


def resident_blocks(config: SMConfig, registers: int, warps: int, shared_bytes: int) -> int:
    """Blocks of ``warps`` warps an SM holds at once (the timing model's admission rule,
    without the sub-cores' slots): blocks, warps, registers and shared memory."""
    limits = [config.max_blocks, config.max_warps // warps]
    if registers:
        limits.append(config.registers // (registers * LANES * warps))
    if shared_bytes:
        limits.append(config.shared_bytes // shared_bytes)
    return min(limits)


# -- the compiler's side, on workloads ----------------------------------------------------
TABLE_ENTRIES = 256
"""Architectural registers an indirection table holds (paper Section 3.2.2)."""

QUALITY = {"perfect": 0.0, "high": 0.1}
"""The paper's quality levels (Section 6): perfect (no output change: the outputs pass the
kernel's own comparison with numpy, bit-exact or, where the uncompressed kernel is not
bit-exact, within its stated ``rtol``) and high (10 % deviation,
:func:`~gpurf.sim.passes.compression.precision.quality_error`; SSIM 0.9 for an image
kernel, :data:`IMAGE_KERNELS`)."""

SSIM_HIGH = 0.9
IMAGE_KERNELS = ("sobel",)
"""Kernels whose output is an image (quality: SSIM, like the paper's graphics kernels)."""


class TableOverflowError(ValueError):
    """A kernel needs more indirection-table entries than the table has."""


def compile_kernel(name: str, *, floats=None, launch_size: str | None = None,
                   per_kernel: bool = False) -> CompressionPass:
    """The compression pass of workload ``name``'s kernel: integers narrowed by range
    analysis (``launch_size``: assuming the launch of that size is known, the table
    loaded at launch; ``None``: only CUDA's limits, what a compiler sees), floats in
    ``floats`` (register -> format, or one format). Raises :class:`TableOverflowError`
    beyond :data:`TABLE_ENTRIES` entries."""
    from gpurf.sim.passes.compression.compile_pass import compression_pass
    from gpurf.sim.passes.compression.ranges import LaunchRanges

    from .run import load_workload

    spec, program, variant = load_workload(name)
    launch = (None if launch_size is None else
              LaunchRanges.from_launch(spec.make(launch_size, variant), program.kernel))
    cp = compression_pass(program.kernel, launch=launch, floats=floats)
    entries = table_entries(cp)
    if entries > TABLE_ENTRIES:
        raise TableOverflowError(f"{name}: the compressed kernel needs {entries} indirection "
                                 f"table entries, the table has {TABLE_ENTRIES}")
    return cp


def ssim(got: np.ndarray, want: np.ndarray, window: int = 7) -> float:
    """Mean structural similarity (Wang et al. 2004) of two 2-D images over ``window``
    x ``window`` uniform windows, constants for the reference's dynamic range."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    span = float(np.ptp(want)) or 1.0
    c1, c2 = (0.01 * span) ** 2, (0.03 * span) ** 2
    win = np.lib.stride_tricks.sliding_window_view
    size = min(window, *got.shape)
    x, y = win(got, (size, size)), win(want, (size, size))
    mx, my = x.mean(axis=(-1, -2)), y.mean(axis=(-1, -2))
    vx, vy = x.var(axis=(-1, -2)), y.var(axis=(-1, -2))
    cov = ((x - mx[..., None, None]) * (y - my[..., None, None])).mean(axis=(-1, -2))
    index = ((2 * mx * my + c1) * (2 * cov + c2)) / ((mx ** 2 + my ** 2 + c1) * (vx + vy + c2))
    return float(index.mean())


def within_quality(name: str, run, level: str) -> bool:
    """Whether ``run``'s outputs meet quality ``level`` against its reference."""
    from gpurf.sim.passes.compression.precision import quality_error

    if level == "perfect":
        return run.passed
    if name.partition("/")[0] in IMAGE_KERNELS:
        return all(ssim(run.outputs[k], v) >= SSIM_HIGH for k, v in run.expected.items())
    return quality_error(run.outputs, run.expected) <= QUALITY[level]


def functional_run(name: str, size: str, cp: CompressionPass):
    """Run ``name`` functionally with the compressed file's narrowing (no timing)."""
    from .run import run_kernel

    return run_kernel(name, size, mechanism=lambda program: (narrowing_program(program, cp),
                                                             {}))


def tune_formats(name: str, level: str, *, size: str = "test", per_kernel: bool = False,
                 launch_size: str | None = None) -> dict:
    """The float formats of ``name`` meeting quality ``level`` on its ``size`` input
    (paper Section 4.1): the narrowest Table 3 format for every ``f32`` register that
    passes (a binary search, quality taken as monotone in the format), then, unless
    ``per_kernel``, per value (Angerd et al.): rounds in which every register still
    narrowable tries the next narrower format, found by group testing (a group that
    passes together narrows together, one that fails is halved), until no register
    narrows. Every accepted step was a run that passed with all earlier steps, so the
    chosen formats' run passed."""
    from gpurf.sim.passes.compression.precision import table3_formats

    base = compile_kernel(name, launch_size=launch_size)
    kernel = base.kernel
    written = {d for ins in kernel.instructions for d in ins.dests}
    registers = sorted(v for v, d in kernel.regs.items() if d.type == "f32" and v in written)
    if not registers:
        return {}
    formats = table3_formats()

    def passes(floats) -> bool:
        cp = dataclasses.replace(base, floats={v: f for v, f in floats.items() if f != FP32})
        return within_quality(name, functional_run(name, size, cp), level)

    lo, hi = 0, len(formats) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if passes(dict.fromkeys(registers, formats[mid])):
            hi = mid
        else:
            lo = mid + 1
    chosen = dict.fromkeys(registers, formats[lo])
    if per_kernel:
        return chosen
    open_ = [v for v in registers if formats.index(chosen[v]) > 0]
    while open_:
        narrowed = _narrow_group(open_, chosen, formats, passes)
        open_ = [v for v in narrowed if formats.index(chosen[v]) > 0]
    return chosen


def _narrow_group(group: list, chosen: dict, formats: list, passes) -> list:
    """Narrow by one format the registers of ``group`` that can (in ``chosen``, in
    place); the ones narrowed."""
    trial = {**chosen, **{v: formats[formats.index(chosen[v]) - 1] for v in group}}
    if passes(trial):
        chosen.update(trial)
        return list(group)
    if len(group) == 1:
        return []
    half = len(group) // 2
    return (_narrow_group(group[:half], chosen, formats, passes)
            + _narrow_group(group[half:], chosen, formats, passes))


def run_compressed(name: str, size: str, config: SMConfig, *, level: str = "perfect",
                   per_kernel: bool = False, launch_known: bool = False,
                   timing: CompressionTiming | None = None, values: bool = True):
    """``gpurf sm run NAME --mechanism compression``: tune ``name``'s floats for quality
    ``level`` on the test input, compile (``launch_known``: the range analysis assumes the
    launch of ``size``), and run on the timing model ``config`` with the compressed file
    (value check on unless ``values`` is false). Returns ``(run, pass)``; the run's
    ``stats["quality"]`` says whether its outputs meet ``level``."""
    from .run import run_kernel

    if level not in QUALITY:
        raise ValueError(f"quality must be one of {', '.join(QUALITY)}, not {level!r}")
    launch_size = size if launch_known else None
    formats = tune_formats(name, level, per_kernel=per_kernel, launch_size=launch_size)
    cp = compile_kernel(name, floats=formats, launch_size=launch_size)
    run = run_kernel(name, size, timing=config,
                     mechanism=mechanism(cp, timing, values=values))
    run.stats["quality"] = within_quality(name, run, level)
    return run, cp
