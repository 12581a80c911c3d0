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

__all__ = ["COLUMNS", "breakdown_row", "main", "markdown_row", "table_main"]

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


def markdown_row(row: dict, columns=COLUMNS) -> str:
    """``row``'s ``columns`` as a markdown table row (integers with thousands commas)."""
    return "| " + " | ".join(f"{row[c]:,}" if isinstance(row[c], int) else str(row[c])
                             for c in columns) + " |"


def table_main(argv: list[str] | None, *, name: str, description: str, columns,
               make_row, configs: tuple[str, ...] = ("512",)) -> int:
    """The command line of a per-kernel RegLess table ``python -m gpurf.sim.sm.NAME``:
    ``KERNEL ...`` (default: the suite), ``--size``, ``--config`` (repeatable; default
    ``configs``). Prints one row of ``columns`` per kernel and configuration,
    ``make_row(kernel, config text, run_regless's counters)``; returns the exit code (1: a
    kernel's outputs differ from numpy, 2: a bad option or kernel)."""
    from .run import UnknownKernelError
    from .suite import SUITE

    parser = argparse.ArgumentParser(prog=f"python -m gpurf.sim.sm.{name}",
                                     description=description)
    parser.add_argument("kernels", nargs="*", help="workloads (default: the suite)")
    parser.add_argument("--size", choices=("test", "paper"), default="test")
    parser.add_argument("--config", action="append",
                        help="RegLess options as in --mechanism regless:CONFIG (repeat for "
                             f"several; default {', '.join(configs)})")
    args = parser.parse_args(argv)
    try:
        chosen = [(text, ReglessConfig.parse(text)) for text in args.config or configs]
    except ValueError as error:
        print(f"{name}: --config: {error}", file=sys.stderr)
        return 2
    print("| " + " | ".join(columns) + " |\n|" + "---|" * len(columns), flush=True)
    for kernel in args.kernels or list(SUITE):
        for text, config in chosen:
            started = time.process_time()
            try:
                out = run_regless(kernel, args.size, config)
            except UnknownKernelError as error:
                print(f"{name}: {error}", file=sys.stderr)
                return 2
            if not out["passed"]:
                print(f"{name}: {kernel}: outputs differ from numpy", file=sys.stderr)
                return 1
            print(markdown_row(make_row(kernel, text, out), columns), flush=True)
            print(f"# {kernel} ({text}): {out['cycles']:,} cycles (register file "
                  f"{out['baseline_cycles']:,}), {time.process_time() - started:.1f} s CPU, "
                  "outputs equal numpy", file=sys.stderr, flush=True)
    return 0


def main(argv: list[str] | None = None) -> int:
    return table_main(argv, name="regless_breakdown", description=__doc__.splitlines()[0],
                      columns=COLUMNS, make_row=lambda kernel, _, out: breakdown_row(kernel, out))


if __name__ == "__main__":
    sys.exit(main())
