"""The compressed register file in the golden SM (:mod:`gpurf.sim.sm.compression`): every
kernel runs on the timing model with the pass's registers, its added stages and the value
check on, its outputs within quality; a file that stores with other widths, formats or
slices than the run is caught at the first read it gets wrong; a narrowing the kernel cannot
take is caught by its outputs.

Random choices (the kernel, the register pair made to share slices) come from ``--seed`` /
``GPURF_SEED`` (tests/conftest.py) and are printed, so a failure replays.
"""

import dataclasses
import random

import numpy as np
import pytest

from gpurf.hw.compression.formats import table3_format
from gpurf.sim.kernels import one_per_kernel
from gpurf.sim.ptx.liveness import liveness
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.compression import (
    CompressedStorage,
    CompressionTiming,
    TableOverflowError,
    added_cycles,
    compile_kernel,
    functional_run,
    hazards,
    mechanism,
    narrowing_program,
    resident_blocks,
    run_compressed,
    ssim,
    table_entries,
    tune_formats,
    within_quality,
)
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.run import load_workload
from gpurf.sim.sm.values import ValueMismatchError, WarpId

FERMI = load_config(preset="fermi", max_blocks=8)
FP8 = table3_format(2)


def _timed(name, cp, **options):
    return run_kernel(name, "test", timing=FERMI, mechanism=mechanism(cp, **options))


@pytest.mark.parametrize("name", one_per_kernel())
def test_every_kernel_runs_compressed_with_its_values_checked(name):
    cp = compile_kernel(name)
    run = _timed(name, cp)
    assert run.passed, run.mismatches()
    assert within_quality(name, run, "perfect")
    values = run.stats["timing"].values
    assert values["reads"] > 0 and values["writes"] > 0
    assert cp.after <= cp.before
    assert table_entries(cp) <= 256


def test_the_mechanism_hands_the_sm_its_registers_stages_and_program():
    cp = compile_kernel("hotspot")
    program = load_workload("hotspot")[1]
    prepared, options = mechanism(cp)(program)
    assert options["registers"] == cp.after
    assert len(options["stages"]) == len(program.code)
    assert prepared.ops is not program.ops


def test_a_storage_with_narrower_floats_is_caught(seed):
    name = random.Random(seed).choice(["hotspot", "sobel", "srad", "kmeans"])
    print(f"kernel {name}")
    cp = compile_kernel(name)
    wrong = compile_kernel(name, floats=FP8)
    with pytest.raises(ValueMismatchError, match="read of"):
        _timed(name, cp, storage=wrong)


def _overlapping_pairs(cp):
    """``(a, b)``: ``a`` written while ``b`` is live and ``b`` read later in the same
    straight-line code (no label or branch between), both of one kind and width."""
    kernel = cp.kernel
    live = liveness(kernel)
    starts = set(kernel.labels.values())
    code = kernel.instructions

    def same_kind(a, b):
        return (cp.allocation.slices[a] == cp.allocation.slices[b]
                and kernel.regs[a].width == kernel.regs[b].width == 32
                and cp.floats.get(a) == cp.floats.get(b) and cp.ints.get(a) == cp.ints.get(b))

    pairs = set()
    for pc, ins in enumerate(code):
        for a in ins.dests:
            if a not in cp.allocation.entries:
                continue
            for later in range(pc + 1, len(code)):
                if later in starts or code[later - 1].is_branch:
                    break
                for b in code[later].sources:
                    if b != a and b in live.live_after[pc] and b in cp.allocation.entries \
                            and same_kind(a, b):
                        pairs.add((a, b))
    return sorted(pairs)


def test_a_slice_allocation_sharing_live_slices_is_caught(seed):
    """A register given the slices of one live across its write and read after it in
    the same straight-line code: the write overwrites them, the read gets the wrong
    value."""
    rng = random.Random(seed)
    name = "sobel"
    cp = compile_kernel(name)
    a, b = rng.choice(_overlapping_pairs(cp))
    print(f"{a} given {b}'s slices")
    entries = {**cp.allocation.entries, a: cp.allocation.entries[b]}
    broken = dataclasses.replace(cp, allocation=dataclasses.replace(cp.allocation,
                                                                    entries=entries))
    with pytest.raises(ValueMismatchError):
        _timed(name, cp, storage=broken)


def test_a_narrowing_the_kernel_cannot_take_fails_its_quality():
    cp = compile_kernel("hotspot", floats=FP8)
    run = functional_run("hotspot", "test", cp)
    assert not within_quality("hotspot", run, "perfect")
    assert not run.passed


def test_storage_returns_what_it_stored_lane_by_lane(seed):
    """Random values through a :class:`CompressedStorage`: a read gives the written value
    stored and extended (narrowed floats round to their format), lanes not written keep the
    old value."""
    rng = np.random.default_rng(seed)
    cp = compile_kernel("srad", floats=FP8)
    program = load_workload("srad")[1]
    storage = CompressedStorage(program, cp)
    warp = WarpId((0, 0, 0), 0, 0, 0)
    checked = 0
    for pc, dests in enumerate(storage.dests):
        for reg, (vreg, _half) in dests.items():
            plan = storage.plans[vreg]
            if plan.width != 32:
                continue
            first, second = rng.integers(0, 1 << 32, (2, 32), dtype=np.uint64)
            lanes = rng.random(32) < 0.5
            storage.write(warp, reg, first.astype(np.uint32), np.ones(32, bool), 0, pc)
            storage.write(warp, reg, second.astype(np.uint32), lanes, 0, pc)
            want = np.where(lanes, plan.load(plan.store(second)), plan.load(plan.store(first)))
            got = storage.read(warp, reg, 0, np.ones(32, bool))
            assert np.array_equal(got, want.astype(np.uint32)), (pc, vreg)
            checked += 1
    assert checked > 10


def test_added_cycles_follow_each_parameter():
    cp = compile_kernel("sobel")
    program = load_workload("sobel")[1]
    base = added_cycles(program, cp, CompressionTiming())
    for delay in (0, 2, 4, 8):
        swept = added_cycles(program, cp, CompressionTiming(writeback=delay))
        for ins, a, b in zip(program.code, base, swept, strict=True):
            writes = any(d in cp.allocation.entries for d in ins.dests)
            assert b - a == (delay - 3 if writes else 0)
    no_split = added_cycles(program, cp, CompressionTiming(double_fetch=0))
    split = {r["vreg"] for r in cp.allocation.table() if r["m1"]}
    assert split, "sobel has split registers"
    for ins, a, b in zip(program.code, base, no_split, strict=True):
        assert a - b == sum(1 for s in dict.fromkeys(ins.sources) if s in split)
    one_bank = added_cycles(program, cp, CompressionTiming(table_banks=1))
    many = added_cycles(program, cp, CompressionTiming(table_banks=4096))
    for ins, a, b in zip(program.code, one_bank, many, strict=True):
        sources = [s for s in dict.fromkeys(ins.sources) if s in cp.allocation.entries]
        entries = sum(len(cp.allocation.entries[s]) for s in sources)
        assert a - b == max(0, entries - 1)
    with pytest.raises(ValueError, match="writeback"):
        CompressionTiming(writeback=-1)


def test_resident_blocks_the_papers_imgvf_example():
    """Section 6.1: 10 warps per block, 14,560 bytes of shared memory; 52 registers: one
    block, 29: three, 24: four by registers but three by shared memory."""
    assert resident_blocks(FERMI, 52, 10, 14560) == 1
    assert resident_blocks(FERMI, 29, 10, 14560) == 3
    assert resident_blocks(FERMI, 24, 10, 0) == 4
    assert resident_blocks(FERMI, 24, 10, 14560) == 3
    assert resident_blocks(FERMI, 8, 1, 0) == 8


def test_more_entries_than_the_table_holds_is_an_error(monkeypatch):
    import gpurf.sim.sm.compression as compression

    entries = table_entries(compile_kernel("sobel"))
    monkeypatch.setattr(compression, "TABLE_ENTRIES", entries - 1)
    with pytest.raises(TableOverflowError, match=f"needs {entries} indirection table"):
        compile_kernel("sobel")


def test_launch_knowledge_never_needs_more_registers():
    for name in ("sobel", "hotspot", "matmul"):
        assert (compile_kernel(name, launch_size="paper").after
                <= compile_kernel(name).after)


def test_ssim():
    rng = np.random.default_rng(1)
    image = rng.random((32, 32))
    assert ssim(image, image) == pytest.approx(1.0)
    assert ssim(image + rng.normal(0, 0.3, image.shape), image) < 0.9
    assert ssim(image + 1e-4, image) > 0.99


def test_narrowing_program_leaves_the_workloads_program_alone():
    cp = compile_kernel("hotspot", floats=FP8)
    program = load_workload("hotspot")[1]
    ops = list(program.ops)
    narrowing_program(program, cp)
    assert program.ops == ops


@pytest.mark.parametrize("level", ["perfect", "high"])
def test_tuned_formats_meet_their_quality_per_value_at_least_as_narrow(level):
    per_value = tune_formats("hotspot", level)
    per_kernel = tune_formats("hotspot", level, per_kernel=True)
    assert within_quality("hotspot", functional_run(
        "hotspot", "test", compile_kernel("hotspot", floats=per_value)), level)
    assert all(per_value[v].width <= per_kernel[v].width for v in per_kernel)
    assert (compile_kernel("hotspot", floats=per_value).after
            <= compile_kernel("hotspot", floats=per_kernel).after)


def test_run_compressed_fewer_registers_and_quality_met():
    run, cp = run_compressed("hotspot", "test", FERMI, level="high")
    assert run.stats["quality"] and cp.after < cp.before
    assert run.stats["timing"].values["reads"] > 0


def test_hazards_cover_registers_sharing_a_destination():
    """A result waits for pending writes to, and does not overtake pending reads of, every
    register sharing its uncompressed register (bfs: a dead atomic result shares one with a
    live constant) or, compressed, one of its slices."""
    from gpurf.sim.ptx.regalloc import allocate_registers

    program = load_workload("bfs")[1]
    cp = compile_kernel("bfs")
    physical = allocate_registers(program.kernel).physical
    for with_cp in (None, cp):
        needs, overwrites = hazards(program, with_cp)
        for pc, ins in enumerate(program.code):
            for dest in ins.dests:
                if program.kernel.regs[dest].width == 1:
                    continue
                sharing = {v for v, r in physical.items() if r == physical[dest]
                           and program.kernel.regs[v].width == 32}
                if with_cp is not None:
                    sharing |= {v for v in cp.allocation.entries
                                if set(cp.allocation.positions(v))
                                & set(cp.allocation.positions(dest))}
                assert {program.slots[v] for v in sharing} <= set(needs[pc])
                assert physical[dest] in overwrites[pc]
