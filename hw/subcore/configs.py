"""Configurations of the sub-core blocks: parameters declared once, widths derived once, and
each block's port signature.

Components, golden models and benches import these (with :mod:`.layouts`), never each other:
a component is ``XConfig(**params).signature()`` plus its ``elaborate``; a golden model reads
its ports through :func:`gpurf.hw.ports.port_codecs` of the same signature.
"""

from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import BlockConfig, index_bits, param

from .layouts import queue_len_layout, rba_operands_layout, score_vector_layout

__all__ = ["RbaScorerConfig"]


class RbaScorerConfig(BlockConfig):
    """The RBA scorer's parameters (the paper's values as defaults) and derived widths."""

    slots: int = param(16, "Warp slots of the scheduler (16: 64 warps over 4 sub-cores).",
                       low=1, high=64)
    operands: int = param(3, "Source operands per instruction.", low=1, high=4)
    banks: int = param(2, "Register-file banks of the sub-core.", low=1, high=8)
    cus: int = param(2, "Collector units; with ``operands`` it bounds a queue length at "
                        "``cus * operands`` and so sets the width of ``queue_len`` (2: "
                        "3-bit lengths up to 6).", low=1, high=8)
    score_width: int = param(5, "Width of a stored score (5: 3 x 6 = 18 < 32).", low=1, high=8)
    score_latency: int = param(1, "Cycles from a queue-length vector to the scores it "
                                  "produces.", low=0, high=20)

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

    def signature(self) -> wiring.Signature:
        """``slot`` (per slot, per operand: ``valid``, ``bank``), ``queue_len`` (per bank),
        ``score`` (per slot)."""
        return wiring.Signature({
            "slot": In(data.ArrayLayout(self.operands_layout, self.slots)),
            "queue_len": In(self.queue_layout),
            "score": Out(self.score_layout),
        })
