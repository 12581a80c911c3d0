"""Sub-core partitioning: operand collector, RBA scorer, warp selector, sub-core assigner.

Paper: ``shared/papers/subcore-partitioning-rba.md``; reading: ``shared/spec/subcore.md``.
"""

from hw.registry import Block

from .warp_selector import WarpSelector

BLOCKS = (
    Block("subcore", "warp_selector", WarpSelector,
          test_params=({"policy": "gto"}, {"slots": 5, "score_width": 3, "rba_greedy": True}),
          summary="comparator tree choosing the issuing warp slot (RBA or GTO)"),
)
