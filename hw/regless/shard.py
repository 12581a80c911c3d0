"""One RegLess shard (paper Section 5, Fig. 8): capacity manager, operand staging unit and
compressor of one warp scheduler, with the pipelined transfer unit between them and a port
to L1."""

import functools

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import wiring

from gpurf.hw.gates import bit, equals, lowest, onehot, or_all
from gpurf.hw.params import ConfiguredComponent

from .capacity_manager import CapacityManager
from .compressor import Compressor
from .configs import ShardConfig
from .layouts import CompressorOp, L1Op, TransferPhase
from .osu import Osu

__all__ = ["Shard", "Transfer"]


class Transfer(wiring.Component):
    """The shard's transfer unit (paper 5.2.1, 5.3): a pipeline between the OSU, the
    compressor and L1 of two one-request stages and an L1 stage of up to
    ``config.l1_reads_in_flight`` requests, so that preload misses' L1 reads may be
    outstanding together.

    - **ask** takes a request from the OSU (``fetch`` before ``writeback``) and offers it to
      the compressor on ``request``;
    - **answer** holds the request the compressor took until its response: a compressed
      preload goes on to ``fill`` the OSU, a compressed eviction is done; a preload the
      compressor does not hold and an eviction it hands back go on to L1, and an
      invalidation goes on to L1 only if L1 holds a copy of the register (``l1_copy``),
      else it is done;
    - **L1 stage**: a ring of ``l1_reads_in_flight`` slots (``jobs``, each in its
      :class:`TransferPhase` ``phases``; ``IDLE`` = free) from the oldest request (one-hot
      ``head``) to the next free slot (one-hot ``tail``), in answer order. The newest may
      offer its L1 request (``L1``: the only one that may); a read L1 took waits for its
      line (``L1_WAIT``); L1 answers reads in order, so a line goes to the oldest waiting
      read; the head offers its value to the OSU (``FILL``), so fills leave in answer
      order. A write or an invalidation leaves (``tail`` steps back) when L1 takes it.

    A stage passes its request on at the edge the next stage takes it, and takes a new one
    at the same edge: ``ask`` takes from the OSU while empty or while the compressor takes
    its request, the compressor takes a request while idle or in the cycle it answers the
    one it holds (so ``answer`` follows it), and ``answer`` is ready for the response only
    while the L1 stage has a free slot and nothing in it offers to L1 (so L1 sees one offer
    at a time, in answer order). With ``l1_reads_in_flight=1`` the L1 stage holds one
    request from answer to fill. Every output is a function of the registered state and
    the compressor's ``request.ready``, except that ``writeback`` waits while ``fetch``
    offers.

    Ordering rules (each kept by stages that pass requests on in order):

    - **fetches first**: an invalidation is acknowledged when it enters its bank's fetch
      register; the warp may then redefine the register, and that value's eviction must
      not reach the compressor and L1 before the invalidation, which would clear it
      (regression seed 2036195225). A fetch never waits for a writeback (its line is
      allocated before it is offered), so writebacks are only delayed; a dirty line's tag
      keeps matching until its writeback is taken, so a preload of the same register cannot
      overtake it either.
    - **the compressor in OSU order**, and **L1 requests in compressor-answer order**: an
      eviction the compressor hands back is posted to L1 before a later preload's L1 read of
      the same register (L1 answers reads in order and applies writes in order): *answer*
      waits while the newest request offers to L1.
    - **lines to reads in L1's order, fills in answer order**: the line goes to the oldest
      waiting read (:meth:`_oldest_waiting`), the OSU is filled from the head only.

    **L1 copies** (paper 6.5: the benchmarks that never miss in the OSU "do not consume any
    L1 bandwidth", so an invalidation cannot always take the L1 port; 5.2.1 routes it "to
    the L1 cache" without saying when): one bit per register, set when the register's
    eviction is answered uncompressed (it goes to L1 next), cleared when its eviction is
    stored compressed (the L1 copy is stale and never read again) and when its invalidation
    is answered (the invalidation goes to L1 if the bit was set). **Interpretation:** the
    paper names no such bit; the compressor's "is compressed" vector is its model. The bit
    is read and written at the answer edge; every earlier write or invalidation was handed
    to L1 by then (``answer`` waits while one offers), so the bit is never behind the
    requests L1 has seen. Registers start with no L1 copy.

    Parameters
    ----------
    config : ShardConfig
        The shard's configuration.
    """

    def __init__(self, config: ShardConfig):
        self.config = config
        super().__init__(config.transfer_signature())
        job, slots = config.transfer_job_layout, config.l1_reads_in_flight
        self.asking = Signal(job)
        """The request offered to the compressor (valid while ``ask_full``)."""
        self.ask_full = Signal()
        self.answering = Signal(job)
        """The request the compressor holds (valid while ``answer_full``)."""
        self.answer_full = Signal()
        self.jobs = [Signal(job, name=f"job_{s}") for s in range(slots)]
        """The L1 stage's slots; slot ``s`` holds a request unless ``phases[s]`` is IDLE."""
        self.phases = [Signal(TransferPhase, name=f"phase_{s}") for s in range(slots)]
        self.head = Signal(slots, init=1)
        """One-hot: the slot of the oldest request in the L1 stage."""
        self.tail = Signal(slots, init=1)
        """One-hot: the next free slot (the head's, while the stage is empty or full)."""
        self.newest = Signal(slots)
        """One-hot, combinational: the slot before ``tail`` (the newest request's)."""
        self.waiting = Signal(slots)
        """One-hot, combinational: the oldest read waiting for its line, else 0."""
        self.offering = Signal()
        """Combinational: the newest request offers to L1 (phase ``L1``)."""
        self.full = Signal()
        """Combinational: every slot holds a request."""
        self.l1_copy = Signal(config.warps * config.regs)
        """Bit ``{warp, reg}``: L1 holds a copy of the register."""

    def elaborate(self, platform):
        m = Module()
        asked = self.request.valid & self.request.ready
        answered = self.response.valid & self.response.ready
        newest = self._ring(m)
        self._outputs(m, asked, newest)
        with m.If(~self.ask_full | asked):
            self._take(m)
        with m.If(asked):
            m.d.sync += [self.answering.eq(self.asking), self.answer_full.eq(1)]
        with m.Elif(answered):
            m.d.sync += self.answer_full.eq(0)
        with m.If(answered):
            self._answer(m)
        self._l1_stage(m, newest)
        return m

    def in_phase(self, phase: TransferPhase):
        """One bit per slot of the L1 stage: the slot is in ``phase``."""
        return Cat(equals(slot.as_value(), phase.value) for slot in self.phases)

    def _ring(self, m):
        """The L1 stage's combinational view: newest slot, whether it offers, full, and
        the oldest waiting read; returns the newest slot's job."""
        m.d.comb += [
            self.newest.eq(self.tail.rotate_right(1)),
            self.offering.eq((self.newest & self.in_phase(TransferPhase.L1)).any()),
            self.full.eq((self.tail & ~self.in_phase(TransferPhase.IDLE)).any()),
            self.waiting.eq(self._oldest_waiting(self.in_phase(TransferPhase.L1_WAIT))),
        ]
        return self._pick(m, self.newest, "newest_job")

    def _oldest_waiting(self, reads):
        """The first of the slots ``reads`` (one bit per slot) in ring order from
        ``head``: the lowest at or after the head's slot, else the lowest."""
        at_or_after = Cat(self.head[:s + 1].any() for s in range(len(self.head)))
        late = reads & at_or_after
        return Mux(late.any(), lowest(late), lowest(reads))

    def _pick(self, m, one_hot, name):
        """The job in the slot ``one_hot`` selects (an AND-OR multiplexer), as ``name``."""
        picked = Signal(self.config.transfer_job_layout, name=name)
        width = len(picked.as_value())
        m.d.comb += picked.eq(or_all(job.as_value() & one_hot[s].replicate(width)
                                     for s, job in enumerate(self.jobs)))
        return picked

    @staticmethod
    def _op_is(job, op: CompressorOp):
        return equals(job.op.as_value(), op.value)

    def _outputs(self, m, asked, newest):
        head = self._pick(m, self.head, "head_job")
        l1_op = Mux(self._op_is(newest, CompressorOp.PRELOAD), L1Op.READ,
                    Mux(self._op_is(newest, CompressorOp.EVICT), L1Op.WRITE, L1Op.INVALIDATE))
        taking = ~self.ask_full | asked
        waited = 0
        for stream, _ in self._intake_order():
            m.d.comb += stream.ready.eq(taking & ~waited)
            waited = waited | stream.valid
        m.d.comb += [
            self.request.valid.eq(self.ask_full),
            self.request.payload.op.eq(self.asking.op),
            self.request.payload.warp.eq(self.asking.ref.warp),
            self.request.payload.reg.eq(self.asking.ref.reg),
            self.request.payload.value.eq(self.asking.value),
            self.response.ready.eq(self._answer_ready()),
            self.l1_request.valid.eq(self.offering),
            self.l1_request.payload.op.eq(l1_op),
            self.l1_request.payload.addr.eq(newest.ref),
            self.l1_request.payload.data.eq(newest.value),
            self.l1_response.ready.eq(self.waiting.any()),
            self.fill.valid.eq((self.head & self.in_phase(TransferPhase.FILL)).any()),
            self.fill.payload.line.eq(head.line),
            self.fill.payload.data.eq(head.value),
        ]

    def _answer_ready(self):
        """``response.ready``: a request waits for its answer, the L1 stage has a free slot
        and nothing in it offers to L1 (an answer never overtakes an earlier request's L1
        offer)."""
        return self.answer_full & ~self.full & ~self.offering

    def _intake_order(self):
        """The OSU's streams in the order the ask stage takes them, each with the
        compressor op of its request: fetches first (see the class docstring)."""
        fetch = self.fetch.payload
        return [(self.fetch, Mux(fetch.invalidate, CompressorOp.INVALIDATE,
                                 CompressorOp.PRELOAD)),
                (self.writeback, CompressorOp.EVICT)]

    def _take(self, m):
        """Fill the ask stage with the first stream that offers (or leave it empty)."""
        m.d.sync += self.ask_full.eq(0)
        for stream, op in reversed(self._intake_order()):
            payload = stream.payload
            value = payload.data if stream is self.writeback else 0
            with m.If(stream.valid):
                m.d.sync += [self.ask_full.eq(1),
                             self.asking.op.eq(op),
                             self.asking.ref.warp.eq(payload.warp),
                             self.asking.ref.reg.eq(payload.reg),
                             self.asking.line.eq(payload.line),
                             self.asking.value.eq(value)]

    def _answer(self, m):
        """The answered request goes to the L1 stage's free slot (the response's value is
        the decompressed register, the eviction handed back, or 0), which it keeps unless
        it is done; the register's ``l1_copy`` bit follows an eviction or invalidation."""
        compressed = self.response.payload.compressed
        answering = self.answering
        preload = self._op_is(answering, CompressorOp.PRELOAD)
        evict = self._op_is(answering, CompressorOp.EVICT)
        invalidate = self._op_is(answering, CompressorOp.INVALIDATE)
        ref = answering.ref.as_value()
        copied = bit(m, self.l1_copy, ref, "l1_copied")
        one = onehot(m, ref, len(self.l1_copy), "l1_copy_one")
        to_l1 = Mux(invalidate, self._invalidation_to_l1(copied), ~compressed)
        kept = to_l1 | (compressed & preload)
        for s, (job, phase) in enumerate(zip(self.jobs, self.phases, strict=True)):
            with m.If(self.tail[s]):
                m.d.sync += [job.eq(answering),
                             job.value.eq(self.response.payload.value),
                             phase.eq(Mux(to_l1, TransferPhase.L1,
                                          Mux(kept, TransferPhase.FILL, TransferPhase.IDLE)))]
        with m.If(kept):
            m.d.sync += self.tail.eq(self.tail.rotate_left(1))
        m.d.sync += self.l1_copy.eq(Mux(evict & ~compressed, self.l1_copy | one,
                                        Mux(evict | invalidate, self.l1_copy & ~one,
                                            self.l1_copy)))

    @staticmethod
    def _invalidation_to_l1(copied):
        """Whether an answered invalidation goes on to L1, given the register's ``l1_copy``
        bit ``copied``: exactly when L1 holds a copy."""
        return copied

    def _l1_stage(self, m, newest):
        """The L1 stage's edge: the newest request's offer taken (a read waits for its
        line, anything else leaves), the line for the oldest waiting read, the head's
        fill."""
        offered = self.l1_request.valid & self.l1_request.ready
        read = self._op_is(newest, CompressorOp.PRELOAD)
        answered = self.l1_response.valid & self.l1_response.ready
        filled = self.fill.valid & self.fill.ready
        for s, (job, phase) in enumerate(zip(self.jobs, self.phases, strict=True)):
            with m.If(offered & self.newest[s]):
                m.d.sync += phase.eq(Mux(read, TransferPhase.L1_WAIT, TransferPhase.IDLE))
            with m.If(answered & self.waiting[s]):
                m.d.sync += [job.value.eq(self.l1_response.payload),
                             phase.eq(TransferPhase.FILL)]
            with m.If(filled & self.head[s]):
                m.d.sync += phase.eq(TransferPhase.IDLE)
        with m.If(offered & ~read):
            m.d.sync += self.tail.eq(self.newest)
        with m.If(filled):
            m.d.sync += self.head.eq(self.head.rotate_left(1))


class Shard(ConfiguredComponent, config=ShardConfig):
    """One RegLess shard: :class:`~gpurf.hw.regless.capacity_manager.CapacityManager`,
    :class:`~gpurf.hw.regless.osu.Osu`, :class:`~gpurf.hw.regless.compressor.Compressor` and the
    :class:`Transfer` unit, wired as in the paper's Fig. 8 for one warp scheduler.

    Wiring: the CM's per-bank queues feed the OSU's preload ports and the OSU's
    acknowledgements return to the CM; the OSU's preload misses, invalidations and dirty
    lines go through the transfer unit to the compressor and L1, and fetched values come back
    on the OSU's fill port. Everything else is the shard's ports:

    - to the warp scheduler: ``want`` / ``region`` (the metadata of the next region of the
      warp on top of the CM's stack), ``eligible`` (the ACTIVE warps), ``issue``;
    - to the register read and writeback units: the OSU's port arrays ``read`` /
      ``read_resp``, ``reserve`` / ``reserve_resp``, ``write``, ``release`` (``instructions``
      x 2, x 1, x 1, x 2 ports; see :class:`~gpurf.hw.regless.osu.Osu`) and
      ``protocol_error``; and the
      CM's ``written`` (**interpretation**: the writeback unit, which knows the warp of
      each result, reports the OSU write to the CM; the OSU's write port carries the line
      only);
    - to L1: ``l1_request`` / ``l1_response`` (:func:`~gpurf.hw.regless.layouts.
      shard_l1_request_layout`). The compressor (serving one request) and the transfer unit's
      L1 stage (holding an earlier one) share the port through :meth:`_grants`: one offer
      a cycle, at most one read outstanding, so a response goes to whichever of them waits
      for one. Reads are answered in order, writes and invalidations are posted.
      **Interpretation:** the paper's arbiter between the four shards of an SM is above
      this port.

    Latencies are the sum of the blocks' (see each block) plus one cycle for the transfer
    unit to take a request and one per stage and phase; the stages overlap (see
    :class:`Transfer`).
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    @functools.cached_property
    def parts(self) -> dict:
        """The capacity manager, OSU, compressor and transfer unit by submodule name,
        created on first use (elaboration, or a formal harness that watches them)."""
        config = self.config
        return {"cm": CapacityManager(**config.capacity_manager.params()),
                "osu": Osu(**config.osu.params()),
                "compressor": Compressor(**config.compressor.params()),
                "transfer": self.transfer_class(config)}

    transfer_class = Transfer
    """The transfer unit's class (a formal harness's mutant replaces it)."""

    def elaborate(self, platform):
        m = Module()
        config = self.config
        for name, part in self.parts.items():
            m.submodules[name] = part
        cm, osu, compressor, transfer = self.parts.values()
        for name in ("want", "region", "issue", "written"):
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(cm, name))
        for name in ("read", "read_resp", "reserve", "reserve_resp", "write", "release"):
            for ours, theirs in zip(getattr(self, name), getattr(osu, name), strict=True):
                wiring.connect(m, wiring.flipped(ours), theirs)
        for b in range(config.banks):
            wiring.connect(m, cm.preload[b], osu.preload[b])
        m.d.comb += [self.eligible.eq(cm.eligible), self.protocol_error.eq(osu.protocol_error),
                     cm.preloaded.eq(osu.preloaded), cm.at_barrier.eq(self.at_barrier)]
        wiring.connect(m, osu.fetch, transfer.fetch)
        wiring.connect(m, osu.writeback, transfer.writeback)
        wiring.connect(m, transfer.fill, osu.fill)
        wiring.connect(m, transfer.request, compressor.request)
        wiring.connect(m, compressor.response, transfer.response)
        self._l1(m, compressor, transfer)
        return m

    def _l1(self, m, compressor, transfer):
        """The compressor's and the transfer unit's L1 traffic on one port (see
        :meth:`_grants`); a response goes to the one waiting for it."""
        ours, theirs = self.l1_request, compressor.l1_request
        to_compressor, to_transfer = self._grants(m, compressor, transfer)
        with m.If(to_compressor):
            m.d.comb += [ours.valid.eq(1),
                         ours.payload.op.eq(Mux(theirs.payload.write, L1Op.WRITE, L1Op.READ)),
                         ours.payload.compressed.eq(1),
                         ours.payload.addr.eq(theirs.payload.line),
                         ours.payload.data.eq(theirs.payload.data),
                         theirs.ready.eq(ours.ready)]
        with m.Else():
            m.d.comb += [ours.payload.eq(transfer.l1_request.payload),
                         ours.valid.eq(to_transfer),
                         transfer.l1_request.ready.eq(ours.ready & to_transfer)]
        response = self.l1_response
        for unit in (compressor, transfer):
            m.d.comb += [unit.l1_response.valid.eq(response.valid & unit.l1_response.ready),
                         unit.l1_response.payload.eq(response.payload)]
        m.d.comb += response.ready.eq(compressor.l1_response.ready | transfer.l1_response.ready)

    def _grants(self, m, compressor, transfer):
        """Who offers on the L1 port this cycle: the compressor (for a write-back or fetch of
        a compressed line, while serving the request the transfer unit's answer stage holds)
        or the transfer unit's L1 stage (for an earlier request).

        A read is offered only while the other unit waits for no line, so at most one read
        is outstanding and the response needs no routing. The compressor goes first, except
        that an offer shown and not taken is shown again (``transfer_holds``: the port's
        stream rule).
        """
        theirs, mine = compressor.l1_request, transfer.l1_request
        compressor_may = theirs.valid & (theirs.payload.write | ~transfer.l1_response.ready)
        transfer_may = mine.valid & (~equals(mine.payload.op.as_value(), L1Op.READ.value)
                                     | ~compressor.l1_response.ready)
        transfer_holds = Signal()
        to_transfer = Signal()
        m.d.comb += to_transfer.eq(transfer_may & (transfer_holds | ~compressor_may))
        m.d.sync += transfer_holds.eq(to_transfer & ~self.l1_request.ready)
        return compressor_may & ~to_transfer, to_transfer
