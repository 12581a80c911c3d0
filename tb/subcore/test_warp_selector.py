"""cocotb bench of ``subcore.warp_selector`` against its golden model."""

from gpurf.tb.harness import cocotb_tests

from .stimulus import Geometry, pack_slots, random_ages

__all__ = ["STIMULI"]


def _geometry(params):
    return Geometry.of_selector(params)


def random_slots(params, rng, cycles):
    """Random occupancy, readiness, scores and a greedy slot, a new draw every cycle."""
    geo = _geometry(params)
    for _ in range(cycles):
        ages = random_ages(rng, geo.slots)
        slots = [{"valid": rng.random() < 0.8, "ready": rng.random() < 0.5, "age": ages[i],
                  "score": rng.choice([0, 1, geo.score_max, rng.randrange(geo.score_max + 1)])}
                 for i in range(geo.slots)]
        yield {"slot": pack_slots(geo, slots), "greedy": rng.randrange(geo.slots),
               "greedy_valid": rng.random() < 0.7}


def directed_ties(params, rng, cycles):
    """Equal scores and equal keys: the older warp wins, then the lower slot index."""
    geo = _geometry(params)
    cases = [
        [{"valid": 1, "ready": 1, "age": geo.slots - 1 - i, "score": 3} for i in range(geo.slots)],
        [{"valid": 1, "ready": 1, "age": i, "score": 3} for i in range(geo.slots)],
        [{"valid": 1, "ready": 1, "age": 0, "score": 0} for _ in range(geo.slots)],
        [{"valid": 1, "ready": 0, "age": i, "score": 0} for i in range(geo.slots)],
        [{"valid": 0, "ready": 1, "age": i, "score": 0} for i in range(geo.slots)],
    ]
    for slots in cases:
        for greedy_valid in (0, 1):
            for greedy in (0, geo.slots - 1):
                yield {"slot": pack_slots(geo, slots), "greedy": greedy,
                       "greedy_valid": greedy_valid}


def directed_lowest_score(params, rng, cycles):
    """One slot at a time holds the unique minimum score; it must win under RBA."""
    geo = _geometry(params)
    for winner in range(geo.slots):
        slots = [{"valid": 1, "ready": 1, "age": i, "score": geo.score_max}
                 for i in range(geo.slots)]
        slots[winner]["score"] = 0
        yield {"slot": pack_slots(geo, slots), "greedy": (winner + 1) % geo.slots,
               "greedy_valid": 1}


STIMULI = (random_slots, directed_ties, directed_lowest_score)


globals().update(cocotb_tests(STIMULI))
