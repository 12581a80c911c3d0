"""GReEneR: compiler-directed ON/SLEEP/OFF register power states with run-time correction.

Paper: ``shared/papers/greener-rf-leakage.md``; reading: ``shared/spec/greener.md``.
"""

from gpurf.hw.registry import Block

from .correction_table import CorrectionTable
from .power_controller import PowerController
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
    Block("greener", "power_controller", PowerController,
          test_params=({"warps": 3, "regs": 5, "src_ports": 2, "dst_ports": 1,
                        "sleep_wakeup": 2, "off_wakeup": 4, "counter_width": 6},
                       {"warps": 2, "regs": 4, "src_ports": 1, "dst_ports": 2,
                        "policy": "sleep_reg", "counter_width": 4}),
          summary="ON/SLEEP/OFF state per warp register, wake-up timers, operands ready, "
                  "leakage accounting",
          synth_params={"warps": 2},
          icarus_defaults=False, amaranth_defaults=False),
)
