"""cocotb bench of ``wir.backend`` against its golden model.

The bench plays the rest of the SM around the composed backend: the issue stage (a small
program, so physical tags repeat and reuse hits happen), the execute stage (every ``out``
that is neither a hit nor pending comes back as a ``result`` after a random delay, with its
reservation fields, a value from a small set so VSB hits and verify-reads happen, some
random for hash collisions, a divergent lookup with a partial mask), the operand collector
(``hold`` then ``drop`` of in-flight source references), thread-block events and warp
exits. The golden model recounts every register's holders after every cycle, across the
reuse buffer, the hit queue, the VSB, the mappings and the sources, and checks that the
front's rename table equals the pipeline's mappings. Directed case: an instruction issued
twice (the second is a reuse hit retiring with the first's register), then a third time
after its source was redefined (a miss); one register taking the most increments one cycle
allows (:func:`headroom_burst`, 21 -> 29 of 31) with holds of it refused from then on.
"""

import itertools

from gpurf.golden.wir.reuse_buffer import fold_index
from gpurf.hw.ports import codec
from gpurf.hw.wir.configs import SOURCES, BackendConfig
from gpurf.hw.wir.layouts import LoadKind, Outcome
from gpurf.tb.harness import cocotb_tests
from gpurf.tb.wir.test_rename_reuse import Driver as FrontDriver

__all__ = ["STIMULI"]


class Driver:
    """Issues, executes, holds and exits; records what retires."""

    def __init__(self, params, rng):
        self.config = config = BackendConfig(**params)
        self.rng = rng
        self.front = FrontDriver(config.front.params(), rng)
        self.tags = codec(config.front.reuse.tag_layout)
        self.width = config.lanes * config.data_width
        self.values = [rng.getrandbits(self.width) for _ in range(4)]
        self.executing: list[tuple[int, dict]] = []
        """``(due cycle, result fields)`` of executed instructions."""
        self.held: list[int] = []
        self.handed: list[int] = []
        """Source references handed on ``sources``, to end on ``release``."""
        self.retired: list = []
        self.out: list = []
        self.cycle = 0
        plain = {"divergent": 0, "bypass": 0, "store_shared": 0, "store_global": 0}
        self.program = [self.front.instruction(**plain) for _ in range(4)]
        """A small program the warps repeat (so tags recur and reuse hits happen)."""

    def issue(self, **fields) -> dict:
        return {"issue__valid": 1,
                "issue__payload": self.config.codecs["issue__payload"].pack(
                    self.front.instruction(**fields))}

    def program_issue(self) -> dict:
        """An instruction of the program (80 %) in a random warp, else a random one."""
        rng = self.rng
        if rng.random() < 0.2:
            return self.issue()
        ins = {**rng.choice(self.program), "warp": rng.randrange(self.config.warps)}
        return {"issue__valid": 1,
                "issue__payload": self.config.codecs["issue__payload"].pack(ins)}

    def value(self) -> list[int]:
        config, rng = self.config, self.rng
        value = (rng.getrandbits(self.width) if rng.random() < 0.2
                 else rng.choice(self.values))
        return [(value >> lane * config.data_width) & ((1 << config.data_width) - 1)
                for lane in range(config.lanes)]

    def result(self, warp, reg, *, mask=None, reservation=None, value=None) -> dict:
        config = self.config
        fields = {"warp": warp, "reg": reg, "value": value or self.value(),
                  "mask": (1 << config.lanes) - 1 if mask is None else mask,
                  "reserved": 0, "index": 0, "tag": 0}
        if reservation is not None:
            fields.update(reserved=1, index=reservation[0], tag=reservation[1])
        return fields

    def execute(self, out) -> None:
        """An ``out`` to execute: its result after 0..4 cycles."""
        config, rng = self.config, self.rng
        mask = None
        if out.lookup.divergent:
            mask = rng.randrange((1 << config.lanes) - 1)
        reservation = None
        if out.response.reserved:
            reservation = (out.response.index, self.tags.pack({
                "opcode": out.lookup.opcode,
                "operand": [out.lookup.operand[k] & ((1 << config.preg_bits) - 1)
                            for k in range(SOURCES)],
                "tbid": out.lookup.tbid, "barrier": out.lookup.barrier}))
        self.executing.append((self.cycle + rng.randrange(5),
                               self.result(out.warp, out.dst, mask=mask,
                                           reservation=reservation)))

    def offer(self) -> dict:
        """The oldest due result, if any."""
        for due, fields in self.executing:
            if due <= self.cycle:
                return {"result__valid": 1,
                        "result__payload": self.config.codecs["result__payload"].pack(fields)}
        return {}

    def release(self, chance=0.5) -> dict:
        """Up to three handed source references end (the operand read)."""
        rng = self.rng
        ended = []
        while self.handed and len(ended) < SOURCES and rng.random() < chance:
            ended.append(self.handed.pop(rng.randrange(len(self.handed))))
        if not ended:
            return {}
        return {"release": self.config.codecs["release"].pack(
            [{"valid": 1, "preg": preg} for preg in ended])}

    def hold(self) -> dict:
        config, rng = self.config, self.rng
        return {"hold__valid": 1, "hold__payload": config.codecs["hold__payload"].pack(
            {"warp": rng.randrange(config.warps), "reg": rng.randrange(config.regs)})}

    def observe(self, ins: dict, outputs: dict) -> dict:
        """Follow the handshakes; the stream offers not taken (to offer again)."""
        config = self.config
        self.cycle += 1
        if ins.get("result__valid") and outputs["result__ready"]:
            payload = ins["result__payload"]
            for k, (_, fields) in enumerate(self.executing):
                if config.codecs["result__payload"].pack(fields) == payload:
                    del self.executing[k]
                    break
        if outputs["held__valid"]:
            self.held.append(outputs["held__payload"])
        self.handed += [ref.preg for ref in config.codecs["sources"].unpack(outputs["sources"])
                        if ref.valid]
        if outputs["retired__valid"]:
            retired = config.codecs["retired__payload"].unpack(outputs["retired__payload"])
            self.retired.append(retired._replace(outcome=Outcome(retired.outcome)))
        if outputs["out__valid"]:
            out = config.codecs["out__payload"].unpack(outputs["out__payload"])
            self.out.append(out)
            if not out.response.hit and not out.response.pending:
                self.execute(out)
        return {f"{port}__{part}": ins[f"{port}__{part}"]
                for port in ("issue", "hold", "exit") for part in ("valid", "payload")
                if ins.get(f"{port}__valid") and not outputs[f"{port}__ready"]}


def random_stream(params, rng, cycles):
    """Issues, executions, holds, drops, barriers, launches and exits, at rates changing
    every 200 cycles; stream offers held until taken. The bench holds at most ``pregs / 4``
    source references."""
    driver = Driver(params, rng)
    config = driver.config
    pending: dict = {}
    rates = (0.5, 0.2, 0.2)
    for cycle in range(cycles):
        if cycle % 200 == 0:
            rates = (rng.choice([0.2, 0.5, 0.9]), rng.choice([0.1, 0.3]),
                     rng.choice([0.1, 0.4]))
            driver.values[rng.randrange(len(driver.values))] = rng.getrandbits(driver.width)
        ins = dict(pending)
        if "issue__valid" not in ins and rng.random() < rates[0]:
            ins.update(driver.program_issue())
        ins.update(driver.offer())
        ins.update(driver.release())
        if ("hold__valid" not in ins and len(driver.held) < config.pregs // 4
                and rng.random() < rates[1]):
            ins.update(driver.hold())
        if driver.held and rng.random() < rates[2]:
            ins.update(drop__valid=1, drop__payload=driver.held.pop(
                rng.randrange(len(driver.held))))
        if "exit__valid" not in ins and rng.random() < 0.004:
            ins.update(exit__valid=1, exit__payload=rng.randrange(config.warps))
        if rng.random() < 0.02:
            ins.update(driver.front.block_event("barrier", rng.randrange(config.blocks)))
        if rng.random() < 0.005:
            ins.update(driver.front.block_event("launch", rng.randrange(config.blocks)))
        outputs = yield ins
        pending = driver.observe(ins, outputs)
    yield from _drain(driver)


def _drain(driver):
    """Execute what is left, then drop every held source."""
    for _ in range(40):
        ins = {**driver.offer(), **driver.release(1.0)}
        outputs = yield ins
        driver.observe(ins, outputs)
    while driver.held:
        ins = {"drop__valid": 1, "drop__payload": driver.held.pop()}
        outputs = yield ins
        driver.observe(ins, outputs)


def directed_reuse_hit(params, rng, cycles):
    """``r1 = op r0, 5`` twice (the second hits and retires ``REUSED`` with the first's
    register), then ``r0`` redefined and the instruction again (a miss: new tag)."""
    driver = Driver(params, rng)
    config = driver.config
    while True:
        outputs = yield {}
        driver.observe({}, outputs)
        if outputs["ready"]:
            break
    dst = 1 % config.regs
    seed = driver.result(0, 0)
    same = {"warp": 0, "tb": 0, "opcode": {"op": 1, "regs": 1}, "operand": [0, 5, 0],
            "dst": dst, "divergent": 0, "kind": 0, "store_shared": 0, "store_global": 0,
            "bypass": 0}
    steps = [{"result__valid": 1,
              "result__payload": config.codecs["result__payload"].pack(seed)}]
    steps += [driver.issue(**same), driver.issue(**same)]
    for ins in steps:
        while True:
            outputs = yield ins
            left = driver.observe(ins, outputs)
            if not left:
                break
            ins = left
        for _ in range(8):
            ins = {**driver.offer(), **driver.release(1.0)}
            outputs = yield ins
            driver.observe(ins, outputs)
    outcomes = [r.outcome for r in driver.retired]
    assert outcomes[-1] == Outcome.REUSED, driver.retired
    assert driver.retired[-1].preg == driver.retired[-2].preg, driver.retired
    yield from _drain(driver)


def headroom_burst(*, hold_too):
    """A stimulus: ``r0 = v`` (register ``P``, installed in the VSB: 2 references), 16 holds
    of ``r0`` (18); ``I_c`` (immediates, an index other than ``I_b``'s) reserves an entry
    and its result ``r1 = v`` returns; ``I_b`` (``r0`` as all three sources: +3 at issue,
    21) so that in ``r1``'s decide cycle ``P`` is shared (+1) and fills ``I_c``'s entry
    (+1), ``I_b`` misses and reserves (+3) and ``I_a`` (as ``I_b``) issues (+3): 29, the
    most (session 17, ``tb/wir/formal_backend.py`` ``MOST_INCREMENTS``). ``hold_too``: a
    hold of ``r0`` offered with ``I_a`` and in every cycle after (refused: the verify hit's
    clash, then saturation)."""

    def stream(params, rng, cycles):
        driver = Driver(params, rng)
        config, codecs, tags = driver.config, driver.config.codecs, driver.tags
        plain = {"warp": 0, "tb": 0, "divergent": 0, "bypass": 0, "store_shared": 0,
                 "store_global": 0, "kind": LoadKind.OTHER.value}
        hold = {"hold__valid": 1, "hold__payload": codecs["hold__payload"].pack(
            {"warp": 0, "reg": 0})}

        def cycle(ins):
            outputs = yield ins
            driver.observe(ins, outputs)
            driver.executing.clear()
            return outputs

        def result(reg, reservation=None):
            return {"result__valid": 1, "result__payload": codecs["result__payload"].pack(
                driver.result(0, reg, value=[1] * config.lanes, reservation=reservation))}

        def issue(**fields):
            return driver.issue(**plain, dst=1 % config.regs, **fields)

        while not (yield from cycle({}))["ready"]:
            pass
        while not (yield from cycle(result(0)))["result__ready"]:
            pass
        while not driver.retired:
            yield from cycle({})
        while len(driver.held) < 16:
            yield from cycle(hold)
        three = {"op": 0, "regs": 7}
        reservation = yield from _reserve(driver, cycle, issue, tags.pack(
            {"opcode": three, "operand": [driver.retired[-1].preg] * 3, "tbid": 0,
             "barrier": 0}))
        while not (yield from cycle(result(1 % config.regs, reservation)))["result__ready"]:
            pass
        yield from cycle(issue(opcode=three, operand=[0, 0, 0]))
        for extra in range(11):
            yield from cycle({**(issue(opcode=three, operand=[0, 0, 0]) if not extra else {}),
                              **driver.release(1.0), **(hold if hold_too else {})})
        yield from _drain(driver)

    stream.__name__ = "directed_headroom_burst" + ("_holding" if hold_too else "")
    return stream


def _reserve(driver, cycle, issue, other):
    """Issue an instruction of immediates whose reuse-buffer index differs from that of
    the packed tag ``other`` (the tags' ``tbid``/``barrier`` fold away: both the same);
    returns its reservation ``(index, tag)``."""
    config, tags = driver.config, driver.tags
    index_bits, width = config.front.reuse.index_bits, config.front.reuse.tag_layout.size
    operand = next(list(imm) for imm in itertools.product(range(4), repeat=3)
                   if fold_index(other ^ tags.pack({
                       "opcode": {"op": 0, "regs": 0}, "operand": list(imm), "tbid": 0,
                       "barrier": 0}), width, index_bits))
    yield from cycle(issue(opcode={"op": 0, "regs": 0}, operand=operand))
    while not driver.out:
        yield from cycle({})
    out = driver.out[-1]
    assert out.response.reserved, out
    return out.response.index, tags.pack({
        "opcode": out.lookup.opcode, "operand": out.lookup.operand,
        "tbid": out.lookup.tbid, "barrier": out.lookup.barrier})


STIMULI = (random_stream, directed_reuse_hit, headroom_burst(hold_too=True))

globals().update(cocotb_tests(STIMULI))
