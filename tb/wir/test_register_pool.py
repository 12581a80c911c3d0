"""cocotb bench of ``wir.register_pool`` against its golden model.

Every stimulus keeps its own view of the references it holds (``Refs``) so that it obeys
the pool's protocol: events name only registers it holds a reference to, and counts stay
in ``0..2**count_width - 1``.
"""

from gpurf.hw.wir.configs import RegisterPoolConfig
from gpurf.tb.harness import cocotb_tests

__all__ = ["STIMULI", "Refs"]


class Refs:
    """The references a stimulus holds, per register, and the packing of its inputs."""

    def __init__(self, params):
        self.config = config = RegisterPoolConfig(**params)
        self.counts = {}
        self.offer = None
        self.cap = config.pregs

    def held(self):
        return sorted(p for p, n in self.counts.items() if n)

    def inputs(self, *, take, incs=(), decs=(), queries=()):
        """One cycle's input ports; ``incs``/``decs``: registers per port (``None`` idle)."""
        config = self.config
        incs = list(incs) + [None] * (config.inc_ports - len(incs))
        decs = list(decs) + [None] * (config.dec_ports - len(decs))
        queries = (list(queries) + [0] * config.query_ports)[:config.query_ports]
        ports = {
            "alloc__ready": int(take),
            "inc": self._pack("inc", incs),
            "dec": self._pack("dec", decs),
            "query": config.codecs["query"].pack(queries),
        }
        if config.capped:
            ports["cap"] = self.cap
        return ports

    def _pack(self, port, pregs):
        return self.config.codecs[port].pack([{"valid": 1, "preg": p} if p is not None else {}
                                             for p in pregs])

    def observe(self, inputs, got, incs=(), decs=()):
        """Account for one cycle: the taken offer (count 1) and the events."""
        self.offer = None
        if got["alloc__valid"]:
            if inputs["alloc__ready"]:
                self.counts[got["alloc__payload"]] = 1
            else:
                self.offer = got["alloc__payload"]
        for preg in incs:
            if preg is not None:
                self.counts[preg] += 1
        for preg in decs:
            if preg is not None:
                self.counts[preg] -= 1

    def room(self, preg, planned):
        return self.config.max_count - self.counts.get(preg, 0) - planned


def _cycle(refs, *, take, incs=(), decs=(), queries=()):
    """Generator step shared by the stimuli: yield one cycle and account for it."""
    inputs = refs.inputs(take=take, incs=incs, decs=decs, queries=queries)
    got = yield inputs
    refs.observe(inputs, got, incs, decs)
    return got


MODES = {"fill": (0.9, 0.2, 0.1), "drain": (0.2, 0.05, 0.8), "mixed": (0.5, 0.2, 0.3)}
"""Per phase: probabilities of taking the offer, of an increment and of a decrement port."""


def _draw_events(refs, rng, mode, early):
    """Random legal events; ``early``: the offer taken this very cycle (count 1 from the
    cycle's edge, so it may get events too)."""
    config = refs.config
    _, p_inc, p_dec = MODES[mode]
    pick = refs.held() + ([early] * 3 if early is not None else [])

    def have(preg):
        return refs.counts.get(preg, 0) + (preg == early)

    incs, decs, up, down = [], [], {}, {}
    for _ in range(config.inc_ports):
        preg = rng.choice(incs[-1:] * 2 + pick) if pick and rng.random() < p_inc else None
        if preg is not None and have(preg) + up.get(preg, 0) < config.max_count:
            up[preg] = up.get(preg, 0) + 1
        else:
            preg = None
        incs.append(preg)
    for _ in range(config.dec_ports):
        preg = rng.choice(decs[-1:] * 2 + pick) if pick and rng.random() < p_dec else None
        if preg is not None and have(preg) - down.get(preg, 0) > 0:
            down[preg] = down.get(preg, 0) + 1
        else:
            preg = None
        decs.append(preg)
    return incs, decs


def _queries(refs, rng):
    config = refs.config
    held = refs.held()
    return [rng.choice(held) if held and rng.random() < 0.7 else rng.randrange(config.pregs)
            for _ in range(config.query_ports)]


def random_events(params, rng, cycles):
    """Phases of filling, draining and mixed traffic: random takes, increments and
    decrements (several ports on one register), the offer incremented or released in the
    cycle it is taken, random queries, and (capped policy) a cap that moves now and then."""
    refs = Refs(params)
    mode = "fill"
    for cycle in range(cycles):
        if cycle % 97 == 0:
            mode = rng.choice(tuple(MODES))
        take = rng.random() < MODES[mode][0]
        early = None
        if refs.config.capped and rng.random() < 0.03:
            refs.cap = rng.choice([0, refs.config.pregs, rng.randrange(refs.config.pregs + 1)])
        elif take and refs.offer is not None and rng.random() < 0.5:
            early = refs.offer
        incs, decs = _draw_events(refs, rng, mode, early)
        got = yield from _cycle(refs, take=take, incs=incs, decs=decs,
                                queries=_queries(refs, rng))
        assert early is None or got["alloc__payload"] == early, "the held offer moved"


def directed_exhaust(params, rng, cycles):
    """Take every offer until the pool runs dry (low-register mode, ``alloc.valid`` low),
    hold everything a while, then release one, two and all decrement ports' worth of
    registers per cycle and take them again in FIFO order (2-cycle release)."""
    refs = Refs(params)
    config = refs.config
    refs.cap = config.pregs // 2
    for _ in range(config.pregs // 2 + 3):
        yield from _cycle(refs, take=True, queries=_queries(refs, rng))
    refs.cap = config.pregs
    got = yield from _cycle(refs, take=True)
    while got["alloc__valid"]:
        got = yield from _cycle(refs, take=True, queries=_queries(refs, rng))
    for _ in range(4):
        yield from _cycle(refs, take=True, queries=_queries(refs, rng))
    for batch in [*sorted({1, min(2, config.dec_ports), config.dec_ports}), 1]:
        victims = refs.held()[:batch]
        rng.shuffle(victims)
        yield from _cycle(refs, take=False, decs=victims)
        for _ in range(4):
            yield from _cycle(refs, take=False, queries=_queries(refs, rng))
        for _ in range(batch + 1):
            yield from _cycle(refs, take=True)
    while refs.held():
        yield from _cycle(refs, take=False, decs=refs.held()[:config.dec_ports])
    for _ in range(3):
        yield from _cycle(refs, take=False)


def directed_merge(params, rng, cycles):
    """Many ports on one register in a cycle: increments only, increments and decrements
    cancelling, a net decrement to zero by several ports at once, and several registers
    reaching zero in one cycle (they return in decrement-port order)."""
    refs = Refs(params)
    config = refs.config
    count = min(config.dec_ports + 1, config.pregs)
    while len(refs.held()) < count:
        yield from _cycle(refs, take=True)
    first = refs.held()[0]
    ups = min(config.inc_ports, config.max_count - 1)
    downs = min(config.dec_ports, ups + 1)
    steps = [
        ([first] * ups, []),
        ([first] * min(config.inc_ports, downs), [first] * downs),
    ]
    for incs, decs in steps:
        yield from _cycle(refs, take=False, incs=incs, decs=decs, queries=[first])
    while refs.counts[first] > 0:
        yield from _cycle(refs, take=False,
                          decs=[first] * min(config.dec_ports, refs.counts[first]))
    others = refs.held()[:config.dec_ports]
    yield from _cycle(refs, take=False, decs=others[::-1])
    for _ in range(3):
        yield from _cycle(refs, take=True)


def directed_saturate(params, rng, cycles):
    """Take a register and increment it in the same cycle, count it up to saturation with
    every increment port (queried every cycle), then down to zero with every decrement
    port, and take every offer for a while (the register again, once it has returned,
    in configurations of at most 64 registers)."""
    refs = Refs(params)
    config = refs.config
    got = yield from _cycle(refs, take=False)
    early = got["alloc__payload"]
    yield from _cycle(refs, take=True, incs=[early], queries=[early])
    while refs.counts[early] < config.max_count:
        step = min(config.inc_ports, config.max_count - refs.counts[early])
        yield from _cycle(refs, take=False, incs=[early] * step,
                          queries=[early, (early + 1) % config.pregs])
    yield from _cycle(refs, take=False, queries=[early])
    while refs.counts[early] > 0:
        step = min(config.dec_ports, refs.counts[early])
        yield from _cycle(refs, take=False, decs=[early] * step, queries=[early])
    for _ in range(min(config.pregs, 64) + 4):
        yield from _cycle(refs, take=True, queries=[early])


STIMULI = (random_events, directed_exhaust, directed_merge, directed_saturate)


globals().update(cocotb_tests(STIMULI))
