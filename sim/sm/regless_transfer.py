"""The golden shard's transfer unit, compressor and L1 port, cycle by cycle, for the fast
RegLess model.

:class:`TransferTiming` steps the golden :class:`~gpurf.golden.regless.shard.Transfer` (two
one-request stages, offered to the compressor and answered by it, then the L1 stage of
``l1_reads_in_flight`` requests, whose preload misses' reads may be outstanding together) and
the golden
:class:`~gpurf.golden.regless.compressor.Compressor` (a request's cycles: bit-vector check or
pattern match, tag match, the compressed line's L1 refill) as the golden shard does
(``Shard.step``: the outputs shown from the state first, then the OSU's offers, the shared L1
port, then the edge), given the OSU's ``fetch`` and ``writeback`` offers by
:class:`~gpurf.sim.sm.regless_ports.ShardPortTiming`. The L1 port is served as
:mod:`gpurf.sim.sm.regless_exact` serves it: always ready, one cycle of the SM's timing L1
per request, reads answered in order after the L1 hit or miss latency. Values matter only
where they decide timing (an eviction's pattern match): the fast model keeps the register
values itself. ``compressor=False``: every request is answered at once, uncompressed (to L1).
"""

from collections import Counter, deque

from gpurf.golden.regless.compressor import Compressor, Shown
from gpurf.golden.regless.shard import Transfer
from gpurf.hw.regless.configs import ShardConfig
from gpurf.hw.regless.layouts import CompressorOp, L1Op, TransferPhase

__all__ = ["MISS_PATH", "TransferTiming"]

MISS_PATH = {
    "miss_cycles": "cycles the transfer unit was stepped (anything offered or in flight)",
    "miss_l1": "the L1 stage offers a request to the L1 port (``L1``)",
    "miss_l1_read": "... of them a preload miss's read",
    "miss_l1_wait": "a preload miss's read outstanding in the L1 stage (``L1_WAIT``)",
    "miss_fill": "a line in the L1 stage to fill the OSU with (``FILL``)",
    "miss_stage_full": "the L1 stage holds ``l1_reads_in_flight`` requests",
    "miss_answer_blocked": "*answer*'s response shown and not taken: the L1 stage is full",
    "miss_ask_blocked": "*ask* full and the compressor not taking it",
    "miss_ask_blocked_l1": "... of them while *answer* is blocked behind the L1 stage",
    "miss_fetch_waits": "the OSU offers a fetch the transfer unit does not take",
    "miss_writeback_waits": "the OSU offers a writeback the transfer unit does not take",
    "miss_writeback_behind_fetch": "... of them only because a fetch is offered",
    "miss_compressor_busy": "the compressor holds a request",
    "miss_compressor_l1": "... of them offering an L1 request or waiting for its line",
    "miss_compressor_held": "... of them showing a response not taken",
    "miss_reads": "L1 reads of preload misses (the transfer unit's)",
    "miss_refills": "L1 reads of compressed lines (the compressor's)",
    "miss_read_latency": "cycles from a preload miss's L1 port cycle to its line",
    "miss_refill_latency": "cycles from a compressed line's L1 port cycle to its line",
}
"""The miss-path counters :class:`TransferTiming` adds up (per shard cycle stepped, summed
over the shards), with what each counts."""


class _NoCompressor:
    """Answers every request the cycle after it is taken, uncompressed, and holds the
    answer until the transfer unit takes it (as the compressor's ``_respond``)."""

    def __init__(self):
        self.shown = Shown(request_ready=1)

    def accepts(self, response_ready) -> bool:
        return self.shown.response is None or bool(response_ready)

    def advance(self, request_valid, request, response_ready, *_):
        if self.shown.response is not None and not response_ready:
            return
        self.shown = Shown(request_ready=1, response=(0, 0)) if request_valid \
            else Shown(request_ready=1)


class TransferTiming:
    """One shard's transfer unit, compressor and L1 port. ``l1`` serves the port:
    ``l1(now, kind, key, op)`` -> the cycle a read's line is there (``kind`` ``"r"``:
    ``key`` is ``(slot, reg)``; ``"c"``: a compressed line's number; ``op`` an
    :class:`~gpurf.hw.regless.layouts.L1Op`)."""

    def __init__(self, params: dict, l1, *, compressor: bool = True, counts=None):
        self.config = ShardConfig(**params)
        self.counts = Counter() if counts is None else counts
        """Where the :data:`MISS_PATH` counters are added."""
        self.transfer = Transfer(self.config)
        self.compressor = Compressor(**self.config.compressor.params()) if compressor \
            else _NoCompressor()
        self.l1 = l1
        self.holds = False
        """The transfer unit's L1 offer was shown and not taken."""
        self.answers: deque = deque()
        """``(cycle, bits)`` of the L1 reads in flight, in order."""
        self.lines: dict[int, int] = {}
        """Compressed lines' bits as last written to L1."""
        self.shown = None
        self.request_ready = 0

    def idle(self) -> bool:
        transfer = self.transfer
        return (transfer.asking is None and transfer.answering is None
                and not transfer.stage and self.compressor.shown.response is None
                and getattr(self.compressor, "job", None) is None and not self.answers)

    def show(self, fetch_valid: bool) -> dict:
        """This cycle's transfer outputs (``fetch_ready``, ``writeback_ready``, ``fill``)."""
        self.request_ready = int(self.compressor.accepts(self.transfer.response_ready))
        self.shown = self.transfer.outputs(int(fetch_valid), self.request_ready)
        return self.shown

    def advance(self, now: int, fetch, writeback, fill_ready) -> None:
        """The L1 port and the clock edge, given the OSU's offers (dicts or ``None``) and
        the fill's bank's readiness."""
        transfer, compressor, shown = self.transfer, self.compressor, self.shown
        offered = compressor.shown
        self._tally(fetch, writeback)
        response = None
        if self.answers and self.answers[0][0] <= now:
            response = self.answers[0][1]
        to_compressor, to_transfer = self._port(now, offered, shown)
        if response is not None and (offered.l1_response_ready
                                     or shown["l1_response_ready"]):
            self.answers.popleft()
        transfer.advance(fetch, writeback, fill_ready, self.request_ready, offered.response,
                         to_transfer, response if response is not None
                         and shown["l1_response_ready"] else None)
        request = shown["request"]
        compressor.advance(int(request is not None), request, shown["response_ready"],
                           to_compressor, int(response is not None),
                           0 if response is None else response)

    def _tally(self, fetch, writeback) -> None:
        """Add this cycle's :data:`MISS_PATH` counters (before the edge)."""
        transfer, compressor, shown, counts = (self.transfer, self.compressor, self.shown,
                                               self.counts)
        counts["miss_cycles"] += 1
        phases = {job.phase for job in transfer.stage}
        job = transfer.offering
        if job is not None:
            counts["miss_l1"] += 1
            counts["miss_l1_read"] += job.op == CompressorOp.PRELOAD.value
        counts["miss_l1_wait"] += TransferPhase.L1_WAIT in phases
        counts["miss_fill"] += TransferPhase.FILL in phases
        counts["miss_stage_full"] += len(transfer.stage) == self.config.l1_reads_in_flight
        offered = compressor.shown
        blocked = transfer.answering is not None and offered.response is not None \
            and not transfer.response_ready
        counts["miss_answer_blocked"] += blocked
        if transfer.asking is not None and not self.request_ready:
            counts["miss_ask_blocked"] += 1
            counts["miss_ask_blocked_l1"] += blocked
        counts["miss_fetch_waits"] += fetch is not None and not shown["fetch_ready"]
        if writeback is not None and not shown["writeback_ready"]:
            counts["miss_writeback_waits"] += 1
            counts["miss_writeback_behind_fetch"] += bool(shown["fetch_ready"])
        if getattr(compressor, "job", None) is not None or offered.response is not None:
            counts["miss_compressor_busy"] += 1
            counts["miss_compressor_l1"] += (offered.l1_request is not None
                                             or bool(offered.l1_response_ready))
            counts["miss_compressor_held"] += offered.response is not None

    def _port(self, now: int, offered, shown) -> tuple[int, int]:
        """The shared L1 port (``Shard._l1``): the compressor's request unless the transfer
        unit's was shown and not taken; a read only while the other waits for no line.
        Serves the request taken; the readies each side sees."""
        theirs, mine = offered.l1_request, shown["l1_request"]
        compressor_may = theirs is not None and (theirs[0] or not shown["l1_response_ready"])
        transfer_may = mine is not None and (mine["op"] != L1Op.READ
                                             or not offered.l1_response_ready)
        to_transfer = transfer_may and (self.holds or not compressor_may)
        self.holds = False
        if to_transfer:
            job = self.transfer.offering
            self._serve(now, "r", (job.warp, job.reg), mine["op"], None)
            return 0, 1
        if compressor_may:
            write, line, bits = theirs
            self._serve(now, "c", line, L1Op.WRITE if write else L1Op.READ, bits)
            return 1, 0
        return 0, 0

    def _serve(self, now: int, kind: str, key, op, bits) -> None:
        at = self.l1(now, kind, key, L1Op(op))
        if op == L1Op.READ:
            at = max([at] + [t for t, _ in self.answers])
            register = kind == "r"
            self.counts["miss_reads" if register else "miss_refills"] += 1
            self.counts["miss_read_latency" if register else "miss_refill_latency"] += at - now
            self.answers.append((at, self.lines.get(key, 0) if kind == "c" else 0))
        elif op == L1Op.WRITE and kind == "c":
            self.lines[key] = bits
