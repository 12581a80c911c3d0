"""cocotb bench of ``greener.correction_table`` against its golden model.

The bench plays decode (insert), writeback (remove) and the power controller's set-state
ports (queries). Each warp runs a small program: a few PCs, each with fixed registers (one
PC is one static instruction, so in-flight instances of a PC agree), which makes same-PC
instances (loops) frequent. Register fields outside the ``valid`` mask carry random bits.
Streams follow the ready/valid rule: an offer is held until taken.
"""

from gpurf.hw.greener.configs import CorrectionTableConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Decode, writeback and set-state queries of a correction table."""

    def __init__(self, params, rng, *, pcs: int = 6, pool: int = 8):
        self.config = config = CorrectionTableConfig(**params)
        self.rng = rng
        self.pool = min(pool, config.regs)
        self.programs = [{self.random_pc(): self.random_regs() for _ in range(pcs)}
                         for _ in range(config.warps)]
        self.in_flight: list[list[int]] = [[] for _ in range(config.warps)]
        self.insert_offer: dict | None = None
        self.remove_offer: dict | None = None
        self.ready = False

    def random_pc(self) -> int:
        return self.rng.randrange(self.config.empty_pc)

    def random_regs(self) -> tuple[int, list[int]]:
        """A ``valid`` mask (at least one bit) and the register of every field."""
        config = self.config
        mask = self.rng.randrange(1, 1 << config.entry_regs)
        return mask, [self.rng.randrange(self.pool) for _ in range(config.entry_regs)]

    def insert_payload(self, warp: int, pc: int, mask: int, regs: list[int]) -> int:
        config = self.config
        fields = [reg if (mask >> k) & 1 else self.rng.randrange(config.regs)
                  for k, reg in enumerate(regs)]
        return config.codecs["insert__payload"].pack(
            {"warp": warp, "pc": pc, "valid": mask, "reg": fields})

    def decode(self, warp: int, pc: int | None = None) -> None:
        """Offer an instruction of ``warp``'s program (``pc`` or a random one) on insert."""
        if pc is None:
            pc = self.rng.choice(list(self.programs[warp]))
        mask, regs = self.programs[warp][pc]
        self.insert_offer = {"warp": warp, "pc": pc,
                             "bits": self.insert_payload(warp, pc, mask, regs)}

    def writeback(self, warp: int, pc: int) -> None:
        self.remove_offer = {"warp": warp, "pc": pc,
                             "bits": self.config.codecs["remove__payload"].pack(
                                 {"warp": warp, "pc": pc})}

    def queries(self, items) -> int:
        """The packed ``query`` port; ``items`` per port: ``(warp, pc, reg)`` or ``None``."""
        config = self.config
        fields = [{"valid": 0, "warp": self.rng.randrange(config.warps),
                   "pc": self.rng.randrange(1 << config.pc_bits),
                   "reg": self.rng.randrange(config.regs)} if item is None else
                  {"valid": 1, "warp": item[0], "pc": item[1], "reg": item[2]}
                  for item in items]
        return config.codecs["query"].pack(fields)

    def random_query(self):
        """Mostly a register of an in-flight instruction of a busy warp."""
        config, rng = self.config, self.rng
        busy = [w for w in range(config.warps) if self.in_flight[w]]
        warp = rng.choice(busy) if busy and rng.random() < 0.8 else rng.randrange(config.warps)
        pcs = list(self.programs[warp])
        pc = rng.choice(self.in_flight[warp] or pcs) if rng.random() < 0.5 else rng.choice(pcs)
        if rng.random() < 0.1:
            pc = rng.randrange(1 << config.pc_bits)
        source = rng.choice(self.in_flight[warp] or pcs)
        mask, regs = self.programs[warp][source]
        used = [r for k, r in enumerate(regs) if (mask >> k) & 1]
        reg = rng.choice(used) if rng.random() < 0.7 else rng.randrange(self.pool)
        return warp, pc, reg

    def inputs(self, query_items) -> dict:
        config, rng = self.config, self.rng
        ins = {"insert__valid": int(self.insert_offer is not None),
               "remove__valid": int(self.remove_offer is not None),
               "query": self.queries(query_items)}
        ins["insert__payload"] = (self.insert_offer["bits"] if self.insert_offer
                                  else self.idle_insert())
        ins["remove__payload"] = (self.remove_offer["bits"] if self.remove_offer
                                  else config.codecs["remove__payload"].pack(
                                      {"warp": rng.randrange(config.warps),
                                       "pc": rng.randrange(1 << config.pc_bits)}))
        return ins

    def idle_insert(self) -> int:
        """Random bits on an idle insert payload, but warp 0: the table row the RTL reads at
        ``warp`` (also while ``valid`` is low) exists."""
        port = self.config.codecs["insert__payload"]
        return port.pack(port.unpack(self.rng.getrandbits(port.width))._replace(warp=0))

    def observe(self, outputs: dict) -> None:
        self.ready = bool(outputs["ready"])
        if self.insert_offer is not None and outputs["insert__ready"]:
            self.in_flight[self.insert_offer["warp"]].append(self.insert_offer["pc"])
            self.insert_offer = None
        if self.remove_offer is not None and outputs["remove__ready"]:
            self.remove_offer = None

    def idle(self) -> bool:
        return self.insert_offer is None and self.remove_offer is None


def step(driver: Driver, query_items=None):
    """One cycle with ``query_items`` (default: no query)."""
    items = query_items or [None] * driver.config.query_ports
    outputs = yield driver.inputs(items)
    driver.observe(outputs)


def settle(driver: Driver, query_items=None):
    """Cycles until both offers are taken (and the table is ready)."""
    yield from step(driver, query_items)
    while not (driver.idle() and driver.ready):
        yield from step(driver, query_items)


def probe(driver: Driver, warp: int, pc: int, regs):
    """Query ``regs`` of ``warp`` for ``pc``, ``query_ports`` registers a cycle."""
    ports = driver.config.query_ports
    regs = list(regs)
    for start in range(0, len(regs), ports):
        chunk = [(warp, pc, r) for r in regs[start:start + ports]]
        yield from step(driver, chunk + [None] * (ports - len(chunk)))


def retire(driver: Driver, warp: int, pc: int):
    """Write back one in-flight instance of ``pc``."""
    driver.in_flight[warp].remove(pc)
    driver.writeback(warp, pc)
    yield from settle(driver)


def random_streams(params, rng, cycles):
    """Random decodes, writebacks (any order) and queries, mostly on a few hot warps so their
    tables fill; rates change every 64 cycles. Starts inside the clear window."""
    driver = Driver(params, rng)
    config = driver.config
    hot = rng.sample(range(config.warps), min(3, config.warps))
    p_insert, p_remove, p_query = 0.5, 0.4, 0.5
    for cycle in range(cycles):
        if cycle % 64 == 0:
            p_insert = rng.choice([0.2, 0.5, 0.9])
            p_remove = rng.choice([0.2, 0.5, 0.9])
            p_query = rng.choice([0.2, 0.6, 1.0])
        if driver.insert_offer is None and rng.random() < p_insert:
            warp = rng.choice(hot) if rng.random() < 0.7 else rng.randrange(config.warps)
            driver.decode(warp)
        busy = [w for w in range(config.warps) if driver.in_flight[w]]
        if driver.remove_offer is None and busy and rng.random() < p_remove:
            warp = rng.choice(busy)
            pc = rng.choice(driver.in_flight[warp])
            driver.in_flight[warp].remove(pc)
            driver.writeback(warp, pc)
        elif driver.remove_offer is None and rng.random() < 0.02:
            warp = rng.randrange(config.warps)
            driver.writeback(warp, driver.random_pc())
        items = [driver.random_query() if rng.random() < p_query else None
                 for _ in range(config.query_ports)]
        yield from step(driver, items)


def directed_clear_window(params, rng, cycles):
    """Offers and queries from the first cycle after reset: ``ready`` and every
    ``keep_on`` stay low for ``warps`` cycles, the offers are taken afterwards."""
    driver = Driver(params, rng)
    config = driver.config
    warp = rng.randrange(config.warps)
    pcs = list(driver.programs[warp])
    driver.decode(warp, pcs[0])
    mask, regs = driver.programs[warp][pcs[0]]
    used = [r for k, r in enumerate(regs) if (mask >> k) & 1]
    items = [(warp, pcs[1], used[i % len(used)]) for i in range(config.query_ports)]
    yield from settle(driver, items)
    yield from step(driver, items)
    yield from retire(driver, warp, pcs[0])
    yield from step(driver, items)


def directed_full_table(params, rng, cycles):
    """A warp decodes ``entries + 2`` instructions with disjoint registers: the last two
    are not stored; after one writeback a new decode is stored again."""
    driver = Driver(params, rng)
    config = driver.config
    warp = rng.randrange(config.warps)
    count = config.entries + 2
    pcs = rng.sample(range(config.empty_pc), count + 2)
    driver.programs[warp] = {pc: (1, [i % config.regs] * config.entry_regs)
                             for i, pc in enumerate(pcs)}
    for pc in pcs[:count]:
        driver.decode(warp, pc)
        yield from settle(driver)
    other = pcs[-1]
    yield from probe(driver, warp, other, range(min(count, config.regs)))
    yield from retire(driver, warp, pcs[0])
    yield from probe(driver, warp, other, range(min(count, config.regs)))
    driver.decode(warp, pcs[count])
    yield from settle(driver)
    yield from probe(driver, warp, other, range(min(count + 1, config.regs)))
    for pc in list(driver.in_flight[warp]):
        yield from retire(driver, warp, pc)
    yield from probe(driver, warp, other, range(min(count + 1, config.regs)))


def directed_same_pc(params, rng, cycles):
    """A loop: the same PC decoded twice before its writeback. A query with that PC never
    keeps ON; one with another PC does until both instances are written back."""
    driver = Driver(params, rng)
    config = driver.config
    warp = rng.randrange(config.warps)
    loop, other = rng.sample(range(config.empty_pc), 2)
    driver.programs[warp][loop] = (1, [1 % config.regs] * config.entry_regs)
    regs = range(min(4, config.regs))
    yield from settle(driver)
    for _ in range(min(2, config.entries)):
        driver.decode(warp, loop)
        yield from settle(driver)
        yield from probe(driver, warp, loop, regs)
        yield from probe(driver, warp, other, regs)
    while driver.in_flight[warp]:
        yield from retire(driver, warp, loop)
        yield from probe(driver, warp, other, regs)
    driver.decode(warp, loop)
    yield from settle(driver)
    driver.in_flight[warp].remove(loop)
    driver.writeback(warp, loop)
    driver.decode(warp, loop)
    yield from settle(driver)
    yield from probe(driver, warp, other, regs)
    while driver.in_flight[warp]:
        yield from retire(driver, warp, loop)
    yield from probe(driver, warp, other, regs)


def directed_register_fields(params, rng, cycles):
    """Masks with gaps and single fields, an empty mask and the reserved all-ones PC (not
    stored); every register id of the pool is queried after each decode."""
    driver = Driver(params, rng)
    config = driver.config
    warp = rng.randrange(config.warps)
    full = (1 << config.entry_regs) - 1
    masks = [1, 1 << (config.entry_regs - 1), full & 0x55, full & 0xAA, full, 0]
    yield from settle(driver)
    for mask in masks:
        pc = driver.random_pc()
        regs = [rng.randrange(config.regs) for _ in range(config.entry_regs)]
        driver.programs[warp][pc] = (mask, regs)
        driver.decode(warp, pc)
        yield from settle(driver)
        yield from probe(driver, warp, (pc + 1) % config.empty_pc, range(min(16, config.regs)))
        yield from retire(driver, warp, pc)
    driver.programs[warp][config.empty_pc] = (full, [0] * config.entry_regs)
    driver.decode(warp, config.empty_pc)
    yield from settle(driver)
    yield from probe(driver, warp, 0, [0])
    driver.writeback(warp, config.empty_pc)
    yield from settle(driver)


STIMULI = (random_streams, directed_clear_window, directed_full_table, directed_same_pc,
           directed_register_fields)

globals().update(cocotb_tests(STIMULI))
