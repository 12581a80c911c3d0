"""``subcore.rba_scorer``: the paper's example, saturation, the latency sweep, widths, proof."""

import random
from dataclasses import replace

import pytest
from amaranth.hdl import Fragment

from gpurf.golden.subcore.rba_scorer import RbaScorer as GoldenRbaScorer
from gpurf.golden.subcore.rba_scorer import rba_score
from gpurf.hw.subcore.configs import RbaScorerConfig
from gpurf.hw.subcore.rba_scorer import RbaScorer
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.harness import simulate_amaranth
from gpurf.tb.subcore.formal_rba_scorer import RbaScorerFormal
from gpurf.tb.subcore.mutants import InvalidOperandCounted
from gpurf.tb.subcore.test_rba_scorer import STIMULI, pack_queues, pack_slots

PAPER_OPERANDS = [(1, 0), (1, 0), (1, 1)]


@pytest.mark.parametrize(("q0", "q1"), [(0, 0), (1, 0), (0, 1), (3, 2), (6, 6)])
def test_paper_example(q0, q1):
    """Two operands in bank 0 and one in bank 1 score ``2*len(q0) + len(q1)``."""
    assert rba_score(PAPER_OPERANDS, [q0, q1], score_max=31) == 2 * q0 + q1


def test_invalid_and_out_of_range_operands_add_nothing():
    assert rba_score([(0, 0), (1, 2), (1, 1)], [5, 4], score_max=31) == 4


def test_saturates_instead_of_wrapping():
    assert rba_score([(1, 0)] * 3, [7, 0], score_max=15) == 15
    assert rba_score([(1, 0)] * 3, [5, 0], score_max=15) == 15
    assert rba_score([(1, 0)] * 3, [5, 0], score_max=31) == 15


def _run_model(model, config, history, operands):
    slot = pack_slots(config, [operands] * config.slots)
    outputs = [model.step({"slot": slot, "queue_len": pack_queues(config, q)})
               for q in history]
    return [config.codecs["score"].unpack(out["score"])[0] for out in outputs]


@pytest.mark.parametrize("latency", [0, 1, 2, 7])
def test_golden_latency(latency):
    """Cycle ``t`` shows the score of the queue lengths of cycle ``t - L`` (0 before)."""
    model = GoldenRbaScorer(slots=2, score_latency=latency)
    config = model.config
    history = [[t % 7, (3 * t) % 7] for t in range(20)]
    scores = _run_model(model, config, history, PAPER_OPERANDS)
    for t, score in enumerate(scores):
        q0, q1 = history[t - latency] if t >= latency else (0, 0)
        assert int(score) == 2 * q0 + q1, f"cycle {t}"


@pytest.mark.parametrize("latency", [0, 1, 3])
def test_lazy_scores_equal_eager_ones(seed, latency):
    """``advance(..., lazy=True)`` (the SM timing model's call) gives every slot the score
    the eager ``advance`` gives, cycle by cycle, read in any order (seeded)."""
    rng = random.Random(seed)
    eager, lazy = (GoldenRbaScorer(slots=6, banks=3, score_latency=latency) for _ in range(2))
    for _ in range(40):
        slots = [[(rng.randrange(2), rng.randrange(4)) for _ in range(3)] for _ in range(6)]
        queues = [rng.randrange(7) for _ in range(3)]
        expected = eager.advance(slots, queues)
        scores = lazy.advance(slots, queues, lazy=True)
        order = rng.sample(range(6), 6)
        assert [scores[i] for i in order] == [expected[i] for i in order], f"seed {seed}"
        assert list(scores) == expected and len(scores) == 6


def test_golden_stored_score_uses_previous_operands():
    """With a stored score, an instruction change shows one cycle later."""
    model = GoldenRbaScorer(slots=1, score_latency=1)
    config = model.config
    first = model.step({"slot": pack_slots(config, [[(1, 0), (0, 0), (0, 0)]]),
                        "queue_len": pack_queues(config, [4, 1])})
    second = model.step({"slot": pack_slots(config, [[(1, 1), (0, 0), (0, 0)]]),
                         "queue_len": pack_queues(config, [4, 1])})
    third = model.step({"slot": pack_slots(config, [[(1, 1), (0, 0), (0, 0)]]),
                        "queue_len": pack_queues(config, [4, 1])})
    assert [first["score"], second["score"], third["score"]] == [0, 4, 1]


@pytest.mark.parametrize("latency", range(21))
def test_latency_sweep_amaranth(latency, seed):
    """RTL against the golden model for every ``score_latency`` 0..20 (small config)."""
    params = {"slots": 2, "operands": 3, "banks": 2, "cus": 2, "score_width": 4,
              "score_latency": latency}
    for stimulus in STIMULI:
        compared = simulate_amaranth(RbaScorer(**params), GoldenRbaScorer(**params), stimulus,
                                     params, seed, 120, label=f"L={latency}/{stimulus.__name__}")
        assert compared > 0


def test_flip_flops_are_the_papers_80_bits():
    config = RbaScorerConfig(slots=16, operands=3, banks=2, cus=2, score_width=5,
                             score_latency=1)
    assert (config.score_ff_bits, config.delay_ff_bits) == (80, 0)
    assert replace(config, score_latency=0).score_ff_bits == 0
    assert replace(config, score_latency=3).delay_ff_bits == 12


def test_default_widths():
    component = RbaScorer()
    Fragment.get(component, None)
    config = component.config
    assert (config.bank_bits, config.queue_bits, config.queue_max) == (1, 3, 6)
    assert len(component.slot.as_value()) == 16 * 3 * 2
    assert len(component.queue_len.as_value()) == 2 * 3
    assert len(component.score.as_value()) == 16 * 5


def test_random_golden_scores_match_the_formula(seed):
    rng = random.Random(seed)
    model = GoldenRbaScorer(slots=4, banks=3, score_width=3, score_latency=0)
    config = model.config
    for _ in range(200):
        slots = [[(rng.randrange(2), rng.randrange(4)) for _ in range(3)] for _ in range(4)]
        queues = [rng.randrange(8) for _ in range(3)]
        out = model.step({"slot": pack_slots(config, slots),
                          "queue_len": pack_queues(config, queues)})
        scores = config.codecs["score"].unpack(out["score"])
        for s, ops in enumerate(slots):
            want = min(7, sum(queues[b] for v, b in ops if v and b < 3))
            assert int(scores[s]) == want


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("latency", [0, 2, 5])
def test_formal_score_is_saturated_delayed_sum(latency):
    """k-induction (depth ``score_latency + 4``) on ``formal_rba_scorer.SMALL`` with the
    given ``score_latency``: every score is the saturated sum of the delayed queue lengths
    of the slot's valid operands."""
    result = prove(RbaScorerFormal(score_latency=latency), name=f"rba_scorer_small_L{latency}",
                   depth=latency + 4, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 4, on ``formal_rba_scorer.SMALL``: every event the harness
    claims (saturated score, distinct scores) is reached from reset under its assumptions."""
    result = prove(RbaScorerFormal(), name="rba_scorer_cover", depth=4, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 6 on ``formal_rba_scorer.SMALL`` (score latency 2): the base case of the
    latency-2 k-induction of :func:`test_formal_score_is_saturated_delayed_sum` fails on
    ``mutants.InvalidOperandCounted`` (invalid operands counted)."""
    result = prove(RbaScorerFormal(block=InvalidOperandCounted), name="rba_scorer_mutant",
                   depth=6, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
