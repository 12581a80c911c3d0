"""cocotb bench of ``subcore.operand_collector`` against its golden model.

The bench stands in for the register-file banks: it remembers every grant it sees on
``read[b]`` and drives the register's data on ``read[b].data`` ``read_latency`` cycles
later (random values in every other cycle). A register's data is a function of
``(warp, reg)`` and a per-run salt, so data routed to the wrong operand or CU differs.
Issue payloads are random while ``issue.valid`` is low; ``write`` (the banks a writeback
uses) is random with a probability each stimulus sets (0 unless it says otherwise).
"""

from collections import deque

from gpurf.golden.subcore.operand_collector import bank_of
from gpurf.hw.subcore.configs import OperandCollectorConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]

_MASK64 = (1 << 64) - 1


class BankStub:
    """The register-file banks: data for each grant, ``read_latency`` cycles after it."""

    def __init__(self, config: OperandCollectorConfig, rng):
        self.config, self.rng = config, rng
        self.salt = rng.getrandbits(64)
        self.due: dict[tuple[int, int], tuple[int, int]] = {}
        self.cycle = 0
        banks = range(config.banks)
        self.data = [f"read__{b}__data" for b in banks]
        self.reads = [(f"read__{b}__valid", f"read__{b}__addr") for b in banks]

    def register_value(self, warp: int, reg: int) -> int:
        """The warp register ``reg`` of ``warp``: each lane a hash of (salt, warp, reg, lane)."""
        config = self.config
        lanes = []
        for lane in range(config.lanes):
            x = (self.salt ^ (warp << 40) ^ (reg << 20) ^ lane) & _MASK64
            x = (x * 0x9E3779B97F4A7C15) & _MASK64
            x ^= x >> 29
            lanes.append(x & ((1 << config.data_width) - 1))
        return config.codecs["read__0__data"].pack(lanes)

    def inputs(self) -> dict:
        width = self.config.codecs["read__0__data"].width
        out = {}
        for bank, name in enumerate(self.data):
            address = self.due.pop((self.cycle, bank), None)
            out[name] = (self.rng.getrandbits(width) if address is None
                         else self.register_value(*address))
        return out

    def observe(self, outputs: dict) -> None:
        unpack, due = self.config.codecs["read__0__addr"].unpack, self.cycle + \
            self.config.read_latency
        for bank, (valid, addr) in enumerate(self.reads):
            if outputs[valid]:
                address = unpack(outputs[addr])
                self.due[(due, bank)] = (address.warp, address.reg)
        self.cycle += 1


class Driver:
    """The scheduler side (issue stream), the execution side (dispatch ready) and the banks."""

    def __init__(self, params, rng):
        self.config = OperandCollectorConfig(**params)
        self.rng = rng
        self.banks = BankStub(self.config, rng)
        self.offered: int | None = None
        self.p_write = 0.0
        """Probability that a bank is written in a cycle."""

    def pack(self, warp: int, regs: dict[int, int]) -> int:
        """An issue payload: ``regs`` maps operand index to register id (others invalid)."""
        operands = [{"valid": int(i in regs), "reg": regs.get(i, 0)}
                    for i in range(self.config.operands)]
        return self.config.codecs["issue__payload"].pack({"warp": warp, "operand": operands})

    def offer(self, warp: int, regs: dict[int, int]) -> None:
        self.offered = self.pack(warp, regs)

    def inputs(self, ready: bool) -> dict:
        ins = self.banks.inputs()
        ins["dispatch__ready"] = int(ready)
        ins["write"] = sum(1 << b for b in range(self.config.banks)
                           if self.p_write and self.rng.random() < self.p_write)
        ins["issue__valid"] = int(self.offered is not None)
        ins["issue__payload"] = (self.rng.getrandbits(self.config.codecs["issue__payload"].width)
                                 if self.offered is None else self.offered)
        return ins

    def observe(self, outputs: dict) -> None:
        self.banks.observe(outputs)
        if self.offered is not None and outputs["issue__ready"]:
            self.offered = None

    def busy(self, outputs: dict) -> bool:
        reads = any(outputs[valid] for valid, _ in self.banks.reads)
        return bool(reads or outputs["dispatch__valid"] or not outputs["issue__ready"]
                    or outputs["queue_len"] or self.offered is not None)

    def random_regs(self, p_valid: float = 0.7) -> dict[int, int]:
        return {i: self.rng.randrange(1 << self.config.reg_bits)
                for i in range(self.config.operands) if self.rng.random() < p_valid}

    def regs_in_bank(self, warp: int, bank: int) -> list[int]:
        """Register ids of ``warp`` that live in ``bank`` (all ids if none does)."""
        config = self.config
        ids = range(1 << config.reg_bits)
        found = [r for r in ids
                 if bank_of(r, warp, banks=config.banks, bank_map=config.bank_map) == bank]
        return found or list(ids)


def _always(cycle):
    return True


def play(driver: Driver, program, ready=_always, limit: int = 400):
    """Issue ``program`` (instructions ``(warp, regs)``; ``None`` = one idle cycle) as fast
    as ``issue.ready`` allows, with ``dispatch.ready = ready(cycle)``, then run until the
    collector is idle."""
    items = deque(program)
    quiet, cycle = 0, 0
    while (items or driver.offered is not None
           or quiet < driver.config.read_latency + 3) and cycle < limit:
        if driver.offered is None and items:
            item = items.popleft()
            if item is not None:
                driver.offer(*item)
        outputs = yield driver.inputs(ready(cycle))
        driver.observe(outputs)
        quiet = 0 if driver.busy(outputs) else quiet + 1
        cycle += 1


def random_streams(params, rng, cycles):
    """Random instructions and gaps; dispatch back-pressure changing every 64 cycles."""
    driver = Driver(params, rng)
    config = driver.config
    p_ready, p_issue = 1.0, 0.8
    for cycle in range(cycles):
        if cycle % 64 == 0:
            p_ready = rng.choice([0.1, 0.5, 0.9, 1.0])
            p_issue = rng.choice([0.3, 0.8, 1.0])
            driver.p_write = rng.choice([0.0, 0.2, 0.5])
        if driver.offered is None and rng.random() < p_issue:
            driver.offer(rng.randrange(config.slots), driver.random_regs(rng.random()))
        outputs = yield driver.inputs(rng.random() < p_ready)
        driver.observe(outputs)


def directed_one_bank(params, rng, cycles):
    """Every operand of an instruction in one bank: one grant per cycle, in operand order."""
    driver = Driver(params, rng)
    config = driver.config
    for bank in range(config.banks):
        warp = rng.randrange(config.slots)
        regs = driver.regs_in_bank(warp, bank)
        program = [(warp, {i: rng.choice(regs) for i in range(config.operands)})]
        yield from play(driver, program)


def directed_spread(params, rng, cycles):
    """Operand ``i`` in bank ``i % banks``: the grants of one instruction overlap."""
    driver = Driver(params, rng)
    config = driver.config
    for _ in range(3):
        warp = rng.randrange(config.slots)
        regs = {i: rng.choice(driver.regs_in_bank(warp, i % config.banks))
                for i in range(config.operands)}
        yield from play(driver, [(warp, regs)])
    program = []
    for _ in range(2 * config.cus):
        warp = rng.randrange(config.slots)
        program.append((warp, {i: rng.choice(driver.regs_in_bank(warp, i % config.banks))
                               for i in range(config.operands)}))
    yield from play(driver, program)


def _bank0(driver, rng, warp, operands):
    return {i: rng.choice(driver.regs_in_bank(warp, 0)) for i in range(operands)}


def directed_compete(params, rng, cycles):
    """CUs competing for bank 0: the earliest allocated CU's requests go first, also when it
    sits at a higher CU index than a younger one (a zero-operand instruction frees CU 0
    early, the next one reallocates it while CU 1 still waits)."""
    driver = Driver(params, rng)
    config = driver.config
    warps = [rng.randrange(config.slots) for _ in range(4)]
    full = config.operands
    yield from play(driver, [(w, _bank0(driver, rng, w, full)) for w in warps[:2]])
    program = [(warps[0], {}), (warps[1], _bank0(driver, rng, warps[1], full)),
               (warps[2], _bank0(driver, rng, warps[2], 1)),
               (warps[3], _bank0(driver, rng, warps[3], full))]
    yield from play(driver, program)
    yield from play(driver, program, ready=lambda cycle: cycle >= 12)


def directed_reallocate(params, rng, cycles):
    """CU free/reallocate timing: back-to-back zero- and one-operand instructions with
    dispatch always ready, then ready only every third cycle."""
    driver = Driver(params, rng)
    config = driver.config
    program = [(rng.randrange(config.slots), {} if k % 2 else {0: rng.randrange(4)})
               for k in range(4 * config.cus)]
    yield from play(driver, program)
    yield from play(driver, program, ready=lambda cycle: cycle % 3 == 2)


def directed_backpressure(params, rng, cycles):
    """Dispatch held off while issues keep arriving: the CUs fill, ``issue.ready`` drops,
    complete CUs keep their offer; then dispatch ready returns."""
    driver = Driver(params, rng)
    config = driver.config
    program = [(rng.randrange(config.slots), driver.random_regs(0.8))
               for _ in range(3 * config.cus)]
    yield from play(driver, program, ready=lambda cycle: cycle >= 20)
    yield from play(driver, program, ready=lambda cycle: cycle >= 20 and cycle % 2 == 0)


def directed_zero_operands(params, rng, cycles):
    """Zero-operand instructions dispatch the cycle after issue, also ahead of an older CU
    still collecting; a run of them back to back."""
    driver = Driver(params, rng)
    config = driver.config
    warp = rng.randrange(config.slots)
    yield from play(driver, [(warp, {})])
    yield from play(driver, [(warp, _bank0(driver, rng, warp, config.operands)), (warp, {})])
    yield from play(driver, [(rng.randrange(config.slots), {}) for _ in range(6)])


def directed_queue_len(params, rng, cycles):
    """Every CU fills bank 0 while dispatch is held: ``queue_len[0]`` climbs towards
    ``cus * operands`` and drains one per cycle; then every bank at once."""
    driver = Driver(params, rng)
    config = driver.config
    program = [(w, _bank0(driver, rng, w, config.operands))
               for w in (rng.randrange(config.slots) for _ in range(2 * config.cus))]
    yield from play(driver, program, ready=lambda cycle: cycle >= 30)
    program = []
    for _ in range(2 * config.cus):
        warp = rng.randrange(config.slots)
        bank = rng.randrange(config.banks)
        regs = driver.regs_in_bank(warp, bank)
        program.append((warp, {i: rng.choice(regs) for i in range(config.operands)}))
    yield from play(driver, program, ready=lambda cycle: cycle % 4 == 0)


def directed_turnaround(params, rng, cycles):
    """One operand per bank, no conflict, dispatch always ready: every CU is dispatched and
    allocated again on one edge, ``1 + read_latency`` cycles per instruction and CU."""
    driver = Driver(params, rng)
    config = driver.config
    program = []
    for k in range(4 * config.cus):
        warp = rng.randrange(config.slots)
        bank = k % config.banks
        program.append((warp, {0: rng.choice(driver.regs_in_bank(warp, bank))}))
    yield from play(driver, program)


def directed_writes(params, rng, cycles):
    """Writebacks hold back reads: each bank written with probability 1/2, then every bank for
    three cycles in a row, while the CUs queue reads of bank 0."""
    driver = Driver(params, rng)
    config = driver.config
    program = [(w, _bank0(driver, rng, w, config.operands))
               for w in (rng.randrange(config.slots) for _ in range(2 * config.cus))]
    driver.p_write = 0.5
    yield from play(driver, program)
    driver.p_write = 1.0
    yield from play(driver, program[:2], limit=3)
    driver.p_write = 0.0
    yield from play(driver, [])


STIMULI = (random_streams, directed_one_bank, directed_spread, directed_compete,
           directed_reallocate, directed_backpressure, directed_zero_operands,
           directed_queue_len, directed_turnaround, directed_writes)


globals().update(cocotb_tests(STIMULI))
