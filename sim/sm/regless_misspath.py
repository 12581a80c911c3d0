"""Where RegLess' miss path spends its cycles: the transfer unit, the compressor, the L1 port.

``python -m gpurf.sim.sm.regless_misspath [--size test|paper] [--config CONFIG ...]
[KERNEL ...]`` (default: configurations 512 and 512+nocomp, the suite) runs each kernel on
the register file and on RegLess (:func:`gpurf.sim.sm.regless.run_regless`, values checked)
and prints one row per kernel and configuration from the counters of
:data:`gpurf.sim.sm.regless_transfer.MISS_PATH`, summed over the shards: the cycles the
transfer unit's L1 stage offers to L1 (``L1``), has a read outstanding (``L1_WAIT``) or a
line to fill (``FILL``), or is full, the cycles *answer* and *ask* are blocked, the OSU's
offers not taken, the compressor's busy cycles, as a percentage of the shards' cycles (run
cycles x shards); the register requests on the SM's L1 port per cycle (the paper's
Fig. 18) and the cycles an L1 read takes from its port cycle to its line. A kernel whose
outputs differ from numpy stops it (exit 1).
"""

import sys

from .regless_breakdown import table_main

__all__ = ["COLUMNS", "main", "misspath_row"]

_SHARE = {
    "L1": "miss_l1", "L1_WAIT": "miss_l1_wait", "FILL": "miss_fill",
    "stage full": "miss_stage_full",
    "answer blocked": "miss_answer_blocked", "ask blocked": "miss_ask_blocked",
    "ask behind L1": "miss_ask_blocked_l1", "fetch waits": "miss_fetch_waits",
    "writeback waits": "miss_writeback_waits",
    "writeback behind fetch": "miss_writeback_behind_fetch",
    "compressor busy": "miss_compressor_busy", "compressor on L1": "miss_compressor_l1",
}
"""The columns given as a percentage of the shards' cycles, and their counters."""

COLUMNS = ("kernel", "config", "RegLess (x)", "cycles", "stepped (%)",
           *(f"{name} (%)" for name in _SHARE), "L1 requests per cycle", "preload reads",
           "read latency (cycles)", "refills",
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
    refills = row["refills"] = out["miss_refills"]
    row["refill latency (cycles)"] = round(out["miss_refill_latency"] / max(1, refills), 1)
    return row


def main(argv: list[str] | None = None) -> int:
    return table_main(argv, name="regless_misspath", description=__doc__.splitlines()[0],
                      columns=COLUMNS, make_row=misspath_row, configs=("512", "512+nocomp"))


if __name__ == "__main__":
    sys.exit(main())
