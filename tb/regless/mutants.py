"""Hand-made mutants of the RegLess blocks, each killed by its block's formal harness
(``tests/test_regless_*.py::test_formal_kills_mutant``)."""

from amaranth import Mux, Signal

from gpurf.hw.regless.banked_rf import BankedRf
from gpurf.hw.regless.layouts import CompressorOp, TransferPhase
from gpurf.hw.regless.osu import Osu
from gpurf.hw.regless.shard import Shard, Transfer

__all__ = ["ConflictIgnored", "WarpsAlias", "WritebacksFirst", "WritebacksFirstTransfer"]


class ConflictIgnored(Osu):
    """Every port of a kind that asks for a bank is granted it, not only the lowest: two
    requests to one bank in a cycle both transfer (their payloads ORed into the bank).
    Killed by "never two ports' requests to one bank in one cycle"."""

    def _route(self, m, name, selects, payloads):
        ports = getattr(self, name)
        grants = [[Signal(name=f"{name}{i}_grant_{b}") for b in range(self.config.banks)]
                  for i in range(len(ports))]
        for b, bank in enumerate(self.banks):
            target = getattr(bank, name)
            taken, payload = 0, 0
            for i, port in enumerate(ports):
                m.d.comb += grants[i][b].eq(port.valid & selects[i][b])
                taken = taken | grants[i][b]
                payload = payload | Mux(grants[i][b], payloads[i].as_value(), 0)
            m.d.comb += [target.valid.eq(taken), target.payload.eq(payload)]
        for i, port in enumerate(ports):
            ready = 0
            for b, bank in enumerate(self.banks):
                ready = ready | (grants[i][b] & getattr(bank, name).ready)
            m.d.comb += port.ready.eq(ready)
        return grants


class WarpsAlias(BankedRf):
    """The row leaves out the warp: register ``r`` of every warp shares one word (a write
    by one warp changes another's register). Killed by "a read answers the last value
    written"."""

    def _place(self, m, name, ref):
        select, _ = super()._place(m, name, ref)
        return select, ref.reg[self.config.bank_bits:]


class WritebacksFirstTransfer(Transfer):
    """The transfer unit takes a writeback even while a fetch is offered, and prefers it:
    the order that let an eviction overtake an invalidation (seed 2036195225,
    docs/regless.md)."""

    def _outputs(self, m):
        super()._outputs(m)
        m.d.comb += self.writeback.ready.eq(self._at(TransferPhase.IDLE))

    def _take(self, m):
        writeback, fetch = self.writeback, self.fetch
        with m.If(writeback.valid):
            m.d.sync += [self.op.eq(CompressorOp.EVICT),
                         self.ref.warp.eq(writeback.payload.warp),
                         self.ref.reg.eq(writeback.payload.reg),
                         self.line.eq(writeback.payload.line),
                         self.value.eq(writeback.payload.data),
                         self.phase.eq(TransferPhase.COMPRESSOR)]
        with m.Elif(fetch.valid):
            m.d.sync += [self.op.eq(Mux(fetch.payload.invalidate, CompressorOp.INVALIDATE,
                                        CompressorOp.PRELOAD)),
                         self.ref.warp.eq(fetch.payload.warp),
                         self.ref.reg.eq(fetch.payload.reg),
                         self.line.eq(fetch.payload.line),
                         self.value.eq(0),
                         self.phase.eq(TransferPhase.COMPRESSOR)]


class WritebacksFirst(Shard):
    """A shard with :class:`WritebacksFirstTransfer`. Killed by "no writeback taken while
    a fetch is offered"."""

    transfer_class = WritebacksFirstTransfer
