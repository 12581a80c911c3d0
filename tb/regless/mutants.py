"""Hand-made mutants of the RegLess blocks, each killed by its block's formal harness
(``tests/test_regless_*.py::test_formal_kills_mutant``) or by a directed test against the
golden model (the transfer unit's L1 stage mutants, ``tests/test_regless_shard.py``)."""

from amaranth import Mux, Signal

from gpurf.hw.gates import lowest
from gpurf.hw.regless.banked_rf import BankedRf
from gpurf.hw.regless.compressor import Compressor
from gpurf.hw.regless.osu import Osu
from gpurf.hw.regless.shard import Shard, Transfer

__all__ = [
    "AllocatesNextLine",
    "AnswerOvertakes",
    "AnswerOvertakesTransfer",
    "ConflictIgnored",
    "CopyForgotten",
    "CopyForgottenTransfer",
    "FillsNewestTransfer",
    "FullTakesAnswer",
    "FullTakesAnswerTransfer",
    "InvalidatesAll",
    "InvalidatesAllTransfer",
    "TakesBeforeAnswer",
    "WaitsFromSlotZeroTransfer",
    "WarpsAlias",
    "WritebacksFirst",
    "WritebacksFirstTransfer",
]


class AllocatesNextLine(Compressor):
    """The compressor asks whether the *next* compressed line holds a compressed register
    when deciding to allocate a missing line without an L1 read (the OR over the wrong
    line's bits). Killed by the directed allocation tests (mismatch with the golden model)."""

    def _holder(self, line):
        return line + 1


class TakesBeforeAnswer(Compressor):
    """The compressor takes the next request as soon as it shows an answer, not when the
    answer is taken: the held request is replaced while its response still waits. Killed
    by "one request at a time"."""

    def _takes_next(self, idle, done):
        return idle | self.response.valid


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

    def _intake_order(self):
        return list(reversed(super()._intake_order()))


class WritebacksFirst(Shard):
    """A shard with :class:`WritebacksFirstTransfer`. Killed by "no writeback taken while
    a fetch is offered"."""

    transfer_class = WritebacksFirstTransfer


class AnswerOvertakesTransfer(Transfer):
    """The answer stage takes the compressor's response while the L1 stage still holds an
    earlier request, which the answered one replaces: L1 requests no longer leave in
    compressor-answer order (the earlier one is lost)."""

    def _answer_ready(self):
        return self.answer_full


class AnswerOvertakes(Shard):
    """A shard with :class:`AnswerOvertakesTransfer`. Killed by "L1 requests leave in
    compressor-answer order"."""

    transfer_class = AnswerOvertakesTransfer


class FullTakesAnswerTransfer(Transfer):
    """The answer stage takes the compressor's response while every slot of the L1 stage
    holds a request: the answered request overwrites the oldest (the tail is the head's
    slot)."""

    def _answer_ready(self):
        return self.answer_full & ~self.offering


class FullTakesAnswer(Shard):
    """A shard with :class:`FullTakesAnswerTransfer`. Killed by "fills in answer order"
    (the overwritten request never fills)."""

    transfer_class = FullTakesAnswerTransfer


class FillsNewestTransfer(Transfer):
    """A line from L1 goes to the highest-numbered waiting read (the newest while the ring
    has not wrapped), not the oldest: fills out of L1's order."""

    def _oldest_waiting(self, reads):
        return lowest(reads[::-1])[:len(reads)][::-1]


class WaitsFromSlotZeroTransfer(Transfer):
    """A line from L1 goes to the lowest-numbered waiting read, ignoring where the ring's
    head is: wrong once the ring wraps."""

    def _oldest_waiting(self, reads):
        return lowest(reads)


class InvalidatesAllTransfer(Transfer):
    """Every invalidation goes to L1, whether L1 holds a copy of the register or not (the
    shard before the ``l1_copy`` bit)."""

    @staticmethod
    def _invalidation_to_l1(copied):
        return 1


class InvalidatesAll(Shard):
    """A shard with :class:`InvalidatesAllTransfer`. Killed by "an invalidation goes to L1
    exactly when L1 holds a copy"."""

    transfer_class = InvalidatesAllTransfer


class CopyForgottenTransfer(Transfer):
    """No invalidation goes to L1, not even of a register L1 holds a copy of (a dead
    register's line stays in L1)."""

    @staticmethod
    def _invalidation_to_l1(copied):
        return 0


class CopyForgotten(Shard):
    """A shard with :class:`CopyForgottenTransfer`. Killed by "an invalidation goes to L1
    exactly when L1 holds a copy" (it needs an eviction written to L1, then the register's
    invalidation: deeper than the suite's BMC)."""

    transfer_class = CopyForgottenTransfer
