"""One functional run shared by a kernel's timing runs (gpurf.sim.sm.recording)."""

import dataclasses

import numpy as np
import pytest

from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.program import Program
from gpurf.sim.sm.recording import RecordingError, shared_functional_runs
from gpurf.sim.sm.run import load_workload, run_kernel
from gpurf.sim.sm.values import BaselineStorage

FERMI = load_config(preset="fermi")


def _timing(run) -> dict:
    stats = dataclasses.asdict(run.stats["timing"])
    del stats["seconds"]
    return stats


def _same(a, b) -> None:
    assert _timing(a) == _timing(b)
    for key in ("warp_instructions", "thread_instructions", "launches", "blocks", "warps",
                "barriers"):
        assert a.stats[key] == b.stats[key], key
    for name in a.outputs:
        assert np.array_equal(a.outputs[name], b.outputs[name])
        assert np.array_equal(a.expected[name], b.expected[name])


@pytest.mark.parametrize(("kernel", "values"), [("saxpy", True), ("bfs", True),
                                                ("histogram", False)])
def test_replay_gives_the_fresh_runs_statistics(kernel, values):
    """bfs is a host loop (launches until a flag stays clear); histogram uses shared
    atomics; saxpy and bfs carry values through timing."""
    fresh = run_kernel(kernel, "test", timing=FERMI, values=values)
    lrr = dataclasses.replace(FERMI, scheduler="lrr")
    fresh_lrr = run_kernel(kernel, "test", timing=lrr, values=values)
    with shared_functional_runs() as scope:
        recorded = run_kernel(kernel, "test", timing=FERMI, values=values)
        replayed = run_kernel(kernel, "test", timing=FERMI, values=values)
        replayed_lrr = run_kernel(kernel, "test", timing=lrr, values=values)
    assert scope.counts == {"recorded": 1, "replayed": 2, "too_large": 0}
    assert not scope.recordings  # dropped on exit
    for run in (recorded, replayed):
        _same(fresh, run)
        assert run.passed
    _same(fresh_lrr, replayed_lrr)
    assert fresh.stats["launches"] == replayed.stats["launches"]
    if kernel == "bfs":
        assert replayed.stats["launches"] > 1


def test_values_on_and_off_and_programs_are_recorded_apart():
    _, program, _ = load_workload("saxpy")
    other = Program(program.kernel)
    with shared_functional_runs() as scope:
        run_kernel("saxpy", "test", timing=FERMI, values=True)
        run_kernel("saxpy", "test", timing=FERMI, values=BaselineStorage())
        run_kernel("saxpy", "test", timing=FERMI)
        run_kernel("saxpy", "test", timing=FERMI, mechanism=lambda p: (other, {}))
        run_kernel("saxpy", "test", timing=FERMI, mechanism=lambda p: (p, {"registers": 64}))
        assert scope.counts == {"recorded": 3, "replayed": 2, "too_large": 0}


def test_a_recording_replayed_for_another_program_is_caught():
    _, program, _ = load_workload("saxpy")
    with shared_functional_runs() as scope:
        run_kernel("saxpy", "test", timing=FERMI, values=True)
        recording = next(iter(scope.recordings.values()))
        recording.check(program)
        with pytest.raises(RecordingError, match="another program"):
            recording.check(Program(program.kernel))


def test_a_mutated_recording_is_caught():
    with shared_functional_runs() as scope:
        run_kernel("saxpy", "test", timing=FERMI, values=True)
        cohort = next(iter(scope.recordings.values())).launches[0].cohorts[0]
        with pytest.raises(ValueError, match="read-only"):
            cohort.pcs[3] += 1
        cohort.pcs.flags.writeable = True  # a deliberately broken sharing
        cohort.pcs[3] += 1
        with pytest.raises(RecordingError, match="changed"):
            run_kernel("saxpy", "test", timing=FERMI, values=True)


def test_a_storage_writing_into_the_recorded_values_is_stopped():
    class Scribbler(BaselineStorage):
        def write(self, warp, reg, values, lanes, cycle, pc):
            values[0] ^= 1
            super().write(warp, reg, values, lanes, cycle, pc)

    with shared_functional_runs(), pytest.raises(ValueError, match="read-only"):
        run_kernel("saxpy", "test", timing=FERMI, values=Scribbler())


def test_replaying_other_blocks_is_caught():
    with shared_functional_runs() as scope:
        run_kernel("saxpy", "test", timing=FERMI)
        launch = next(iter(scope.recordings.values())).launches[0]
    functional = launch.replayer()
    with pytest.raises(RecordingError, match="not the recorded"):
        functional([(1, 0, 0)])


def test_a_recording_over_the_limit_is_not_kept():
    fresh = run_kernel("saxpy", "test", timing=FERMI, values=True)
    with shared_functional_runs(max_bytes=1000) as scope:
        first = run_kernel("saxpy", "test", timing=FERMI, values=True)
        second = run_kernel("saxpy", "test", timing=FERMI, values=True)
    assert scope.counts == {"recorded": 0, "replayed": 0, "too_large": 2}
    _same(fresh, first)
    _same(fresh, second)


@pytest.mark.parametrize("limit", [-1, 1.5, "1"])
def test_the_limit_is_validated(limit):
    with pytest.raises(ValueError, match="max_bytes"), shared_functional_runs(max_bytes=limit):
        pass
