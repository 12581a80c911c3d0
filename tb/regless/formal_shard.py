"""Formal harness of ``regless.shard`` (CM + OSU + compressor + transfer unit) in a small
configuration.

Assume-guarantee: the parts are the real blocks, whose own properties their harnesses prove
(``formal_capacity_manager``, ``formal_osu`` / ``formal_osu_bank``, ``formal_compressor``);
here every input of the shard is free (``AnySeq``: the scheduler, the register units, L1,
the barrier unit's ``at_barrier``)
after a reset in the first cycle, and the harness **asserts** the rules of the composition,
which belong to none of the parts:

- **one L1 port**: the compressor and the transfer unit never both hand a request to L1 in
  one cycle, and never both wait for a response; the shard's ``l1_request`` keeps an offer
  not taken, unchanged (stream rule);
- **L1 requests in compressor-answer order**: every request the compressor answers
  uncompressed (a preload it does not hold, an eviction it hands back, an invalidation of
  a register L1 holds a copy of) is the next the transfer unit hands to L1, with its
  register and L1 op (the harness keeps the answered ones in a FIFO and checks each L1
  handshake against its head);
- **invalidations skip L1 exactly when L1 holds no copy**: the harness keeps its own "L1
  holds a copy" bit per register from the L1 port and the compressor (set by a register
  write the transfer unit hands to L1, cleared by an invalidation handed to L1 and by an
  eviction stored compressed, whose L1 copy is stale); an answered invalidation goes to
  the L1 stage in the next cycle exactly when the harness's bit is set;
- **fetches before writebacks** (the ordering that keeps an invalidation ahead of the
  eviction of the register's new value, docs/regless.md): the transfer unit never takes a
  writeback while the OSU offers a fetch, and never takes a preload miss of a register
  whose dirty value the OSU offers on ``writeback`` (a preload cannot overtake the eviction
  of the same register);
- **fills in answer order, lines to reads in L1's order**: the harness keeps the
  requests answered into the L1 stage that will fill the OSU (preloads; a compressed one
  with the compressor's value) in a FIFO, and the lines L1 returns to the transfer unit in
  another; every fill must carry the first FIFO's head line, with the value of its
  compressed answer or of the oldest line L1 returned;
- the transfer unit's stages: it offers the compressor a request exactly while its ask
  stage is full, its answer stage is full exactly while the compressor holds a request;
  its L1 stage's ring holds a request exactly in the slots from ``head`` up to ``tail``
  (all of them while full), only the newest may be in ``L1``, it offers L1 only then and
  the OSU's ``fill`` only while the head is in ``FILL``.

Covers: an invalidation that skips L1, a bank conflict on the read ports, an eviction, an
eviction stored compressed, a preload hit in the OSU, a preload miss fetched, a compressed
preload answered by the compressor, a line filled from L1, a full preload queue of the CM
(``preload`` offered, not taken), the compressor on L1, and the overlaps: two requests in
flight (the L1 stage holds one while the compressor holds another), three (the ask stage
full too), the compressor taking a request in the cycle it answers one, both units
offering to L1 at once, and (with ``l1_reads_in_flight=2``) two reads waiting for their
lines at once and an answer refused because the L1 stage is full.
"""

from amaranth import Cat, Mux, Signal, Value
from amaranth.hdl import Assert

from gpurf.hw.regless.compressor import Phase
from gpurf.hw.regless.layouts import CompressorOp, L1Op, TransferPhase
from gpurf.hw.regless.shard import Shard

from ..formal_base import FormalHarness, popcount

__all__ = ["SMALL", "TINY", "ShardFormal"]

SMALL = {"lines": 4, "banks": 2, "warps": 2, "regs": 4, "lanes": 4, "data_width": 4,
         "compressor_lines": 2, "max_entries": 2, "instructions": 2, "l1_reads_in_flight": 2}
"""The proof configuration: 2 banks x 2 lines, 2 warps x 4 registers (4 per bank: lines are
evicted), 4 lanes of 4 bits, 2 compressed lines, regions of at most 2 entries, two
instructions per cycle, two requests in the transfer unit's L1 stage."""

TINY = {**SMALL, "lines": 2, "regs": 2, "instructions": 1, "l1_reads_in_flight": 1}
"""The BMC-20 configuration (issue 21's depth): 2 banks x 1 line, 2 warps x 2 registers (2
per bank: lines are still evicted), one instruction per cycle (the second instruction's
ports are the OSU's, proved by ``formal_osu``), 4 compressed-line addresses over 2 stored
lines (the compressor still refills and writes back), one slot in the transfer unit's L1
stage. Session 11 reached every cover the harness had then here too, at the same steps as
in SMALL (two_reads_in_flight, of session 15, needs 2 slots; not re-run). With 2 slots
(session 15) smtbmc passed steps 0-17 in 16.5 minutes and had not finished step 18 after 10
more; the 2-slot stage's depth-20 proof is abc bmc3's at SMALL."""

_INPUTS = ("region", "read", "reserve", "write", "release")


class ShardFormal(FormalHarness):
    """The shard with free inputs and the rules above (``params`` override SMALL;
    ``block`` a mutant class)."""

    block = Shard
    SMALL = SMALL

    def check(self, m):
        dut = self.dut
        self.free_streams(m, dut.region, dut.issue, dut.written, dut.l1_response,
                          *(port for name in _INPUTS[1:] for port in getattr(dut, name)))
        self.free_ready(m, dut.l1_request)
        self.free(m, dut.at_barrier)
        after_reset = self.after_reset
        with m.If(after_reset):
            self._l1(m)
            self._ordering(m)
            self._stages(m)
        self._fill_order(m, after_reset)
        copied = self._l1_copies(m)
        self._answer_order(m, after_reset, copied)
        self._invalidations(m, after_reset, copied)
        out = dut.l1_request
        self.assert_held(m, out.valid, out.ready, out.payload, name="l1_request",
                         guard=after_reset)
        self._covers(m, after_reset, copied)

    def _l1_copies(self, m):
        """The harness's "L1 holds a copy" bit per register, from the transfer unit's L1
        handshakes and the compressor's answers; returns the bit of the register in the
        answer stage."""
        transfer = self.dut.parts["transfer"]
        copies = Signal(len(transfer.l1_copy))
        request, response = transfer.l1_request, transfer.response
        sent = request.valid & request.ready
        addr = request.payload.addr[:len(transfer.answering.ref.as_value())]
        stale = (response.valid & response.ready & response.payload.compressed
                 & (transfer.answering.op == CompressorOp.EVICT))
        written = copies.bit_select(addr, 1)
        with m.If(sent & (request.payload.op == L1Op.WRITE)):
            m.d.sync += written.eq(1)
        with m.If(sent & (request.payload.op == L1Op.INVALIDATE)):
            m.d.sync += written.eq(0)
        with m.If(stale):
            m.d.sync += copies.bit_select(transfer.answering.ref.as_value(), 1).eq(0)
        return copies.bit_select(transfer.answering.ref.as_value(), 1)

    def _invalidations(self, m, after_reset, copied):
        """An invalidation answered in a cycle goes to the L1 stage at its edge exactly
        when L1 holds a copy of the register."""
        transfer = self.dut.parts["transfer"]
        response = transfer.response
        invalidated, expected = Signal(), Signal()
        m.d.sync += [invalidated.eq(response.valid & response.ready
                                    & (transfer.answering.op == CompressorOp.INVALIDATE)),
                     expected.eq(copied)]
        with m.If(after_reset & invalidated):
            m.d.comb += Assert(transfer.offering == expected)

    def _l1(self, m):
        compressor, transfer = self.dut.parts["compressor"], self.dut.parts["transfer"]
        theirs, mine = compressor.l1_request, transfer.l1_request
        m.d.comb += [
            Assert(~(theirs.valid & theirs.ready & mine.valid & mine.ready)),
            Assert(~(compressor.l1_response.ready & transfer.l1_response.ready)),
        ]

    def _answer_order(self, m, after_reset, copied):
        """A two-entry FIFO of the requests answered uncompressed (``{op, warp, reg}``); a
        transfer unit's L1 handshake must carry its head. Two entries, so that a unit that
        answered past a waiting L1 request fails here and not by overflow."""
        transfer = self.dut.parts["transfer"]
        response, job = transfer.response, transfer.answering
        to_l1 = (response.valid & response.ready & ~response.payload.compressed
                 & ((job.op != CompressorOp.INVALIDATE) | copied))
        l1_op = Signal(L1Op)
        m.d.comb += l1_op.eq(Mux(job.op == CompressorOp.PRELOAD, L1Op.READ,
                                 Mux(job.op == CompressorOp.EVICT, L1Op.WRITE,
                                     L1Op.INVALIDATE)))
        request = transfer.l1_request
        sent = request.valid & request.ready
        head, count = _fifo(m, "answered", Cat(l1_op, job.ref), push=to_l1, pop=sent, depth=2)
        with m.If(after_reset & sent):
            m.d.comb += [Assert(count > 0),
                         Assert(Cat(request.payload.op, request.payload.addr) == head)]

    def _fill_order(self, m, after_reset):
        """Fills in answer order, each L1 line to the oldest read: FIFOs of the answered
        preloads (``{value, from L1, line}``) and of the lines L1 gave the transfer unit."""
        transfer = self.dut.parts["transfer"]
        response, job = transfer.response, transfer.answering
        answered = (response.valid & response.ready
                    & (job.op == CompressorOp.PRELOAD))
        depth = self.dut.config.l1_reads_in_flight
        fill, line = transfer.fill, transfer.l1_response
        filled = fill.valid & fill.ready
        expected, _ = _fifo(m, "to_fill", Cat(response.payload.value,
                                              ~response.payload.compressed, job.line),
                            push=answered, pop=filled, depth=depth)
        width = len(response.payload.value.as_value())
        from_l1 = expected[width]
        returned, lines = _fifo(m, "returned", line.payload, push=line.valid & line.ready,
                                pop=filled & from_l1, depth=depth)
        with m.If(after_reset & filled):
            m.d.comb += [
                Assert(fill.payload.line.as_value() == expected[width + 1:]),
                Assert(fill.payload.data.as_value()
                       == Mux(from_l1, returned, expected[:width])),
                Assert(~from_l1 | (lines > 0)),
            ]

    def _ordering(self, m):
        osu = self.dut.parts["osu"]
        fetch, writeback = osu.fetch, osu.writeback
        m.d.comb += Assert(~(writeback.valid & writeback.ready & fetch.valid))
        same = ((fetch.payload.warp == writeback.payload.warp)
                & (fetch.payload.reg == writeback.payload.reg))
        m.d.comb += Assert(~(fetch.valid & fetch.ready & ~fetch.payload.invalidate
                             & writeback.valid & same))

    def _stages(self, m):
        compressor, transfer = self.dut.parts["compressor"], self.dut.parts["transfer"]
        busy = compressor.phase.as_value() != Phase.IDLE.value
        head, tail = transfer.head, transfer.tail
        in_l1 = transfer.in_phase(TransferPhase.L1)
        holding = ~transfer.in_phase(TransferPhase.IDLE)
        m.d.comb += [
            Assert(transfer.request.valid == transfer.ask_full),
            Assert(transfer.answer_full == busy),
            Assert((popcount(head) == 1) & (popcount(tail) == 1)),
            Assert(holding == _between(head, tail, (holding & head).any())),
            Assert((in_l1 & ~transfer.newest) == 0),
            Assert(~transfer.l1_request.valid | (in_l1 & transfer.newest).any()),
            Assert(~transfer.fill.valid
                   | (head & transfer.in_phase(TransferPhase.FILL)).any()),
        ]

    def _covers(self, m, after_reset, copied):
        dut = self.dut
        cm, osu = dut.parts["cm"], dut.parts["osu"]
        compressor, transfer = dut.parts["compressor"], dut.parts["transfer"]
        reads = dut.read
        bits = dut.config.osu.bank_bits

        def bank(port):
            return (port.payload.warp + port.payload.reg)[:bits]

        answered = transfer.response.valid & transfer.response.ready
        op = transfer.answering.op.as_value()
        asked = transfer.request.valid & transfer.request.ready
        l1_busy = (~transfer.in_phase(TransferPhase.IDLE)).any()
        waiting = transfer.in_phase(TransferPhase.L1_WAIT)
        compressed = answered & transfer.response.payload.compressed
        preload_hit = 0
        queue_full = 0
        for b in range(dut.config.banks):
            preload_hit = preload_hit | (cm.preload[b].valid & cm.preload[b].ready
                                         & ~cm.preload[b].payload.invalidate
                                         & osu.preloaded[b].valid)
            queue_full = queue_full | (cm.preload[b].valid & ~cm.preload[b].ready)
        invalidation = answered & (op == CompressorOp.INVALIDATE.value)
        events = [
            (invalidation & ~copied, "invalidation_skips_l1"),
            (invalidation & copied, "invalidation_to_l1"),
            (reads[0].valid & reads[1].valid & (bank(reads[0]) == bank(reads[1])),
             "read_bank_conflict"),
            (osu.writeback.valid & osu.writeback.ready, "eviction"),
            (compressed & (op == CompressorOp.EVICT.value), "compressed_eviction"),
            (preload_hit & ~osu.fill.valid, "preload_hit"),
            (osu.fetch.valid & osu.fetch.ready & ~osu.fetch.payload.invalidate,
             "preload_miss"),
            (compressed & (op == CompressorOp.PRELOAD.value), "compressed_preload"),
            (transfer.l1_response.valid & transfer.l1_response.ready, "l1_fill"),
            (queue_full, "full_preload_queue"),
            (compressor.l1_request.valid, "compressor_uses_l1"),
            (l1_busy & transfer.answer_full, "two_in_flight"),
            (l1_busy & transfer.answer_full & transfer.ask_full, "three_in_flight"),
            (answered & asked, "back_to_back"),
            (compressor.l1_request.valid & transfer.l1_request.valid, "both_offer_l1"),
            (popcount(waiting) >= 2, "two_reads_in_flight"),
            (transfer.response.valid & transfer.full & ~transfer.offering,
             "answer_refused_full"),
        ]
        self.covers(m, events, guard=after_reset)


def _between(head, tail, full):
    """The slots from one-hot ``head`` up to one-hot ``tail`` (excluded), going round the
    ring: none when they are equal, unless ``full`` (then all)."""
    width = len(head)
    up = (tail - head)[:width]
    around = ~(head - tail)[:width]
    return Mux(head == tail, Mux(full, (1 << width) - 1, 0),
               Mux(head < tail, up, around))


def _fifo(m, name, data, *, push, pop, depth):
    """A FIFO of ``depth`` entries of ``data`` (pushed while ``push``, the head dropped
    while ``pop`` and not empty), for the harness's bookkeeping; returns the head and the
    count, and asserts no overflow."""
    data = Value.cast(data)
    entries = [Signal(len(data), name=f"{name}_{k}") for k in range(depth)]
    count = Signal(range(depth + 2), name=f"{name}_count")
    popped = Signal(name=f"{name}_pop")
    m.d.comb += [popped.eq(pop & (count > 0)), Assert(count <= depth)]
    m.d.sync += count.eq(count + push - popped)
    with m.If(popped):
        m.d.sync += [entries[k].eq(entries[k + 1]) for k in range(depth - 1)]
    for k in range(depth):
        with m.If(push & ((count - popped) == k)):
            m.d.sync += entries[k].eq(data)
    return entries[0], count
