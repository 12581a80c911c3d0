"""GReEneR: compiler-directed ON/SLEEP/OFF register power states with run-time correction.

Paper: ``shared/papers/greener-rf-leakage.md``; reading: ``shared/spec/greener.md``.
"""

from hw.registry import Block

from .correction_table import CorrectionTable
from .scoreboard_ext import ScoreboardExt

BLOCKS: tuple[Block, ...] = (
    Block("greener", "correction_table", CorrectionTable,
          test_params=({"warps": 3, "entries": 2, "entry_regs": 3, "regs": 6, "pc_bits": 4,
                        "query_ports": 3},
                       {"warps": 2, "entries": 1, "entry_regs": 1, "regs": 2, "pc_bits": 3,
                        "query_ports": 1}),
          summary="run-time correction: per-warp in-flight {PC, registers} keeping registers ON"),
    Block("greener", "scoreboard_ext", ScoreboardExt,
          test_params=({"warps": 3, "regs": 6, "sources": 2, "dests": 3, "check_ports": 2,
                        "release_ports": 2},
                       {"warps": 2, "regs": 2, "sources": 1, "dests": 1, "check_ports": 1,
                        "release_ports": 1}),
          summary="RAR/WAR source reservations until the new power state is applied"),
)
