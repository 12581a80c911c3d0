"""One RegLess shard (paper Section 5, Fig. 8): capacity manager, operand staging unit and
compressor of one warp scheduler, with the transfer unit between them and a port to L1."""

import functools

from amaranth import Module, Mux, Signal
from amaranth.lib import wiring

from gpurf.hw.gates import equals
from gpurf.hw.params import ConfiguredComponent

from .capacity_manager import CapacityManager
from .compressor import Compressor
from .configs import ShardConfig
from .layouts import CompressorOp, L1Op, TransferPhase
from .osu import Osu

__all__ = ["Shard", "Transfer"]


class Transfer(wiring.Component):
    """The shard's transfer unit: moves one OSU request at a time through the compressor
    and, when the compressor does not hold the value, L1 (paper 5.2.1, 5.3).

    - A dirty line on ``writeback`` goes to the compressor as an eviction; a value the
      compressor hands back (no pattern matched) is written to L1 as a full line.
    - A preload miss on ``fetch`` asks the compressor; a compressed register comes back
      decompressed, otherwise the line is read from L1; the value goes to the OSU on
      ``fill``.
    - An invalidation on ``fetch`` clears the compressor's bit and is posted to L1.

    Phases (:class:`TransferPhase`, one cycle at least each): ``IDLE`` takes a request,
    ``COMPRESSOR`` offers it to the compressor, ``ANSWER`` waits for its response, ``L1``
    offers the L1 request, ``L1_WAIT`` waits for the line, ``FILL`` offers it to the OSU.
    Every output is a function of the registered state, except that ``writeback`` waits
    while ``fetch`` offers. Fetches go first because an invalidation is acknowledged when it
    enters its bank's fetch register: the warp may then redefine the register, and that
    value's eviction must not reach the compressor and L1 before the invalidation, which
    would clear it. A fetch never waits for a writeback (its line is allocated before it is
    offered), so writebacks are only delayed; a dirty line's tag keeps matching until its
    writeback is taken, so a preload of the same register cannot overtake it.

    Parameters
    ----------
    config : ShardConfig
        The shard's configuration.
    """

    def __init__(self, config: ShardConfig):
        self.config = config
        osu = config.osu
        super().__init__(config.transfer_signature())
        self.phase = Signal(TransferPhase)
        self.op = Signal(CompressorOp)
        self.ref = Signal(osu.ref_layout)
        self.line = Signal(osu.line_layout)
        self.value = Signal(osu.value_layout)

    def elaborate(self, platform):
        m = Module()
        self._outputs(m)
        at = self._at
        with m.If(at(TransferPhase.IDLE)):
            self._take(m)
        with m.If(at(TransferPhase.COMPRESSOR) & self.request.ready):
            m.d.sync += self.phase.eq(TransferPhase.ANSWER)
        with m.If(at(TransferPhase.ANSWER)):
            self._answer(m)
        with m.If(at(TransferPhase.L1) & self.l1_request.ready):
            m.d.sync += self.phase.eq(Mux(self._op_is(CompressorOp.PRELOAD),
                                          TransferPhase.L1_WAIT, TransferPhase.IDLE))
        with m.If(at(TransferPhase.L1_WAIT) & self.l1_response.valid):
            m.d.sync += [self.value.eq(self.l1_response.payload),
                         self.phase.eq(TransferPhase.FILL)]
        with m.If(at(TransferPhase.FILL) & self.fill.ready):
            m.d.sync += self.phase.eq(TransferPhase.IDLE)
        return m

    def _at(self, phase: TransferPhase):
        return equals(self.phase.as_value(), phase.value)

    def _op_is(self, op: CompressorOp):
        return equals(self.op.as_value(), op.value)

    def _outputs(self, m):
        at, op_is = self._at, self._op_is
        l1_op = Mux(op_is(CompressorOp.PRELOAD), L1Op.READ,
                    Mux(op_is(CompressorOp.EVICT), L1Op.WRITE, L1Op.INVALIDATE))
        m.d.comb += [
            self.fetch.ready.eq(at(TransferPhase.IDLE)),
            self.writeback.ready.eq(at(TransferPhase.IDLE) & ~self.fetch.valid),
            self.request.valid.eq(at(TransferPhase.COMPRESSOR)),
            self.request.payload.op.eq(self.op),
            self.request.payload.warp.eq(self.ref.warp),
            self.request.payload.reg.eq(self.ref.reg),
            self.request.payload.value.eq(self.value),
            self.response.ready.eq(at(TransferPhase.ANSWER)),
            self.l1_request.valid.eq(at(TransferPhase.L1)),
            self.l1_request.payload.op.eq(l1_op),
            self.l1_request.payload.addr.eq(self.ref),
            self.l1_request.payload.data.eq(Mux(op_is(CompressorOp.EVICT), self.value, 0)),
            self.l1_response.ready.eq(at(TransferPhase.L1_WAIT)),
            self.fill.valid.eq(at(TransferPhase.FILL)),
            self.fill.payload.line.eq(self.line),
            self.fill.payload.data.eq(self.value),
        ]

    def _take(self, m):
        writeback, fetch = self.writeback, self.fetch
        with m.If(fetch.valid):
            m.d.sync += [self.op.eq(Mux(fetch.payload.invalidate, CompressorOp.INVALIDATE,
                                        CompressorOp.PRELOAD)),
                         self.ref.warp.eq(fetch.payload.warp),
                         self.ref.reg.eq(fetch.payload.reg),
                         self.line.eq(fetch.payload.line),
                         self.value.eq(0),
                         self.phase.eq(TransferPhase.COMPRESSOR)]
        with m.Elif(writeback.valid):
            m.d.sync += [self.op.eq(CompressorOp.EVICT),
                         self.ref.warp.eq(writeback.payload.warp),
                         self.ref.reg.eq(writeback.payload.reg),
                         self.line.eq(writeback.payload.line),
                         self.value.eq(writeback.payload.data),
                         self.phase.eq(TransferPhase.COMPRESSOR)]

    def _answer(self, m):
        response = self.response.payload
        with m.If(self.response.valid):
            with m.If(response.compressed & self._op_is(CompressorOp.PRELOAD)):
                m.d.sync += [self.value.eq(response.value),
                             self.phase.eq(TransferPhase.FILL)]
            with m.Elif(response.compressed):
                m.d.sync += self.phase.eq(TransferPhase.IDLE)
            with m.Else():
                m.d.sync += self.phase.eq(TransferPhase.L1)
                with m.If(self._op_is(CompressorOp.EVICT)):
                    m.d.sync += self.value.eq(response.value)


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
      shard_l1_request_layout`). The compressor and the transfer unit share the port: the
      transfer unit uses L1 only after the compressor has answered its request, and the
      compressor uses it only while serving one, so they never ask at once; a response goes
      to whichever of them waits for one. Reads are answered in order, writes and
      invalidations are posted. **Interpretation:** the paper's arbiter between the four
      shards of an SM is above this port.

    Latencies are the sum of the blocks' (see each block) plus one cycle for the transfer
    unit to take a request and one per phase.
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
                     cm.preloaded.eq(osu.preloaded)]
        wiring.connect(m, osu.fetch, transfer.fetch)
        wiring.connect(m, osu.writeback, transfer.writeback)
        wiring.connect(m, transfer.fill, osu.fill)
        wiring.connect(m, transfer.request, compressor.request)
        wiring.connect(m, compressor.response, transfer.response)
        self._l1(m, compressor, transfer)
        return m

    def _l1(self, m, compressor, transfer):
        """The compressor's and the transfer unit's L1 traffic on one port (never at once)."""
        ours, theirs = self.l1_request, compressor.l1_request
        with m.If(theirs.valid):
            m.d.comb += [ours.valid.eq(1),
                         ours.payload.op.eq(Mux(theirs.payload.write, L1Op.WRITE, L1Op.READ)),
                         ours.payload.compressed.eq(1),
                         ours.payload.addr.eq(theirs.payload.line),
                         ours.payload.data.eq(theirs.payload.data),
                         theirs.ready.eq(ours.ready)]
        with m.Else():
            m.d.comb += [ours.payload.eq(transfer.l1_request.payload),
                         ours.valid.eq(transfer.l1_request.valid),
                         transfer.l1_request.ready.eq(ours.ready)]
        response = self.l1_response
        for unit in (compressor, transfer):
            m.d.comb += [unit.l1_response.valid.eq(response.valid & unit.l1_response.ready),
                         unit.l1_response.payload.eq(response.payload)]
        m.d.comb += response.ready.eq(compressor.l1_response.ready | transfer.l1_response.ready)

