"""cocotb bench of ``subcore.rba_scorer`` against its golden model."""

from gpurf.hw.ports import codec
from gpurf.hw.subcore.configs import RbaScorerConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


def pack_slots(config, slots):
    """The ``slot`` port value of per-slot lists of ``(valid, bank)`` operands."""
    return config.codecs["slot"].pack(
        [[{"valid": v, "bank": b} for v, b in ops] for ops in slots])


def pack_queues(config, lengths):
    return config.codecs["queue_len"].pack(list(lengths))


def _hold(config):
    """Cycles to hold a directed case so its score reaches the output and stays a cycle."""
    return config.score_latency + 2


def _random_operands(config, rng):
    bank_ids = 1 << config.bank_bits
    return [(int(rng.random() < 0.75), rng.randrange(bank_ids)) for _ in range(config.operands)]


def _random_queues(config, rng):
    full = (1 << config.queue_bits) - 1
    return [rng.choice([0, 1, config.queue_max, full, rng.randrange(full + 1)])
            for _ in range(config.banks)]


def random_traffic(params, rng, cycles):
    """Instructions change now and then per slot; queue lengths change every cycle."""
    config = RbaScorerConfig(**params)
    pack_operands = codec(config.operands_layout).pack
    pack_slot, pack_queue = config.codecs["slot"].pack, config.codecs["queue_len"].pack

    def draw():
        return pack_operands([{"valid": v, "bank": b} for v, b in _random_operands(config, rng)])

    slots = [draw() for _ in range(config.slots)]
    for _ in range(cycles):
        slots = [draw() if rng.random() < 0.3 else ops for ops in slots]
        yield {"slot": pack_slot(slots), "queue_len": pack_queue(_random_queues(config, rng))}


def directed_paper_example(params, rng, cycles):
    """Two operands in bank 0, one in bank 1 score ``2*len(q0) + len(q1)`` (Section IV-A)."""
    config = RbaScorerConfig(**params)
    upper = min(1, config.banks - 1)
    example = [(1, 0), (1, 0), (1, upper)][:config.operands]
    example += [(0, 0)] * (config.operands - len(example))
    others = [[(1, (s + k) % config.banks) for k in range(config.operands)]
              for s in range(config.slots)]
    slots = [example, *others[1:]]
    full = (1 << config.queue_bits) - 1
    for q0, q1 in ((0, 0), (1, 0), (0, 1), (2, 3), (3, 2), (config.queue_max, 1), (full, full)):
        queues = [q0, q1, *[rng.randrange(full + 1) for _ in range(config.banks - 2)]]
        for _ in range(_hold(config)):
            yield {"slot": pack_slots(config, slots),
                   "queue_len": pack_queues(config, queues[:config.banks])}


def directed_saturation(params, rng, cycles):
    """Every operand in one bank: sums at, just below and above ``2**score_width - 1``."""
    config = RbaScorerConfig(**params)
    full = (1 << config.queue_bits) - 1
    for bank in range(config.banks):
        slots = [[(1, bank)] * config.operands for _ in range(config.slots)]
        for length in range(full + 1):
            queues = [length if b == bank else full - length for b in range(config.banks)]
            for _ in range(_hold(config)):
                yield {"slot": pack_slots(config, slots),
                       "queue_len": pack_queues(config, queues)}


def directed_impulse(params, rng, cycles):
    """A one-cycle burst of full queues between quiet cycles shows the exact latency."""
    config = RbaScorerConfig(**params)
    full = (1 << config.queue_bits) - 1
    slots = [[(1, k % config.banks) for k in range(config.operands)]
             for _ in range(config.slots)]
    packed = pack_slots(config, slots)
    for width in (1, 2):
        for _ in range(_hold(config)):
            yield {"slot": packed, "queue_len": 0}
        for _ in range(width):
            yield {"slot": packed, "queue_len": pack_queues(config, [full] * config.banks)}
    for _ in range(_hold(config)):
        yield {"slot": packed, "queue_len": 0}


STIMULI = (random_traffic, directed_paper_example, directed_saturation, directed_impulse)


globals().update(cocotb_tests(STIMULI))
