"""Golden model of ``subcore.rba_scorer``: the RBA score and its update latency."""

from collections import deque

from gpurf.golden.model import PortModel
from gpurf.hw.subcore.configs import RbaScorerConfig

__all__ = ["RbaScorer", "rba_score"]


def rba_score(operands, queue_len, *, score_max):
    """Sum of ``queue_len[bank]`` over the valid operands, saturated at ``score_max``.

    ``operands`` is a sequence of ``(valid, bank)`` pairs; a bank with no queue
    (``bank >= len(queue_len)``) adds nothing. Two operands in bank 0 and one in bank 1
    score ``2*queue_len[0] + queue_len[1]`` (paper, Section IV-A).
    """
    total = sum(queue_len[bank] for valid, bank in operands
                if valid and bank < len(queue_len))
    return min(total, score_max)


class RbaScorer(PortModel, config=RbaScorerConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's scores, then takes the edge.

    With ``score_latency = L >= 1`` the scores shown in cycle ``t`` are those of the
    previous cycle's operands (the instruction the warp PC table held when it stored the
    score) against the queue lengths of cycle ``t - L``, kept in a deque of the last
    ``L`` queue-length vectors (zeros after reset); ``L = 0`` scores this cycle's inputs.
    """

    def reset(self):
        config = self.config
        self._queues = deque([[0] * config.banks] * config.score_latency,
                             maxlen=config.score_latency)
        self._previous = None
        self._last = None
        self._score_max = config.score_max

    def _scores(self, slots, queue_len):
        """:func:`rba_score` of every slot (inlined: the SM timing model calls this every
        cycle of every sub-core)."""
        if slots is None:
            return [0] * self.config.slots
        score_max, banks = self._score_max, len(queue_len)
        scores = []
        for operands in slots:
            total = 0
            for valid, bank in operands:
                if valid and bank < banks:
                    total += queue_len[bank]
            scores.append(total if total < score_max else score_max)
        return scores

    def step(self, inputs):
        scores = self.advance(self.ports["slot"].unpack(inputs["slot"]),
                              self.ports["queue_len"].unpack(inputs["queue_len"]))
        return {"score": self.ports["score"].pack(scores)}

    def advance(self, slots, queue_len):
        """This cycle's scores for per-slot ``(valid, bank)`` operand lists ``slots`` (pairs or
        the ``slot`` port's structs) and bank queue lengths ``queue_len`` (plain lists), then
        the clock edge: the whole behaviour of :meth:`step` without packed ports."""
        if self.config.score_latency == 0:
            scores = self._scores(slots, queue_len)
        else:
            scores = self._scores(self._previous, self._queues[0])
            self._queues.append(queue_len)
            self._previous = slots
        self._last = scores
        return scores

    def line_trace(self):
        if self._last is None:
            return "rba_scorer: -"
        history = " ".join("/".join(map(str, q)) for q in self._queues)
        return f"rba_scorer: score={self._last} queues(t-L+1..t)=[{history}]"
