# amaranth: UnusedElaboratable=no
"""Rename tables: default widths, the paper's 36,288 storage bits, the pin-bit protocol and the
formal proof of their reference accounting."""

import pytest

from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import RenameTableConfig
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.wir.formal_rename_table import RenameTableFormal
from gpurf.tb.wir.mutants import RemapCounted


def golden(**params):
    return get_block("wir.rename_table").golden(params)


def test_default_widths():
    config = RenameTableConfig(**get_block("wir.rename_table").defaults)
    assert (config.warps, config.regs, config.pregs, config.sources) == (48, 63, 1024, 3)
    assert (config.warp_bits, config.reg_bits, config.preg_bits) == (6, 6, 10)
    assert config.entry_layout.size == 12
    assert config.storage_bits == 36288


def test_storage_is_the_papers_48_x_63_x_12_bits():
    """Paper VII-E: 48 tables x 63 entries x 12 bits = 36,288 bits, one unmapped memory
    (a row per warp); no per-entry flip-flops. The flip-flops are the clear state (flag +
    6-bit row), the exit sweep (flag, warp 6, register 6) and the rename answer's register
    (valid, 3 sources and the destination, 6 bits each)."""
    report = storage(get_block("wir.rename_table"))
    assert report.memories == 1
    assert report.memory_bits == 36288
    assert report.ff_bits == (1 + 6) + (1 + 6 + 6) + (1 + 4 * 6)


def _model_after_clear(**params):
    model = golden(**params)
    for _ in range(model.config.warps):
        out = _step(model)
        assert out["ready"] == 0
    return model


def _step(model, **ins):
    return model.step({"issue__valid": 0, "issue__payload": 0, "retire__valid": 0,
                       "retire__payload": 0, "exit__valid": 0, "exit__payload": 0, **ins})


def _retire(model, warp, reg, preg, divergent):
    payload = model.ports["retire__payload"].pack(
        {"warp": warp, "reg": reg, "preg": preg, "divergent": divergent})
    return _step(model, retire__valid=1, retire__payload=payload)


def test_golden_pin_rules_and_events():
    model = _model_after_clear(warps=2, regs=4, pregs=16)
    out = _retire(model, 1, 2, 5, 0)
    assert (out["ready"], out["ref_inc"], out["ref_dec"]) == (1, model.event(5), model.event())
    out = _retire(model, 1, 2, 6, 1)
    assert (out["ref_inc"], out["ref_dec"]) == (model.event(6), model.event(5))
    assert model.maps[1][2] == (6, 1)
    out = _retire(model, 1, 2, 6, 1)
    assert (out["ref_inc"], out["ref_dec"]) == (model.event(), model.event())
    with pytest.raises(ValueError, match=r"^warp 1 r2: divergent write to a pinned register "
                                         r"must keep p6, not p7$"):
        _retire(model, 1, 2, 7, 1)
    _retire(model, 1, 2, 6, 0)
    assert model.maps[1][2] == (6, 0)
    with pytest.raises(ValueError, match=r"^warp 1 r2: first divergent write needs a new "
                                         r"register, not the current p6$"):
        _retire(model, 1, 2, 6, 1)


def test_golden_exit_releases_one_mapping_a_cycle():
    model = _model_after_clear(warps=2, regs=3, pregs=16)
    _retire(model, 0, 0, 4, 0)
    _retire(model, 0, 2, 9, 0)
    out = _step(model, exit__valid=1, exit__payload=0)
    assert out["exit__ready"] == 1
    events = [_step(model) for _ in range(3)]
    assert [(e["issue__ready"], e["ref_dec"]) for e in events] == [
        (0, model.event(4)), (0, model.event()), (0, model.event(9))]
    assert _step(model)["issue__ready"] == 1 and model.maps[0] == {}


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [{}, {"warps": 3, "regs": 2, "pregs": 3}],
                         ids=["small", "w3-p3"])
def test_formal_reference_accounting(params):
    """k-induction, depth 6. ``small`` (``formal_rename_table.SMALL``): 2 warps x 2
    logical registers, 4 physical registers, 1 source; ``w3-p3``: 3 warps, 3 physical
    registers. Per register, increments minus decrements == valid entries mapping it
    (none leaks, none double-released); a retire's mapping is stored with pin =
    divergent; the clear window is exactly ``warps`` cycles with no events."""
    name = "rename_table_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(RenameTableFormal(**params), name=name, depth=6, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 6, on ``formal_rename_table.SMALL``: every event the harness
    claims (retire, release, sweep) is reached from reset under its assumptions."""
    result = prove(RenameTableFormal(), name="rename_table_cover", depth=6, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 6 (the base case of the ``small`` k-induction of
    :func:`test_formal_reference_accounting`), fails on ``mutants.RemapCounted`` (a remap to the
    same register counted as a new reference)."""
    result = prove(RenameTableFormal(block=RemapCounted), name="rename_table_mutant",
                   depth=6, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
