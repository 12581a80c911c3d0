"""A kernel's instruction stream through the composed ``wir.backend``
(:class:`gpurf.sim.sm.wir_trace.BackendTap`, ``run_wir(record_backend=)``).

``reduction`` under RLPV at the test size (about 20,000 backend cycles; it has shared
loads, a barrier, divergence and repeated address arithmetic). Checked: the run is the
same with and without the recording; the trace exercises every retirement outcome and
every ``out`` answer; it steps clean through the golden backend, and a corrupted trace
does not; it replays clean on Verilator (``soak`` tier: the build takes minutes).
"""

import numpy as np
import pytest

from gpurf.golden.trace import Trace
from gpurf.sim.replay import replay
from gpurf.sim.sm.wir import run_wir
from gpurf.sim.sm.wir_trace import BACKEND_PARAMS, fold_value
from gpurf.sim.toolchain import missing_simulator

KERNEL, CONFIG = "reduction", "RLPV"


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("wir_backend") / "wir-backend.trace"
    return run_wir(KERNEL, CONFIG, "test", baseline=False, record_backend=path), path


def _flip_in_use(at: int):
    """A recording edit: the recorded ``in_use`` of cycle ``at`` flipped."""
    def edit(cycle, outputs):
        return {**outputs, "in_use": outputs["in_use"] ^ 1} if cycle == at else outputs
    return edit


def test_recording_leaves_the_run_as_it_is(recorded):
    result, _ = recorded
    plain = run_wir(KERNEL, CONFIG, "test", baseline=False)
    assert result["passed"] and plain["passed"]
    skip = {"backend_cycles", "backend_outcomes", "backend_responses"}
    assert {k: v for k, v in result.items() if k not in skip} == \
        {k: v for k, v in plain.items() if k not in skip}


def test_trace_exercises_every_outcome_and_answer(recorded):
    result, path = recorded
    trace = Trace(path)
    assert trace.block == "wir.backend"
    assert trace.header["source"] == {"kind": "kernel", "kernel": KERNEL, "size": "test",
                                      "configuration": CONFIG}
    assert trace.cycles == result["backend_cycles"] > 0
    assert set(result["backend_outcomes"]) == {"ALLOCATED", "SHARED", "REUSED",
                                               "VERIFY_FAILED", "DUMMY_MOV", "PINNED"}
    assert set(result["backend_responses"]) == {"hit", "pending", "executed"}
    print(result["backend_cycles"], result["backend_outcomes"], result["backend_responses"])


def test_trace_steps_clean_through_the_golden_backend(recorded):
    assert Trace(recorded[1]).golden_divergence() == -1


def test_a_corrupted_trace_is_caught(recorded):
    assert Trace(recorded[1]).golden_divergence(_flip_in_use(1000)) == 1000


def test_fold_keeps_equal_values_equal_and_masks_groups():
    rng = np.random.default_rng(7)
    values = rng.integers(0, 2**32, 32, dtype=np.uint32)
    lanes = np.ones(32, bool)
    lanes[3] = False
    groups, width = BACKEND_PARAMS["lanes"], BACKEND_PARAMS["data_width"]
    folded, mask = fold_value(values, lanes, groups=groups, width=width)
    assert folded == fold_value(values.copy(), lanes, groups=groups, width=width)[0]
    assert all(0 <= lane < 1 << width for lane in folded)
    assert mask == 0b1110
    changed = values.copy()
    changed[0] ^= 1
    assert fold_value(changed, lanes, groups=groups, width=width)[0] != folded


@pytest.mark.soak
def test_trace_replays_clean_on_verilator(recorded):
    """The Verilator build of this configuration takes minutes (docs/wir.md)."""
    if missing_simulator("verilator"):
        pytest.skip(missing_simulator("verilator"))
    result = replay(recorded[1], sim="verilator")
    assert result.passed, result.summary()
    assert result.cycles == Trace(recorded[1]).cycles
