"""Formal harness of ``subcore.rba_scorer``: each score is the saturated sum of the delayed
queue lengths of the slot's valid operands."""

from amaranth import Mux, Signal
from amaranth.hdl import Assert

from gpurf.hw.subcore.rba_scorer import RbaScorer

from ..formal_base import FormalHarness

__all__ = ["RbaScorerFormal"]

SMALL = {"slots": 2, "operands": 2, "banks": 2, "cus": 1, "score_width": 2, "score_latency": 2}
"""A small configuration whose sums (up to 2 x 3) overflow the 2-bit score."""


class RbaScorerFormal(FormalHarness):
    """For any operands and queue lengths, in every cycle ``score[s]`` equals
    ``min(sum of queue_len(t - L)[bank] over the valid operands of slot s, 2**w - 1)``,
    with the operands of cycle ``t - 1`` when ``L >= 1`` (of cycle ``t`` when ``L = 0``).

    The reference keeps its own history registers (zero after reset, like the block) and
    computes the sum with comparisons and a plain adder, not the block's bank switch.
    """

    block = RbaScorer
    SMALL = SMALL
    RESET_FIRST = False

    def check(self, m):
        dut = self.dut
        config = dut.config
        self.free(m, dut.slot, dut.queue_len)
        queues, slots = dut.queue_len, dut.slot
        for stage in range(config.score_latency):
            older = Signal(config.queue_layout, name=f"ref_queue_{stage + 1}")
            m.d.sync += older.eq(queues)
            queues = older
        if config.score_latency:
            slots = Signal.like(dut.slot, name="ref_slot_prev")
            m.d.sync += slots.eq(dut.slot)
        for s in range(config.slots):
            m.d.comb += Assert(dut.score[s] == self._reference(slots[s], queues))
        # The events: a saturated score, and two slots with different non-zero scores.
        self.covers(m, [
            (dut.score[0] == config.score_max, "saturated"),
            ((dut.score[0] != 0) & (dut.score[1] != 0) & (dut.score[0] != dut.score[1]),
             "distinct_scores"),
        ])

    def _reference(self, operands, queues):
        config = self.dut.config
        total = 0
        for k in range(config.operands):
            for bank in range(config.banks):
                hit = operands[k].valid & (operands[k].bank == bank)
                total = total + Mux(hit, queues[bank], 0)
        return Mux(total > config.score_max, config.score_max, total)
