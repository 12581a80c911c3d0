"""The composed operand-read and write-back paths (golden/compression/paths.py): directed
cases for a split signed integer and a narrow float, random round trips (seeded), and a
replay of a kernel's register traffic from the golden SM: every write the timing model
makes through the compressed file (sim/sm/compression.py) goes through the golden
write-back path into per-thread registers, and every read it makes must equal the golden
operand-read path's value from them."""

import random

import numpy as np
import pytest

from gpurf.golden.compression.paths import operand_read, slice_bits, write_back
from gpurf.golden.compression.value_extractor import unpack_entry
from gpurf.hw.compression.formats import table3_format
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.compression import CompressedStorage, compile_kernel, mechanism
from gpurf.sim.sm.config import load_config

FP16 = table3_format(4)


def _apply(registers, writes):
    for reg, word, mask in writes:
        registers[reg] = (registers.get(reg, 0) & ~mask) | (word & mask)


def test_split_signed_integer_round_trip():
    """-3 in 12 bits over two registers: 2 slices of R4 (slices 6, 7), 1 of R1 (slice 0)."""
    entry = {"r0": 4, "m0": 0b11000000, "r1": 1, "m1": 0b00000001}
    registers = {4: 0x0123_4567, 1: 0xFFFF_FFF0}
    _apply(registers, write_back(-3 & 0xFFFFFFFF, entry))
    assert registers[4] & 0x00FF_FFFF == 0x0023_4567, "other slices untouched"
    assert registers[1] >> 4 == 0xFFFF_FFF, "other slices untouched"
    assert operand_read(registers, entry, signed=True) == -3 & 0xFFFFFFFF
    assert operand_read(registers, entry, signed=False) == 0xFFD


def test_narrow_float_rounds_then_widens():
    entry = {"r0": 0, "m0": 0b00001111, "r1": 0, "m1": 0}
    registers = {}
    one_third = int(np.float32(1 / 3).view(np.uint32))
    _apply(registers, write_back(one_third, entry, FP16))
    got = np.uint32(operand_read(registers, entry, fmt=FP16)).view(np.float32)
    assert got == np.float32(np.float16(1 / 3))


def test_slice_bits():
    assert slice_bits(0b10000001) == 0xF000_000F


def test_random_round_trips(seed):
    rng = random.Random(seed)
    for _ in range(500):
        slices = rng.randint(1, 8)
        first = rng.randint(1, slices)
        m0 = sum(1 << s for s in rng.sample(range(8), first))
        m1 = sum(1 << s for s in rng.sample(range(8), slices - first)) if slices > first else 0
        entry = {"r0": 2, "m0": m0, "r1": 5 if m1 else 0, "m1": m1}
        value = rng.getrandbits(4 * slices)
        registers = {2: rng.getrandbits(32), 5: rng.getrandbits(32)}
        _apply(registers, write_back(value, entry))
        assert operand_read(registers, entry) == value, (entry, value, seed)


class _Replay(CompressedStorage):
    """A compressed file whose accesses are replayed through the golden paths."""

    def __init__(self, program, cp, block=(0, 0, 0)):
        super().__init__(program, cp)
        self.block = block
        self.threads = {}
        self.entries = {v: [unpack_entry(w) for w in words]
                        for v, words in cp.allocation.entries.items()}
        self.replayed = {"writes": 0, "reads": 0}

    def _golden(self, vreg):
        entries = self.entries[vreg]
        plan = self.plans[vreg]
        if len(entries) != 1 or plan.width > 32 or self.cp.kernel.regs[vreg].type == "pred":
            return None
        return entries[0], plan

    def write(self, warp, reg, values, lanes, cycle, pc):
        super().write(warp, reg, values, lanes, cycle, pc)
        vreg, _ = self.dests[pc][reg]
        golden = self._golden(vreg)
        if golden is None or warp.block != self.block:
            return
        entry, plan = golden
        for lane in np.flatnonzero(lanes).tolist():
            registers = self.threads.setdefault((warp.warp, lane), {})
            _apply(registers, write_back(int(values[lane]), entry, plan.fmt))
        self.replayed["writes"] += 1

    def read(self, warp, reg, cycle, lanes):
        got = super().read(warp, reg, cycle, lanes)
        self._check(warp, reg, lanes, got)
        return got

    def _check(self, warp, reg, lanes, got):
        owner = self._file(warp)[1].get(reg)
        golden = None if owner is None else self._golden(owner[0])
        if golden is None or warp.block != self.block:
            return
        entry, plan = golden
        low = (1 << plan.width) - 1
        for lane in np.flatnonzero(lanes).tolist():
            registers = self.threads.get((warp.warp, lane), {})
            if entry["r0"] not in registers:
                continue
            registers = {entry["r1"]: 0, **registers}
            want = operand_read(registers, entry, plan.signed, plan.fmt) & low
            assert int(got[lane]) == want, f"{warp}, R{reg} ({owner[0]}), lane {lane}"
        self.replayed["reads"] += 1


class _Flipped(_Replay):
    """A file whose extraction is wrong in lane 7 (the golden replay must notice)."""

    def read(self, warp, reg, cycle, lanes):
        got = CompressedStorage.read(self, warp, reg, cycle, lanes).copy()
        owner = self._file(warp)[1].get(reg)
        if (owner and self._golden(owner[0]) and warp.block == self.block and lanes[7]
                and entry_written(self, warp, owner[0])):
            got[7] ^= 1
        self._check(warp, reg, lanes, got)
        return got


def entry_written(storage, warp, vreg) -> bool:
    """Whether lane 7 of ``warp`` has a golden register file holding ``vreg``'s ``r0``."""
    entry = storage.entries[vreg][0]
    return entry["r0"] in storage.threads.get((warp.warp, 7), {})


def _replayed(name, storage_class):
    cp = compile_kernel(name, floats=FP16)
    replay = {}

    def prepare(program):
        narrowed, options = mechanism(cp)(program)
        options["values"] = replay["storage"] = storage_class(narrowed, cp)
        return narrowed, options

    run = run_kernel(name, "test", timing=load_config(preset="fermi", max_blocks=8),
                     mechanism=prepare)
    return run, replay["storage"].replayed


def test_a_kernels_register_traffic_replays_through_the_golden_paths():
    run, counts = _replayed("sobel", _Replay)
    assert run.stats["timing"].values["reads"] > 0
    assert counts["writes"] > 100 and counts["reads"] > 100, counts


def test_the_replay_catches_a_wrong_read():
    with pytest.raises(AssertionError, match="lane 7"):
        _replayed("sobel", _Flipped)
