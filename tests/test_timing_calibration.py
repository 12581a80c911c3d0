"""The calibration microbenchmarks (``python -m gpurf.sim.sm.calibrate``): each model figure
equals the public figure it is calibrated to, and a collector in the old order fails."""

import pytest

from gpurf.golden.subcore.operand_collector import OperandCollector
from gpurf.sim.sm.calibrate import (
    STREAMS,
    accel_sim_ipc,
    collector_ipc,
    dependent_fma_cycles,
    independent_fma_ipc,
)


def test_dependent_fma_chain_takes_voltas_4_cycles():
    """Jia et al. 2018: a dependent FFMA issues every 4 cycles on Volta."""
    assert dependent_fma_cycles(16) == 4.0


def test_independent_fmas_fill_the_fp32_lanes():
    """16 FP32 lanes per sub-core: 2 warp FMAs per cycle per SM, no more."""
    assert independent_fma_ipc(8) == pytest.approx(2.0, abs=0.02)


@pytest.mark.parametrize("stream", list(STREAMS))
@pytest.mark.parametrize("cus", [1, 2, 3, 4])
def test_collector_streams_run_at_accel_sims_rate(stream, cus):
    assert collector_ipc(stream, cus, instructions=120) == \
        pytest.approx(accel_sim_ipc(stream, cus), abs=0.01)


class AllocateBeforeDispatch(OperandCollector):
    """The old order: the issue register's instruction goes only to a CU free at the start
    of the cycle, so a CU dispatched in a cycle is allocated again in the next one."""

    def accepts(self, dispatching):
        return self.buffer is None or None in self.units

    def advance(self, grants, offer, dispatch_ready, issue):
        if self.buffer is not None and None in self.units:
            self._allocate(self.units.index(None), *self.buffer)
            self.buffer = None
        waiting, self.buffer = self.buffer, None
        accepted = super().advance(grants, offer, dispatch_ready,
                                   issue if waiting is None else None)
        if waiting is not None:
            self.buffer = waiting
        return accepted


def test_a_collector_allocating_before_dispatch_is_caught(monkeypatch):
    """The old order turns a CU over in 3 cycles, not 2: the one-read stream falls short
    of Accel-Sim's rate."""
    monkeypatch.setattr("gpurf.sim.sm.calibrate.OperandCollector", AllocateBeforeDispatch)
    assert collector_ipc("one read", 2, instructions=120) < accel_sim_ipc("one read", 2) - 0.1
