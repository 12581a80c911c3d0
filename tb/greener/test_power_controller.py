"""cocotb bench of ``greener.power_controller`` against its golden model.

The random stream models a pipeline: per warp a decoded instruction appears at the head
of its instruction buffer, waits for ``ready``, issues (one warp per cycle), reads its
sources a few cycles later (``src_set``, one instruction per cycle) and writes its
destinations later still (``dst_set``, one per cycle); a scoreboard keeps RAW/WAW apart and
the next head of a warp appears only after its predecessor's read (RAR/WAR). ``keep_on``
follows the correction table's rule (another in-flight instruction of the warp uses the
register). A second random stimulus drives every port freely (collisions, out-of-range
indices, the reserved code 10, sets during wake-ups). Directed stimuli check the wake-up
latencies themselves (besides the golden comparison), back-to-back and colliding sets,
keep_on and the OFF-read error.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property

from gpurf.golden.greener.power_controller import Ports
from gpurf.hw.greener.layouts import PowerState
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI"]

ON, SLEEP, OFF = PowerState.ON.value, PowerState.SLEEP.value, PowerState.OFF.value


# -- the pipeline model of the random stream ----------------------------------------------

@dataclass
class Instr:
    warp: int
    srcs: list
    dsts: list
    src_states: list
    dst_states: list
    due: int = 0
    uid: int = field(default=0)

    @cached_property
    def regs(self):
        """Sources then destinations (fixed once the instruction is made)."""
        return [*self.srcs, *self.dsts]


def _encoded(rng, count, encoded):
    """States of ``count`` operands: the first ``encoded`` from the compiler (ON/SLEEP/OFF,
    sometimes the reserved 10), the rest SLEEP (the decoder's rule, paper 3.2)."""
    codes = [rng.choice([ON, ON, SLEEP, SLEEP, OFF, 0b10]) for _ in range(min(count, encoded))]
    return codes + [SLEEP] * (count - len(codes))


def _new_instr(ports, rng, warp, uid):
    working = min(ports.regs, 8)

    def pick():
        return rng.randrange(working) if rng.random() < 0.85 else rng.randrange(ports.regs)

    n_src = rng.choice([0, 1, 2, 2, 2, ports.src])
    n_dst = rng.choice([0, 1, 1, 1, ports.dst])
    srcs = [pick() for _ in range(min(n_src, ports.src))]
    dsts = [pick() for _ in range(min(n_dst, ports.dst))]
    return Instr(warp, srcs, dsts, _encoded(rng, len(srcs), 2), _encoded(rng, len(dsts), 1),
                 uid=uid)


def random_pipeline(params, rng, cycles):
    """Instruction streams of every warp through decode, issue, read and writeback."""
    ports = Ports(params)
    heads = {}
    gap = {w: rng.randrange(4) for w in range(ports.warps)}
    reading, writing = [], []
    uid = 0
    out = yield ports.inputs()
    for cycle in range(cycles):
        reading_warps = {i.warp for i in reading}
        for w in range(ports.warps):
            if w not in heads and w not in reading_warps:
                if gap[w] == 0:
                    uid += 1
                    heads[w] = _new_instr(ports, rng, w, uid)
                    gap[w] = rng.choice([0, 0, 1, 3])
                else:
                    gap[w] -= 1
        due_reads = [i for i in reading if i.due <= cycle]
        src, keep_src = [], 0
        if due_reads:
            instr = due_reads[0]
            reading.remove(instr)
            src = [(instr.warp, r, s) for r, s in zip(instr.srcs, instr.src_states, strict=True)]
            keep_src = _keep_bits(instr, instr.srcs, heads, writing, rng)
            instr.due = cycle + rng.randrange(1, 7)
            writing.append(instr)
        dst, keep_dst = [], 0
        due_writes = [i for i in writing if i.due <= cycle]
        if due_writes:
            instr = due_writes[0]
            writing.remove(instr)
            dst = [(instr.warp, r, s) for r, s in zip(instr.dsts, instr.dst_states, strict=True)]
            keep_dst = _keep_bits(instr, instr.dsts, heads, writing, rng)
        issued = _issue(out, heads, writing, rng)
        out = yield ports.inputs(src=src, dst=dst, heads={w: i.regs for w, i in heads.items()},
                                 keep_src=keep_src, keep_dst=keep_dst)
        if issued is not None and out["ready"] >> issued & 1:
            instr = heads.pop(issued)
            instr.due = cycle + rng.randrange(1, 4)
            reading.append(instr)


def _keep_bits(instr, regs, heads, writing, rng):
    """The correction table's answer per port: another in-flight or decoded instruction of
    the warp (a different one) names the register; sometimes set spuriously (an aliasing
    entry), never missed (a miss on a register the random "compiler" sent OFF although a
    decoded instruction reads it would be a compiler bug and a protocol error)."""
    others = [i for i in writing if i.warp == instr.warp and i is not instr]
    if instr.warp in heads:
        others.append(heads[instr.warp])
    bits = 0
    for k, reg in enumerate(regs):
        if any(reg in other.regs for other in others) or rng.random() < 0.05:
            bits |= 1 << k
    return bits


def _issue(out, heads, writing, rng):
    """The warp the scheduler picks this cycle: its head was ready last cycle and no
    in-flight write of the warp touches its registers (scoreboard RAW/WAW)."""
    if out is None:
        return None
    written = defaultdict(set)
    for instr in writing:
        written[instr.warp].update(instr.dsts)
    candidates = [w for w, instr in heads.items()
                  if out["ready"] >> w & 1 and rng.random() < 0.7
                  and written[w].isdisjoint(instr.regs)]
    return rng.choice(candidates) if candidates else None


def random_ports(params, rng, cycles):
    """Every port free: colliding sets, out-of-range warps/registers, code 10, sets of
    waking registers, heads changing every few cycles."""
    ports = Ports(params)
    config = ports.config
    warp_codes, reg_codes = 1 << config.warp_bits, 1 << config.reg_bits
    few = min(ports.regs, 4)
    heads = {}
    yield ports.inputs()
    for _ in range(cycles):
        def entry():
            if rng.random() < 0.5:
                return None
            warp = rng.randrange(warp_codes) if rng.random() < 0.05 else rng.randrange(
                min(ports.warps, 3))
            reg = rng.randrange(reg_codes) if rng.random() < 0.05 else rng.randrange(few)
            return (warp, reg, rng.randrange(4))
        for w in range(min(ports.warps, 3)):
            if rng.random() < 0.3:
                heads[w] = [rng.randrange(reg_codes) if rng.random() < 0.05 else
                            rng.randrange(few) if rng.random() < 0.8 else None
                            for _ in range(rng.randrange(config.operands + 1))]
            elif rng.random() < 0.1:
                heads.pop(w, None)
        yield ports.inputs(src=[entry() for _ in range(ports.src)],
                           dst=[entry() for _ in range(ports.dst)], heads=heads,
                           keep_src=rng.randrange(1 << ports.src) if rng.random() < 0.3 else 0,
                           keep_dst=rng.randrange(1 << ports.dst) if rng.random() < 0.3 else 0)


# -- directed ------------------------------------------------------------------------------

def _settle(ports, cycles=1):
    for _ in range(cycles):
        yield ports.inputs()


def _wake_and_time(ports, warp, regs, limit=20):
    """Show a head naming ``regs`` until ``ready``; returns the cycles it took."""
    for waited in range(limit):
        out = yield ports.inputs(heads={warp: regs})
        if out["ready"] >> warp & 1:
            return waited
    raise AssertionError(f"warp {warp} not ready after {limit} cycles")


def directed_wakeup(params, rng, cycles):
    """SLEEP->ON after ``sleep_wakeup`` and OFF->ON after ``off_wakeup`` cycles (sources,
    destinations, mixed heads), a head withdrawn mid-wake-up, and a set that cancels one."""
    ports = Ports(params)
    cfg = ports.config
    yield ports.inputs()
    last = ports.regs - 1
    waited = yield from _wake_and_time(ports, 0, [0])
    assert waited == cfg.off_wakeup, f"OFF->ON took {waited}, not {cfg.off_wakeup}"
    yield ports.inputs(dst=[(0, 0, SLEEP)])
    waited = yield from _wake_and_time(ports, 0, [0])
    assert waited == cfg.sleep_wakeup, f"SLEEP->ON took {waited}, not {cfg.sleep_wakeup}"
    waited = yield from _wake_and_time(ports, 0, [0])
    assert waited == 0, "an ON register needs no wake-up"
    # A destination-only head (the last operand slot) and a mixed SLEEP + OFF head.
    yield ports.inputs(dst=[(1, 0, SLEEP)])
    waited = yield from _wake_and_time(ports, 1, [None] * cfg.src_ports + [last])
    assert waited == cfg.off_wakeup, f"destination OFF->ON took {waited}"
    yield ports.inputs(src=[(1, 0, SLEEP)])
    waited = yield from _wake_and_time(ports, 1, [0, 1])
    assert waited == max(cfg.sleep_wakeup, cfg.off_wakeup)
    # Withdrawn head: the wake-up started in the first cycle still ends on time.
    yield ports.inputs(dst=[(0, 1, SLEEP)])
    yield ports.inputs(heads={0: [1]})
    yield from _settle(ports, cfg.sleep_wakeup - 1)
    out = yield ports.inputs(heads={0: [1]})
    assert out["ready"] & 1, "a started wake-up completes without its head"
    # A set to SLEEP during an OFF->ON wake-up cancels it; the head restarts from SLEEP.
    yield ports.inputs(heads={0: [last]})
    yield ports.inputs(dst=[(0, last, SLEEP)], heads={0: [last]})
    waited = yield from _wake_and_time(ports, 0, [last])
    assert waited == cfg.sleep_wakeup, f"restart from SLEEP took {waited}"


def directed_back_to_back(params, rng, cycles):
    """A register set every cycle, ports colliding on one register (lowest port wins),
    a set and a head on the same register in one cycle, code 10."""
    ports = Ports(params)
    cfg = ports.config
    yield ports.inputs()
    for state in (SLEEP, ON, OFF, 0b10, SLEEP, SLEEP, OFF, ON):
        yield ports.inputs(dst=[(0, 2, state)], heads={0: [2]})
    for state in (SLEEP, ON, 0b10, SLEEP, ON):
        yield ports.inputs(src=[(0, 2, state)], heads={0: [2]})
    yield ports.inputs(src=[(0, 2, SLEEP)] * cfg.src_ports, dst=[(0, 2, OFF)] * cfg.dst_ports)
    yield ports.inputs(src=[None] * (cfg.src_ports - 1) + [(0, 2, ON)], dst=[(0, 2, OFF)])
    yield ports.inputs(dst=[(0, 2, SLEEP), (0, 2, ON)][:cfg.dst_ports])
    yield from _settle(ports, 2)
    for w in range(min(cfg.warps, 3)):
        yield ports.inputs(dst=[(w, r, rng.choice([ON, SLEEP, OFF]))
                                for r in range(min(cfg.dst_ports, cfg.regs))],
                           heads={w: [0, 1]})
    yield from _settle(ports, cfg.off_wakeup + 1)


def directed_keep_on(params, rng, cycles):
    """keep_on hits: a source and a destination asking SLEEP/OFF stay ON (GReEneR) and
    the warp stays ready; under Sleep-Reg keep_on is ignored."""
    ports = Ports(params)
    cfg = ports.config
    yield ports.inputs()
    yield ports.inputs(dst=[(0, 0, ON), (0, 1, ON)][:cfg.dst_ports])
    yield ports.inputs(dst=[(0, 1, ON)])
    yield ports.inputs(src=[(0, 0, OFF)], dst=[(0, 1, SLEEP)], keep_src=1, keep_dst=1)
    out = yield ports.inputs(heads={0: [0, 1]})
    expect = 0 if cfg.policy == "sleep_reg" else 1
    assert (out["ready"] & 1) == expect, "keep_on must keep the registers ON (GReEneR only)"
    yield ports.inputs(src=[(0, 0, SLEEP)], keep_src=0)
    yield from _settle(ports, cfg.off_wakeup)


def directed_off_read(params, rng, cycles):
    """Writing an OFF register is legal; reading one sets the sticky error with the first
    offending register; a later bad read leaves it unchanged."""
    ports = Ports(params)
    cfg = ports.config
    yield ports.inputs()
    bad = (cfg.warps - 1, cfg.regs - 1)
    out = yield ports.inputs(dst=[(1, 0, SLEEP)])
    out = yield ports.inputs(src=[(1, 0, ON)])
    assert not out["error"]
    out = yield ports.inputs()
    assert not out["error"], "writing an OFF register or reading a SLEEP one is no error"
    port = min(1, cfg.src_ports - 1)
    out = yield ports.inputs(src=[None] * port + [(*bad, ON)])
    assert not out["error"], "the error shows from the cycle after the read"
    out = yield ports.inputs(src=[(0, 0, ON)])
    assert out["error"] and (out["error_warp"], out["error_reg"]) == bad
    out = yield ports.inputs()
    assert (out["error_warp"], out["error_reg"]) == bad, "the first error is kept"


STIMULI = (random_pipeline, random_ports, directed_wakeup, directed_back_to_back,
           directed_keep_on, directed_off_read)


globals().update(cocotb_tests(STIMULI))
