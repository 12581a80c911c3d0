"""cocotb bench of ``regless.shard`` against its golden model: the workload of
:mod:`gpurf.tb.regless.workload` (random regions on every warp, run to completion, every value
read checked against the last one written) with the golden model compared every cycle."""

from gpurf.tb.harness import cocotb_tests

from .workload import run_regions

__all__ = ["STIMULI"]


def all_warps(params, rng, cycles):
    """Three random regions per warp on every warp of the shard, then check regions."""
    yield from run_regions(params, rng, cycles)


def few_warps_long(params, rng, cycles):
    """Two warps, eight regions each: the stack alternates between them and their values
    cycle through the OSU lists, the compressor and L1 many times."""
    yield from run_regions(params, rng, cycles, warps=2, regions=8)


def barriers_hold_warps(params, rng, cycles):
    """Three random regions per warp while a barrier unit holds random warps now and then
    (a held warp that has drained stays off the stack until released)."""
    yield from run_regions(params, rng, cycles, barriers=0.1)


STIMULI = (all_warps, few_warps_long, barriers_hold_warps)

globals().update(cocotb_tests(STIMULI))
