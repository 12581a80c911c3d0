# amaranth: UnusedElaboratable=no
"""Parameter validation, widths and the bank mapping of ``subcore.operand_collector``."""

import pytest
from amaranth import ClockDomain, Module
from amaranth.sim import Simulator

from gpurf.golden.subcore.operand_collector import bank_of
from gpurf.hw.registry import get_block
from gpurf.hw.subcore.operand_collector import (
    CollectorUnit,
    OperandCollector,
    OperandCollectorConfig,
)

from .ranges import parameter_tests, range_ends_test

RANGES = {
    "cus": (1, 8),
    "banks": (1, 8),
    "operands": (1, 4),
    "lanes": (1, 32),
    "data_width": (1, 32),
    "slots": (2, 64),
    "reg_bits": (1, 8),
    "read_latency": (1, 4),
}



def golden(**params):
    """The golden model with the block's defaults updated by ``params``."""
    return get_block("subcore.operand_collector").golden(params)


test_out_of_range, test_not_an_integer = parameter_tests(OperandCollector, golden, RANGES)


@pytest.mark.parametrize("build", [OperandCollector, golden], ids=["hw", "golden"])
def test_bank_map_choices(build):
    with pytest.raises(ValueError, match=r"^bank_map must be one of swizzle, modulo, not 'xor'$"):
        build(bank_map="xor")
    with pytest.raises(TypeError, match=r"^bank_map must be one of swizzle, modulo, not 1$"):
        build(bank_map=1)


test_range_ends_accepted = range_ends_test(
    OperandCollectorConfig, get_block("subcore.operand_collector").defaults, RANGES)


def test_default_widths():
    config = OperandCollectorConfig(**get_block("subcore.operand_collector").defaults)
    assert config == OperandCollectorConfig(cus=2, banks=2, operands=3, lanes=32, data_width=32,
                                            slots=16, reg_bits=8, read_latency=1,
                                            bank_map="swizzle")
    assert (config.warp_width, config.requests, config.queue_width) == (4, 6, 3)
    assert config.register_layout.size == 1024
    assert config.issue_layout.size == 4 + 3 * 9
    assert config.dispatch_layout.size == 4 + 3 + 3 * 1024
    assert config.address_layout.size == 12
    assert config.queue_len_layout.size == 2 * 3


def test_bank_of_examples():
    assert bank_of(5, 3, banks=2, bank_map="swizzle") == 0
    assert bank_of(5, 3, banks=2, bank_map="modulo") == 1
    assert bank_of(7, 6, banks=3, bank_map="swizzle") == 1
    assert bank_of(255, 15, banks=8, bank_map="swizzle") == 6
    assert [bank_of(r, 1, banks=2, bank_map="swizzle") for r in range(4)] == [1, 0, 1, 0]
    assert [bank_of(r, w, banks=1, bank_map="swizzle") for r in range(3) for w in range(3)] \
        == [0] * 9


def test_bank_of_swizzle_spreads_warps():
    """The same register of consecutive warps rotates through all banks."""
    for banks in range(1, 9):
        assert sorted(bank_of(4, w, banks=banks, bank_map="swizzle")
                      for w in range(banks)) == list(range(banks))
        assert {bank_of(4, w, banks=banks, bank_map="modulo") for w in range(banks)} == {4 % banks}


@pytest.mark.parametrize(("banks", "bank_map"),
                         [(1, "swizzle"), (2, "swizzle"), (3, "swizzle"), (5, "modulo"),
                          (6, "swizzle"), (8, "modulo"), (7, "swizzle")])
def test_unit_bank_matches_bank_of(banks, bank_map):
    """The CU's one-hot bank register equals ``bank_of`` for every (warp, reg)."""
    config = OperandCollectorConfig(cus=1, banks=banks, operands=4, lanes=1, data_width=1,
                                    slots=6, reg_bits=4, read_latency=1, bank_map=bank_map)
    unit = CollectorUnit(config)
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.unit = unit
    async def bench(ctx):
        ctx.set(unit.allocate, 1)
        for warp in range(config.slots):
            for start in range(0, 1 << config.reg_bits, config.operands):
                regs = range(start, start + config.operands)
                ctx.set(unit.instr, config.issue_layout.const({
                    "warp": warp, "operand": [{"valid": 1, "reg": reg} for reg in regs]}))
                await ctx.tick()
                for index, reg in enumerate(regs):
                    expected = 1 << bank_of(reg, warp, banks=banks, bank_map=bank_map)
                    assert ctx.get(unit.bank[index]) == expected, (warp, reg)

    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
