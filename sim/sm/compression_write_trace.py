"""A kernel's register writes through the composed write-back path, recorded as a port trace.

:class:`WritePathRecorder` sends every write of the compressed register file
(:class:`~.compression.CompressedStorage`) as a writeback through the golden model of
``compression.write_path`` (the RTL block's reference, cycle-exact at its ports): the
kernel's table is loaded through the ``load`` port first (one architectural register per
distinct entry, in table order, as the read path's recording loads it), then the writebacks
follow back to back on port 0 in the SM's write order. Every port of every cycle goes to a
trace file (``docs/traces.md``), which ``gpurf replay`` drives into the block's Verilog.

The path's register-file writes (``rf_write``: register, slice mask, data) are applied to a
mirror of each warp's physical registers, and the mirror must equal the compressed file the
SM wrote (every register, every lane) whenever the recorder drains: every ``QUEUE``
writebacks, when a warp's registers are freed and at the end (``AssertionError``
otherwise). So the trace's expected outputs are checked, beyond the golden model, against
the SM's own storage.

**Lanes.** A writeback writes all lanes (the write path has no lane mask), so lanes the
instruction does not write carry the register's current value (re-narrowing a narrowed
value gives it back); the written lanes carry the SM's result as the execution unit gives
it (fp32 bits for a float register, which the value truncator narrows).

**64-bit registers.** A 64-bit value of more than 8 slices has two entries, and each 32-bit
half is a writeback on its own entry. A value of at most 8 slices has one entry, which holds
its low word: the low half is a writeback of it; the high half (only its sign or zero fill
is stored) is that writeback again, with the low word the register holds.

Only port 0 is driven: with one port the table has no bank conflicts, so every writeback
shows on ``rf_write[0]`` exactly two cycles after it is accepted, in order.
"""

from collections import deque
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpurf.golden.compression.write_path import WritePath
from gpurf.hw.compression.layouts import SLICE_BITS, SLICES
from gpurf.hw.registry import get_block

__all__ = ["BLOCK", "LATENCY", "QUEUE", "RecordedWrites", "WritePathRecorder"]

BLOCK = "compression.write_path"

LATENCY = 2
"""Cycles from a writeback's acceptance to its ``rf_write`` without a conflict."""

QUEUE = 256
"""Writebacks buffered before they are pumped through the path."""

_WORD = np.uint64(0xFFFFFFFF)


@dataclass
class RecordedWrites:
    """What a write-path recording holds: its trace ``path``, ``cycles``, the ``writes``
    recorded (``wide`` of them halves of 64-bit registers) and the table ``entries``."""

    path: Path
    cycles: int
    writes: int
    entries: int
    wide: int = 0


def slice_mask(mask: int) -> int:
    """The 32-bit lane mask of a slice ``mask`` (bit ``s``: bits ``4s .. 4s+3``)."""
    return sum(((1 << SLICE_BITS) - 1) << (SLICE_BITS * s) for s in range(SLICES)
               if mask >> s & 1)


class WritePathRecorder:
    """The write path beside a compressed register file (module docstring).

    Parameters
    ----------
    cp : CompressionPass
        The kernel's compression (its allocation's entries).
    plans : dict
        Per virtual register its storage plan (:class:`~.compression.CompressedStorage`'s).
    numbers : dict
        Per distinct entry its architectural register, in table order.
    arch : dict
        Per ``(virtual register, entry index)`` its architectural register.
    wrap : callable
        ``wrap(qualname, params, model)`` giving the recording model
        (:meth:`gpurf.sim.sm.record.TraceFolder.wrap`).
    """

    def __init__(self, cp, plans: dict, numbers: dict, arch: dict, wrap):
        self.cp, self.plans, self.arch = cp, plans, arch
        self.params = get_block(BLOCK).resolve()
        self.model = WritePath(**self.params)
        self.recorder = wrap(BLOCK, self.params, self.model)
        self.writer = self.recorder.writer
        self.ports = self.model.ports
        self.entries = len(numbers)
        self.mirrors: dict[tuple, np.ndarray] = {}
        self.queue: deque[tuple[tuple, dict]] = deque()
        self.inflight: deque[tuple[int, tuple]] = deque()
        self.cycle = 0
        self.recorded = 0
        self.wide = 0
        self._load(numbers)

    def _load(self, numbers: dict):
        codec = self.ports["load__payload"]
        for word, number in numbers.items():
            self._step({"load__valid": 1,
                        "load__payload": codec.pack({"reg": number, "entry": word})})

    def write(self, key: tuple, phys: np.ndarray, vreg, half: int, values, lanes):
        """Record the SM's write of word ``half`` of ``vreg`` (``values`` in ``lanes``)
        into the file ``phys`` of warp ``key``, as the file holds it after the write."""
        self.mirrors.setdefault(key, np.zeros_like(phys))
        plan = self.plans[vreg]
        words = self.cp.allocation.entries[vreg]
        entry = min(half, len(words) - 1)
        stored = plan.load(plan.gather(phys)).astype(np.uint64)
        held = (stored >> np.uint64(32 * entry)) & _WORD
        written = np.asarray(lanes, bool) & (half == entry)
        data = np.where(written, np.asarray(values, np.uint64) & _WORD, held)
        request = {"reg": self.arch[vreg, entry], "float": int(plan.fmt is not None),
                   "data": [int(d) for d in data]}
        self.queue.append((key, request))
        self.recorded += 1
        self.wide += plan.width == 64
        if len(self.queue) >= QUEUE:
            self.drain()

    def drain(self):
        """Pump every queued writeback through the path and wait for its writes."""
        idle = {"reg": 0, "float": 0, "data": [0] * self.params["lanes"]}
        codec = self.ports["write"]
        while self.queue or self.inflight:
            inputs = {}
            if self.queue:
                others = [idle] * (self.params["ports"] - 1)
                inputs = {"write_valid": 1, "write": codec.pack([self.queue[0][1], *others])}
            out = self._step(inputs)
            if self.queue and out["write_ready"] & 1:
                self.inflight.append((self.cycle - 1 + LATENCY, self.queue.popleft()[0]))

    def check(self, key: tuple, phys: np.ndarray):
        """After :meth:`drain`: the mirror of warp ``key`` equals the SM's file ``phys``."""
        mirror = self.mirrors.get(key, np.zeros_like(phys))
        if not np.array_equal(mirror, phys):
            reg, lane = (int(i) for i in np.argwhere(mirror != phys)[0])
            raise AssertionError(f"write path: warp {key} register {reg} lane {lane}: the "
                                 f"path wrote {int(mirror[reg, lane]):#010x}, the compressed "
                                 f"file holds {int(phys[reg, lane]):#010x}")

    def retire(self, key: tuple, phys: np.ndarray):
        """Warp ``key``'s registers are freed: drain, check them, forget them."""
        self.drain()
        self.check(key, phys)
        self.mirrors.pop(key, None)

    def finish(self, files: dict) -> RecordedWrites:
        """Drain, check every warp's file still held (``files``: key -> ``(phys, _)``) and
        let the path empty (the trace stays open: its folder closes it)."""
        self.drain()
        for key, (phys, _) in files.items():
            self.check(key, phys)
        return RecordedWrites(Path(self.writer.path), self.writer.cycles, self.recorded,
                              self.entries, self.wide)

    def _step(self, inputs: dict) -> dict:
        full = {"write_valid": 0, "write": 0, "load__valid": 0, "load__payload": 0, **inputs}
        out = self.recorder.step(full)
        if self.inflight and self.inflight[0][0] == self.cycle:
            self._apply(self.inflight.popleft()[1], out["rf_write"])
        self.cycle += 1
        return out

    def _apply(self, key: tuple, rf_write: int):
        """Port 0's two register writes of this cycle into warp ``key``'s mirror."""
        mirror = self.mirrors[key]
        for write in self.ports["rf_write"].unpack(rf_write)[0]:
            if write.mask:
                keep = np.uint32(slice_mask(write.mask))
                data = np.asarray(write.data, np.uint32)
                mirror[write.reg] = (mirror[write.reg] & ~keep) | (data & keep)

