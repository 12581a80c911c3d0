"""Formal harness of ``wir.register_pool`` in a small configuration.

Inputs are free (``AnySeq``) except for a reset in the first cycle and the pool's
protocol, assumed here (the golden model asserts it): an event names a register with a
reference or the one allocated in the same cycle, and the merged count stays in
``0..2**count_width - 1``. The harness keeps, independently of the RTL, a *shadow count*
per register: +1 for the allocation that takes it, +1 per increment, -1 per decrement.
It asserts:

- **a register with a non-zero count is never in the free pool**: a register in the
  queue (between ``head`` and ``head + queued``) or not yet handed out (at or above
  ``fresh``) has shadow count 0, and a queued register's stored counter is 0;
- **every register is free or referenced (no leak)**: per register, the number of places
  it is free — above ``fresh``, in the queue (counted with multiplicity) or on its way back
  (its merged update in ``pending`` brings it to zero) — is 1 when its shadow count is 0
  and 0 otherwise; the RTL's count (stored counter plus the pending change) equals the
  shadow count;
- **the pool never hands out one id twice**: an offered id has shadow count 0 (it was
  never handed out, or every reference to it has been dropped since);
- ``saturated`` answers whether the shadow count is the maximum; ``in_use`` counts the
  referenced and returning registers; ``alloc.valid`` and ``low_register`` follow the
  policy (free registers, and under capped-register the room below ``cap``); the
  ``pending`` leaders name distinct registers (an induction strengthening).
"""

from amaranth import Cat, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.wir.register_pool import RegisterPool

from ..formal_base import FormalHarness, popcount

__all__ = ["SMALL", "RegisterPoolFormal", "leaders_distinct", "pool_count"]

SMALL = {"pregs": 8, "count_width": 3, "inc_ports": 2, "dec_ports": 2, "query_ports": 1}
"""The proof configuration: a pool of 8 registers, 3-bit counters, 2 increment and 2
decrement ports, 1 query."""


class RegisterPoolFormal(FormalHarness):
    """The pool with free inputs, the protocol assumed and the invariants above."""

    block = RegisterPool
    SMALL = SMALL

    def check(self, m):
        self._drive(m)
        shadow = self._shadow(m)
        free, returning = self._pool(m, shadow)
        self._answers(m, shadow, free, returning)
        # The events: an allocation, a register returning to the pool, a saturated count,
        # the low-water mark.
        dut = self.dut
        self.covers(m, [
            (dut.alloc.valid & dut.alloc.ready, "alloc"),
            (returning != 0, "return_to_pool"),
            (dut.saturated.any(), "saturated"),
            (dut.low_register, "low_register"),
        ])

    def _drive(self, m):
        dut = self.dut
        self.free_ready(m, dut.alloc)
        self.free(m, dut.inc, dut.dec, dut.query)
        if dut.config.capped:
            self.free(m, dut.cap)

    def _shadow(self, m):
        """Per register: the shadow count, and the protocol on this cycle's events."""
        dut, config = self.dut, self.dut.config
        taken = dut.alloc.valid & dut.alloc.ready
        width = config.count_width + 2
        shadow = []
        for r in range(config.pregs):
            count = Signal(width, name=f"shadow_{r}")
            allocated = taken & (dut.alloc.payload == r)
            ups = popcount(Cat(p.valid & (p.preg == r) for p in dut.inc))
            downs = popcount(Cat(p.valid & (p.preg == r) for p in dut.dec))
            after = Signal(range(-4 * (config.max_count + 1), 4 * (config.max_count + 1)),
                           name=f"after_{r}")
            m.d.comb += after.eq(count + allocated + ups - downs)
            with m.If(self.running):
                with m.If((ups + downs != 0) & (count == 0)):
                    m.d.comb += Assume(allocated)
                m.d.comb += Assume((after >= 0) & (after <= config.max_count))
            m.d.sync += count.eq(after)
            shadow.append(count)
        return shadow

    def _pool(self, m, shadow):
        """Free exactly once when unreferenced, never when referenced; counts agree."""
        dut, config = self.dut, self.dut.config
        bits = config.preg_bits
        slots = []
        for i in range(config.pregs):
            read = dut.queue.read_port(domain="comb")
            position = Signal(bits, name=f"queue_pos_{i}")
            m.d.comb += [position.eq(i - dut.head), read.addr.eq(i)]
            slots.append((position < dut.queued, read.data))
        for _, _, distinct in leaders_distinct(dut):
            m.d.comb += Assert(distinct)
        free, back = [], []
        for r in range(config.pregs):
            stored = dut.counters.read_port(domain="comb")
            m.d.comb += stored.addr.eq(r)
            hits = [dut.pending[s].leader & (dut.pending[s].preg == r)
                    for s in range(config.slots)]
            change = Signal(config.delta_shape, name=f"change_{r}")
            for s, hit in enumerate(hits):
                with m.If(hit):
                    m.d.comb += change.eq(dut.pending[s].delta)
            handed = dut.fresh > r
            rtl = Signal(range(-16 * (config.max_count + 1), 16 * (config.max_count + 1)),
                         name=f"rtl_count_{r}")
            m.d.comb += rtl.eq(stored.data + change)
            queued = popcount(Cat(inside & (held == r) for inside, held in slots))
            returning = Cat(hits).any() & (rtl == 0)
            places = Signal(range(config.pregs + 3), name=f"free_places_{r}")
            m.d.comb += places.eq(~handed + queued + returning)
            free.append(~handed + queued)
            back.append(returning)
            m.d.comb += Assert(places == (shadow[r] == 0))
            with m.If(handed):
                m.d.comb += Assert(rtl == shadow[r])
            with m.Else():
                m.d.comb += [Assert(shadow[r] == 0), Assert(~Cat(hits).any())]
            with m.If(queued != 0):
                m.d.comb += Assert((stored.data == 0) & ~Cat(hits).any())
        m.d.comb += [Assert(dut.fresh <= config.pregs), Assert(dut.queued <= config.pregs)]
        return sum(free), sum(back)

    def _answers(self, m, shadow, free, returning):
        """The offer is unreferenced; ``saturated``, ``in_use``, ``alloc.valid`` and
        ``low_register`` follow the shadow counts and the policy."""
        dut, config = self.dut, self.dut.config
        offered = self._select(m, shadow, dut.alloc.payload, "offered")
        with m.If(dut.alloc.valid):
            m.d.comb += Assert(offered == 0)
        for q in range(config.query_ports):
            queried = self._select(m, shadow, dut.query[q], f"queried_{q}")
            m.d.comb += Assert(dut.saturated[q] == (queried == config.max_count))
        referenced = popcount(Cat(count != 0 for count in shadow))
        available = Signal(range(config.pregs + 1))
        in_use = config.pregs - free
        m.d.comb += [Assert(dut.in_use == referenced + returning), available.eq(free)]
        if config.capped:
            with m.If(dut.cap <= in_use):
                m.d.comb += available.eq(0)
            with m.Elif(dut.cap - in_use < free):
                m.d.comb += available.eq(dut.cap - in_use)
        m.d.comb += [Assert(dut.alloc.valid == (available != 0)),
                     Assert(dut.low_register == (available <= config.low_water))]

    @staticmethod
    def _select(m, shadow, preg, name):
        """The shadow count of the register ``preg`` names."""
        selected = Signal(len(shadow[0]), name=name)
        with m.Switch(preg):
            for r, count in enumerate(shadow):
                with m.Case(r):
                    m.d.comb += selected.eq(count)
        return selected


def leaders_distinct(pool):
    """Per pair of merge slots ``s < t`` of ``pool`` (a ``RegisterPool``): ``(s, t,
    condition)``, the condition that they do not both lead one register (asserted on the
    pool and its ledger, assumed where the pool is a part)."""
    slots = pool.config.slots
    for s in range(slots):
        for t in range(s + 1, slots):
            a, b = pool.pending[s], pool.pending[t]
            yield s, t, ~(a.leader & b.leader & (a.preg == b.preg))


def pool_count(m, pool, r, shape):
    """Register ``r``'s count in ``pool`` (a ``RegisterPool``): its stored counter plus the
    change of the merge slot that leads it, as ``count_{r}``; returns the count and, per
    merge slot, whether it leads ``r``."""
    config = pool.config
    stored = pool.counters.read_port(domain="comb")
    m.d.comb += stored.addr.eq(r)
    hits = [pool.pending[s].leader & (pool.pending[s].preg == r) for s in range(config.slots)]
    change = Signal(config.delta_shape, name=f"change_{r}")
    for s, hit in enumerate(hits):
        with m.If(hit):
            m.d.comb += change.eq(pool.pending[s].delta)
    count = Signal(shape, name=f"count_{r}")
    m.d.comb += count.eq(stored.data + change)
    return count, hits
