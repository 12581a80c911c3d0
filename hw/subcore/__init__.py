"""Sub-core partitioning: operand collector, RBA scorer, warp selector, sub-core assigner.

Paper: ``shared/papers/subcore-partitioning-rba.md``; reading: ``shared/spec/subcore.md``.
"""

from gpurf.hw.registry import Block

from .operand_collector import OperandCollector
from .rba_scorer import RbaScorer
from .subcore_assigner import SubcoreAssigner
from .warp_selector import WarpSelector

BLOCKS = (
    Block("subcore", "warp_selector", WarpSelector,
          test_params=({"policy": "gto"}, {"slots": 5, "score_width": 3, "rba_greedy": True}),
          summary="comparator tree choosing the issuing warp slot (RBA or GTO)"),
    Block("subcore", "rba_scorer", RbaScorer,
          test_params=({"score_latency": 0},
                       {"slots": 3, "operands": 2, "banks": 3, "cus": 1, "score_width": 2,
                        "score_latency": 4}),
          summary="per-slot RBA scores from the bank queue lengths, stored or combinational"),
    Block("subcore", "operand_collector", OperandCollector,
          test_params=({"lanes": 2, "data_width": 8, "cus": 4, "banks": 4, "read_latency": 2},
                       {"lanes": 1, "data_width": 8, "cus": 3, "banks": 3, "read_latency": 3,
                        "bank_map": "modulo", "slots": 5, "reg_bits": 4},
                       {"lanes": 2, "data_width": 4, "cus": 1, "banks": 1, "operands": 2}),
          summary="issue register, collector units, per-bank read arbitration (writes first), "
                  "dispatch"),
    Block("subcore", "subcore_assigner", SubcoreAssigner,
          test_params=({"depth": 16}, {"subcores": 3}, {"subcores": 8, "depth": 8}),
          summary="round-robin or hashed-table sub-core choice for each new warp"),
)
