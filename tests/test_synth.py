"""The synthesis flow follows the reporting rules: memories unmapped and counted exactly,
flip-flops counted, transistors from ``stat -tech cmos``, depth from ``ltp``."""

import pytest

from gpurf.hw.registry import get_block
from gpurf.synth.flow import SRAM_TRANSISTORS_PER_BIT, synthesize, synthesize_design
from gpurf.synth.subcore import IssueStage


def test_issue_stage_banks_stay_memories(tmp_path):
    stage = IssueStage(policy="rba", lanes=2, data_width=8, rf_bytes=1024, slots=4,
                       reg_bits=4)
    config = stage.config
    report = synthesize_design(stage, name="issue_stage_small", top="issue_stage",
                               folder=tmp_path)
    assert report.memory_bits == config.banks * config.rows * 16
    assert report.cells_by_type.get("$mem_v2") == config.banks
    assert report.sram_transistors == SRAM_TRANSISTORS_PER_BIT * report.memory_bits
    assert report.transistors == report.logic_transistors + report.sram_transistors


def test_scorer_stores_the_papers_80_score_bits():
    """RBA paper: 16 entries x 5-bit score = 80 bits per sub-core (score_latency=1)."""
    report = synthesize(get_block("subcore.rba_scorer"))
    assert report.ff_bits == 80


def test_selector_is_combinational_and_deeper_with_more_slots():
    block = get_block("subcore.warp_selector")
    small, large = (synthesize(block, {"slots": n}) for n in (4, 64))
    assert small.ff_bits == large.ff_bits == 0
    assert 0 < small.logic_depth < large.logic_depth


@pytest.mark.parametrize("name", ["subcore.subcore_assigner"])
def test_every_report_field_is_positive_for_a_stateful_block(name):
    report = synthesize(get_block(name))
    assert report.cells > 0 and report.logic_transistors > 0
    assert report.ff_bits > 0 and report.logic_depth > 0
    assert report.memory_bits == 0
