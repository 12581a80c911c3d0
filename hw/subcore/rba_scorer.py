"""RBA scoring logic of a sub-core scheduler (RBA paper, Section IV-A, Fig. 6 item 9)."""

from dataclasses import dataclass

from amaranth import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int, index_bits

from .layouts import queue_len_layout, rba_operands_layout, score_vector_layout

__all__ = ["RbaScorer", "RbaScorerConfig"]


@dataclass(frozen=True)
class RbaScorerConfig:
    """Validated parameters of the RBA scorer and the widths derived from them.

    Shared by :class:`RbaScorer` and its golden model, so both reject the same
    parameters with the same message and agree on every width. The defaults are the
    paper's values, as in :class:`RbaScorer`.
    """

    slots: int = 16
    operands: int = 3
    banks: int = 2
    cus: int = 2
    score_width: int = 5
    score_latency: int = 1

    def __post_init__(self):
        check_int("slots", self.slots, 1, 64)
        check_int("operands", self.operands, 1, 4)
        check_int("banks", self.banks, 1, 8)
        check_int("cus", self.cus, 1, 8)
        check_int("score_width", self.score_width, 1, 8)
        check_int("score_latency", self.score_latency, 0, 20)

    @property
    def bank_width(self) -> int:
        return index_bits(self.banks)

    @property
    def queue_max(self) -> int:
        """Longest possible bank queue: one request per operand port of every CU."""
        return self.cus * self.operands

    @property
    def queue_width(self) -> int:
        return self.queue_max.bit_length()

    @property
    def score_max(self) -> int:
        """The saturation value ``2**score_width - 1``."""
        return (1 << self.score_width) - 1

    @property
    def sum_width(self) -> int:
        """Width of the unsaturated sum: every operand reads a full-scale queue length."""
        return (self.operands * ((1 << self.queue_width) - 1)).bit_length()

    @property
    def saturates(self) -> bool:
        """The unsaturated sum can exceed ``score_max`` (else no saturation logic is built)."""
        return self.sum_width > self.score_width

    @property
    def delay_stages(self) -> int:
        """Register stages on the queue-length vector before the stored score register."""
        return max(0, self.score_latency - 1)

    @property
    def score_ff_bits(self) -> int:
        """Flip-flops of the stored scores (the paper's 16 x 5 = 80 bits); 0 if combinational."""
        return self.slots * self.score_width if self.score_latency else 0

    @property
    def delay_ff_bits(self) -> int:
        """Flip-flops of the queue-length delay line."""
        return self.delay_stages * self.banks * self.queue_width

    @property
    def operands_layout(self) -> data.ArrayLayout:
        return rba_operands_layout(operands=self.operands, bank_width=self.bank_width)

    @property
    def queue_layout(self) -> data.ArrayLayout:
        return queue_len_layout(banks=self.banks, width=self.queue_width)

    @property
    def score_layout(self) -> data.ArrayLayout:
        return score_vector_layout(slots=self.slots, score_width=self.score_width)


class RbaScorer(wiring.Component):
    """Score every warp slot's next instruction by the request queues its operands join.

    ``score = min(sum over valid operands of queue_len[operand.bank], 2**score_width - 1)``:
    e.g. two operands in bank 0 and one in bank 1 score ``2*queue_len[0] + queue_len[1]``.
    An operand whose bank id is ``>= banks`` (possible only when ``banks`` is not a power
    of two) adds 0. The sum saturates rather than wraps.

    Timing. ``score_latency = 0``: the scores are combinational from this cycle's operands
    and queue lengths (no stored scores). ``score_latency = L >= 1``: the scores are held
    in ``slots x score_width`` flip-flops (the warp PC table's score column, 80 bits by
    default), so in cycle ``t`` the ``score`` port shows the score of the operands of
    cycle ``t - 1`` (the instruction the table held when the score was written) against
    the queue lengths of cycle ``t - L``: the queue-length vector passes through ``L - 1``
    register stages before the scoring logic, whose result is stored on the clock edge.
    **Interpretation:** the paper says only that scores are stored in the warp PC table
    and that updates may be delayed 0-20 cycles; a slot whose instruction changes shows
    the previous instruction's score for one cycle, as a stored table does. After reset
    the stored scores and the delay line are 0.

    Parameters
    ----------
    slots : int
        Warp slots of the scheduler, 1..64 (default 16: 64 warps over 4 sub-cores).
    operands : int
        Source operands per instruction, 1..4 (default 3).
    banks : int
        Register-file banks of the sub-core, 1..8 (default 2).
    cus : int
        Collector units; with ``operands`` it bounds a queue length at ``cus * operands``
        and so sets the width of ``queue_len`` (1..8, default 2: 3-bit lengths up to 6).
    score_width : int
        Width of a stored score, 1..8 (default 5: 3 x 6 = 18 < 32).
    score_latency : int
        Cycles from a queue-length vector to the scores it produces, 0..20 (default 1).

    Attributes
    ----------
    slot : In(ArrayLayout(rba_operands_layout, slots))
        Per slot, per operand: ``valid`` and ``bank`` of the slot's next instruction.
    queue_len : In(queue_len_layout)
        Per bank: valid, not yet granted requests in its queue (operand collector).
    score : Out(score_vector_layout)
        Per slot: the RBA score the warp selector compares.
    """

    def __init__(self, *, slots=16, operands=3, banks=2, cus=2, score_width=5,
                 score_latency=1):
        self.config = config = RbaScorerConfig(
            slots=slots, operands=operands, banks=banks, cus=cus, score_width=score_width,
            score_latency=score_latency)
        super().__init__({
            "slot": In(data.ArrayLayout(config.operands_layout, slots)),
            "queue_len": In(config.queue_layout),
            "score": Out(config.score_layout),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        queues = self._delayed_queues(m)
        scores = [self._slot_score(m, index, queues) for index in range(config.slots)]
        domain = m.d.comb if config.score_latency == 0 else m.d.sync
        for index, score in enumerate(scores):
            domain += self.score[index].eq(score)
        return m

    def _delayed_queues(self, m):
        """The queue-length vector after ``score_latency - 1`` register stages."""
        queues = self.queue_len
        for stage in range(self.config.delay_stages):
            delayed = Signal(self.config.queue_layout, name=f"queue_len_d{stage + 1}")
            m.d.sync += delayed.eq(queues)
            queues = delayed
        return queues

    def _slot_score(self, m, index, queues):
        """The saturated score of one slot against ``queues``."""
        config = self.config
        picked = [self._operand_queue(m, index, k, queues) for k in range(config.operands)]
        total = picked[0]
        for operand, addend in enumerate(picked[1:], start=1):
            partial = Signal(config.sum_width, name=f"sum_{index}_{operand}")
            m.d.comb += partial.eq(total + addend)
            total = partial
        if not config.saturates:
            return total
        score = Signal(config.score_width, name=f"score_next_{index}")
        overflow = total[config.score_width:].any()
        m.d.comb += score.eq(Mux(overflow, config.score_max, total[:config.score_width]))
        return score

    def _operand_queue(self, m, index, operand, queues):
        """``queue_len[bank]`` of a valid operand, 0 for an invalid or out-of-range one.

        The result is ``sum_width`` wide so that every adder of the sum has equal-width
        operands (Verilator's WIDTHEXPAND lint flags narrower ones).
        """
        source = self.slot[index][operand]
        picked = Signal(self.config.sum_width, name=f"queue_{index}_{operand}")
        with m.If(source.valid), m.Switch(source.bank):
            for bank in range(self.config.banks):
                with m.Case(bank):
                    m.d.comb += picked.eq(queues[bank])
            with m.Default():
                m.d.comb += picked.eq(0)
        return picked
