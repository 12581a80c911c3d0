"""A kernel's operand reads through the composed read path (sim/sm/compression_trace.py):
recorded from the golden SM with compression on, every collected operand equal to the
compressed file's read, the trace well formed and reproduced by the golden block, a wrong
register-file answer caught, and (opt-in tier ``soak``: a 32-lane Verilator build of about
40 s) the trace replayed clean on the RTL."""

import numpy as np
import pytest

from gpurf.golden.trace import Trace
from gpurf.hw.compression.formats import table3_format
from gpurf.hw.registry import get_block
from gpurf.sim.replay import replay
from gpurf.sim.sm import compression_trace
from gpurf.sim.sm.compression_trace import BLOCK, ReadPathRecording, record_read_path
from gpurf.sim.toolchain import missing_simulator

FP16 = table3_format(4)


@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    path = tmp_path_factory.mktemp("trace") / "narrow.trace"
    return record_read_path("narrow", "test", path, floats=FP16)


def test_a_kernels_reads_go_through_the_read_path(recorded):
    run, reads = recorded
    assert run.stats["timing"].values["reads"] == reads.reads > 1000
    assert 0 < reads.wide < reads.reads  # 64-bit halves recorded too
    assert reads.cycles >= reads.reads + reads.entries
    trace = Trace(reads.path)
    assert trace.check_block()[0].qualname == BLOCK
    assert trace.cycles == reads.cycles
    assert trace.header["source"]["kernel"] == "narrow"


def test_the_golden_block_reproduces_the_trace(recorded):
    _, reads = recorded
    trace = Trace(reads.path)
    block = get_block(BLOCK)
    model = block.golden(trace.params)
    results = 0
    for cycle, inputs, outputs in trace.rows():
        got = model.step(inputs)
        for name, want in outputs.items():
            assert want is None or got[name] == want, (cycle, name)
        results += outputs["result_valid"]
    assert results == reads.reads


class _WrongAnswer(ReadPathRecording):
    """A register file answering lane 3 with one bit flipped."""

    def _answer(self, out):
        if out["rf_valid"]:
            read = self.fetching[0]
            flipped = read.words[out["rf_reg"]].copy()
            flipped[3] ^= np.uint32(0xFFFFFFFF)
            read.words[out["rf_reg"]] = flipped
        return super()._answer(out)


def test_a_wrong_register_file_answer_is_caught(tmp_path, monkeypatch):
    monkeypatch.setattr(compression_trace, "ReadPathRecording", _WrongAnswer)
    with pytest.raises(AssertionError, match=r"read path: operand .* lane 3 "):
        record_read_path("vecadd", "test", tmp_path / "t.trace", floats=FP16)


class _LowEntryForBothHalves(ReadPathRecording):
    """The high word of a two-entry 64-bit register read through its low entry."""

    @staticmethod
    def _entry(half, words):
        return 0


def test_a_high_word_read_through_the_wrong_entry_is_caught(tmp_path, monkeypatch):
    monkeypatch.setattr(compression_trace, "ReadPathRecording", _LowEntryForBothHalves)
    with pytest.raises(AssertionError, match=r"read path: operand "):
        record_read_path("vecadd", "test", tmp_path / "t.trace", floats=FP16)


@pytest.mark.soak
def test_the_trace_replays_clean_on_verilator(recorded):
    reason = missing_simulator("verilator")
    if reason:
        pytest.skip(reason)
    _, reads = recorded
    result = replay(reads.path, sim="verilator")
    assert result.divergence is None, result.divergence
    assert result.cycles == reads.cycles
