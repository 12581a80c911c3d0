"""RegLess: operand staging units, capacity managers and the register compressor.

Paper: ``shared/papers/regless-micro17.md``; reading: ``shared/spec/regless.md``.
"""

from hw.registry import Block

from .compressor import Compressor
from .osu import Osu
from .osu_bank import OsuBank

BLOCKS: tuple[Block, ...] = (
    Block("regless", "compressor", Compressor,
          test_params=({"lanes": 4, "data_width": 8, "warps": 2, "regs": 4, "lines": 2},
                       {"lanes": 8, "data_width": 4, "warps": 4, "regs": 8, "lines": 3}),
          summary="register compressor: 5 patterns, is-compressed bits, "
                  "16-line FIFO store of compressed lines, L1 port",
          icarus_defaults=False, amaranth_defaults=False),
    Block("regless", "osu_bank", OsuBank,
          test_params=({"lines": 4, "warps": 2, "regs": 4, "lanes": 2, "data_width": 4},
                       {"lines": 3, "warps": 3, "regs": 5, "lanes": 1, "data_width": 3}),
          summary="OSU bank: tags, data store, free/clean/dirty lists, read/reserve/write/"
                  "preload/fill/evict/erase with handshakes"),
    Block("regless", "osu", Osu,
          test_params=({"lines": 8, "banks": 2, "warps": 2, "regs": 4, "lanes": 2,
                        "data_width": 4},
                       {"lines": 12, "banks": 4, "warps": 3, "regs": 5, "lanes": 1,
                        "data_width": 3}),
          summary="operand staging unit: banks by (warp + reg) & (banks - 1), request "
                  "routing, merged fetch and writeback streams",
          amaranth_defaults=False),
)
