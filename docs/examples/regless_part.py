"""Where a kernel's RegLess time goes at paper size, read from its measured part
(docs/regless.md, "Why srad is this far off at paper size").

``python docs/examples/regless_part.py KERNEL [--test]`` reads
``docs/measured/regless-paper/regless-paper-KERNEL.json`` (before the part is assembled,
the runs kept in ``runs/KERNEL/``) and prints, for 512 entries per SM
with and without the compressor, the row of ``python -m gpurf.sim.sm.regless_breakdown``
(cycles per region boundary), the row of ``python -m gpurf.sim.sm.regless_misspath``
(the miss path's share of the shards' cycles) and where the preloads were served.
``--test`` also runs the kernel at test size (fast model, every operand read checked) and
prints the same rows beside them. ``--regions`` prints, for the regions of a shard's 128
lines (16 per bank), the physical registers live at each region boundary (warp-level
liveness on the allocator's registers, as the RegLess pass sees them) and how many of them
are halves of 64-bit values. ``--capacities`` prints, for each OSU capacity of the part
(256 to 1,024 entries per SM, compressor on), the run time over the register file, the
preloads and where they were served, and the evictions. Nothing is re-measured at paper size.
"""

import json
import sys
from pathlib import Path

from gpurf.sim.passes.dataflow import kernel_flow
from gpurf.sim.passes.regless.regions import regless_pass
from gpurf.sim.sm.regless import ReglessConfig, run_regless
from gpurf.sim.sm.regless_breakdown import breakdown_row
from gpurf.sim.sm.regless_misspath import misspath_row
from gpurf.sim.sm.run import load_workload

PARTS = Path(__file__).resolve().parent.parent / "measured" / "regless-paper"
RUNS = {"512": "512", "512+nocomp": "512 no compressor"}
"""The configurations shown, and their names in a part."""
SOURCES = ("osu", "compressor", "l1", "l2")
OPTIONS = {"--test", "--regions", "--capacities"}
CAPACITIES = ("256", "384", "512", "768", "1024")
"""The capacity runs of a part (entries per SM), in the order printed."""
LINES_PER_BANK = 16
"""A shard's 128 lines at 512 entries per SM (8 banks)."""


def preload_shares(out: dict) -> dict:
    """The percentage of the preloads each source served."""
    total = max(1, out["preloads"])
    return {source: round(100 * out[f"preloads_{source}"] / total, 2) for source in SOURCES}


def kept_run(kernel: str, name: str) -> dict | None:
    """The value of ``kernel``'s run ``name`` kept by ``regless_paper_runs.py``, or ``None``."""
    path = PARTS / "runs" / kernel / f"{name.replace(' ', '_')}.json"
    return json.loads(path.read_text())["value"] if path.exists() else None


def paper_runs(kernel: str) -> dict | None:
    """``kernel``'s paper-size runs by name: its part's, or, before the part is assembled,
    the shown runs kept one by one (each run time over the kept baseline); ``None`` if
    neither is there."""
    path = PARTS / f"regless-paper-{kernel}.json"
    if path.exists():
        return json.loads(path.read_text())["value"]["runs"]
    baseline = kept_run(kernel, "baseline")
    kept = {name: kept_run(kernel, name) for name in RUNS.values()}
    if baseline is None or None in kept.values():
        return None
    return {name: {**out, "runtime": out["cycles"] / baseline} for name, out in kept.items()}


def show(kernel: str, size: str, config: str, out: dict) -> None:
    """Print the three rows of one run."""
    print(f"{kernel} {size} {config}")
    print("  breakdown:", breakdown_row(kernel, out))
    print("  miss path:", misspath_row(kernel, config, out))
    print("  preloads (%):", preload_shares(out), "evictions", out["evictions"],
          "compressed", out["evictions_compressed"])


def capacity_rows(runs: dict) -> list[str]:
    """One line per capacity run among ``runs``: its run time over the register file, its
    preloads with the share each source served, and its evictions."""
    return [f"{name} entries: {runs[name]['runtime']:.3f}x, {runs[name]['preloads']:,} "
            f"preloads (%): {preload_shares(runs[name])}, evictions "
            f"{runs[name]['evictions']:,}" for name in CAPACITIES if name in runs]


def live_at_boundaries(kernel: str) -> list[tuple[int, int]]:
    """Per region boundary (each region's entry but the first's): the physical registers
    live there and how many of them hold half of a 64-bit value."""
    _, program, _ = load_workload(kernel)
    flow = kernel_flow(program.kernel)
    regions = regless_pass(program.kernel, lines_per_bank=LINES_PER_BANK).regions
    rows = []
    for region in regions[1:]:
        live = flow.warp_live_after[region.start - 1]
        keys = {key for reg in live for key in flow.keys.get(reg, ()) if key.startswith("R")}
        wide = {key for reg in live if reg.startswith("%rd") for key in flow.keys[reg]}
        rows.append((len(keys), len(keys & wide)))
    return rows


def show_regions(kernel: str) -> None:
    """Print the range of :func:`live_at_boundaries` over the kernel's boundaries."""
    rows = live_at_boundaries(kernel)
    if not rows:
        print(f"{kernel}: one region, no region boundary")
        return
    live, wide = zip(*rows, strict=True)
    print(f"{kernel}: {len(rows)} region boundaries, {min(live)}-{max(live)} registers live, "
          f"{min(wide)}-{max(wide)} of them halves of 64-bit values")


def main(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-") or set(argv[1:]) - OPTIONS:
        print("usage: python docs/examples/regless_part.py KERNEL [--test] [--regions] "
              "[--capacities]", file=sys.stderr)
        return 2
    kernel = argv[0]
    runs = paper_runs(kernel)
    if runs is None:
        print(f"{PARTS}: no measured part or kept 512-entry runs for {kernel!r}",
              file=sys.stderr)
        return 2
    if "--regions" in argv:
        show_regions(kernel)
    for config, name in RUNS.items():
        show(kernel, "paper", config, runs[name])
    if "--capacities" in argv:
        print(f"{kernel} paper, per OSU capacity", *capacity_rows(runs), sep="\n  ")
    if "--test" in argv:
        for config in RUNS:
            show(kernel, "test", config, run_regless(kernel, "test", ReglessConfig.parse(config)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
