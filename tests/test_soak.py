"""The soak (``gpurf soak``, :mod:`gpurf.sim.soak`): every stateful block's random stimulus,
recorded on its golden model and replayed on its RTL on Verilator.

The suite soaks every stateful block for :data:`CYCLES` cycles at its first test
configuration from the session's seed; the opt-in tier ``pytest -m soak`` soaks each for
10^6 cycles, as ``gpurf soak`` does by default (figures in docs/reliability.md). A golden
model broken on purpose must make the soak fail at the first cycle it differs, keeping that
segment's trace.
"""

import json

import pytest

from gpurf.golden.trace import Trace
from gpurf.hw.registry import get_block
from gpurf.sim import soak as soak_module
from gpurf.sim.cli import main
from gpurf.sim.soak import soak_block, soak_params, stateful_blocks
from gpurf.sim.toolchain import missing_simulator

CYCLES = 10_000
SOAK_CYCLES = 1_000_000
"""Cycles per block of the opt-in soak tier (``pytest -m soak``)."""
BROKEN_AT = 300
"""The cycle from which the broken model's first output is wrong."""

pytestmark = pytest.mark.skipif(missing_simulator("verilator") is not None,
                                reason=str(missing_simulator("verilator")))

STATEFUL = [b.qualname for b in stateful_blocks()]


def test_stateful_blocks_are_the_clocked_ones():
    assert "wir.reuse_buffer" in STATEFUL and "regless.shard" in STATEFUL
    assert "wir.h3_hash" not in STATEFUL
    assert "compression.value_extractor" not in STATEFUL


@pytest.mark.parametrize("name", STATEFUL)
def test_soak_is_clean(name, seed, tmp_path):
    block = get_block(name)
    result = soak_block(block, soak_params(block), cycles=CYCLES, seed=seed, folder=tmp_path)
    assert result.passed, result.failure.summary()
    assert result.cycles >= CYCLES, "a stimulus may add setup cycles, never drop any"
    assert not list(tmp_path.glob("*.trace")), "a clean segment's trace must be deleted"


@pytest.mark.soak
@pytest.mark.parametrize("name", STATEFUL)
def test_long_soak_is_clean(name, seed, tmp_path):
    block = get_block(name)
    result = soak_block(block, soak_params(block), cycles=SOAK_CYCLES, seed=seed,
                        folder=tmp_path)
    assert result.passed, result.failure.summary()
    assert result.cycles >= SOAK_CYCLES


def _break_first_output(model_class, monkeypatch):
    """Make ``model_class.step`` flip bit 0 of its first driven output from cycle
    :data:`BROKEN_AT` on."""
    step = model_class.step
    calls = {"n": 0}

    def broken(self, inputs):
        outputs = step(self, inputs)
        calls["n"] += 1
        if calls["n"] > BROKEN_AT:
            name = next(k for k, v in outputs.items() if v is not None)
            outputs = {**outputs, name: outputs[name] ^ 1}
        return outputs

    monkeypatch.setattr(model_class, "step", broken)


def test_a_broken_golden_model_fails_the_soak(monkeypatch, tmp_path, seed):
    block = get_block("wir.verify_cache")
    _break_first_output(type(block.golden(soak_params(block))), monkeypatch)
    result = soak_block(block, soak_params(block), cycles=2_000, seed=seed, folder=tmp_path)
    assert not result.passed
    assert result.failure.divergence.cycle == BROKEN_AT
    assert result.cycles == BROKEN_AT + 1
    (kept,) = tmp_path.glob("*.trace")
    assert Trace(kept).seed == seed


def test_long_soaks_run_in_segments_with_fresh_seeds(monkeypatch, tmp_path):
    monkeypatch.setattr(soak_module, "SEGMENT_CYCLES", 400)
    block = get_block("wir.verify_cache")
    result = soak_block(block, soak_params(block), cycles=1_000, seed=7, folder=tmp_path)
    assert result.passed and result.cycles >= 1_000
    assert result.seeds == (7, 8, 9)


def test_cli_soak_json(capsys, tmp_path):
    code = _run(["soak", "wir.verify_cache", "--cycles", "500", "--seed", "5", "--keep",
                 str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    assert code == 0
    (entry,) = json.loads(out)["blocks"]
    assert entry["block"] == "wir.verify_cache" and entry["cycles"] >= 500
    assert entry["seeds"] == [5] and entry["passed"]
    assert "rerun with --seed 5" in err


@pytest.mark.parametrize(("argv", "message"), [
    (["soak", "wir.nope"], "unknown block"),
    (["soak", "--cycles", "0"], "--cycles"),
    (["soak", "--config", "big"], "--config"),
])
def test_cli_soak_bad_input(capsys, argv, message):
    assert _run(argv) == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


def _run(argv) -> int:
    try:
        main(argv)
    except SystemExit as stop:
        return stop.code
    return 0
