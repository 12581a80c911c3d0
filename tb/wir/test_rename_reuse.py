"""cocotb bench of ``wir.rename_reuse`` against its golden model.

The bench plays the issue stage (a small program so physical tags repeat), retire (new
mappings, following the pin-bit protocol, and fills of reserved entries after a random
delay), thread-block events (barriers, launches), warp exits and the register pool's
answers. Directed cases: the paper's Fig. 11 (back-to-back identical instructions:
one reserves, the others wait in the pending-retry queue and hit once it is filled), a
full queue, loads around stores and barriers, unmapped sources.
"""

from gpurf.hw.ports import codec
from gpurf.hw.wir.configs import SOURCES, RenameReuseConfig
from gpurf.hw.wir.layouts import LoadKind
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]


class Driver:
    """Issue, retire, fill and side inputs of the composition, with a mirror of the
    rename tables (for the pin-bit protocol of retires)."""

    def __init__(self, params, rng):
        self.config = config = RenameReuseConfig(**params)
        self.rng = rng
        self.tags = codec(config.reuse.tag_layout)
        self.maps: list[dict[int, tuple[int, int]]] = [{} for _ in range(self.config.warps)]
        self.fills: list[tuple[int, int, int]] = []
        """``(index, tag, result)`` of reservations to fill."""
        self.retires: list[tuple[int, int, int]] = []
        """``(warp, reg, divergent)`` mappings to write."""
        self.out: list[dict] = []
        """Every instruction seen on ``out``."""

    def instruction(self, **fields) -> dict:
        config, rng = self.config, self.rng
        regs = rng.randrange(8)
        ins = {
            "warp": rng.randrange(config.warps), "tb": rng.randrange(config.blocks),
            "opcode": {"op": rng.randrange(2), "regs": regs},
            "operand": [rng.randrange(min(3, config.regs)) if regs >> k & 1
                        else rng.choice([0, 1, rng.randrange(1 << config.imm_bits)])
                        for k in range(SOURCES)],
            "dst": rng.randrange(config.regs), "divergent": int(rng.random() < 0.1),
            "kind": rng.choice(list(LoadKind)).value,
            "store_shared": 0, "store_global": 0, "bypass": int(rng.random() < 0.05),
        }
        if rng.random() < 0.08:
            ins.update(store_shared=rng.randrange(2), store_global=1, bypass=1)
        ins.update(fields)
        return ins

    def issue(self, ins: dict) -> dict:
        return {"issue__valid": 1, "issue__payload": self.config.codecs["issue__payload"].pack(ins)}

    def block_event(self, name: str, tb: int) -> dict:
        config = self.config
        warps = sum(1 << w for w in range(config.warps) if w % config.blocks == tb)
        payload = config.codecs[f"{name}__payload"].pack({"tb": tb, "warps": warps})
        return {f"{name}__valid": 1, f"{name}__payload": payload}

    def retire_payload(self, warp: int, reg: int, divergent: int) -> int:
        """A retire following the pin protocol: a pinned register is rewritten in place,
        a first divergent write takes a new register."""
        config = self.config
        old = self.maps[warp].get(reg)
        preg = self.rng.randrange(config.pregs)
        if divergent and old is not None:
            if old[1]:
                preg = old[0]
            elif preg == old[0]:
                preg = (preg + 1) % config.pregs
        return config.codecs["retire__payload"].pack(
            {"warp": warp, "reg": reg, "preg": preg, "divergent": divergent})

    def background(self, *, p_retire=0.3, p_fill=0.3) -> dict:
        """Pending retires and fills, when the dice say so (the retire is held until
        taken: see :meth:`observe`)."""
        rng, config = self.rng, self.config
        ins = {}
        if self.retires:
            warp, reg, divergent = self.retires[0]
            ins.update(retire__valid=1,
                       retire__payload=self.retire_payload(warp, reg, divergent))
        if self.fills and rng.random() < p_fill:
            index, tag, result = self.fills.pop(rng.randrange(len(self.fills)))
            ins.update(fill__valid=1, fill__payload=config.codecs["fill__payload"].pack(
                {"index": index, "tag": tag, "result": result}))
        if rng.random() < p_retire:
            self.retires.append((rng.randrange(config.warps), rng.randrange(config.regs),
                                 int(rng.random() < 0.2)))
        return ins

    def observe(self, inputs: dict, outputs: dict) -> None:
        """Follow the handshakes and collect what leaves on ``out``."""
        config = self.config
        if inputs.get("retire__valid") and outputs["retire__ready"]:
            view = config.codecs["retire__payload"].unpack(inputs["retire__payload"])
            self.maps[view.warp][view.reg] = (view.preg, view.divergent)
            if self.retires:
                self.retires.pop(0)
        if inputs.get("exit__valid") and outputs["exit__ready"]:
            self.maps[inputs["exit__payload"]].clear()
        if outputs["out__valid"]:
            out = config.codecs["out__payload"].unpack(outputs["out__payload"])
            self.out.append(out)
            if out.response.reserved:
                tag = self.tags.pack({
                    "opcode": out.lookup.opcode,
                    "operand": [out.lookup.operand[k] & ((1 << config.preg_bits) - 1)
                                for k in range(SOURCES)],
                    "tbid": out.lookup.tbid, "barrier": out.lookup.barrier,
                })
                self.fills.append((out.response.index, tag, self.rng.randrange(config.pregs)))


def random_stream(params, rng, cycles):
    """Random issues (held until ready), retires, fills, barriers, launches, exits and
    pool answers; the rates change every 100 cycles."""
    driver = Driver(params, rng)
    config = driver.config
    pending, p_issue, p_low = None, 0.5, 0.0
    exit_ = None
    for cycle in range(cycles):
        if cycle % 100 == 0:
            p_issue, p_low = rng.choice([0.2, 0.5, 0.9]), rng.choice([0.0, 0.0, 0.3])
        if pending is None and rng.random() < p_issue:
            pending = driver.instruction()
        ins = driver.background()
        if pending is not None:
            ins.update(driver.issue(pending))
        if exit_ is None and rng.random() < 0.005:
            exit_ = rng.randrange(config.warps)
        if exit_ is not None:
            ins.update(exit__valid=1, exit__payload=exit_)
        if rng.random() < 0.03:
            ins.update(driver.block_event("barrier", rng.randrange(config.blocks)))
        if rng.random() < 0.01:
            ins.update(driver.block_event("launch", rng.randrange(config.blocks)))
        ins.update(result_saturated=int(rng.random() < 0.05),
                   operand_saturated=int(rng.random() < 0.05),
                   low_reg=int(rng.random() < p_low))
        outputs = yield ins
        driver.observe(ins, outputs)
        if pending is not None and outputs["issue__ready"]:
            pending = None
        if exit_ is not None and outputs["exit__ready"]:
            exit_ = None


def _settle(driver, outputs=None):
    """Wait for the rename table's clear after reset."""
    while outputs is None or not outputs["ready"]:
        outputs = yield {}


def _run(driver, inputs):
    """One cycle of ``inputs``; returns the outputs after bookkeeping."""
    outputs = yield inputs
    driver.observe(inputs, outputs)
    return outputs


def _map(driver, warp, reg, preg):
    """Retire ``reg -> preg`` of ``warp`` (convergent)."""
    payload = driver.config.codecs["retire__payload"].pack(
        {"warp": warp, "reg": reg, "preg": preg, "divergent": 0})
    yield from _run(driver, {"retire__valid": 1, "retire__payload": payload})


def directed_fig11_back_to_back(params, rng, cycles):
    """Paper Fig. 11: every warp issues ``add`` on registers mapped to the same physical
    ids, back to back. The first reserves; the others are pending hits queued (as many as
    fit, the rest execute); idle cycles re-check them (still pending: re-queued); after the
    fill they all hit the first one's result."""
    driver = Driver(params, rng)
    config = driver.config
    yield from _settle(driver)
    p1, p2 = 1, 2 % config.pregs
    for warp in range(config.warps):
        yield from _map(driver, warp, 0, p1)
        yield from _map(driver, warp, min(1, config.regs - 1), p2)
    add = {"opcode": {"op": 1, "regs": 0b011}, "operand": [0, min(1, config.regs - 1), 0],
           "divergent": 0, "kind": LoadKind.OTHER.value, "bypass": 0, "store_shared": 0,
           "store_global": 0, "dst": config.regs - 1, "tb": 0}
    for warp in range(config.warps):
        yield from _run(driver, driver.issue({**add, "warp": warp}))
    for _ in range(6):
        yield from _run(driver, {})
    queued_before_fill = sum(int(o.response.pending) for o in driver.out)
    assert queued_before_fill == min(config.warps - 1, config.retry_depth), driver.out
    index, tag, _ = driver.fills[0]
    result = 3 % config.pregs
    yield from _run(driver, {"fill__valid": 1, "fill__payload": config.codecs["fill__payload"].pack(
        {"index": index, "tag": tag, "result": result})})
    for _ in range(config.retry_depth + 3):
        yield from _run(driver, {})
    hits = [o for o in driver.out if o.retried and o.response.hit]
    assert len(hits) == queued_before_fill and all(o.response.result == result for o in hits)
    for warp in range(config.warps):
        yield from _run(driver, driver.issue({**add, "warp": warp}))
    for _ in range(3):
        yield from _run(driver, {})


def directed_loads_stores_barriers(params, rng, cycles):
    """A global and a shared load reserve, fill, then hit from another warp of the block;
    a store by a warp makes its loads bypass until the block's barrier, after which loads
    look up with the new barrier count; a read of an unmapped register bypasses."""
    driver = Driver(params, rng)
    config = driver.config
    yield from _settle(driver)
    warps = [w for w in range(config.warps) if w % config.blocks == 0]
    for warp in warps:
        yield from _map(driver, warp, 0, 5 % config.pregs)
    base = {"opcode": {"op": 0, "regs": 0b001}, "operand": [0, 0, 0], "divergent": 0,
            "bypass": 0, "store_shared": 0, "store_global": 0, "dst": config.regs - 1,
            "tb": 0}
    store = {**base, "kind": LoadKind.OTHER.value, "store_global": 1, "store_shared": 1,
             "bypass": 1}
    loads = [{**base, "kind": kind.value} for kind in (LoadKind.GLOBAL, LoadKind.SHARED)]
    for round_ in range(3):
        for load in loads:
            yield from _run(driver, driver.issue({**load, "warp": warps[0]}))
            yield from _run(driver, {})
            yield from _run(driver, {})
            while driver.fills:
                yield from _run(driver, driver.background(p_retire=0, p_fill=1))
            yield from _run(driver, driver.issue({**load, "warp": warps[-1]}))
        yield from _run(driver, driver.issue({**store, "warp": warps[0]}))
        for load in loads:
            yield from _run(driver, driver.issue({**load, "warp": warps[0]}))
        if round_ == 1:
            for _ in range(1 << config.barrier_bits):
                yield from _run(driver, driver.block_event("barrier", 0))
        else:
            yield from _run(driver, driver.block_event("barrier", 0))
        for _ in range(3):
            yield from _run(driver, {})
    unmapped = {**base, "kind": LoadKind.OTHER.value, "operand": [config.regs - 1, 0, 0]}
    yield from _run(driver, driver.issue({**unmapped, "warp": config.warps - 1}))
    for _ in range(3):
        yield from _run(driver, {})


def directed_exit_and_low_reg(params, rng, cycles):
    """Mappings, an exit sweep (issue held off meanwhile), reservations in low-register
    mode (evictions instead), saturated answers."""
    driver = Driver(params, rng)
    config = driver.config
    yield from _settle(driver)
    for reg in range(config.regs):
        yield from _map(driver, 0, reg, (reg + 7) % config.pregs)
    ins = driver.instruction(warp=0, divergent=0, bypass=0, kind=LoadKind.OTHER.value)
    for flags in ({}, {"low_reg": 1}, {"result_saturated": 1}, {"operand_saturated": 1}):
        yield from _run(driver, {**driver.issue(ins), **flags})
        yield from _run(driver, flags)
        yield from _run(driver, {**flags, **driver.background(p_retire=0, p_fill=1)})
    outputs = yield from _run(driver, {"exit__valid": 1, "exit__payload": 0})
    for _ in range(config.regs + 2):
        outputs = yield from _run(driver, {**driver.issue(ins), "low_reg": 1})
    assert outputs["issue__ready"]


STIMULI = (random_stream, directed_fig11_back_to_back, directed_loads_stores_barriers,
           directed_exit_and_low_reg)

globals().update(cocotb_tests(STIMULI))
