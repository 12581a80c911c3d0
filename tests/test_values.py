"""Values through timing (:mod:`gpurf.sim.sm.values`): the plain register file delivers the
functional run's value at every operand read of every kernel; register storages that drop a
write, return a stale value, flip a lane or reuse a result falsely are caught at the warp,
pc, register and cycle where the wrong value is used.

Random choices (which read, write or kernel to corrupt, the timing configuration) come from
``--seed`` / ``GPURF_SEED`` (tests/conftest.py) and are printed, so a failure replays.
"""

import random

import numpy as np
import pytest

from gpurf.sim.kernels import workload_names
from gpurf.sim.sm import SMConfig, run_kernel
from gpurf.sim.sm.batch import new_traces, run_blocks
from gpurf.sim.sm.run import load_workload
from gpurf.sim.sm.values import (
    BaselineStorage,
    ValueMismatchError,
    WarpId,
    lane_mask,
    word_layout,
)

CONFIG = SMConfig()


def _run(name, storage, config=CONFIG):
    return run_kernel(name, "test", timing=config, values=storage)


@pytest.mark.parametrize("name", workload_names())
def test_plain_register_file_delivers_every_functional_value(name):
    run = _run(name, True)
    assert run.passed
    values = run.stats["timing"].values
    assert values["reads"] > 0 and values["writes"] > 0
    assert values["recorded_instructions"] <= values["dynamic_instructions"]


def test_values_hold_under_random_timing_configurations(seed):
    rng = random.Random(seed)
    name = rng.choice(["sobel", "reduction", "divergent", "matmul"])
    config = CONFIG.replace(scheduler=rng.choice(["gto", "lrr", "two_level", "rba"]),
                            cus=rng.randint(1, 4), banks=rng.choice([1, 2, 4, 8]),
                            read_latency=rng.randint(1, 3))
    print(f"seed {seed}: {name} on {config}")
    assert _run(name, True, config).passed


def test_values_off_by_default_record_nothing():
    run = run_kernel("saxpy", "test", timing=CONFIG)
    assert run.stats["timing"].values == {}
    with pytest.raises(ValueError, match="need a timing"):
        run_kernel("saxpy", "test", values=True)


# -- what the functional pass records ----------------------------------------------------

def _saxpy_traces():
    from gpurf.sim.sm.memory import GlobalMemory
    from gpurf.sim.sm.run import pack_params
    from gpurf.sim.sm.warp import ThreadBlock

    spec, program, variant = load_workload("saxpy")
    launch = spec.make("test", variant)
    memory = GlobalMemory(launch.buffers)
    params = pack_params(launch, program.kernel, memory)
    blocks = [ThreadBlock(program, (b, 0, 0), launch.block, launch.grid, memory, params)
              for b in range(2)]
    traces = [new_traces(b) for b in blocks]
    run_blocks(blocks, traces, values=True)
    return program, launch, traces


def _word(program, trace, pc, name, dest=True):
    """The recorded words of ``name`` (the first dynamic instance of ``pc``)."""
    layout = word_layout(program)
    pos = trace.pcs.index(pc)
    values = trace.values
    start = values.offsets[pos] + (len(layout.sources[pc]) if dest else 0)
    words = layout.dests[pc] if dest else layout.sources[pc]
    rows = [values.words[start + i] for i, w in enumerate(words) if w.name == name]
    return rows, lane_mask(int(values.masks[pos]))


def _pc(program, text):
    return next(i for i, ins in enumerate(program.code)
                if ins.opcode == text.split()[0] and text.split()[1] in
                [getattr(op, "name", None) for op in ins.operands])


def test_recorded_values_are_the_threads_values():
    """Directed: saxpy's ``mad.lo.s32 %r1`` is the global thread index; ``mul.wide.s32
    %rd5`` (64 bits) is 4 x that index, split into low and high words; the ``%r1`` it reads
    is the index."""
    program, launch, traces = _saxpy_traces()
    mad = _pc(program, "mad.lo.s32 %r1")
    mul = _pc(program, "mul.wide.s32 %rd5")
    threads = launch.block[0]
    for block, block_traces in enumerate(traces):
        for warp, trace in enumerate(block_traces):
            index = block * threads + warp * 32 + np.arange(32, dtype=np.uint32)
            (row,), mask = _word(program, trace, mad, "%r1")
            assert mask.all()
            assert np.array_equal(row, index)
            (src,), _ = _word(program, trace, mul, "%r1", dest=False)
            assert np.array_equal(src, index)
            low, high = _word(program, trace, mul, "%rd5")[0]
            assert np.array_equal(low, index * 4) and not high.any()
            assert trace.values.masks.shape == (len(trace.pcs),)


class _LaneLog(BaselineStorage):
    """The warps whose reads run with part of their lanes."""

    def __init__(self):
        super().__init__()
        self.partial = set()

    def read(self, warp, reg, cycle, lanes):
        if not lanes.all():
            self.partial.add((warp.block[0], warp.warp))
        return super().read(warp, reg, cycle, lanes)


def test_recorded_lanes_are_the_executing_lanes():
    """Directed: in saxpy (3,000 threads at test size) only the warp of threads 2,976-2,999
    reads with part of its lanes; ``divergent`` diverges in many warps."""
    saxpy, divergent = _LaneLog(), _LaneLog()
    assert _run("saxpy", saxpy).passed and _run("divergent", divergent).passed
    spec, _, variant = load_workload("saxpy")
    threads = spec.make("test", variant).block[0]
    assert saxpy.partial == {(2976 // threads, 2976 % threads // 32)}
    assert len(divergent.partial) > 1


class _GarblesIdleLanes(_LaneLog):
    """Delivers the right value in the executing lanes and garbage in the others."""

    def read(self, warp, reg, cycle, lanes):
        value = super().read(warp, reg, cycle, lanes)
        return np.where(lanes, value, ~value)


def test_idle_lanes_are_not_compared():
    """Directed (the check's equal-bytes shortcut falls back to the lane-masked comparison):
    garbage in the lanes that do not execute passes; ``divergent`` reads with part of its
    lanes in many warps."""
    storage = _GarblesIdleLanes()
    assert _run("divergent", storage).passed
    assert len(storage.partial) > 1


# -- storages that deliver wrong values ----------------------------------------------------

class _Shadowed(BaselineStorage):
    """A mutant register file beside a correct one (the shadow): it predicts the first
    read where what it delivers differs, in executing lanes, from what a correct file
    delivers — where the check must stop the run."""

    def __init__(self, target: int):
        super().__init__()
        self.shadow = BaselineStorage()
        self.target = target
        self.count = 0
        self.expected = None
        """``(warp, reg, cycle, lanes)`` of the predicted mismatch."""

    def write(self, warp, reg, values, lanes, cycle, pc):
        self.shadow.write(warp, reg, values, lanes, cycle, pc)
        super().write(warp, reg, values, lanes, cycle, pc)

    def read(self, warp, reg, cycle, lanes):
        right = self.shadow.read(warp, reg, cycle, lanes)
        got = self.deliver(warp, reg, cycle, lanes)
        wrong = np.flatnonzero((got != right) & lanes).tolist()
        if wrong and self.expected is None:
            self.expected = (warp, reg, cycle, wrong)
        return got

    def deliver(self, warp, reg, cycle, lanes):
        return super().read(warp, reg, cycle, lanes)

    def free(self, warp):
        super().free(warp)
        self.shadow.free(warp)


class _FlipsALane(_Shadowed):
    """Flips bit 0 of the lowest executing lane at the ``target``-th read that has one."""

    def deliver(self, warp, reg, cycle, lanes):
        value = super().deliver(warp, reg, cycle, lanes)
        if lanes.any():
            self.count += 1
            if self.count == self.target:
                value = value.copy()
                value[np.argmax(lanes)] ^= 1
        return value


class _Stale(_Shadowed):
    """At the ``target``-th read whose register's previous value differs from its current
    one in the executing lanes, returns the previous value."""

    def __init__(self, target):
        super().__init__(target)
        self.previous = {}

    def write(self, warp, reg, values, lanes, cycle, pc):
        key = (warp.block, warp.warp, reg)
        self.previous[key] = super().deliver(warp, reg, cycle, lanes).copy()
        super().write(warp, reg, values, lanes, cycle, pc)

    def deliver(self, warp, reg, cycle, lanes):
        value = super().deliver(warp, reg, cycle, lanes)
        old = self.previous.get((warp.block, warp.warp, reg))
        if old is not None and ((old != value) & lanes).any():
            self.count += 1
            if self.count == self.target:
                return old
        return value


class _DropsAWrite(_Shadowed):
    """Drops the ``target``-th write that would change its register (the check must catch
    it at the first later read of a changed lane, if one comes before it is overwritten)."""

    def write(self, warp, reg, values, lanes, cycle, pc):
        self.shadow.write(warp, reg, values, lanes, cycle, pc)
        old = super().deliver(warp, reg, cycle, lanes)
        if ((old != values) & lanes).any():
            self.count += 1
            if self.count == self.target:
                self.dropped = (warp, reg, cycle)
                return
        BaselineStorage.write(self, warp, reg, values, lanes, cycle, pc)


def _caught(name, storage):
    """Run ``name`` on ``storage``; the check's error (or ``None``) beside the mutant's
    prediction."""
    try:
        _run(name, storage)
    except ValueMismatchError as error:
        return error
    return None


def _assert_names_it(error, storage, name):
    warp, reg, cycle, lanes = storage.expected
    assert (error.warp, error.reg, error.cycle, error.lanes) == (warp, reg, cycle, lanes)
    _, program, _ = load_workload(name)
    layout = word_layout(program)
    assert reg in [w.reg for w in layout.sources[error.pc]]
    ins = program.code[error.pc]
    text = str(error)
    assert f"{program.kernel.file}:{ins.line}: {ins.opcode}:" in text
    assert f"block {warp.block}, warp {warp.warp}, pc {error.pc}, cycle {cycle}" in text
    assert f"R{reg} (" in text and f"{lanes[0]}: 0x" in text


@pytest.mark.parametrize("mutant", [_FlipsALane, _Stale])
@pytest.mark.parametrize("name", ["saxpy", "sobel", "reduction"])
def test_wrong_value_is_caught_where_it_is_read(mutant, name, seed):
    target = random.Random(f"{seed}{name}{mutant.__name__}").randint(1, 200)
    print(f"seed {seed}: {mutant.__name__} at its read {target} of {name}")
    storage = mutant(target)
    error = _caught(name, storage)
    assert storage.expected is not None
    assert error is not None
    _assert_names_it(error, storage, name)


@pytest.mark.parametrize("name", ["saxpy", "sobel", "reduction"])
def test_dropped_write_is_caught_where_its_register_is_next_read(name, seed):
    rng = random.Random(f"{seed}{name}drop")
    caught = 0
    for target in sorted(rng.sample(range(1, 300), 5)):
        storage = _DropsAWrite(target)
        error = _caught(name, storage)
        print(f"seed {seed}: {name}, dropped write {target}: {getattr(storage, 'dropped', None)}"
              f" -> {error}")
        assert (error is None) == (storage.expected is None)
        if error is not None:
            _assert_names_it(error, storage, name)
            assert storage.expected[0] == storage.dropped[0]
            assert storage.expected[1] == storage.dropped[1]
            caught += 1
    assert caught


# -- produced results (reuse, narrowing) -----------------------------------------------------

class _Reuses(BaselineStorage):
    """Reuses, for every instruction in ``pcs``, the result the first warp to write it got
    (ignoring the sources: right only where every warp computes the same result)."""

    def __init__(self, pcs):
        super().__init__()
        self.pcs = set(pcs)
        self.memo = {}
        self.calls = []

    def write(self, warp, reg, values, lanes, cycle, pc):
        if pc in self.pcs:
            self.memo.setdefault((pc, reg), values.copy())
        super().write(warp, reg, values, lanes, cycle, pc)

    def result(self, warp, pc, cycle):
        if pc not in self.pcs:
            return None
        produced = {reg: v for (p, reg), v in self.memo.items() if p == pc}
        if produced:
            self.calls.append((warp, pc, cycle))
        return produced or None


def test_a_true_reuse_passes():
    """Every warp loads the same parameters: reusing ``ld.param`` results is right."""
    _, program, _ = load_workload("saxpy")
    params = [i for i, ins in enumerate(program.code) if ins.opcode.startswith("ld.param")]
    storage = _Reuses(params)
    run = _run("saxpy", storage)
    assert run.passed and storage.calls
    assert run.stats["timing"].values["results"] >= len(storage.calls)


def test_a_false_reuse_is_caught():
    """The thread index differs between warps: reusing it is caught at the first reuse."""
    _, program, _ = load_workload("saxpy")
    mad = _pc(program, "mad.lo.s32 %r1")
    storage = _Reuses([mad])
    error = _caught("saxpy", storage)
    assert error is not None and storage.calls
    warp, _, cycle = storage.calls[0]
    reg = word_layout(program).dests[mad][0].reg
    assert (error.warp, error.pc, error.reg, error.cycle) == (warp, mad, reg, cycle)
    assert error.lanes == list(range(32))
    assert "result in R" in str(error)


def test_a_result_for_a_register_not_written_is_an_error():
    class Elsewhere(BaselineStorage):
        def result(self, warp, pc, cycle):
            return {255: np.zeros(32, np.uint32)}

    with pytest.raises(ValueMismatchError, match=r"result for R255, which the instruction "
                                                 r"does not write"):
        _run("saxpy", Elsewhere())


class _ReusesNarrowed(_Reuses):
    """Reuses ``ld.param`` results with their lowest bit set (a lossy encoding), compared
    through ``matches`` up to that bit when ``round_trip``, else exactly."""

    def __init__(self, pcs, round_trip):
        super().__init__(pcs)
        self.round_trip = round_trip

    def result(self, warp, pc, cycle):
        produced = super().result(warp, pc, cycle)
        return produced and {reg: v | np.uint32(1) for reg, v in produced.items()}

    def matches(self, expected, actual, lanes):
        if not self.round_trip:
            return super().matches(expected, actual, lanes)
        return bool(np.array_equal(expected[lanes] >> 1, actual[lanes] >> 1))


def test_a_narrowed_result_is_compared_through_the_mechanisms_round_trip():
    """saxpy's ``n`` (3,000 at test size) and buffer addresses are even, so the encoded
    result differs in its lowest bit: accepted by the round-trip comparison, caught by the
    exact one."""
    _, program, _ = load_workload("saxpy")
    params = [i for i, ins in enumerate(program.code) if ins.opcode.startswith("ld.param")]
    assert _run("saxpy", _ReusesNarrowed(params, round_trip=True)).passed
    with pytest.raises(ValueMismatchError, match="result in R"):
        _run("saxpy", _ReusesNarrowed(params, round_trip=False))


def test_warp_ids_name_block_and_warp():
    assert str(WarpId((1, 0, 0), 3, 2, 5)) == "block (1, 0, 0), warp 3"


def test_write_after_read_hazard_is_held_back(monkeypatch):
    """Regression (found by this check on the calibrated collector, then in reduction): in
    scan, ``setp.ge.s32 %p1, %r3, %r15`` waits for its reads while the younger
    ``mov.u32 %r16, 0`` (no operands; the allocator gives ``%r16`` ``%r15``'s register, dead
    after the ``setp``) dispatches first and overwrote the register before the ``setp`` read
    it. Issue now waits for such reads; without that rule the check stops the run there."""
    from gpurf.sim.sm import timing

    def ignoring_reads(self, now):
        return [w.slot for w in self.live if w.wake <= now]

    assert _run("scan", True).passed
    monkeypatch.setattr(timing._SubCore, "_ready", ignoring_reads)
    with pytest.raises(ValueMismatchError) as caught:
        _run("scan", True)
    _, program, _ = load_workload("scan")
    error = caught.value
    assert program.code[error.pc].opcode == "setp.ge.s32"
    assert "read of R" in str(error) and "(%r15)" in str(error)


def test_memory_requests_follow_the_instruction_not_the_dispatch_order(monkeypatch):
    """Regression (found with the hazard above disabled; fixed in the timing model as
    well): the collector may dispatch a younger memory access of a warp before an older
    one, and each must take its own L1 request record (gtx980 matmul gave a shared access
    a global access's lines and crashed). Here some accesses dispatch out of order (49 in
    v100 matmul at test size), and each takes a record of its own space."""
    from gpurf.sim.sm import timing

    seen = []
    memory = timing.TimingSM._memory

    def spying(self, warp, pc, request, now):
        space = self.info.space[pc]
        if space != "param":
            kind = tuple if space == "global" else int
            seen.append((id(warp), request, isinstance(warp.requests[request], kind)))
        return memory(self, warp, pc, request, now)

    monkeypatch.setattr(timing.TimingSM, "_memory", spying)
    run = run_kernel("matmul", "test", timing=CONFIG, values=True)
    assert run.passed and seen and all(own for _, _, own in seen)
    last, overtaken = {}, 0
    for warp, request, _ in seen:
        overtaken += request < last.get(warp, -1)
        last[warp] = max(request, last.get(warp, -1))
    assert overtaken


@pytest.mark.parametrize("name", ["saxpy", "sobel", "reduction"])
def test_values_do_not_change_timing(name):
    def figures(values):
        stats = run_kernel(name, "test", timing=CONFIG, values=values).stats["timing"]
        return {k: v for k, v in stats.as_dict().items() if k not in ("seconds", "values")}

    assert figures(False) == figures(True)


_DEAD_LOAD = """\tld.global.nc.f32 \t%f2, [%rd6];
\tld.global.nc.f32 \t%f5, [%rd6];
\tmov.f32 \t%f6, 0f3F800000;
"""


def test_a_dead_long_write_does_not_land_on_a_younger_value(tmp_path, monkeypatch):
    """Regression (found by this check on the kernel suite: bfs's unused atomic old value):
    a load whose value is never read (``%f5``) and a younger value (``%f6 = 1.0``, which
    saxpy's result is then multiplied by) share a physical register; without waiting for
    the sharer's pending write, the load's write lands after ``%f6``'s and the ``mul``
    reads the loaded value."""
    import shutil

    from gpurf.sim.kernels import kernel_dir
    from gpurf.sim.ptx.regalloc import allocate_registers
    from gpurf.sim.sm import timing

    folder = tmp_path / "deadload"
    shutil.copytree(kernel_dir("saxpy"), folder)
    ptx = (folder / "kernel.ptx").read_text()
    ptx = ptx.replace(".reg .f32 \t%f<5>;", ".reg .f32 \t%f<7>;")
    ptx = ptx.replace("\tld.global.nc.f32 \t%f2, [%rd6];\n", _DEAD_LOAD)
    ptx = ptx.replace("\tst.global.f32", "\tmul.f32 \t%f4, %f4, %f6;\n\tst.global.f32")
    assert ptx.count("%f6") == 2
    (folder / "kernel.ptx").write_text(ptx)
    (folder / "kernel.cu").unlink()
    (folder / "reference.py").write_text("from gpurf.sim.kernels.reference import saxpy\n")
    _, program, _ = load_workload(str(folder))
    physical = allocate_registers(program.kernel).physical
    assert physical["%f5"] == physical["%f6"]
    assert _run(str(folder), True).passed
    monkeypatch.setattr(timing, "_register_keys", lambda alloc, names, base: ())
    timing.static_info.cache_clear()
    try:
        with pytest.raises(ValueMismatchError, match=r"mul\.f32: .* read of R\d+ \(%f6\)"):
            _run(str(folder), True)
    finally:
        timing.static_info.cache_clear()
