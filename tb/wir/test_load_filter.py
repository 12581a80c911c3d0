"""cocotb bench of ``wir.load_filter`` against its golden model.

The bench plays a few thread blocks (slots with their warps), their stores, barrier
releases and relaunches, and queries of every kind from the reuse stage.
"""

from gpurf.hw.wir.configs import LoadFilterConfig
from gpurf.hw.wir.layouts import LoadKind
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    def __init__(self, params, rng):
        self.config = config = LoadFilterConfig(**params)
        self.rng = rng
        self.block_of = [rng.randrange(config.blocks) for _ in range(config.warps)]

    def warps_of(self, tb: int) -> int:
        return sum(1 << w for w, b in enumerate(self.block_of) if b == tb)

    def block_event(self, name: str, tb: int) -> dict:
        payload = self.config.codecs[f"{name}__payload"].pack(
            {"tb": tb, "warps": self.warps_of(tb)})
        return {f"{name}__valid": 1, f"{name}__payload": payload}

    def store(self, warp: int, shared: int, global_: int) -> dict:
        payload = self.config.codecs["store__payload"].pack(
            {"warp": warp, "shared": shared, "global_": global_})
        return {"store__valid": 1, "store__payload": payload}

    def query(self, warp: int, kind: int) -> dict:
        return {"query": self.config.codecs["query"].pack(
            {"warp": warp, "tb": self.block_of[warp], "kind": kind})}

    def random_query(self) -> dict:
        return self.query(self.rng.randrange(self.config.warps), self.rng.randrange(4))


def random_stream(params, rng, cycles):
    """Random stores, barrier releases (often enough to saturate the counters), launches
    and queries; a relaunch moves a warp to another block."""
    driver = Driver(params, rng)
    config = driver.config
    for _ in range(cycles):
        inputs = driver.random_query()
        if rng.random() < 0.2:
            inputs.update(driver.store(rng.randrange(config.warps), rng.randrange(2),
                                       rng.randrange(2)))
        if rng.random() < 0.15:
            inputs.update(driver.block_event("barrier", rng.randrange(config.blocks)))
        if rng.random() < 0.01:
            tb = rng.randrange(config.blocks)
            driver.block_of[rng.randrange(config.warps)] = tb
            inputs.update(driver.block_event("launch", tb))
        yield inputs


def directed_hazards(params, rng, cycles):
    """Paper Fig. 10 rules on one warp: a shared store stops its shared loads only, a global
    store its global loads only, a barrier clears both and moves the count, the count
    saturates and stops both kinds (read-only loads and arithmetic still reuse), a launch
    restarts it; a store and a barrier in one cycle leave the flag set."""
    driver = Driver(params, rng)
    config = driver.config
    warp = rng.randrange(config.warps)
    tb = driver.block_of[warp]
    kinds = [kind.value for kind in LoadKind]

    def probe(extra=None):
        for kind in kinds:
            yield {**driver.query(warp, kind), **(extra or {})}
            extra = None

    yield from probe()
    yield from probe(driver.store(warp, 1, 0))
    yield from probe(driver.store(warp, 0, 1))
    yield from probe(driver.block_event("barrier", tb))
    yield from probe({**driver.store(warp, 0, 1), **driver.block_event("barrier", tb)})
    for _ in range(config.saturated + 1):
        yield from probe(driver.block_event("barrier", tb))
    yield from probe({**driver.block_event("launch", tb), **driver.block_event("barrier", tb)})
    yield from probe()


STIMULI = (random_stream, directed_hazards)

globals().update(cocotb_tests(STIMULI))
