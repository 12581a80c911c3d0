# amaranth: UnusedElaboratable=no
"""The Section 6.4 report of ``gpurf cost compression``: the paper's arithmetic, and the
cheap synthesized figures (the full report synthesizes warp units and takes minutes)."""

from gpurf.hw.compression.configs import CollectorExtConfig
from gpurf.hw.compression.value_extractor import ThreadValueExtractor
from gpurf.sim.verilog import BUILD_ROOT
from gpurf.synth.compression import PAPER, SM_COUNTS
from gpurf.synth.costs import has_cost_report
from gpurf.synth.flow import synthesize_design


def test_report_is_registered():
    assert has_cost_report("compression")


def test_paper_arithmetic():
    """6.4: 16 warp extractors of 32 TVEs (~800 K), 6 x 32 converters (249,600), 3 x 32
    truncators (518,016), 2 tables (98,304), 16 CUs (108,384): about 1.8 M per SM."""
    per_sm = {key: PAPER[key] * count for key, count in SM_COUNTS.items()}
    assert per_sm["converter"] == 249_600
    assert per_sm["truncator"] == 518_016
    assert per_sm["table"] == 98_304
    assert per_sm["cu"] == 108_384
    assert 0.98 * PAPER["total"] < sum(per_sm.values()) < 1.02 * PAPER["total"]
    assert PAPER["cu"] == 1024 * 6 + CollectorExtConfig(operands=3, lanes=32).field_bits * 3 * 6


def test_tve_is_one_multiplexer_deep():
    """One TVE with its select lines as inputs: 8 x 9:1 AND-OR multiplexers and the pad
    mux, no storage; its longest path (the sign path) stays within 7 gate levels."""
    folder = BUILD_ROOT.resolve() / "reports" / "compression" / "test_tve"
    report = synthesize_design(ThreadValueExtractor(), name="tve", top="tve", folder=folder)
    assert report.memory_bits == 0 and report.ff_bits == 0
    assert report.logic_depth <= 7
    assert report.logic_transistors < 3 * PAPER["extractor"]
