"""Where RegLess' time goes: per kernel, the cycles a warp spends at its region boundaries.

``python -m gpurf.sim.sm.regless_breakdown [--size test|paper] [--config 512] [KERNEL ...]``
runs each kernel (default: the suite) on the register file and on RegLess
(:func:`gpurf.sim.sm.regless.run_regless`, values checked) and prints, per region
boundary, the mean cycles of each wait of :data:`gpurf.sim.sm.regless.WAITS`: from the last
issue of a warp's region to the first issue of its next one, a warp drains (its writes
land), waits to be pushed on the warp stack (one slot per cycle), waits on the stack, then
for its preloads. Every
operand read is checked; a kernel whose outputs differ from numpy stops it (exit 1). ``metadata``
is the metadata instructions per boundary (each an issue cycle of the scheduler), and
``L1 wait`` the cycles a register request queued for the L1 port, per request. The same
rows are the ``breakdown`` table of ``gpurf reproduce regless``.
"""

import argparse
import sys
import time

from .regless import WAITS, ReglessConfig, run_regless

__all__ = ["COLUMNS", "breakdown_row", "main"]

COLUMNS = {"kernel": "", "RegLess": "x", "warps": "warps", "boundaries": "boundaries",
           **{name.replace("_", " "): "cycles" for name in WAITS},
           "metadata": "instructions", "L1 wait": "cycles"}
"""The breakdown table's columns and units; the waits are means per region boundary
(``stack`` and the preloads also count each warp's first region)."""


def breakdown_row(kernel: str, out: dict) -> dict:
    """The breakdown row of ``kernel`` from :func:`run_regless`'s counters ``out``."""
    boundaries = max(1, out["boundaries"])
    row = {"kernel": kernel, "RegLess": round(out["runtime"], 3),
           "warps": out["activations"] - out["boundaries"], "boundaries": out["boundaries"]}
    for name in WAITS:
        row[name.replace("_", " ")] = round(out[f"wait_{name}"] / boundaries, 2)
    row["metadata"] = round(out["metadata_instructions"] / boundaries, 2)
    row["L1 wait"] = round(out["l1_port_wait"] / max(1, out["l1_register_requests"]), 2)
    return row


def _markdown_row(row: dict) -> str:
    return "| " + " | ".join(f"{row[c]:,}" if isinstance(row[c], int) else str(row[c])
                             for c in COLUMNS) + " |"


def main(argv: list[str] | None = None) -> int:
    from .run import UnknownKernelError
    from .suite import SUITE

    parser = argparse.ArgumentParser(prog="python -m gpurf.sim.sm.regless_breakdown",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="*", help="workloads (default: the suite)")
    parser.add_argument("--size", choices=("test", "paper"), default="test")
    parser.add_argument("--config", default="512",
                        help="RegLess options as in --mechanism regless:CONFIG")
    args = parser.parse_args(argv)
    try:
        config = ReglessConfig.parse(args.config)
    except ValueError as error:
        print(f"regless_breakdown: --config: {error}", file=sys.stderr)
        return 2
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS), flush=True)
    for kernel in args.kernels or list(SUITE):
        started = time.process_time()
        try:
            out = run_regless(kernel, args.size, config)
        except UnknownKernelError as error:
            print(f"regless_breakdown: {error}", file=sys.stderr)
            return 2
        if not out["passed"]:
            print(f"regless_breakdown: {kernel}: outputs differ from numpy", file=sys.stderr)
            return 1
        print(_markdown_row(breakdown_row(kernel, out)), flush=True)
        print(f"# {kernel}: {out['cycles']:,} cycles (register file {out['baseline_cycles']:,})"
              f", {time.process_time() - started:.1f} s CPU, outputs equal numpy",
              file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
