"""cocotb bench of ``wir.rename_table`` against its golden model.

The bench keeps its own view of the mappings so that divergent retires follow the paper's
pin rules (a pinned register is rewritten in place, the first divergent write takes a new
register). Offers are held until taken (ready is low while clearing and during exits).
"""

from gpurf.hw.wir.configs import RenameTableConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Issue, retire and exit streams of the rename tables."""

    def __init__(self, params, rng):
        self.config = RenameTableConfig(**params)
        self.rng = rng
        self.maps: list[dict[int, tuple[int, int]]] = [{} for _ in range(self.config.warps)]
        self.issue_offer = self.retire_offer = self.exit_offer = None
        self.ready = False
        self.hot = rng.sample(range(self.config.warps), min(3, self.config.warps))

    def warp(self) -> int:
        rng = self.rng
        return rng.choice(self.hot) if rng.random() < 0.7 else rng.randrange(self.config.warps)

    def offer_issue(self, warp=None) -> None:
        config, rng = self.config, self.rng
        warp = self.warp() if warp is None else warp
        self.issue_offer = config.codecs["issue__payload"].pack({
            "warp": warp, "src": [rng.randrange(config.regs) for _ in range(config.sources)],
            "dst": rng.randrange(config.regs)})

    def offer_retire(self, warp=None, reg=None, divergent=None, preg=None) -> None:
        """A retire that follows the pin rules; ``preg`` only for a convergent retire."""
        config, rng = self.config, self.rng
        warp = self.warp() if warp is None else warp
        reg = rng.randrange(config.regs) if reg is None else reg
        divergent = int(rng.random() < 0.3) if divergent is None else divergent
        old = self.maps[warp].get(reg)
        if divergent and old is not None and old[1]:
            preg = old[0]
        elif preg is None or divergent:
            preg = rng.randrange(config.pregs)
            while divergent and old is not None and preg == old[0]:
                preg = rng.randrange(config.pregs)
        self.retire_offer = (warp, reg, preg, divergent)

    def inputs(self) -> dict:
        config, rng = self.config, self.rng
        retire = self.retire_offer
        return {
            "issue__valid": int(self.issue_offer is not None),
            "issue__payload": (self.issue_offer if self.issue_offer is not None
                               else rng.getrandbits(config.codecs["issue__payload"].width)),
            "retire__valid": int(retire is not None),
            "retire__payload": (config.codecs["retire__payload"].pack(dict(zip(
                ("warp", "reg", "preg", "divergent"), retire, strict=True)))
                if retire is not None else rng.getrandbits(config.codecs["retire__payload"].width)),
            "exit__valid": int(self.exit_offer is not None),
            "exit__payload": (self.exit_offer if self.exit_offer is not None
                              else rng.randrange(config.warps)),
        }

    def observe(self, outputs: dict) -> None:
        self.ready = bool(outputs["issue__ready"])
        if not self.ready:
            return
        self.issue_offer = None
        if self.retire_offer is not None:
            warp, reg, preg, divergent = self.retire_offer
            self.maps[warp][reg] = (preg, divergent)
            self.retire_offer = None
        if self.exit_offer is not None:
            self.maps[self.exit_offer] = {}
            self.exit_offer = None

    def idle(self) -> bool:
        return self.issue_offer is None and self.retire_offer is None and self.exit_offer is None


def step(driver):
    outputs = yield driver.inputs()
    driver.observe(outputs)


def settle(driver):
    """Cycles until every offer is taken."""
    yield from step(driver)
    while not driver.idle():
        yield from step(driver)


def random_streams(params, rng, cycles):
    """Random issues and retires (30% divergent) on a few hot warps, rare exits; offered
    from the first cycle, so the clear window holds them."""
    driver = Driver(params, rng)
    for _ in range(cycles):
        if driver.issue_offer is None and rng.random() < 0.6:
            driver.offer_issue()
        if driver.retire_offer is None and rng.random() < 0.6:
            driver.offer_retire()
        if driver.exit_offer is None and rng.random() < 0.01:
            driver.exit_offer = driver.warp()
        yield from step(driver)


def directed_pin_rules(params, rng, cycles):
    """Paper V-D on one register: convergent write, first divergent write (new register,
    pinned), divergent rewrite in place (no events), convergent redefinition (unpinned),
    a convergent rewrite of the same register (no events); each followed by an issue that
    reads it as source and destination; then the warp exits and reads back invalid."""
    driver = Driver(params, rng)
    config = driver.config
    warp, reg = rng.randrange(config.warps), rng.randrange(config.regs)
    p1 = rng.randrange(config.pregs)
    steps = [(0, p1), (1, None), (1, None), (0, p1), (0, p1)]
    yield from settle(driver)
    for divergent, preg in steps:
        driver.offer_retire(warp, reg, divergent, preg)
        yield from settle(driver)
        driver.issue_offer = config.codecs["issue__payload"].pack(
            {"warp": warp, "src": [reg] * config.sources, "dst": reg})
        yield from settle(driver)
    driver.exit_offer = warp
    yield from settle(driver)
    driver.issue_offer = config.codecs["issue__payload"].pack(
        {"warp": warp, "src": [reg] * config.sources, "dst": reg})
    yield from settle(driver)
    yield from step(driver)


def directed_full_warp(params, rng, cycles):
    """Map every register of two warps, read them all back, exit one warp (every mapping
    released, one a cycle) while the other keeps its mappings; retire and issue in the
    same cycle on the same register (the issue sees the old mapping)."""
    driver = Driver(params, rng)
    config = driver.config
    warps = rng.sample(range(config.warps), min(2, config.warps))
    yield from settle(driver)
    for warp in warps:
        for reg in range(config.regs):
            driver.offer_retire(warp, reg, 0, rng.randrange(config.pregs))
            yield from settle(driver)
    for warp in warps:
        for reg in range(config.regs):
            driver.issue_offer = config.codecs["issue__payload"].pack(
                {"warp": warp, "src": [reg, *rng.choices(range(config.regs),
                                                         k=config.sources - 1)],
                 "dst": reg})
            yield from settle(driver)
    driver.exit_offer = warps[0]
    driver.offer_issue(warps[-1])
    yield from settle(driver)
    driver.offer_retire(warps[-1], 0, 0, rng.randrange(config.pregs))
    driver.issue_offer = config.codecs["issue__payload"].pack(
        {"warp": warps[-1], "src": [0] * config.sources, "dst": 0})
    yield from settle(driver)
    for _ in range(3):
        driver.offer_issue(warps[0])
        yield from settle(driver)
    yield from step(driver)


STIMULI = (random_streams, directed_pin_rules, directed_full_warp)

globals().update(cocotb_tests(STIMULI))
