"""RegLess: operand staging units, capacity managers and the register compressor.

Paper: ``shared/papers/regless-micro17.md``; reading: ``shared/spec/regless.md``.
"""

from gpurf.hw.registry import Block

from .banked_rf import BankedRf
from .capacity_manager import CapacityManager
from .compressor import Compressor
from .osu import Osu
from .osu_bank import OsuBank
from .shard import Shard

BLOCKS: tuple[Block, ...] = (
    Block("regless", "capacity_manager", CapacityManager,
          test_params=({"warps": 3, "banks": 2, "lines": 4, "regs": 4, "max_entries": 4},
                       {"warps": 5, "banks": 4, "lines": 12, "regs": 6, "max_entries": 7}),
          summary="capacity manager: warp state machines, warp stack, per-bank free-line "
                  "counters and preload queues, drain with outstanding writes",
          amaranth_defaults=False),
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
                        "data_width": 3, "instructions": 1}),
          summary="operand staging unit: banks by (warp + reg) & (banks - 1), 2 instructions "
                  "per cycle (4 read, 2 reserve, 2 write, 4 release ports, lowest port first "
                  "per bank), merged fetch and writeback streams",
          amaranth_defaults=False),
    Block("regless", "banked_rf", BankedRf,
          test_params=({"entries": 16, "banks": 2, "warps": 2, "lanes": 2, "data_width": 4},
                       {"entries": 24, "banks": 4, "warps": 3, "lanes": 1, "data_width": 3}),
          summary="baseline banked register file of one shard (Fig. 11): banks by "
                  "(warp + reg) & (banks - 1), one read and one write per cycle"),
    Block("regless", "shard", Shard,
          test_params=({"lines": 32, "banks": 4, "warps": 16, "regs": 8, "lanes": 4,
                        "data_width": 8, "compressor_lines": 4, "max_entries": 16,
                        "l1_reads_in_flight": 2},
                       {"lines": 8, "banks": 2, "warps": 4, "regs": 8, "lanes": 4,
                        "data_width": 4, "compressor_lines": 2, "max_entries": 16,
                        "l1_reads_in_flight": 4}),
          summary="one RegLess shard: capacity manager + OSU + compressor + transfer unit, "
                  "L1 port",
          icarus_defaults=False, amaranth_defaults=False, lint_defaults=False),
)
