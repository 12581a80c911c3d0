"""cocotb bench of ``wir.reuse_buffer`` against its golden model.

The bench plays the reuse stage (lookups), retire (fills of the entries it reserved, in any
order and after any delay), the register pool (saturation answers) and the low-register
mode signal. Instructions come from a small program so tags repeat; the index and tag of
every reservation are kept to fill it later.
"""

from gpurf.hw.ports import codec
from gpurf.hw.wir.configs import ReuseBufferConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Lookups, fills and side inputs of one reuse buffer."""

    def __init__(self, params, rng):
        self.config = config = ReuseBufferConfig(**params)
        self.rng = rng
        self.tags = codec(config.tag_layout)
        self.reserved: list[tuple[int, int]] = []
        """``(index, tag)`` of the reservations made and not yet filled."""

    def instruction(self, *, wide=False) -> dict:
        """A random instruction: opcode with its operand kinds, operands, tag fields."""
        config, rng = self.config, self.rng
        regs = rng.randrange(8)
        limit = 1 << (config.imm_bits if wide else min(config.imm_bits, config.preg_bits))
        operands = [rng.randrange(1 << config.preg_bits) if (regs >> k) & 1
                    else rng.choice([0, rng.randrange(limit)]) for k in range(3)]
        tbid = rng.choice([config.null_tbid, rng.randrange(config.blocks)])
        return {"op": rng.randrange(1 << (config.opcode_bits - 3)), "regs": regs,
                "operand": operands, "tbid": tbid,
                "barrier": rng.randrange(1 << config.barrier_bits)}

    def tag(self, ins: dict) -> int:
        config = self.config
        mask = (1 << config.preg_bits) - 1
        return self.tags.pack({
            "opcode": {"op": ins["op"], "regs": ins["regs"]},
            "operand": [value & mask for value in ins["operand"]],
            "tbid": ins["tbid"], "barrier": ins["barrier"],
        })

    def lookup(self, ins: dict, *, divergent=0, bypass=0) -> dict:
        payload = self.config.codecs["lookup__payload"].pack({
            "opcode": {"op": ins["op"], "regs": ins["regs"]}, "operand": ins["operand"],
            "tbid": ins["tbid"], "barrier": ins["barrier"], "divergent": divergent,
            "bypass": bypass,
        })
        return {"lookup__valid": 1, "lookup__payload": payload}

    def fill(self, index: int, tag: int, result: int) -> dict:
        payload = self.config.codecs["fill__payload"].pack(
            {"index": index, "tag": tag, "result": result})
        return {"fill__valid": 1, "fill__payload": payload}

    def random_result(self) -> int:
        return self.rng.randrange(1 << self.config.preg_bits)

    def observe(self, inputs: dict, outputs: dict, ins: dict | None) -> dict:
        """Remember a reservation the lookup of ``inputs`` made; return the response."""
        if not inputs.get("lookup__valid"):
            return {}
        response = self.config.codecs["response__payload"].unpack(
            outputs["response__payload"])._asdict()
        if response["reserved"]:
            self.reserved.append((response["index"], self.tag(ins)))
        return response


def cycle(driver: Driver, inputs: dict, ins: dict | None = None):
    """One cycle: yield ``inputs`` and return the lookup's response (``{}`` without one)."""
    outputs = yield inputs
    return driver.observe(inputs, outputs, ins)


def random_stream(params, rng, cycles):
    """Random lookups from a small program, fills of the reservations in random order and
    delay (and some stale or bogus fills), saturation answers, and phases of low-register
    mode; rates change every 64 cycles."""
    driver = Driver(params, rng)
    program = [driver.instruction(wide=rng.random() < 0.1) for _ in range(6)]
    p_lookup, p_fill, low = 0.7, 0.3, 0
    for now in range(cycles):
        if now % 64 == 0:
            p_lookup = rng.choice([0.3, 0.7, 1.0])
            p_fill = rng.choice([0.1, 0.3, 0.6])
            low = int(rng.random() < 0.25)
            if rng.random() < 0.3:
                program[rng.randrange(len(program))] = driver.instruction(
                    wide=rng.random() < 0.2)
        inputs, ins = {"low_reg": low, "result_saturated": int(rng.random() < 0.1),
                       "operand_saturated": int(rng.random() < 0.1)}, None
        if rng.random() < p_lookup:
            ins = rng.choice(program)
            inputs.update(driver.lookup(ins, divergent=int(rng.random() < 0.05),
                                        bypass=int(rng.random() < 0.05)))
        if driver.reserved and rng.random() < p_fill:
            index, tag = driver.reserved.pop(rng.randrange(len(driver.reserved)))
            inputs.update(driver.fill(index, tag, driver.random_result()))
        elif rng.random() < 0.03:
            inputs.update(driver.fill(rng.randrange(driver.config.entries),
                                      driver.tag(driver.instruction()), driver.random_result()))
        yield from cycle(driver, inputs, ins)


def directed_fig11(params, rng, cycles):
    """Paper Fig. 11: six warps issue the same ``add`` back to back. The first misses and
    reserves; the next ones hit the pending entry; a re-check while still pending is a
    pending hit again; the fill (three cycles later) makes every later lookup a hit, and
    a saturated result count turns one hit into a reserving miss."""
    driver = Driver(params, rng)
    config = driver.config
    add = {"op": 1, "regs": 0b011, "operand": [1, 2 % (1 << config.preg_bits), 0],
           "tbid": config.null_tbid, "barrier": 0}
    first = yield from cycle(driver, driver.lookup(add), add)
    assert first["reserved"], first
    for _ in range(3):
        response = yield from cycle(driver, driver.lookup(add), add)
        assert response["pending"], response
    index, tag = driver.reserved.pop()
    response = yield from cycle(driver, {**driver.lookup(add), **driver.fill(index, tag, 3)},
                                add)
    assert response["pending"], response
    for _ in range(2):
        response = yield from cycle(driver, driver.lookup(add), add)
        assert response["hit"] and response["result"] == 3, response
    yield from cycle(driver, {**driver.lookup(add), "result_saturated": 1}, add)
    yield from cycle(driver, driver.lookup(add), add)
    index, tag = driver.reserved.pop()
    yield from cycle(driver, driver.fill(index, tag, 2))
    yield from cycle(driver, driver.lookup(add), add)


def directed_bypass(params, rng, cycles):
    """Divergent and bypassed lookups and immediates too wide for the field neither look
    up nor reserve; an immediate that fits does; unused operands are immediates 0."""
    driver = Driver(params, rng)
    config = driver.config
    ins = {"op": 0, "regs": 0b001, "operand": [1, 0, 0], "tbid": config.null_tbid,
           "barrier": 0}
    yield from cycle(driver, driver.lookup(ins, divergent=1), ins)
    yield from cycle(driver, driver.lookup(ins, bypass=1), ins)
    if config.imm_bits > config.preg_bits:
        wide = {**ins, "operand": [1, 1 << config.preg_bits, 0]}
        yield from cycle(driver, driver.lookup(wide), wide)
        yield from cycle(driver, driver.lookup(wide), wide)
    imm = {**ins, "operand": [1, (1 << config.preg_bits) - 1, 0]}
    for _ in range(2):
        yield from cycle(driver, driver.lookup(imm), imm)
    index, tag = driver.reserved.pop()
    yield from cycle(driver, driver.fill(index, tag, 1))
    for flags in ({"divergent": 1}, {"bypass": 1}, {}):
        yield from cycle(driver, driver.lookup(imm, **flags), imm)


def directed_tags(params, rng, cycles):
    """Entries differing in one tag field only (opcode, operand kinds, each operand,
    thread-block id, barrier count): each misses, is filled, then hits alone; collisions
    on one index displace each other and release their references; a stale fill (its
    entry displaced) does nothing."""
    driver = Driver(params, rng)
    config = driver.config
    base = {"op": 1, "regs": 0b111, "operand": [1, 2, 3], "tbid": 0, "barrier": 1}
    variants = [base, {**base, "op": 0}, {**base, "regs": 0b101},
                {**base, "operand": [0, 2, 3]}, {**base, "operand": [1, 0, 3]},
                {**base, "operand": [1, 2, 0]}, {**base, "tbid": config.null_tbid},
                {**base, "barrier": 0}]
    for ins in variants:
        yield from cycle(driver, driver.lookup(ins), ins)
        if driver.reserved:
            index, tag = driver.reserved.pop()
            yield from cycle(driver, driver.fill(index, tag, driver.random_result()))
        for other in variants:
            yield from cycle(driver, driver.lookup(other), other)
            while driver.reserved:
                index, tag = driver.reserved.pop(0)
                yield from cycle(driver, driver.fill(index, tag, driver.random_result()))
    stale = []
    for ins in variants[:4]:
        yield from cycle(driver, driver.lookup(ins), ins)
        stale += driver.reserved
        driver.reserved.clear()
    for index, tag in stale:
        yield from cycle(driver, driver.fill(index, tag, driver.random_result()))
    for ins in variants[:4]:
        yield from cycle(driver, driver.lookup(ins), ins)


def directed_low_reg(params, rng, cycles):
    """Fill the buffer, then low-register mode: misses evict instead of reserving, hits
    still hit, idle cycles evict the pointer's entry (twice around the buffer), a fill of
    an entry evicted in the same cycle is dropped."""
    driver = Driver(params, rng)
    config = driver.config
    program = [driver.instruction() for _ in range(2 * config.entries)]
    for ins in program:
        yield from cycle(driver, driver.lookup(ins), ins)
    pending = list(driver.reserved)
    driver.reserved.clear()
    for index, tag in pending[::2]:
        yield from cycle(driver, driver.fill(index, tag, driver.random_result()))
    for ins in program:
        yield from cycle(driver, {**driver.lookup(ins), "low_reg": 1}, ins)
    for index, tag in pending[1::2]:
        yield from cycle(driver, {**driver.fill(index, tag, driver.random_result()),
                                  "low_reg": 1})
    for _ in range(2 * config.entries):
        yield from cycle(driver, {"low_reg": 1})
    for ins in program:
        yield from cycle(driver, driver.lookup(ins), ins)


STIMULI = (random_stream, directed_fig11, directed_bypass, directed_tags, directed_low_reg)

globals().update(cocotb_tests(STIMULI))
