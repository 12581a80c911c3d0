"""Golden model of ``regless.shard``: the golden capacity manager, OSU and compressor and a
model of the transfer unit, evaluated in the order their signals flow within a cycle.

The parts exchange unpacked structures (queue entries, offers, lists of lanes) through their
``advance`` methods; only the shard's own ports are unpacked and packed, with the codecs of
its signature.
"""

from collections import Counter, deque
from functools import cached_property

from gpurf.golden.model import PortModel
from gpurf.hw.ports import codec
from gpurf.hw.regless.configs import ShardConfig
from gpurf.hw.regless.layouts import CompressorOp, L1Op, TransferPhase

from .capacity_manager import CapacityManager, Entry
from .compressor import Compressor
from .osu import LineRef, Osu

__all__ = ["Shard", "Transfer"]

_PRELOAD, _EVICT, _INVALIDATE = (CompressorOp.PRELOAD.value, CompressorOp.EVICT.value,
                                 CompressorOp.INVALIDATE.value)
_L1_OPS = {_PRELOAD: L1Op.READ, _EVICT: L1Op.WRITE, _INVALIDATE: L1Op.INVALIDATE}
_NO_LINE, _NO_ENTRY = LineRef(0, 0), Entry(0, 0, 0)
"""The payloads the OSU sees on ``fill`` and a ``preload`` port while they are not valid."""


class Job:
    """A request the transfer unit holds (``transfer_job_layout``): the compressor op
    ``op`` (a :class:`CompressorOp` code), ``warp``, ``reg``, ``value`` (lanes, or 0), the
    OSU ``line`` it came from and, in the L1 stage, its ``phase`` (:class:`TransferPhase`)."""

    __slots__ = ("line", "op", "phase", "reg", "value", "warp")

    def __init__(self, op, warp, reg, line, value):
        self.op, self.warp, self.reg, self.line, self.value = op, warp, reg, line, value
        self.phase = TransferPhase.IDLE


class Transfer:
    """The transfer unit of :class:`gpurf.hw.regless.shard.Transfer`: two one-request
    stages, ``asking`` (offered to the compressor) and ``answering`` (held by the
    compressor), the L1 stage ``stage`` (up to ``config.l1_reads_in_flight`` requests in
    answer order, each in its ``phase``) and the registers L1 holds a copy of
    (``l1_copies``: an invalidation of any other register skips L1).

    The L1 stage: the request last answered may offer its L1 request (``L1``: the only one
    that may, and always the newest); a read L1 took waits for its line (``L1_WAIT``);
    L1 answers in order, so a line goes to the oldest waiting read (``FILL``); the oldest
    request fills the OSU (``FILL`` at the head: fills in answer order). A write or an
    invalidation leaves when L1 takes it. *answer* takes a response only while the stage
    has room and no request offers to L1, so L1 sees requests in answer order and one
    offer at a time; with ``l1_reads_in_flight=1`` the stage holds one request from answer
    to fill, as before the parameter.

    :meth:`outputs` shows the cycle's outputs from the state and the compressor's
    ``request.ready`` (``writeback`` waits for ``fetch``), :meth:`advance` takes the edge."""

    def __init__(self, config: ShardConfig):
        self.config = config
        self.asking: Job | None = None
        self.answering: Job | None = None
        self.stage: deque[Job] = deque()
        """The L1 stage's requests, oldest first."""
        self.l1_copies: set[tuple[int, int]] = set()
        """``(warp, reg)`` of the registers whose last eviction went to L1 uncompressed and
        that were not invalidated since (the RTL's ``l1_copy`` bit vector)."""
        self.counts = Counter()
        """Requests by how they ended: ``preload_compressed``, ``preload_l1``,
        ``evict_compressed``, ``evict_l1``, ``invalidate`` (paper 6.5's preload sources), and
        ``invalidate_l1``, the invalidations among them that went to L1."""
        self._ref = codec(config.osu.ref_layout)

    @property
    def offering(self) -> Job | None:
        """The request offering to L1 (``L1``; the newest in the stage), else ``None``."""
        stage = self.stage
        return stage[-1] if stage and stage[-1].phase == TransferPhase.L1 else None

    @property
    def waiting(self) -> Job | None:
        """The oldest read waiting for its line (``L1_WAIT``), else ``None``."""
        return next((job for job in self.stage if job.phase == TransferPhase.L1_WAIT), None)

    @property
    def response_ready(self) -> int:
        """``response.ready``: a request waits for its answer, the L1 stage has room and
        nothing in it offers to L1."""
        return int(self.answering is not None
                   and len(self.stage) < self.config.l1_reads_in_flight
                   and self.offering is None)

    def outputs(self, fetch_valid: int, request_ready: int) -> dict:
        """This cycle's outputs: the readies, ``request`` (the :class:`Job` offered to the
        compressor, else ``None``), ``l1_request`` (the L1 port's fields or ``None``) and
        ``fill`` (``(line, lanes)`` or ``None``)."""
        stage, job = self.stage, self.offering
        taking = self.asking is None or bool(request_ready)
        head = stage[0] if stage and stage[0].phase == TransferPhase.FILL else None
        out = {"fetch_ready": int(taking), "writeback_ready": int(taking and not fetch_valid),
               "request": self.asking, "response_ready": self.response_ready,
               "l1_request": None, "l1_response_ready": int(self.waiting is not None),
               "fill": None if head is None else (head.line, head.value)}
        if job is not None:
            out["l1_request"] = {
                "op": _L1_OPS[job.op], "compressed": 0,
                "addr": self._ref.pack({"warp": job.warp, "reg": job.reg}),
                "data": job.value}
        return out

    def advance(self, fetch, writeback, fill_ready, request_ready, response, l1_request_ready,
                l1_response) -> None:
        """Take the clock edge, given the OSU's offers ``fetch`` and ``writeback`` (dicts or
        ``None``), the compressor's ``request.ready`` and ``response`` (``(compressed,
        lanes)`` or ``None``) and the L1 line (lanes, or ``None`` while not valid)."""
        answered = self.answering if response is not None and self.response_ready else None
        asked = self.asking is not None and request_ready
        self._l1_stage(fill_ready, l1_request_ready, l1_response)
        if answered is not None:
            self._answer(answered, response)
            self.answering = None
        if asked:
            self.answering = self.asking
        if self.asking is None or asked:
            self.asking = self._take(fetch, writeback)

    @staticmethod
    def _take(fetch, writeback):
        if fetch is not None:
            op = _INVALIDATE if fetch["invalidate"] else _PRELOAD
            return Job(op, fetch["warp"], fetch["reg"], fetch["line"], 0)
        if writeback is not None:
            return Job(_EVICT, writeback["warp"], writeback["reg"], writeback["line"],
                       writeback["data"])
        return None

    def _answer(self, job, response):
        compressed, value = response
        op = job.op
        name = CompressorOp(op).name.lower()
        self.counts[name if op == _INVALIDATE
                    else f"{name}_{'compressed' if compressed else 'l1'}"] += 1
        job.value = value
        if op == _INVALIDATE:
            self._invalidate(job)
        elif not compressed:
            job.phase = TransferPhase.L1
        elif op == _PRELOAD:
            job.phase = TransferPhase.FILL
        if op == _EVICT:
            self._copy_in_l1(job, not compressed)
        if job.phase != TransferPhase.IDLE:
            self.stage.append(job)

    def _invalidate(self, job):
        """An invalidation goes to L1 only if L1 holds a copy of the register."""
        ref = (job.warp, job.reg)
        if ref in self.l1_copies:
            self.l1_copies.discard(ref)
            self.counts["invalidate_l1"] += 1
            job.phase = TransferPhase.L1

    def _copy_in_l1(self, job, stored):
        """An eviction written to L1 leaves a copy there; one stored compressed makes the
        L1 copy stale, which no invalidation then needs to erase."""
        ref = (job.warp, job.reg)
        if stored:
            self.l1_copies.add(ref)
        else:
            self.l1_copies.discard(ref)

    def _l1_stage(self, fill_ready, l1_request_ready, l1_response):
        """The edge of the L1 stage, each change decided on the cycle's state: the head's
        fill, the line for the oldest waiting read, the L1 request taken."""
        stage = self.stage
        filled = bool(fill_ready) and bool(stage) and stage[0].phase == TransferPhase.FILL
        waiting = self.waiting if l1_response is not None else None
        offering = self.offering if l1_request_ready else None
        if waiting is not None:
            waiting.value, waiting.phase = l1_response, TransferPhase.FILL
        if offering is not None:
            if offering.op == _PRELOAD:
                offering.phase = TransferPhase.L1_WAIT
            else:
                stage.pop()
        if filled:
            stage.popleft()

    def line_trace(self) -> str:
        def show(job):
            return "-" if job is None else f"{CompressorOp(job.op).name} w{job.warp}r{job.reg}"
        jobs = " ".join(f"{job.phase.name} {show(job)}" for job in self.stage) or "IDLE -"
        return f"xfer ask {show(self.asking)} answer {show(self.answering)} {jobs}"


class Shard(PortModel, config=ShardConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Within a cycle the blocks are evaluated in signal order: the state-only outputs (the
    CM's queue heads, the OSU's merged offers, the compressor's and the transfer unit's
    outputs) first, then the OSU with every input it needs, then the CM (the OSU's
    acknowledgements and readies), the transfer unit and the compressor."""

    @cached_property
    def cm(self) -> CapacityManager:
        return CapacityManager(**self.config.capacity_manager.params())

    @cached_property
    def osu(self) -> Osu:
        return Osu(**self.config.osu.params())

    @cached_property
    def compressor(self) -> Compressor:
        return Compressor(**self.config.compressor.params())

    def reset(self):
        for part in (self.cm, self.osu, self.compressor):
            part.reset()
        self.transfer = Transfer(self.config)
        self.transfer_holds = False
        """The transfer unit's L1 offer was shown and not taken (it is shown again)."""

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        cm, osu, compressor, transfer = self.cm, self.osu, self.compressor, self.transfer
        want, eligible = cm.wants(), cm.eligible()
        heads = cm.heads()
        offered = compressor.shown
        request_ready = int(compressor.accepts(transfer.response_ready))
        shown = transfer.outputs(int(osu.offers("fetch")), request_ready)
        fill = shown["fill"]
        osu.advance(
            preloads=[(0, _NO_ENTRY) if head is None else (1, head) for head in heads],
            fill_valid=int(fill is not None), fill_line=_NO_LINE if fill is None else fill[0],
            fill_data=None if fill is None else fill[1],
            fetch_ready=shown["fetch_ready"], writeback_ready=shown["writeback_ready"],
            **osu.unpack_requests(inputs, ports))
        cm.advance(inputs["region__valid"],
                   ports["region__payload"].unpack(inputs["region__payload"]),
                   osu.preload_ready, osu.acks,
                   inputs["issue__valid"],
                   ports["issue__payload"].unpack(inputs["issue__payload"]),
                   inputs["written__valid"],
                   ports["written__payload"].unpack(inputs["written__payload"]),
                   inputs["at_barrier"])
        l1_valid, l1_payload, to_compressor, to_transfer = self._l1(
            inputs["l1_request__ready"], offered, shown)
        l1_response_valid = inputs["l1_response__valid"]
        transfer.advance(osu.fetch_offer, osu.writeback_offer, osu.fill_ready,
                         request_ready, offered.response, to_transfer,
                         ports["l1_response__payload"].unpack(inputs["l1_response__payload"])
                         if l1_response_valid and shown["l1_response_ready"] else None)
        request = shown["request"]
        compressor.advance(int(request is not None), request, shown["response_ready"],
                           to_compressor, l1_response_valid, inputs["l1_response__payload"])
        return {
            "want__valid": int(want is not None),
            "want__payload": None if want is None else ports["want__payload"].pack(
                {"warp": want}),
            "region__ready": cm.region_ready, "eligible": eligible,
            "protocol_error": osu.protocol_error,
            **osu.request_outputs(ports),
            "l1_request__valid": l1_valid, "l1_request__payload": l1_payload,
            "l1_response__ready": int(offered.l1_response_ready
                                      or shown["l1_response_ready"]),
        }

    def _l1(self, ready, offered, shown) -> tuple:
        """The shared L1 port (``hw.regless.shard.Shard._grants``): the compressor's request
        unless the transfer unit's was shown and not taken; a read only while the other
        waits for no line. Returns ``valid``, the packed payload (``None`` while not valid)
        and the ``ready`` each of them sees."""
        pack = self.ports["l1_request__payload"].pack
        theirs, mine = offered.l1_request, shown["l1_request"]
        compressor_may = theirs is not None and (theirs[0] or not shown["l1_response_ready"])
        transfer_may = mine is not None and (mine["op"] != L1Op.READ
                                             or not offered.l1_response_ready)
        to_transfer = transfer_may and (self.transfer_holds or not compressor_may)
        self.transfer_holds = to_transfer and not ready
        if to_transfer:
            return 1, pack(mine), 0, ready
        if compressor_may:
            write, line, bits = theirs
            payload = pack({"op": L1Op.WRITE if write else L1Op.READ, "compressed": 1,
                            "addr": line, "data": bits})
            return 1, payload, ready, 0
        return 0, None, 0, 0

    def line_trace(self) -> str:
        return " || ".join((self.cm.line_trace(), self.osu.line_trace(),
                            self.compressor.line_trace(), self.transfer.line_trace()))
