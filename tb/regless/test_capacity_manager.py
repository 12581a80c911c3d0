"""cocotb bench of ``regless.capacity_manager`` against its golden model.

:class:`Env` plays the capacity manager's neighbours from the outputs of the previous cycle:
the metadata store (answers ``want`` with the warp's next region from a per-warp plan; a
header offered for a warp that is no longer on top is withdrawn; the entry words follow the
stream rule), the OSU (takes queue entries with a random ``ready`` and acknowledges each
after a random delay, one acknowledgement per bank per cycle) and the scheduler (issues
instructions of ACTIVE warps, destination banks only where the warp's outstanding writes stay
within its region's usage, completes the writes after a random latency, one per cycle) and
the barrier unit (``at_barrier``: warps held now and then, each released at random).
"""

from collections import deque

from gpurf.golden.regless.capacity_manager import done_word, region_words
from gpurf.hw.regless.configs import CapacityManagerConfig
from gpurf.hw.regless.layouts import WarpState
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI", "Env"]


class Env:
    """The metadata store, OSU and scheduler around one capacity manager."""

    def __init__(self, config: CapacityManagerConfig, rng, plan=None):
        self.config, self.rng = config, rng
        self.plan = plan or (lambda warp: None)
        """``warp -> descriptor dict`` (``None``: done) of the warp's next region."""
        self.next = {}
        self.usage_next = {}
        """Per warp, the words of its next region (made from ``plan`` when first asked)."""
        self.words: deque | None = None
        """Entry words of the taken header still to send."""
        self.offer: int | None = None
        self.offer_header = False
        self.outputs: dict = {}
        self.now = 0
        self.region_gap = 0.0
        self.preload_ready = 1.0
        self.ack_delay = (1, 3)
        self.acks = [deque() for _ in range(config.banks)]
        self.usage: dict[int, list[int]] = {}
        self.outstanding = {w: [0] * config.banks for w in range(config.warps)}
        self.writes: list[tuple[int, int, int]] = []
        """``(due, warp, bank)`` of issued writes."""
        self.write_latency = (1, 12)
        self.draining: set[int] = set()
        self.issues: deque = deque()
        """Directed instructions ``(warp, has_dst, bank, last)``, sent in order when the
        warp is ACTIVE."""
        self.issue_rate = 0.0
        self.taken_headers: list[int] = []
        self.barrier_rate = 0.0
        """Per cycle, the chance a random warp is held at a barrier (any state)."""
        self.barrier_release = 0.2
        """Per cycle, the chance each held warp is released."""
        self.at_barrier = 0
        """The warps held, a mask."""

    # --- metadata store --------------------------------------------------------------

    def _words_of(self, warp):
        if warp not in self.next:
            descriptor = self.plan(warp)
            self.next[warp] = ([done_word(self.config, warp)] if descriptor is None
                               else region_words(self.config, descriptor))
            self.usage_next[warp] = None if descriptor is None else descriptor["bank_usage"]
        return self.next[warp]

    def _region(self, inputs):
        if self.words is not None:
            if self.offer is None and self.words and self.rng.random() >= self.region_gap:
                self.offer = self.words.popleft()
        else:
            self.offer, self.offer_header = None, False
            if self.outputs.get("want__valid") and self.rng.random() >= self.region_gap:
                self.offer = self._words_of(self.outputs["want__payload"])[0]
                self.offer_header = True
        if self.offer is not None:
            inputs["region__valid"] = 1
            inputs["region__payload"] = self.offer

    def _region_taken(self, outputs):
        if self.offer is None or not outputs["region__ready"]:
            return
        if self.offer_header:
            warp = self.config.codecs["region__payload"].unpack(self.offer).warp
            words = self.next.pop(warp)
            usage = self.usage_next.pop(warp)
            self.taken_headers.append(warp)
            if usage is not None:
                self.usage[warp] = list(usage)
                self.words = deque(words[1:]) if len(words) > 1 else None
        elif not self.words:
            self.words = None
        self.offer, self.offer_header = None, False

    # --- OSU -------------------------------------------------------------------------

    def _osu(self, inputs):
        acks = []
        for b in range(self.config.banks):
            inputs[f"preload__{b}__ready"] = int(self.rng.random() < self.preload_ready)
            queue = self.acks[b]
            if queue and queue[0][0] <= self.now:
                acks.append({"valid": 1, "warp": queue.popleft()[1]})
            else:
                acks.append({"valid": 0, "warp": 0})
        inputs["preloaded"] = self.config.codecs["preloaded"].pack(acks)

    def _osu_taken(self, outputs, inputs):
        for b in range(self.config.banks):
            if outputs[f"preload__{b}__valid"] and inputs[f"preload__{b}__ready"]:
                payload = f"preload__{b}__payload"
                warp = self.config.codecs[payload].unpack(outputs[payload]).warp
                due = max(self.now + self.rng.randint(*self.ack_delay),
                          self.acks[b][-1][0] if self.acks[b] else 0)
                self.acks[b].append((due, warp))

    # --- scheduler -------------------------------------------------------------------

    def active(self) -> list[int]:
        eligible = self.outputs.get("eligible", 0)
        return [w for w in range(self.config.warps)
                if eligible >> w & 1 and w not in self.draining]

    def _room(self, warp) -> list[int]:
        usage = self.usage.get(warp, [0] * self.config.banks)
        return [b for b in range(self.config.banks) if self.outstanding[warp][b] < usage[b]]

    def _issue(self, inputs):
        active = self.active()
        pick = None
        if self.issues and self.issues[0][0] in active:
            pick = self.issues.popleft()
        elif active and self.rng.random() < self.issue_rate:
            warp = self.rng.choice(active)
            room = self._room(warp)
            dst = bool(room) and self.rng.random() < 0.7
            pick = (warp, dst, self.rng.choice(room) if dst else self.rng.randrange(
                self.config.banks), self.rng.random() < 0.15)
        if pick is None:
            return
        warp, dst, bank, last = pick
        inputs["issue__valid"] = 1
        inputs["issue__payload"] = self.config.codecs["issue__payload"].pack(
            {"warp": warp, "has_dst": int(dst), "dst_bank": bank, "last": int(last)})
        if dst:
            self.outstanding[warp][bank] += 1
            self.writes.append((self.now + self.rng.randint(*self.write_latency), warp, bank))
        if last:
            self.draining.add(warp)

    def _written(self, inputs):
        due = [item for item in self.writes if item[0] <= self.now]
        if not due:
            return
        item = min(due)
        self.writes.remove(item)
        _, warp, bank = item
        self.outstanding[warp][bank] -= 1
        inputs["written__valid"] = 1
        inputs["written__payload"] = self.config.codecs["written__payload"].pack(
            {"warp": warp, "bank": bank})

    # --- barrier unit ----------------------------------------------------------------

    def _barrier(self, inputs):
        warps = self.config.warps
        kept = [w for w in range(warps)
                if self.at_barrier >> w & 1 and self.rng.random() >= self.barrier_release]
        if self.rng.random() < self.barrier_rate:
            kept.append(self.rng.randrange(warps))
        self.at_barrier = sum(1 << w for w in set(kept))
        inputs["at_barrier"] = self.at_barrier

    # --- one cycle -------------------------------------------------------------------

    def inputs(self) -> dict:
        inputs = {}
        self._region(inputs)
        self._osu(inputs)
        self._issue(inputs)
        self._written(inputs)
        self._barrier(inputs)
        return inputs

    def observe(self, outputs, inputs):
        self._region_taken(outputs)
        self._osu_taken(outputs, inputs)
        self.outputs = outputs
        states = self.config.codecs["state"].unpack(outputs["state"])
        self.draining = {w for w in self.draining
                         if states[w] in (WarpState.ACTIVE.value, WarpState.DRAINING.value)}
        self.now += 1


def cycle(env: Env):
    inputs = env.inputs()
    outputs = yield inputs
    env.observe(outputs, inputs)
    return outputs


def run(env: Env, cycles: int):
    for _ in range(cycles):
        yield from cycle(env)


def wait(env: Env, condition, limit=400):
    """Run cycles until ``condition(outputs)`` holds."""
    for _ in range(limit):
        outputs = yield from cycle(env)
        if condition(outputs):
            return
    raise AssertionError(f"condition not met in {limit} cycles")


def region(config, warp, usage, entries=()):
    return {"warp": warp, "bank_usage": list(usage), "n_entries": len(entries),
            "entries": list(entries)}


def random_region(config, rng, warp):
    """Random bank usage (now and then more than a bank has free), 0..few entries."""
    lpb = config.lines_per_bank
    high = lpb if rng.random() < 0.2 else max(1, lpb // 3)
    usage = [rng.randint(0, high) for _ in range(config.banks)]
    count = rng.randint(0, min(config.max_entries, 2 * config.banks))
    kinds = ("preload", "preload", "invalidate")
    entries = [(rng.randrange(config.regs), rng.choice(kinds)) for _ in range(count)]
    return region(config, warp, usage, entries)


def random_stream(params, rng, cycles):
    """Random regions (some too large for now, some ``done``: the warp exits), random
    queue ``ready``, acknowledgement delays, issues and write latencies; rates change
    every 150 cycles."""
    config = CapacityManagerConfig(**params)
    lives = {w: rng.randint(3, 40) if w % 4 == 1 else 1000 for w in range(config.warps)}
    lives[config.warps - 1] = 1

    def plan(warp):
        lives[warp] -= 1
        return random_region(config, rng, warp) if lives[warp] > 0 else None

    env = Env(config, rng, plan)
    for now in range(cycles):
        if now % 150 == 0:
            env.region_gap = rng.choice([0.0, 0.2, 0.6])
            env.preload_ready = rng.choice([0.2, 0.7, 1.0])
            env.ack_delay = rng.choice([(1, 1), (1, 4), (2, 12)])
            env.issue_rate = rng.choice([0.2, 0.5, 0.9])
            env.write_latency = rng.choice([(1, 3), (1, 20), (10, 60)])
            env.barrier_rate = rng.choice([0.0, 0.1, 0.5])
        yield from cycle(env)


def _state(config, outputs, warp):
    return config.codecs["state"].unpack(outputs["state"])[warp]


def directed_fit_and_drain(params, rng, cycles):
    """Warp 0 takes every line; warp 1's region (one line of bank 0) does not fit and waits;
    warp 0 issues a write to bank 0 and its last instruction: all its lines but the one
    waiting for the write are released at once and warp 1 fits; the late write releases
    the last line and warp 0 goes back on the stack."""
    config = CapacityManagerConfig(**params)
    lpb = config.lines_per_bank
    one = [1] + [0] * (config.banks - 1)
    plans = {0: deque([region(config, 0, [lpb] * config.banks)]),
             1: deque([region(config, 1, one)])}
    env = Env(config, rng, lambda w: plans.get(w, deque()).popleft() if plans.get(w) else
              region(config, w, [0] * config.banks))
    env.write_latency = (20, 20)
    yield from wait(env, lambda o: o["eligible"] & 1)
    yield from run(env, 6)                       # warp 1 is offered and does not fit
    env.issues.extend([(0, True, 0, False), (0, False, 0, True)])
    yield from wait(env, lambda o: _state(config, o, 1) == 2)
    yield from wait(env, lambda o: _state(config, o, 0) == 0, limit=60)
    yield from run(env, 4)


def directed_queue_full(params, rng, cycles):
    """More entry words for one bank than its queue holds, with the OSU not taking them:
    the queue fills and ``region.ready`` stays low until the OSU takes entries."""
    config = CapacityManagerConfig(**params)
    count = min(config.max_entries, config.lines_per_bank + 3)
    regs = [r for r in range(config.regs) if config.bank_of(0, r) == 0]
    entries = [(regs[k % len(regs)], "preload" if k % 3 else "invalidate")
               for k in range(count)]
    env = Env(config, rng, lambda w: region(config, w, [0] * config.banks,
                                            entries if w == 0 else ()))
    env.preload_ready = 0.0
    yield from run(env, config.lines_per_bank + 8)
    env.preload_ready = 0.5
    yield from wait(env, lambda o: o["eligible"] & 1)
    yield from run(env, 4)


def directed_stack_order(params, rng, cycles):
    """Warps 0, 1, 2 are activated in turn; 2 then 0 finish their regions: the stack's top
    is the most recently deactivated (0, then 2), before the warps never run; warp 1 exits
    with a ``done`` header and is never asked for again."""
    config = CapacityManagerConfig(**params)
    count = min(3, config.warps)
    rounds = {w: 0 for w in range(config.warps)}

    def plan(warp):
        rounds[warp] += 1
        if warp == 1 and rounds[warp] > 1:
            return None
        usage = [int(b == warp % config.banks) for b in range(config.banks)]
        return region(config, warp, usage, [(warp % config.regs, "preload")])

    env = Env(config, rng, plan)
    env.region_gap = 0.0
    env.write_latency = (3, 3)
    for w in range(count):
        yield from wait(env, lambda o, w=w: o["eligible"] >> w & 1)
    order = [w for w in (2, 0, 1) if w < count]
    for w in order:
        bank = w % config.banks
        env.issues.extend([(w, True, bank, False), (w, False, bank, True)])
        yield from wait(env, lambda o, w=w: _state(config, o, w) == 3)
        yield from run(env, 2)
    yield from run(env, 60)


def directed_two_drained(params, rng, cycles):
    """Warp 0's late write arrives in the cycle warp 1 issues its last instruction with no
    write outstanding: both have drained at once; warp 0 (lower) is pushed first, warp 1
    the cycle after. Then every warp exits with a ``done`` header."""
    config = CapacityManagerConfig(**params)
    seen = set()

    def plan(warp):
        if warp in seen:
            return None
        seen.add(warp)
        return region(config, warp, [1] * config.banks)

    env = Env(config, rng, plan)
    env.write_latency = (4, 4)
    yield from wait(env, lambda o: o["eligible"] & 1)
    if config.warps > 1:
        yield from wait(env, lambda o: o["eligible"] & 2)
    env.issues.append((0, True, config.banks - 1, True))
    yield from cycle(env)
    yield from run(env, 3)
    if config.warps > 1:
        env.issues.append((1, False, 0, True))
    yield from run(env, 60)


def directed_barrier_hold(params, rng, cycles):
    """Warps 0 and 1 drain while a barrier holds both: they stay DRAINING, off the stack,
    for 12 cycles; warp 1 is released first and pushed, then warp 0."""
    config = CapacityManagerConfig(**params)
    count = min(2, config.warps)
    env = Env(config, rng, lambda w: region(config, w, [1] * config.banks))
    env.write_latency = (2, 2)
    for w in range(count):
        yield from wait(env, lambda o, w=w: o["eligible"] >> w & 1)
    env.barrier_rate = env.barrier_release = 0.0
    held = (1 << count) - 1
    for w in range(count):
        env.issues.append((w, True, w % config.banks, True))
    for _ in range(12):
        env.at_barrier = held
        yield from cycle(env)
    for release in (held & ~1, 0):
        for _ in range(6):
            env.at_barrier = release
            yield from cycle(env)


STIMULI = (random_stream, directed_fit_and_drain, directed_queue_full, directed_stack_order,
           directed_two_drained, directed_barrier_hold)

globals().update(cocotb_tests(STIMULI))
