"""Static data compression's compiler pass (paper Section 4, Fig. 7): integer widths from
range analysis, float formats from precision tuning, slice allocation and the indirection
table, and the run that proves them safe.

- :mod:`gpurf.sim.passes.compression.ranges`: integer ranges and widths (Section 4.2, Fig. 8).
- :mod:`gpurf.sim.passes.compression.precision`: float formats, the quality metric and
  narrowing.
- :mod:`gpurf.sim.passes.compression.slices`: slice allocation and the indirection entries
  (4.3).

:func:`compression_pass` puts them together for one kernel;
:func:`gpurf.sim.compile.tune_precision` (above the SM: it runs the workload) is the
quality-driven search of Section 4.1 (per kernel: the narrowest Table 3 format for every
``f32`` register whose run on the sample input, the workload's ``test`` size, stays within
the quality threshold; then, with ``per_register``, each register in turn narrowed further
while the run still passes — the recursive per-value exploration of Angerd et al.).
Quality is assumed monotone in the format for the per-kernel search (binary search over
Table 3); the chosen format's run is always one that passed.

Proof by execution (:meth:`CompressionPass.enforcement`, run by
:func:`gpurf.sim.compile.run_compressed`): every value an instruction writes to a narrowed
register is stored as the hardware stores it and read back from there:

- an integer must fit its analysed width (signed: sign-extended back, else zero-extended),
  and, stricter, lie in its analysed range; a value that does not fails the run with
  :class:`NarrowValueError` naming kernel, block, warp, pc, instruction, register, lane
  and value. Without the check (``check=False``) the value is truncated to its slices
  and extended back as the extractor would, and the run goes on (and fails its numpy
  comparison instead);
- a float is narrowed to its format and widened back (the kernel computes with that);
- the stored bits are scattered into an emulated physical register file (32 lanes of
  ``registers`` 32-bit registers per warp) at the slices the indirection entries give,
  and every source operand an instruction reads is gathered back from there, extended
  or widened, and must equal the value the model holds: this checks the allocation (no
  two live operands share a slice) and the entries, not only the widths. The slice
  positions come from the packed entries through the value extractor's ``unpack_entry``
  and ``data_positions`` (data slices fill ``m0`` then ``m1``, spec Fig. 3); the scatter
  and gather are the array form of the truncator's ``scatter`` and the extractor's
  placement, and the floats go through :func:`~gpurf.sim.passes.compression.precision.narrow_lanes`,
  bit-exact with the truncator's ``narrow`` (tests/test_passes_compression.py).

Registers "before" are :func:`gpurf.sim.ptx.regalloc.allocate_registers`' count (32-bit
registers, 64-bit values as pairs); "after" the slice allocation's. Predicates are in
their own file and counted in neither.
"""

import json
from dataclasses import dataclass, field

import numpy as np

from gpurf.hw.compression.formats import FP32, FloatFormat
from gpurf.hw.compression.layouts import SLICE_BITS
from gpurf.sim.passes.enforcement import Enforcement
from gpurf.sim.ptx.ir import Kernel
from gpurf.sim.ptx.liveness import liveness
from gpurf.sim.ptx.regalloc import allocate_registers

from .precision import narrow_lanes, widen_lanes
from .ranges import IntWidth, LaunchRanges, range_analysis
from .slices import SliceAllocation, allocate_slices

__all__ = ["CompressionPass", "NarrowValueError", "compression_pass"]


class NarrowValueError(AssertionError):
    """A value written to a narrowed register does not fit its width, or a register read
    back from its slices differs from the value written."""


def _is_float(kernel: Kernel, vreg: str) -> bool:
    return kernel.regs[vreg].type[0] == "f"


@dataclass
class CompressionPass:
    """The pass' result for one kernel.

    Attributes
    ----------
    kernel : Kernel
    ints : dict
        Integer register -> :class:`~gpurf.sim.passes.compression.ranges.IntWidth` (``None`` when
        integers are not narrowed: their declared width).
    floats : dict
        Float register -> :class:`~gpurf.hw.compression.formats.FloatFormat`.
    allocation : SliceAllocation
    before : int
        32-bit registers per thread of the uncompressed allocation
        (:func:`gpurf.sim.ptx.regalloc.allocate_registers`).
    """

    kernel: Kernel
    ints: dict
    floats: dict
    allocation: SliceAllocation
    before: int
    analysis: object = field(default=None, repr=False)

    @property
    def after(self) -> int:
        return self.allocation.registers

    def bits(self, vreg: str) -> int:
        """Data bits stored for ``vreg``."""
        return SLICE_BITS * self.allocation.slices[vreg]

    def signed(self, vreg: str) -> bool:
        width = self.ints.get(vreg)
        return width is not None and width.signed

    def listing(self) -> str:
        """The kernel with each written register's width and entry (the paper's Fig. 7
        "indirection info")."""
        lines = [f"// {self.kernel.name}: {self.before} -> {self.after} registers "
                 f"(lower bound {self.allocation.lower_bound})"]
        for ins in self.kernel.instructions:
            notes = []
            for d in ins.dests:
                if d in self.allocation.entries:
                    notes.append(f"{d}: {self._describe(d)}")
            lines.append(f"  {ins}" + (f"    // {'; '.join(notes)}" if notes else ""))
        return "\n".join(lines)

    def _describe(self, vreg: str) -> str:
        if vreg in self.floats or self.kernel.regs[vreg].type == "f32":
            kind = str(self.floats.get(vreg, FP32))
        else:
            width = self.ints.get(vreg)
            kind = (f"{'s' if width.signed else 'u'}{width.bits} {width.range}"
                    if width else f"b{self.kernel.regs[vreg].width}")
        parts = []
        for word in self.allocation.entries[vreg]:
            row = next(r for r in self.allocation.table() if r["word"] == word)
            parts.append(f"R{row['r0']}/{row['m0']:08b}"
                         + (f"+R{row['r1']}/{row['m1']:08b}" if row["m1"] else ""))
        return f"{kind} {', '.join(parts)}"

    def to_json(self) -> str:
        return json.dumps({
            "kernel": self.kernel.name, "registers_before": self.before,
            "registers_after": self.after, "lower_bound": self.allocation.lower_bound,
            "registers": {v: self._register_json(v) for v in self.allocation.entries}},
            indent=1)

    def _register_json(self, vreg: str) -> dict:
        """``type`` (a float format, ``signed``/``unsigned`` integer, or the declared
        type when not narrowed), analysed ``range`` and ``bits``, stored ``slices``, and
        the packed ``entries`` with their fields."""
        width = self.ints.get(vreg)
        decl = self.kernel.regs[vreg]
        if decl.type == "f32":
            kind, bits = str(self.floats.get(vreg, FP32)), self.floats.get(vreg, FP32).width
        elif width is not None:
            kind, bits = "signed" if width.signed else "unsigned", width.bits
        else:
            kind, bits = decl.type, decl.width
        rows = [r for r in self.allocation.table() if r["vreg"] == vreg]
        return {"type": kind, "bits": bits,
                "range": None if width is None else [width.range.lo, width.range.hi],
                "slices": self.allocation.slices[vreg],
                "entries": [{k: r[k] for k in ("word", "r0", "m0", "r1", "m1")}
                            for r in rows]}

    # -- enforcement ----------------------------------------------------------
    def enforcement(self, *, check: bool = True, emulate: bool = True,
                    name: str = "compression") -> Enforcement:
        """The :class:`~gpurf.sim.passes.enforcement.Enforcement` of this pass (see the module
        docstring); ``emulate=False`` skips the physical register file (narrowing only: the
        tuning runs)."""
        hook = _Storage(self, check, emulate, name)
        return Enforcement({}, [frozenset()] * len(self.kernel.instructions), name,
                           values=hook)


class _Storage:
    """The ``values`` hook: narrow what is written, keep it in emulated physical slices,
    check what is read."""

    def __init__(self, cp: CompressionPass, check: bool, emulate: bool, name: str):
        self.cp, self.check, self.emulate, self.name = cp, check, emulate, name
        self.plan = {vreg: self._plan(vreg) for vreg in cp.allocation.entries}
        self.operands = [(tuple(v for v in ins.sources if v in self.plan),
                          tuple(v for v in ins.dests if v in self.plan))
                         for ins in cp.kernel.instructions]
        self.block = None

    def _plan(self, vreg: str):
        """Where ``vreg``'s data slices live: per data slice its register row, shift in
        the register, shift in the value; the rows grouped by register."""
        positions = self.cp.allocation.positions(vreg)
        rows = np.array([r for r, _ in positions])
        shifts = np.array([SLICE_BITS * s for _, s in positions], np.uint32)[:, None]
        data = np.array([SLICE_BITS * k for k in range(len(positions))], np.uint64)[:, None]
        groups = [(r, np.flatnonzero(rows == r),
                   np.uint32(sum(0xF << int(sh) for sh in shifts[rows == r, 0])))
                  for r in dict.fromkeys(rows.tolist())]
        width = self.cp.kernel.regs[vreg].width
        return rows, shifts, data, groups, self.cp.floats.get(vreg), width

    def _file(self, warp) -> tuple:
        if warp.block is not self.block:
            self.block, self.files = warp.block, {}
        if warp.index not in self.files:
            self.files[warp.index] = (np.zeros((max(1, self.cp.after), 32), np.uint32),
                                      {}, {})
        return self.files[warp.index]

    def _fail(self, warp, step, message):
        ins = step.instruction
        raise NarrowValueError(f"{self.name}: {self.cp.kernel.name}: block "
                               f"{warp.block.block_id}, warp {warp.index}, pc {step.pc} "
                               f"({ins.opcode}, line {ins.line}) {message}")

    def __call__(self, warp, step):
        phys, shadow, written = self._file(warp)
        lanes = step.mask
        sources, dests = self.operands[step.pc]
        for vreg in sources if self.emulate else ():
            if vreg in shadow:
                self._check_read(warp, step, phys, vreg, shadow[vreg], lanes & written[vreg])
        for vreg in dests:
            self._write(warp, step, phys, vreg, lanes)
            if self.emulate:
                shadow[vreg] = warp.regs[warp.program.slots[vreg]].copy()
                written[vreg] = written.get(vreg, False) | lanes

    def _write(self, warp, step, phys, vreg, lanes):
        _rows, shifts, data, groups, fmt, width = self.plan[vreg]
        reg = warp.regs[warp.program.slots[vreg]]
        if fmt is not None:
            stored = narrow_lanes(reg, fmt)
            value = widen_lanes(stored, fmt)
        else:
            if self.check:
                self._check_fits(warp, step, vreg, reg, lanes, width)
            bits = self.cp.bits(vreg)
            stored = reg.astype(np.uint64)
            if bits < 64:
                stored &= np.uint64((1 << bits) - 1)
            value = self._extend(vreg, stored, width).astype(reg.dtype)
        np.copyto(reg, value, where=lanes)
        if not self.emulate:
            return
        placed = ((stored.astype(np.uint64)[None, :] >> data) & np.uint64(0xF)).astype(
            np.uint32) << shifts
        for r, members, mask in groups:
            merged = np.bitwise_or.reduce(placed[members], axis=0)
            phys[r] = np.where(lanes, (phys[r] & ~mask) | merged, phys[r])

    def _extend(self, vreg, stored, width):
        bits = self.cp.bits(vreg)
        if self.cp.signed(vreg) and bits < width:
            top = np.uint64(1 << (bits - 1))
            fill = np.uint64(((1 << width) - 1) ^ ((1 << bits) - 1))
            stored = np.where(stored & top, stored | fill, stored)
        return stored

    def _check_fits(self, warp, step, vreg, reg, lanes, width):
        iw: IntWidth = self.cp.ints.get(vreg)
        if iw is None or iw.bits >= width:
            return
        if iw.signed:
            values = reg.view(f"i{reg.dtype.itemsize}").astype(np.int64)
            bad = (values < -(1 << (iw.bits - 1))) | (values >= 1 << (iw.bits - 1))
        else:
            values = reg
            bad = values >= np.uint64(1 << iw.bits)
        bad &= lanes
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            self._fail(warp, step, f"writes {vreg} = {values[lane]} in lane {lane}, outside "
                                   f"its {iw.bits}-bit {'signed' if iw.signed else 'unsigned'}"
                                   f" width (range {iw.range})")
        self._check_range(warp, step, vreg, reg, lanes, width, iw)

    def _check_range(self, warp, step, vreg, reg, lanes, width, iw):
        """The stricter claim: the value is in the analysed range (a range one too small
        may still fit the same bits)."""
        lo, hi = iw.range.lo, iw.range.hi
        if lo >= 0:
            values = reg.astype(np.uint64)
            bad = (values < np.uint64(lo)) | (values > np.uint64(hi))
        elif hi < 1 << (width - 1):
            values = reg.view(f"i{reg.dtype.itemsize}").astype(np.int64)
            bad = (values < lo) | (values > hi)
        else:
            return
        bad &= lanes
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            self._fail(warp, step, f"writes {vreg} = {values[lane]} in lane {lane}, outside "
                                   f"its analysed range {iw.range}")

    def _check_read(self, warp, step, phys, vreg, expected, lanes):
        if not lanes.any():
            return
        rows, shifts, data, _groups, fmt, width = self.plan[vreg]
        nibbles = ((phys[rows] >> shifts) & np.uint32(0xF)).astype(np.uint64) << data
        stored = np.bitwise_or.reduce(nibbles, axis=0)
        value = (widen_lanes(stored, fmt) if fmt is not None
                 else self._extend(vreg, stored, width)).astype(np.uint64)
        want = expected.astype(np.uint64)
        bad = (value != want) & lanes
        if bad.any():
            lane = int(np.flatnonzero(bad)[0])
            self._fail(warp, step, f"reads {vreg} from its slices as {int(value[lane]):#x} "
                                   f"in lane {lane}, the model holds {int(want[lane]):#x}")


def compression_pass(kernel: Kernel, *, launch: LaunchRanges | None = None, ints: bool = True,
                     floats: FloatFormat | dict | None = None) -> CompressionPass:
    """Widths, allocation and entries for ``kernel`` (of a workload:
    :func:`gpurf.sim.compile.compress_workload`).

    Parameters
    ----------
    kernel : Kernel
    launch : LaunchRanges, optional
        What the range analysis may assume (a workload's: ``LaunchRanges.from_launch``);
        default: only CUDA's limits on the dimensions.
    ints : bool
        Narrow integers to their analysed widths (else their declared widths).
    floats : FloatFormat or dict, optional
        One format for every ``f32`` register, or register -> format (missing: fp32).
    """
    live = liveness(kernel)
    before = allocate_registers(kernel, live).registers
    analysis = range_analysis(kernel, launch) if ints else None
    widths = dict(analysis.widths) if ints else {}
    formats = {}
    slices = {}
    defined = {d for ins in kernel.instructions for d in ins.dests}
    for vreg in sorted(defined):
        decl = kernel.regs[vreg]
        if decl.type == "pred":
            continue
        if decl.type == "f32":
            fmt = floats.get(vreg, FP32) if isinstance(floats, dict) else (floats or FP32)
            if fmt != FP32:
                formats[vreg] = fmt
            slices[vreg] = fmt.slices
        elif _is_float(kernel, vreg):
            slices[vreg] = decl.width // SLICE_BITS
        else:
            bits = widths[vreg].bits if vreg in widths else decl.width
            slices[vreg] = -(-bits // SLICE_BITS)
    allocation = allocate_slices(kernel, live, slices)
    return CompressionPass(kernel, widths, formats, allocation, before, analysis)

