"""Count the L1 reads a recorded ``regless.shard`` trace holds outstanding at once.

``python -m gpurf.tb.regless.l1_reads TRACE ...`` prints per trace (``gpurf sm run ...
--mechanism regless:exact --record DIR`` writes them) its cycles, the reads L1 took on the
shard's port, the most outstanding at once (reads taken minus responses taken) and the
cycles that ended with two or more outstanding. The port has one read outstanding at most
from the compressor and none from it while the transfer unit waits for a line (and the
other way round), so two or more are the transfer unit's L1 stage holding several reads
(``l1_reads_in_flight``).
"""

import sys
from pathlib import Path

from gpurf.golden.trace import Trace, TraceError
from gpurf.hw.ports import codec
from gpurf.hw.regless.configs import ShardConfig
from gpurf.hw.regless.layouts import L1Op

__all__ = ["outstanding_reads"]


def outstanding_reads(path: str | Path) -> dict:
    """The L1 reads of the trace at ``path``: ``cycles``, ``reads`` (taken), ``most``
    outstanding at once and ``several`` (cycles that ended with two or more outstanding)."""
    trace = Trace(path)
    trace.check_block("regless.shard")
    request = codec(ShardConfig(**trace.params).l1_request_layout)
    waiting = most = reads = several = 0
    for _, chunk in trace.chunks():
        for record in chunk:
            inputs, outputs = trace.decode(record)
            if (outputs["l1_request__valid"] and inputs["l1_request__ready"]
                    and request.unpack(outputs["l1_request__payload"]).op == L1Op.READ.value):
                waiting += 1
                reads += 1
            if inputs["l1_response__valid"] and outputs["l1_response__ready"]:
                waiting -= 1
            most = max(most, waiting)
            several += waiting >= 2
    return {"cycles": trace.cycles, "reads": reads, "most": most, "several": several}


def main(argv: list[str] | None = None) -> int:
    """Print each trace's counts; a trace that cannot be read or is not a shard's ends the
    run with its one-line error on stderr and exit status 2."""
    for path in sys.argv[1:] if argv is None else argv:
        try:
            counts = outstanding_reads(path)
        except TraceError as error:
            print(f"l1_reads: {error}", file=sys.stderr)
            return 2
        print(f"{path}: {counts['cycles']:,} cycles, {counts['reads']:,} L1 reads, at most "
              f"{counts['most']} outstanding, {counts['several']:,} cycles with 2 or more")
    return 0


if __name__ == "__main__":
    sys.exit(main())
