"""Paper-size occupancy and IPC of the compressed register file, lean: the baseline and the
compressed runs (perfect, high) of ``gpurf reproduce compression --size paper`` without its
value check and write-back sweep (which make the full command take hours on a loaded
machine). One JSON line per kernel; docs/compression.md quotes them.

    .venv/bin/python docs/examples/compression_paper.py [KERNEL ...]
"""

import json
import math
import sys
import time

from gpurf.sim.reproduce.compression import fermi, kernel_shape, occupancy, register_bound
from gpurf.sim.sm.compression import (
    baseline,
    compile_kernel,
    mechanism,
    tune_formats,
    within_quality,
)
from gpurf.sim.sm.run import run_kernel


def main(names):
    config = fermi()
    names = names or register_bound(config, "paper")
    ratios = {"perfect": [], "high": []}
    for name in names:
        warps, shared, before = kernel_shape(name, "paper")
        start = time.perf_counter()
        base = run_kernel(name, "paper", timing=config, mechanism=baseline)
        row = {"kernel": name, "before": before,
               "occupancy": occupancy(config, before, warps, shared),
               "ipc": round(base.stats["timing"].ipc, 4),
               "seconds": round(time.perf_counter() - start)}
        for level in ratios:
            start = time.perf_counter()
            cp = compile_kernel(name, floats=tune_formats(name, level))
            run = run_kernel(name, "paper", timing=config,
                             mechanism=mechanism(cp, values=False))
            ipc = run.stats["timing"].ipc
            ratios[level].append(ipc / base.stats["timing"].ipc)
            row[level] = {"after": cp.after,
                          "occupancy": occupancy(config, cp.after, warps, shared),
                          "ipc": round(ipc, 4), "gain %": round(100 * (ratios[level][-1] - 1), 1),
                          "quality met": within_quality(name, run, level),
                          "seconds": round(time.perf_counter() - start)}
        print(json.dumps(row), flush=True)
    print(json.dumps({"geometric mean gain %": {
        level: round(100 * (math.prod(r) ** (1 / len(r)) - 1), 1) for level, r in ratios.items()
        if r}}))


if __name__ == "__main__":
    main(sys.argv[1:])
