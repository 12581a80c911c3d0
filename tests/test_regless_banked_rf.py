# amaranth: UnusedElaboratable=no
"""``regless.banked_rf``: parameters, the bank / row mapping, storage."""

import pytest

from gpurf.hw.registry import get_block
from gpurf.hw.regless.banked_rf import BankedRf
from gpurf.hw.regless.configs import BankedRfConfig
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import synthesize
from gpurf.tb.regless.formal_banked_rf import BankedRfFormal
from gpurf.tb.regless.mutants import WarpsAlias


def golden(**params):
    return get_block("regless.banked_rf").golden(params)


@pytest.mark.parametrize("build", [BankedRf, golden], ids=["hw", "golden"])
@pytest.mark.parametrize(("entries", "message"), [
    (500, r"^entries must be a multiple of warps \(16\), not 500$"),
    (64, r"^registers per warp \(entries / warps = 4\) must be a multiple of banks \(8\)$"),
], ids=["entries=500", "entries=64"])
def test_entries_fit_warps_and_banks(build, entries, message):
    with pytest.raises(ValueError, match=message):
        build(entries=entries)


def test_defaults():
    """2048 entries per SM over 4 shards; 32 registers per warp, 64 rows per bank."""
    config = BankedRf().config
    assert (config.entries, config.regs, config.rows, config.rows_per_warp) == (512, 32, 64, 4)
    assert config.codecs["read__payload"].width == 4 + 5
    assert config.codecs["write__payload"].width == 4 + 5 + 1024
    assert config.data_bits == 512 * 1024


@pytest.mark.parametrize("params", [
    {}, {"entries": 48, "banks": 8, "warps": 2}, {"entries": 24, "banks": 4, "warps": 3},
    {"entries": 64, "banks": 32, "warps": 2}, {"entries": 96, "banks": 2, "warps": 1},
], ids=str)
def test_mapping_is_a_bijection(params):
    """Bank ``(warp + reg) & (banks - 1)`` (the OSU's), row ``warp * (regs / banks) +
    reg // banks``: every register has its own (bank, row), every row of every bank used."""
    config = BankedRfConfig(**{**get_block("regless.banked_rf").defaults, **params})
    places = {(config.bank_of(w, r), config.row_of(w, r))
              for w in range(config.warps) for r in range(config.regs)}
    assert places == {(b, row) for b in range(config.banks) for row in range(config.rows)}
    assert config.bank_of(5, 4) == (9 & (config.banks - 1))


def test_golden_refuses_registers_outside_the_file():
    model = golden(entries=24, banks=4, warps=3, lanes=1, data_width=3)
    ref = model.ports["read__payload"].pack({"warp": 3, "reg": 0})
    with pytest.raises(ValueError, match=r"^register \(warp 3, reg 0\) is outside the "
                                         r"3 x 8 register file$"):
        model.step({"read__valid": 1, "read__payload": ref, "write__valid": 0,
                     "write__payload": 0})


def test_storage_small():
    """4 banks (memories) of 6 rows x 3 bits = 72 memory bits (entries x lanes x width);
    flip-flops: the response valid and the one-hot bank of the response (1 + 4)."""
    params = {"entries": 24, "banks": 4, "warps": 3, "lanes": 1, "data_width": 3}
    report = synthesize(get_block("regless.banked_rf"), params)
    assert report.memories["count"] == 4
    assert report.memory_bits == BankedRfConfig(**params).data_bits == 72
    assert report.ff_bits == 1 + 4


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_read_answers_last_write():
    """k-induction, depth 3, on ``formal_banked_rf.SMALL`` (16 entries, 2 warps, 2 banks):
    for a freely chosen register, a read answers next cycle the value last written before
    the read's cycle; ``read_resp`` valid exactly after a read, 0 while not valid."""
    result = prove(BankedRfFormal(), name="banked_rf_proof", depth=3, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """Cover, depth 6: a read and a write in one bank in one cycle, a read answering a
    value written earlier, a read in the cycle its register is written."""
    result = prove(BankedRfFormal(), name="banked_rf_cover", depth=6, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 6: fails on ``mutants.WarpsAlias`` (the row leaves out the warp)."""
    result = prove(BankedRfFormal(block=WarpsAlias), name="banked_rf_mutant", depth=6,
                   mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
