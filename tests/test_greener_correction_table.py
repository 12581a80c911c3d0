# amaranth: UnusedElaboratable=no
"""Widths, the paper's storage figure, the golden rules and the proof of
``greener.correction_table``."""

import pytest

from gpurf.golden.greener.correction_table import keep_on
from gpurf.hw.greener.configs import CorrectionTableConfig
from gpurf.hw.registry import get_block
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.greener.formal_correction_table import CorrectionTableFormal
from gpurf.tb.greener.mutants import SamePcKeepsOn


def golden(**params):
    """The golden model with the block's defaults updated by ``params``."""
    return get_block("greener.correction_table").golden(params)


def test_default_widths():
    config = CorrectionTableConfig(**get_block("greener.correction_table").defaults)
    assert config == CorrectionTableConfig(warps=64, entries=4, entry_regs=4, regs=64,
                                           pc_bits=16, query_ports=8)
    assert (config.warp_bits, config.reg_bits, config.empty_pc) == (6, 6, 0xFFFF)
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
        payload = config.codecs["insert__payload"].pack(
            {"warp": 1, "pc": 5, "valid": 0b11, "reg": regs})
        return model.step({"insert__valid": 1, "insert__payload": payload, "remove__valid": 0,
                           "remove__payload": 0, "query": 0})

    insert([1, 2])
    insert([2, 1])
    with pytest.raises(ValueError, match=r"^warp 1 pc 0x5: inserted registers \[3\] differ "
                                         r"from an in-flight instance's \[1, 2\]$"):
        insert([3, 3])


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [
    {},
    {"warps": 3, "entries": 3, "entry_regs": 2, "regs": 3, "pc_bits": 2},
], ids=["small", "w3-e3"])
def test_formal_keeps_on_exactly_for_other_in_flight_pcs(params):
    """k-induction, depth 8 (the base case covers reset, the clear window and a few
    cycles). ``small`` (``formal_correction_table.SMALL``): 2 warps x 2 entries x 2
    registers per entry, 4 registers, 2-bit PCs, 2 query ports; ``w3-e3``: 3 warps x 3
    entries x 2 registers per entry, 3 registers, 2-bit PCs. Every query answers keep_on
    iff another in-flight PC of the warp uses the register; inserted entries stay until
    removed; a full warp drops inserts; not ready for exactly ``warps`` cycles."""
    name = "correction_table_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(CorrectionTableFormal(**params), name=name, depth=8, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 8, on ``formal_correction_table.SMALL``: every event the
    harness claims (keep_on, full warp dropping an insert, removal) is reached from reset under
    its assumptions."""
    result = prove(CorrectionTableFormal(), name="correction_table_cover", depth=8, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 8 (the base case of the ``small`` k-induction of
    :func:`test_formal_keeps_on_exactly_for_other_in_flight_pcs`), fails on
    ``mutants.SamePcKeepsOn`` (the query's own PC keeps a register ON)."""
    result = prove(CorrectionTableFormal(block=SamePcKeepsOn), name="correction_table_mutant",
                   depth=8, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
