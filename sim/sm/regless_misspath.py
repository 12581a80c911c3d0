"""Where RegLess' miss path spends its cycles: the transfer unit, the compressor, the L1 port.

``python -m gpurf.sim.sm.regless_misspath [--size test|paper] [--config 512[+nocomp]]
KERNEL ...`` runs each kernel on the register file and on RegLess
(:func:`gpurf.sim.sm.regless.run_regless`, values checked) and prints one row per kernel
from the counters of :data:`gpurf.sim.sm.regless_transfer.MISS_PATH`, summed over the
shards: the cycles the transfer unit's L1 stage spends in ``L1`` / ``L1_WAIT`` / ``FILL``,
the cycles *answer* and *ask* are blocked, the OSU's offers not taken, the compressor's busy
cycles, as a percentage of the shards' cycles (run cycles x shards); the register requests on
the SM's L1 port per cycle (the paper's Fig. 18) and the cycles an L1 read takes from its
port cycle to its line. A kernel whose outputs differ from numpy stops it (exit 1).
"""

import argparse
import sys
import time

from .regless import ReglessConfig, run_regless

__all__ = ["COLUMNS", "main", "misspath_row"]

_SHARE = {
    "L1": "miss_l1", "L1_WAIT": "miss_l1_wait", "FILL": "miss_fill",
    "answer blocked": "miss_answer_blocked", "ask blocked": "miss_ask_blocked",
    "ask behind L1": "miss_ask_blocked_l1", "fetch waits": "miss_fetch_waits",
    "writeback waits": "miss_writeback_waits",
    "writeback behind fetch": "miss_writeback_behind_fetch",
    "compressor busy": "miss_compressor_busy", "compressor on L1": "miss_compressor_l1",
}
"""The columns given as a percentage of the shards' cycles, and their counters."""

COLUMNS = ("kernel", "config", "RegLess (x)", "cycles", "stepped (%)",
           *(f"{name} (%)" for name in _SHARE), "L1 requests per cycle", "preload reads",
           "read latency (cycles)", "L1 stage per read (cycles)", "refills",
           "refill latency (cycles)")
"""The table's columns, in order."""


def misspath_row(kernel: str, config: str, out: dict, shards: int = 4) -> dict:
    """The row of ``kernel`` (run with RegLess options ``config``) from
    :func:`run_regless`'s counters ``out``, over ``shards`` shards."""
    cycles = out["cycles"]
    total = max(1, cycles * shards)
    reads = out["miss_reads"]
    row = {"kernel": kernel, "config": config,
           "RegLess (x)": round(out["runtime"], 3), "cycles": cycles,
           "stepped (%)": round(100 * out["miss_cycles"] / total, 1)}
    for name, counter in _SHARE.items():
        row[f"{name} (%)"] = round(100 * out[counter] / total, 1)
    row["L1 requests per cycle"] = round(out["l1_register_requests"] / max(1, cycles), 3)
    row["preload reads"] = reads
    row["read latency (cycles)"] = round(out["miss_read_latency"] / max(1, reads), 1)
    row["L1 stage per read (cycles)"] = round(
        (out["miss_l1_read"] + out["miss_l1_wait"]) / max(1, reads), 1)
    refills = row["refills"] = out["miss_refills"]
    row["refill latency (cycles)"] = round(out["miss_refill_latency"] / max(1, refills), 1)
    return row


def _markdown(row: dict) -> str:
    return "| " + " | ".join(f"{row[c]:,}" if isinstance(row[c], int) else str(row[c])
                             for c in COLUMNS) + " |"


def main(argv: list[str] | None = None) -> int:
    from .run import UnknownKernelError

    parser = argparse.ArgumentParser(prog="python -m gpurf.sim.sm.regless_misspath",
                                     description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="+", help="workloads")
    parser.add_argument("--size", choices=("test", "paper"), default="test")
    parser.add_argument("--config", action="append",
                        help="RegLess options as in --mechanism regless:CONFIG "
                             "(repeat for several; default 512 and 512+nocomp)")
    args = parser.parse_args(argv)
    try:
        configs = [(text, ReglessConfig.parse(text))
                   for text in args.config or ("512", "512+nocomp")]
    except ValueError as error:
        print(f"regless_misspath: --config: {error}", file=sys.stderr)
        return 2
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS), flush=True)
    for kernel in args.kernels:
        for text, config in configs:
            started = time.process_time()
            try:
                out = run_regless(kernel, args.size, config)
            except UnknownKernelError as error:
                print(f"regless_misspath: {error}", file=sys.stderr)
                return 2
            if not out["passed"]:
                print(f"regless_misspath: {kernel}: outputs differ from numpy",
                      file=sys.stderr)
                return 1
            print(_markdown(misspath_row(kernel, text, out)), flush=True)
            print(f"# {kernel} {text}: {out['cycles']:,} cycles (register file "
                  f"{out['baseline_cycles']:,}), {time.process_time() - started:.1f} s CPU",
                  file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
