"""cocotb bench of ``subcore.warp_selector`` against its golden model."""

from gpurf.hw.subcore.configs import WarpSelectorConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


def _random_ages(rng, slots: int) -> list[int]:
    """Ages as the scheduler keeps them: a permutation of ranks, unique per slot."""
    ages = list(range(slots))
    rng.shuffle(ages)
    return ages


def random_slots(params, rng, cycles):
    """Random occupancy, readiness, scores and a greedy slot, a new draw every cycle."""
    config = WarpSelectorConfig(**params)
    pack, count = config.codecs["slot"].pack, config.slots
    score_max = (1 << config.score_width) - 1
    for _ in range(cycles):
        ages = _random_ages(rng, count)
        slots = [{"valid": int(rng.random() < 0.8), "ready": int(rng.random() < 0.5),
                  "age": ages[i],
                  "score": rng.choice([0, 1, score_max, rng.randrange(score_max + 1)])}
                 for i in range(count)]
        yield {"slot": pack(slots), "greedy": rng.randrange(count),
               "greedy_valid": int(rng.random() < 0.7)}


def directed_ties(params, rng, cycles):
    """Equal scores and equal keys: the older warp wins, then the lower slot index."""
    config = WarpSelectorConfig(**params)
    pack, count = config.codecs["slot"].pack, config.slots
    cases = [
        [{"valid": 1, "ready": 1, "age": count - 1 - i, "score": 3} for i in range(count)],
        [{"valid": 1, "ready": 1, "age": i, "score": 3} for i in range(count)],
        [{"valid": 1, "ready": 1, "age": 0, "score": 0} for _ in range(count)],
        [{"valid": 1, "ready": 0, "age": i, "score": 0} for i in range(count)],
        [{"valid": 0, "ready": 1, "age": i, "score": 0} for i in range(count)],
    ]
    for slots in cases:
        for greedy_valid in (0, 1):
            for greedy in (0, count - 1):
                yield {"slot": pack(slots), "greedy": greedy, "greedy_valid": greedy_valid}


def directed_lowest_score(params, rng, cycles):
    """One slot at a time holds the unique minimum score; it must win under RBA."""
    config = WarpSelectorConfig(**params)
    pack, count = config.codecs["slot"].pack, config.slots
    score_max = (1 << config.score_width) - 1
    for winner in range(count):
        slots = [{"valid": 1, "ready": 1, "age": i, "score": score_max} for i in range(count)]
        slots[winner]["score"] = 0
        yield {"slot": pack(slots), "greedy": (winner + 1) % count, "greedy_valid": 1}


STIMULI = (random_slots, directed_ties, directed_lowest_score)


globals().update(cocotb_tests(STIMULI))
