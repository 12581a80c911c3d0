"""Free register pool and reference counters of WIR (paper Section V-E, VII-E)."""

import functools

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory

from gpurf.hw.gates import or_all, ripple_add
from gpurf.hw.params import ConfiguredComponent

from .configs import RegisterPoolConfig

__all__ = ["RegisterPool", "RegisterPoolConfig"]


class RegisterPool(ConfiguredComponent, config=RegisterPoolConfig):
    """Free pool of physical warp registers with merged reference counters (paper V-E).

    **State.** ``counters``: one ``count_width``-bit counter per register (an unmapped
    memory, ``pregs x count_width`` = 10,240 bits at the defaults, the paper's figure).
    ``queue``: the free-pool FIFO of recycled ids (an unmapped memory of ``pregs x
    preg_bits`` bits, which the paper leaves out; one read port, ``dec_ports`` write
    ports). Memories cannot be reset, so the pool hands out the never-used ids from the
    counter ``fresh`` (0, 1, ..., ``pregs - 1``) before the recycled ids of the queue:
    after reset every id is free with no clearing sweep. Ids come out in FIFO order.

    **Allocation** (``alloc``, a stream of free ids, latency 0). ``alloc.valid`` is high
    while an id may be allocated (``available > 0``, below) and ``alloc.payload`` is the
    oldest free id. A transfer removes the id from the pool and sets its count to 1: the
    allocation is the id's first reference, owned by the taker (e.g. handed on to the new
    rename mapping). Under the max-register policy an offer is held until taken (stream
    rule); under capped-register it is withdrawn when ``cap`` falls to ``in_use``.

    **Reference events** (``inc[k]``, ``dec[k]``, valid-only, always taken). Every valid
    port is +1 / -1 on its ``preg``; several ports may name one register in a cycle, and
    their net change is merged per counter (the paper's scheduler). Protocol (the golden
    model asserts it, the formal harness assumes it): a port names only a register with
    references (count > 0, counting the events of earlier cycles) or the one allocated in
    the same cycle, and the merged count stays in ``0..2**count_width - 1``.

    **Pipeline** (2 cycles, paper VII-E). Cycle ``t``: the events are merged (per slot,
    decrement ports first: the lowest slot naming a register leads it and carries the net
    change) into the merge register ``pending``. Cycle ``t+1``: each leader reads its
    counter, adds the change and writes it back; a counter reaching zero puts its id at the
    queue's tail (several in one cycle in decrement-port order). Cycle ``t+2``: the id can
    be offered on ``alloc``. **Latency from a decrement to the id being allocatable: 2
    cycles** (when the pool has no older free id).

    **Queries** (latency 0). ``saturated[q]`` is high when the count of ``query[q]``,
    including every event taken in earlier cycles, is at least ``saturation`` (the maximum
    ``2**count_width - 1`` minus ``headroom``, default 0): a VSB or reuse-buffer hit on
    that register must be treated as a miss (spec), so that its count never overflows. A
    free register's count is 0.

    **Policies.** ``free`` = ids in the pool; ``in_use`` (output) = ``pregs - free``
    (allocated ids, including those whose count reached zero and are on their way back).
    ``available`` = ``free`` under max-register; under capped-register (at most logical
    registers x active warps, the input ``cap``) ``min(free, max(cap - in_use, 0))``.
    ``low_register`` is high while ``available <= low_water`` (the paper's low-register
    mode at ``low_water = 0``: the pool ran dry or the cap is reached).

    **Spec interpretations.** The allocation counts as a reference (so every register is
    free or referenced at every cycle, the invariant proved in
    ``tb/wir/formal_register_pool.py``). ``saturated`` sees only events already taken: a
    composition whose hit increments the count some cycles after the query must keep the
    hits in flight from overflowing it (e.g. treat ``count >= max - in-flight`` as
    saturated outside the pool). The queue has ``dec_ports`` write ports (the paper models
    the allocator as a 1r1w table; up to ``dec_ports`` counters can reach zero in one
    cycle). ``low_water`` is an extension (the paper's mode is ``low_water = 0``);
    ``pregs`` is a power of two so that the queue pointers wrap for free.

    Attributes
    ----------
    alloc : Out(stream.Signature(preg_bits))
        Free ids: ``valid``, ``ready``, ``payload``.
    inc, dec : In(ArrayLayout(preg_ref_layout, inc_ports / dec_ports))
        Per port: ``valid``, ``preg``.
    query : In(ArrayLayout(preg_bits, query_ports))
        Registers to check for a saturated count.
    saturated : Out(query_ports)
        Bit ``q``: ``query[q]``'s count is saturated.
    cap : In(range(pregs + 1))
        Capped-register policy only: logical registers x active warps.
    in_use : Out(range(pregs + 1))
        Ids not in the pool.
    low_register : Out(1)
        Low-register mode.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.fresh = Signal(range(config.pregs + 1))
        """Ids below ``fresh`` have been handed out at least once."""
        self.head = Signal(config.preg_bits)
        self.queued = Signal(range(config.pregs + 1))
        self.pending = Signal(data.ArrayLayout(config.merge_layout, config.slots))
        """The merge register: per slot, the net change of one register (cycle ``t+1``)."""

    @functools.cached_property
    def counters(self) -> memory.Memory:
        """Reference counter of each register (meaningful for ids below ``fresh``), created
        on first use (elaboration, or a formal harness adding its own read ports)."""
        return memory.Memory(shape=self.config.count_width, depth=self.config.pregs, init=[])

    @functools.cached_property
    def queue(self) -> memory.Memory:
        """Free-pool FIFO of recycled ids: ``queued`` ids from ``head``, created on first
        use."""
        return memory.Memory(shape=self.config.preg_bits, depth=self.config.pregs, init=[])

    def elaborate(self, platform):
        m = Module()
        m.submodules.counters = self.counters
        m.submodules.queue = self.queue
        self._merge(m)
        new = self._update(m)
        release = self._release(m, new)
        pop = self._allocate(m)
        config = self.config
        width = config.preg_bits + 1
        total = Signal(range(config.dec_ports + 1), name="released")
        m.d.comb += total.eq(_popcount(release, config.release_terms))
        grown = ripple_add(m, self.queued, total, width, "queued_grown")
        queued = ripple_add(m, grown, pop, width, "queued_next", subtract=True)
        m.d.sync += [
            self.queued.eq(queued),
            self.head.eq(ripple_add(m, self.head, pop, config.preg_bits, "head_next")),
        ]
        self._queries(m, new)
        return m

    def _events(self):
        """Per slot: (valid, preg, +1 or -1), decrement ports first."""
        return ([(port.valid, port.preg, -1) for port in self.dec]
                + [(port.valid, port.preg, +1) for port in self.inc])

    def _merge(self, m):
        """Cycle ``t``: the lowest slot naming a register leads it with the net change."""
        config = self.config
        events = self._events()
        terms = config.merge_terms
        same = {}
        for s in range(config.slots):
            for t in range(s + 1, config.slots):
                same[s, t] = same[t, s] = Signal(name=f"same_{s}_{t}")
                m.d.comb += same[s, t].eq(events[s][0] & events[t][0]
                                          & (events[s][1] == events[t][1]))
        for s, (valid, preg, _) in enumerate(events):
            led = Cat(same[t, s] for t in range(s)).any() if s else 0
            ups = [valid if t == s else same[s, t]
                   for t, (_, _, sign) in enumerate(events) if sign > 0]
            downs = [valid if t == s else same[s, t]
                     for t, (_, _, sign) in enumerate(events) if sign < 0]
            delta = Signal(config.delta_shape, name=f"delta_{s}")
            m.d.comb += delta.eq(_popcount(ups, terms) - _popcount(downs, terms))
            slot = self.pending[s]
            m.d.sync += [slot.leader.eq(valid & ~led), slot.preg.eq(preg), slot.delta.eq(delta)]

    def _update(self, m):
        """Cycle ``t+1``: each leader's counter plus its change, written back; returns the
        new counts."""
        config = self.config
        new = []
        for s in range(config.slots):
            slot = self.pending[s]
            read = self.counters.read_port(domain="comb")
            write = self.counters.write_port()
            change = Signal(config.count_width, name=f"change_{s}")
            count = Signal(config.count_width, name=f"new_{s}")
            m.d.comb += [
                change.eq(slot.delta),
                read.addr.eq(slot.preg),
                count.eq(read.data + change),
                write.addr.eq(slot.preg),
                write.data.eq(count),
                write.en.eq(slot.leader),
            ]
            new.append(count)
        return new

    def _release(self, m, new):
        """Counters reaching zero put their ids at the queue's tail, in slot order (only a
        decrement slot can lead a register whose count falls); returns the release bits."""
        config = self.config
        bits = config.preg_bits
        address = Signal(bits, name="tail")
        m.d.comb += address.eq(self.head + self.queued[:bits])
        release = []
        for s in range(config.dec_ports):
            slot = self.pending[s]
            freed = Signal(name=f"release_{s}")
            m.d.comb += freed.eq(slot.leader & ~new[s].any())
            write = self.queue.write_port()
            m.d.comb += [write.addr.eq(address), write.data.eq(slot.preg), write.en.eq(freed)]
            address = ripple_add(m, address, freed, bits, f"release_addr_{s + 1}")
            release.append(freed)
        return release

    def _allocate(self, m):
        """The offer, the policy, and the allocation's count of 1; returns the queue pop."""
        config = self.config
        width = config.preg_bits + 1
        fresh_left = Signal()
        free = Signal(width)
        available = Signal(width)
        head = self.queue.read_port(domain="comb")
        m.d.comb += [
            fresh_left.eq(~self.fresh[config.preg_bits]),
            self.in_use.eq(self.fresh - self.queued),
            free.eq(Const(config.pregs, width) - self.in_use),
            head.addr.eq(self.head),
        ]
        if config.capped:
            room = Signal(width)
            m.d.comb += room.eq(Mux(self.cap > self.in_use, self.cap - self.in_use,
                                    Const(0, width)))
            m.d.comb += available.eq(Mux(room < free, room, free))
        else:
            m.d.comb += available.eq(free)
        m.d.comb += [
            self.alloc.valid.eq(available.any()),
            self.alloc.payload.eq(Mux(fresh_left, self.fresh[:config.preg_bits], head.data)),
            self.low_register.eq(_at_most(m, available, config.low_water)),
        ]
        take = Signal()
        pop = Signal()
        m.d.comb += [take.eq(self.alloc.valid & self.alloc.ready), pop.eq(take & ~fresh_left)]
        m.d.sync += self.fresh.eq(ripple_add(m, self.fresh, take & fresh_left, width, "fresh_next"))
        first = self.counters.write_port()
        m.d.comb += [first.addr.eq(self.alloc.payload), first.data.eq(1), first.en.eq(take)]
        return pop

    def _queries(self, m, new):
        """``saturated[q]``: the count after every earlier event is at least ``saturation``."""
        config = self.config
        bits = config.preg_bits
        for q in range(config.query_ports):
            preg = self.query[q]
            read = self.counters.read_port(domain="comb")
            hits = [self.pending[s].leader & (self.pending[s].preg == preg)
                    for s in range(config.slots)]
            count = Signal(config.count_width, name=f"query_{q}_count")
            merged = or_all([value & hit.replicate(config.count_width)
                              for hit, value in zip(hits, new, strict=True)])
            handed = self.fresh[bits] | (preg < self.fresh[:bits])
            m.d.comb += [
                read.addr.eq(preg),
                count.eq(Mux(Cat(hits).any(), merged, read.data)),
                self.saturated[q].eq(self._saturated(m, count, q) & handed),
            ]

    def _saturated(self, m, count, q):
        """``count >= saturation`` (the maximum when ``headroom`` is 0)."""
        config = self.config
        if not config.headroom:
            return count.all()
        return ~_at_most(m, count, config.saturation - 1, f"query_{q}_unsaturated")


def _at_most(m, value, bound, name="at_most"):
    """``value <= bound`` for a constant ``bound``: the borrow of ``value - (bound + 1)``
    (a comparison with a narrower constant is a Verilator WIDTHEXPAND finding)."""
    if bound == 0:
        return ~value.any()
    width = len(value) + 1
    return ripple_add(m, value, Const(bound + 1, width), width, name, subtract=True)[-1]


def _popcount(bits, terms):
    """The number of set ``bits`` as a balanced tree of native adders over ``terms`` (a
    power of two) one-bit terms, padded with zeros so that both operands of every adder
    have the same width (Verilator's WIDTHEXPAND lint flags narrower ones); the result is
    ``log2(terms) + 1`` bits wide.

    Not :func:`gpurf.hw.gates.ripple_add`: a chain of gate-level ripple adders is a
    different netlist (deeper, and named carries) from this tree of native adders."""
    level = list(bits) + [Const(0, 1)] * (terms - len(bits))
    while len(level) > 1:
        level = [level[i] + level[i + 1] for i in range(0, len(level), 2)]
    return level[0]


