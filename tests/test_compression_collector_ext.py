# amaranth: UnusedElaboratable=no
"""``compression.collector_ext``: the paper's 35 bits per operand, the merge function and
the input protocol of the golden model."""

import pytest

from gpurf.golden.compression.collector_ext import merge_parts
from gpurf.hw.compression.configs import CollectorExtConfig
from gpurf.hw.registry import get_block
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.compression.formal_collector_ext import CollectorExtFormal
from gpurf.tb.compression.mutants import FirstPartCollects


def golden(**params):
    return get_block("compression.collector_ext").golden(params)


def test_default_widths():
    config = CollectorExtConfig(**get_block("compression.collector_ext").defaults)
    assert config == CollectorExtConfig(operands=3, lanes=32)
    assert config.field_bits == 35, "paper 3.2.4 / 6.4: 35 bits per operand"
    assert config.operand_bits == 2
    assert config.fetch_layout.size == 2 + 1024
    assert config.data_layout.size == 3 * 1024


def test_merge_parts():
    entry = {"r0": 1, "m0": 0b1000_0000, "r1": 2, "m1": 0b0100_1100}
    assert merge_parts([[0x000A]], entry, signed=True) == [0x000A]
    assert merge_parts([[0x000A], [0xDCB0]], entry, signed=False) == [0xDCBA]
    assert merge_parts([[0x000A], [0xDCB0]], entry, signed=True) == [0xFFFF_DCBA]
    assert merge_parts([[0x000A], [0x7CB0]], entry, signed=True) == [0x7CBA]


def _step(model, **inputs):
    full = {"allocate": 0, "instr": 0, "locate_valid": 0, "locate": 0, "fetch_valid": 0,
            "fetch": 0, **inputs}
    return model.step(full)


def test_golden_protocol():
    model = golden(operands=2, lanes=1)
    ports = model.config.codecs
    fetch = ports["fetch"].pack({"operand": 1, "data": [5]})
    _step(model, allocate=1)
    with pytest.raises(ValueError, match=r"^fetch of operand 1 before its location$"):
        _step(model, fetch_valid=1, fetch=fetch)
    entry = {"r0": 1, "m0": 1, "r1": 0, "m1": 0}
    locate = ports["locate"].pack([entry, entry])
    _step(model, locate_valid=0b10, locate=locate)
    assert _step(model, fetch_valid=1, fetch=fetch)["collected"] == 0
    assert _step(model)["collected"] == 0b10
    with pytest.raises(ValueError, match=r"^fetch of operand 1: all its parts were received$"):
        _step(model, fetch_valid=1, fetch=fetch)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_collected_when_all_parts_arrived():
    """BMC, depth 20 (k-induction does not close: the part counters are local to the
    block), on ``formal_collector_ext.SMALL``: 2 operands, 1 lane. Fields follow the last
    allocation and location; an operand is collected exactly when located with all its
    parts; data is zero until then, the part itself unsplit, the OR of both parts split
    and unsigned."""
    result = prove(CollectorExtFormal(), name="collector_ext_small", depth=20, mode="bmc")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 8, on ``formal_collector_ext.SMALL``: per operand an
    unsplit operand collected, a split unsigned one collected from two parts, a
    re-allocation while half collected."""
    result = prove(CollectorExtFormal(), name="collector_ext_cover", depth=8, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 8, on ``small``: fails on ``mutants.FirstPartCollects`` (a split operand
    collected after its first part)."""
    result = prove(CollectorExtFormal(block=FirstPartCollects), name="collector_ext_mutant",
                   depth=8, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
