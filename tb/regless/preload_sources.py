"""Print where the golden shard's preloads were served and how long the workload ran.

``python -m gpurf.tb.regless.preload_sources [SEED ...]`` runs the end-to-end workload of
``tests/test_regless_shard.py::test_end_to_end_at_the_defaults`` (16 warps x 4 random
regions of 6-12 registers plus the check regions, the shard at its defaults) on the golden
shard, once with the paper's two instructions per cycle and once with one, and prints per
seed (default 1 and 2) the cycles, the reads checked, the preload entries, their hits in the
OSU, the preloads answered by the compressor and by L1, the evictions (compressed or
not) and the invalidations (all, and those sent to L1 because L1 held a copy). The workload
is random, not a kernel.
"""

import sys

from gpurf.golden.regless.shard import Shard
from gpurf.hw.registry import get_block
from gpurf.tb.harness import run_golden

from .workload import run_regions

__all__ = ["measure"]


def measure(seed: int, **params) -> dict:
    """The workload's counts for one seed (``params`` override the shard's defaults)."""
    params = {**get_block("regless.shard").defaults, **params}
    stats: dict = {}
    model = Shard(**params)

    def stimulus(params, rng, cycles):
        return run_regions(params, rng, cycles, stats=stats, regions=4, size=(6, 12))

    run_golden(model, stimulus, params, seed, 0)
    counts = model.transfer.counts
    served = counts["preload_compressed"] + counts["preload_l1"]
    return {"cycles": stats["cycles"], "reads": stats["reads"], "preloads": stats["preload"],
            "osu_hits": stats["preload"] - served,
            "from_compressor": counts["preload_compressed"], "from_l1": counts["preload_l1"],
            "evictions": counts["evict_compressed"] + counts["evict_l1"],
            "evictions_compressed": counts["evict_compressed"],
            "invalidations": counts["invalidate"], "invalidations_l1": counts["invalidate_l1"]}


def main(argv: list[str]) -> None:
    seeds = [int(arg) for arg in argv] or [1, 2]
    for instructions in (2, 1):
        for seed in seeds:
            row = measure(seed, instructions=instructions)
            print(f"instructions {instructions} seed {seed}: "
                  + ", ".join(f"{k} {v}" for k, v in row.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
