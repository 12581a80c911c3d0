"""cocotb bench of ``wir.pipeline`` against its golden model.

The bench plays the rest of the SM: the execute stage (results from a small set of values,
so VSB hits and verify-reads happen, some random so hash collisions fail verification;
some divergent), the operand collector (``hold`` then, later, ``drop`` of in-flight source
references), the reuse buffer (a reuse hit retiring with a register the bench holds) and
the exit sweep (``unmap``). The golden model recounts every register's holders after every
cycle (``check_references``), so a leak or a double release stops the run. Directed
cases: a value retired twice (the second shares the first's register), a hash collision
(verify failure), a divergent result into a new pinned register then in place, and the
pool running low (no install, sweep eviction).
"""

from gpurf.hw.wir.configs import PipelineConfig
from gpurf.hw.wir.layouts import Outcome
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Builds the ports' payloads and keeps the in-flight source references it holds."""

    def __init__(self, params, rng):
        self.config = config = PipelineConfig(**params)
        self.rng = rng
        self.width = config.lanes * config.data_width
        self.values = [rng.getrandbits(self.width) for _ in range(4)]
        self.held: list[int] = []
        self.retired: list = []

    def reg(self) -> dict:
        config, rng = self.config, self.rng
        return {"warp": rng.randrange(config.warps), "reg": rng.randrange(config.regs)}

    def result(self, value=None, mask=None, reg=None) -> dict:
        config = self.config
        full = (1 << config.lanes) - 1
        lanes = [(value >> lane * config.data_width) & ((1 << config.data_width) - 1)
                 for lane in range(config.lanes)]
        payload = config.codecs["result__payload"].pack(
            {**(reg or self.reg()), "value": lanes, "mask": full if mask is None else mask})
        return {"result__valid": 1, "result__payload": payload}

    def random_result(self) -> dict:
        rng, config = self.rng, self.config
        value = (rng.getrandbits(self.width) if rng.random() < 0.25
                 else rng.choice(self.values))
        mask = None
        if rng.random() < 0.15:
            mask = rng.randrange(1 << config.lanes)
        return self.result(value, mask)

    def hold(self) -> dict:
        return {"hold__valid": 1,
                "hold__payload": self.config.codecs["hold__payload"].pack(self.reg())}

    def reuse(self, preg) -> dict:
        return {"reuse__valid": 1, "reuse__payload": self.config.codecs["reuse__payload"].pack(
            {**self.reg(), "preg": preg})}

    def unmap(self) -> dict:
        return {"unmap__valid": 1,
                "unmap__payload": self.config.codecs["unmap__payload"].pack(self.reg())}

    def observe(self, ins: dict, outputs: dict) -> dict:
        """Record ``held`` and ``retired``; the streams of ``ins`` not taken (to offer
        again)."""
        if outputs["held__valid"]:
            self.held.append(outputs["held__payload"])
        if outputs["retired__valid"]:
            retired = self.config.codecs["retired__payload"].unpack(outputs["retired__payload"])
            self.retired.append(retired._replace(outcome=Outcome(retired.outcome)))
        pending = {}
        for port in ("result", "reuse", "hold", "unmap"):
            if ins.get(f"{port}__valid") and not outputs[f"{port}__ready"]:
                pending.update({f"{port}__valid": 1,
                                f"{port}__payload": ins[f"{port}__payload"]})
        return pending


def random_stream(params, rng, cycles):
    """Results, holds, drops, reuse hits and unmaps at rates changing every 200 cycles;
    a stream offer is held until taken. The bench holds at most ``pregs / 2`` source
    references (more would starve the pool: results wait while every register is held)."""
    driver = Driver(params, rng)
    pending: dict = {}
    rates = (0.6, 0.3, 0.2)
    for cycle in range(cycles):
        if cycle % 200 == 0:
            rates = (rng.choice([0.2, 0.6, 1.0]), rng.choice([0.1, 0.4]), rng.choice([0.1, 0.5]))
            driver.values[rng.randrange(len(driver.values))] = rng.getrandbits(driver.width)
        ins = dict(pending)
        if "result__valid" not in ins and rng.random() < rates[0]:
            ins.update(driver.random_result())
        holds_room = len(driver.held) < driver.config.pregs // 2
        if "hold__valid" not in ins and holds_room and rng.random() < rates[1]:
            ins.update(driver.hold())
        if driver.held and rng.random() < rates[2]:
            preg = driver.held.pop(rng.randrange(len(driver.held)))
            if "reuse__valid" not in ins and rng.random() < 0.3:
                ins.update(driver.reuse(preg))
                pending_reuse = preg
            else:
                ins.update(drop__valid=1, drop__payload=preg)
                pending_reuse = None
        else:
            pending_reuse = None
        if "unmap__valid" not in ins and rng.random() < 0.05:
            ins.update(driver.unmap())
        outputs = yield ins
        pending = driver.observe(ins, outputs)
        if pending_reuse is not None and "reuse__valid" in pending:
            pending.pop("reuse__valid")
            pending.pop("reuse__payload")
            driver.held.append(pending_reuse)
    for _ in range(4):
        yield {}
    while driver.held:
        yield {"drop__valid": 1, "drop__payload": driver.held.pop()}


def _run(driver, ins, idle=0):
    """One cycle of ``ins`` (held until taken), then ``idle`` empty cycles."""
    while True:
        outputs = yield ins
        ins = driver.observe(ins, outputs)
        if not ins:
            break
    for _ in range(idle):
        outputs = yield {}
        driver.observe({}, outputs)


def directed_share_collide_diverge(params, rng, cycles):
    """A value retired twice (the second shares the first's register: ``SHARED``), the
    second unmapped (so the count stays below saturation at 2-bit counts), a different
    value with the same VSB hash if one exists (``VERIFY_FAILED``), a divergent
    result (``DUMMY_MOV``, pinned) and a second one in place (``PINNED``), then a reuse hit
    taking over a held register (``REUSED``)."""
    driver = Driver(params, rng)
    config = driver.config
    value = driver.values[0]
    full = (1 << config.lanes) - 1
    first, second = {"warp": 0, "reg": 0}, {"warp": 0, "reg": config.regs - 1}
    yield from _run(driver, driver.result(value, reg=first), idle=3)
    yield from _run(driver, driver.result(value, reg=second), idle=3)
    outcomes = [r.outcome for r in driver.retired]
    assert outcomes == [Outcome.ALLOCATED, Outcome.SHARED], driver.retired
    assert driver.retired[0].preg == driver.retired[1].preg
    unmap = config.codecs["unmap__payload"].pack(second)
    yield from _run(driver, {"unmap__valid": 1, "unmap__payload": unmap}, idle=3)
    colliding = _collision(config, value)
    if colliding is not None:
        yield from _run(driver, driver.result(colliding, reg=first), idle=3)
        assert driver.retired[-1].outcome == Outcome.VERIFY_FAILED, driver.retired
    mask = full >> 1 if config.lanes > 1 else 0
    yield from _run(driver, driver.result(value ^ full, mask, reg=first), idle=3)
    yield from _run(driver, driver.result(value, mask, reg=first), idle=3)
    assert [r.outcome for r in driver.retired[-2:]] == [Outcome.DUMMY_MOV, Outcome.PINNED]
    yield from _run(driver, {"hold__valid": 1, "hold__payload": config.codecs[
        "hold__payload"].pack(first)}, idle=1)
    preg = driver.held.pop()
    yield from _run(driver, {"reuse__valid": 1, "reuse__payload": config.codecs[
        "reuse__payload"].pack({**second, "preg": preg})}, idle=3)
    assert driver.retired[-1].outcome == Outcome.REUSED


def _collision(config, value):
    """A value other than ``value`` with the same H3 hash, or ``None``."""
    from gpurf.golden.wir.h3_hash import h3

    masks = config.alloc.hash.masks
    target = h3(value, masks)
    for other in range(1 << min(config.lanes * config.data_width, 16)):
        if other != value and h3(other, masks) == target:
            return other
    return None


def directed_low_register(params, rng, cycles):
    """Distinct values into every logical register until the pool runs low: results stop
    being installed (the entry they would write is evicted) and idle cycles sweep the VSB,
    so the registers it alone held return; then every mapping is unmapped and the pool
    refills."""
    driver = Driver(params, rng)
    config = driver.config
    for step in range(3 * config.pregs):
        reg = {"warp": step % config.warps, "reg": (step // config.warps) % config.regs}
        yield from _run(driver, driver.result(rng.getrandbits(driver.width), reg=reg))
    for _ in range(2 * config.entries + 4):
        outputs = yield {}
        driver.observe({}, outputs)
    for warp in range(config.warps):
        for reg in range(config.regs):
            payload = config.codecs["unmap__payload"].pack({"warp": warp, "reg": reg})
            yield from _run(driver, {"unmap__valid": 1, "unmap__payload": payload})
    for _ in range(2 * config.entries + 4):
        outputs = yield {}
        driver.observe({}, outputs)


STIMULI = (random_stream, directed_share_collide_diverge, directed_low_register)

globals().update(cocotb_tests(STIMULI))
