# amaranth: UnusedElaboratable=no
"""Parameter validation, widths and the paper's storage figure of ``greener.correction_table``."""

import pytest

from gpurf.golden.greener.correction_table import keep_on
from gpurf.hw.greener.correction_table import CorrectionTable, CorrectionTableConfig
from gpurf.hw.registry import get_block
from gpurf.synth.flow import storage

from .ranges import parameter_tests, range_ends_test

RANGES = {
    "warps": (2, 64),
    "entries": (1, 8),
    "entry_regs": (1, 8),
    "regs": (2, 256),
    "pc_bits": (2, 32),
    "query_ports": (1, 16),
}


def golden(**params):
    """The golden model with the block's defaults updated by ``params``."""
    return get_block("greener.correction_table").golden(params)


test_out_of_range, test_not_an_integer = parameter_tests(CorrectionTable, golden, RANGES)
test_range_ends_accepted = range_ends_test(
    CorrectionTableConfig, get_block("greener.correction_table").defaults, RANGES)


def test_default_widths():
    config = CorrectionTableConfig(**get_block("greener.correction_table").defaults)
    assert config == CorrectionTableConfig(warps=64, entries=4, entry_regs=4, regs=64,
                                           pc_bits=16, query_ports=8)
    assert (config.warp_width, config.reg_bits, config.empty_pc) == (6, 6, 0xFFFF)
    assert config.entry_layout.size == 16 + 4 * 6
    assert config.row_layout.size == 4 * 40
    assert config.insert_layout.size == 6 + 16 + 4 + 4 * 6
    assert config.remove_layout.size == 6 + 16
    assert config.query_layout.size == 1 + 6 + 16 + 6
    assert config.storage_bits == 10240


def test_storage_is_the_papers_1280_bytes():
    """Paper 5.6: W x w x (PC + r x log2 R) = 64 x 4 x (16 + 4 x 6) bits = 1,280 bytes, one
    unmapped memory; only the clear counter and its flag are flip-flops."""
    report = storage(get_block("greener.correction_table"))
    assert report.memory_bits == 10240 == 1280 * 8
    assert report.memories == 1
    assert report.ff_bits == 1 + 6


def test_keep_on_examples():
    in_flight = [(0x10, frozenset({1, 2})), (0x20, frozenset({3}))]
    assert keep_on(in_flight, 0x20, 1)
    assert not keep_on(in_flight, 0x10, 1)
    assert keep_on(in_flight, 0x30, 3)
    assert not keep_on(in_flight, 0x20, 3)
    assert not keep_on(in_flight, 0x30, 4)
    assert not keep_on([], 0, 0)


def test_golden_rejects_a_pc_with_other_registers():
    model = golden(warps=2, entries=2, entry_regs=2, regs=4, pc_bits=4, query_ports=1)
    config = model.config
    for _ in range(config.warps):
        model.step({"insert__valid": 0, "insert__payload": 0, "remove__valid": 0,
                    "remove__payload": 0, "query": 0})

    def insert(regs):
        payload = config.insert_layout.const(
            {"warp": 1, "pc": 5, "valid": 0b11, "reg": regs}).as_value().value
        return model.step({"insert__valid": 1, "insert__payload": payload, "remove__valid": 0,
                           "remove__payload": 0, "query": 0})

    insert([1, 2])
    insert([2, 1])
    with pytest.raises(ValueError, match=r"^warp 1 pc 0x5: inserted registers \[3\] differ "
                                         r"from an in-flight instance's \[1, 2\]$"):
        insert([3, 3])
