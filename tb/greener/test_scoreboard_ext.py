"""cocotb bench of ``greener.scoreboard_ext`` against its golden model.

The bench plays the issue stage (checks of candidates, reserves of issued instructions,
held until ``reserve.ready``) and the read-operand stage (releases through the power
controller's source set-state ports, some cycles after the issue, in any order, with
stray releases of registers that are not reserved). Registers come from a small pool per
warp so hazards are frequent; inputs that are not valid carry random in-range values.
"""

from gpurf.hw.greener.configs import ScoreboardExtConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Issue and read-operand sides of the scoreboard extension."""

    def __init__(self, params, rng, *, pool: int = 6):
        self.config = ScoreboardExtConfig(**params)
        self.rng = rng
        self.pool = min(pool, self.config.regs)
        self.offer: dict | None = None
        self.pending: list[tuple[int, int]] = []
        """Reserved ``(warp, reg)`` not yet released (as far as the bench knows)."""

    def random_operands(self, count: int, p_valid: float) -> tuple[int, list[int]]:
        mask = sum(1 << k for k in range(count) if self.rng.random() < p_valid)
        return mask, [self.rng.randrange(self.pool) for _ in range(count)]

    def candidate(self, warp: int | None = None, p_valid: float = 0.6) -> dict:
        config = self.config
        warp = self.rng.randrange(config.warps) if warp is None else warp
        src_valid, src = self.random_operands(config.sources, p_valid)
        dst_valid, dst = self.random_operands(config.dests, p_valid / 2)
        return {"valid": 1, "warp": warp, "src_valid": src_valid, "src": src,
                "dst_valid": dst_valid, "dst": dst}

    def idle_check(self) -> dict:
        config, rng = self.config, self.rng
        return {"valid": 0, "warp": rng.randrange(config.warps),
                "src_valid": rng.getrandbits(config.sources),
                "src": [rng.randrange(config.regs) for _ in range(config.sources)],
                "dst_valid": rng.getrandbits(config.dests),
                "dst": [rng.randrange(config.regs) for _ in range(config.dests)]}

    def issue(self, candidate: dict) -> None:
        """Offer ``candidate``'s sources on ``reserve``."""
        self.offer = {"warp": candidate["warp"], "valid": candidate["src_valid"],
                      "reg": list(candidate["src"])}

    def release_item(self, warp: int, reg: int) -> dict:
        return {"valid": 1, "warp": warp, "reg": reg}

    def random_release(self, p_stray: float = 0.1) -> dict:
        """A pending reservation (removed from ``pending``) or a stray register."""
        config, rng = self.config, self.rng
        if self.pending and rng.random() > p_stray:
            warp, reg = self.pending.pop(rng.randrange(len(self.pending)))
            return self.release_item(warp, reg)
        return self.release_item(rng.randrange(config.warps), rng.randrange(self.pool))

    def inputs(self, checks=(), releases=()) -> dict:
        config, rng = self.config, self.rng
        checks = list(checks) + [self.idle_check()
                                 for _ in range(config.check_ports - len(checks))]
        releases = list(releases) + [
            {"valid": 0, "warp": rng.randrange(config.warps), "reg": rng.randrange(config.regs)}
            for _ in range(config.release_ports - len(releases))]
        offer = self.offer or {"warp": rng.randrange(config.warps),
                               "valid": rng.getrandbits(config.sources),
                               "reg": [rng.randrange(config.regs)
                                       for _ in range(config.sources)]}
        ports = config.codecs
        return {
            "reserve__valid": int(self.offer is not None),
            "reserve__payload": ports["reserve__payload"].pack(offer),
            "check": ports["check"].pack(checks),
            "release": ports["release"].pack(releases),
        }

    def observe(self, outputs: dict) -> None:
        if self.offer is not None and outputs["reserve__ready"]:
            offer = self.offer
            self.pending.extend((offer["warp"], reg) for k, reg in enumerate(offer["reg"])
                                if (offer["valid"] >> k) & 1)
            self.offer = None


def step(driver: Driver, checks=(), releases=()):
    outputs = yield driver.inputs(checks, releases)
    driver.observe(outputs)
    return outputs


def random_streams(params, rng, cycles):
    """Candidates checked every cycle; one that passes (no hazard, not full) is issued
    with some probability, sometimes one is issued regardless (held until it fits);
    releases of pending reservations at a rate changing every 64 cycles."""
    driver = Driver(params, rng)
    config = driver.config
    hot = rng.sample(range(config.warps), min(3, config.warps))
    p_release, p_issue = 0.5, 0.7
    outputs = None
    for cycle in range(cycles):
        if cycle % 64 == 0:
            p_release = rng.choice([0.1, 0.3, 0.7])
            p_issue = rng.choice([0.3, 0.7, 1.0])
        checks = [driver.candidate(rng.choice(hot) if rng.random() < 0.7 else None,
                                   p_valid=rng.choice([0.3, 0.6, 1.0]))
                  if rng.random() < 0.8 else driver.idle_check()
                  for _ in range(config.check_ports)]
        releases = [driver.random_release() if rng.random() < p_release else
                    {"valid": 0, "warp": rng.randrange(config.warps),
                     "reg": rng.randrange(config.regs)}
                    for _ in range(config.release_ports)]
        outputs = yield from step(driver, checks, releases)
        if driver.offer is None and checks[0]["valid"] and rng.random() < p_issue:
            clear = not (outputs["hazard"] & 1) and not (outputs["full"] & 1)
            if clear or rng.random() < 0.1:
                driver.issue(checks[0])


def directed_fill_and_release(params, rng, cycles):
    """One warp: instructions reserve until every slot is taken (``full``, ``ready`` low
    while a reserve is held), then releases one register at a time, checking the warp's
    registers after each, including a release and a reserve of one register together."""
    driver = Driver(params, rng)
    config = driver.config
    warp = rng.randrange(config.warps)
    regs = list(range(min(config.regs, config.sources + 2)))
    for reg in regs[:config.sources]:
        candidate = {**driver.candidate(warp), "src_valid": 1, "src": [reg] * config.sources}
        yield from step(driver, [candidate])
        driver.issue(candidate)
        yield from step(driver, [candidate])
    extra = {**driver.candidate(warp), "src_valid": 1, "src": [regs[-1]] * config.sources}
    driver.issue(extra)
    for reg in regs[:config.sources]:
        probes = [{**driver.candidate(warp), "src_valid": 1, "src": [r] * config.sources,
                   "dst_valid": 0} for r in regs]
        for index in range(0, len(probes), config.check_ports):
            yield from step(driver, probes[index:index + config.check_ports])
        yield from step(driver, [], [driver.release_item(warp, reg)])
    while driver.offer is not None:
        yield from step(driver)
    for reg in regs:
        yield from step(driver, [{**driver.candidate(warp), "src_valid": 0, "dst_valid": 1,
                                  "dst": [reg] * config.dests}])
    yield from step(driver, [], [driver.release_item(warp, regs[-1])])
    yield from step(driver, [{**driver.candidate(warp), "src_valid": 0, "dst_valid": 1,
                              "dst": [regs[-1]] * config.dests}])


def directed_duplicates(params, rng, cycles):
    """A register named by several sources takes several slots and one release frees them
    all; the same release on every port at once; releases of another warp's register."""
    driver = Driver(params, rng)
    config = driver.config
    warp, other = rng.sample(range(config.warps), 2)
    full = (1 << config.sources) - 1
    reg = 3 % config.regs
    candidate = {**driver.candidate(warp), "src_valid": full, "src": [reg] * config.sources}
    driver.issue(candidate)
    yield from step(driver, [candidate])
    yield from step(driver, [candidate], [driver.release_item(other, reg)])
    yield from step(driver, [candidate])
    releases = [driver.release_item(warp, reg)] * config.release_ports
    yield from step(driver, [candidate], releases)
    yield from step(driver, [candidate])
    driver.issue(candidate)
    yield from step(driver, [candidate])
    yield from step(driver, [candidate], [driver.release_item(warp, reg)])
    yield from step(driver, [candidate])


STIMULI = (random_streams, directed_fill_and_release, directed_duplicates)


globals().update(cocotb_tests(STIMULI))
