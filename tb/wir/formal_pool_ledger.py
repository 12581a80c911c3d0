"""Formal harness of ``wir.register_pool``'s ledger at ``wir.backend``'s pool configuration.

The **ledger** of a handed-out register ``r`` (``ledger_r``): its count next cycle (stored
counter plus the change of the merge slot that leads it, :func:`~.formal_register_pool.
pool_count`) is 1 if it was allocated, else its count modulo ``2**count_width`` (the
counter's write), plus the net events naming it (+1 per increment port, -1 per decrement
port), exactly: the change is not wrapped. It is what
``wir.backend``'s counting argument needs of the pool (docs/reliability.md); one query with
the merge's 25 popcounts against a plain count had no verdict in 1,500 s (session 20).
Split into one-cycle lemmas, each a small query (session 21):

- ``distinct_s_t``: the merge register's leaders name distinct registers (ABC ``pdr``);
- ``stored_r``: the stored counter is last cycle's count, or 1 if it was allocated;
- ``unled_r``: no slot leads ``r`` only if no event named it last cycle;
- ``leads_s``: a leading slot's change is last cycle's net events on its register
  (exactly: ``delta_shape`` holds every net the ports can make);
- ``ledger_r`` follows from the three (:data:`LEMMAS` assumed).

Inputs are free; assumed: a reset in the first cycle and that an allocated register is
not led by a merge slot in the same cycle (in the backend an allocated register is free
and no slot leads a free one: ``wir.backend`` asserts it as ``alloc_unled_r``).
"""

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.wir.register_pool import RegisterPool

from ..formal_base import FormalHarness, popcount
from .formal_register_pool import leaders_distinct, pool_count

__all__ = ["CONFIG", "DISTINCT", "LEDGER", "LEMMAS", "PoolLedgerFormal", "net_events"]

CONFIG = {"pregs": 4, "count_width": 5, "inc_ports": 11, "dec_ports": 14, "query_ports": 9,
          "policy": "max_register", "low_water": 1, "headroom": 9}
"""``wir.backend``'s pool at ``formal_backend.SMALL`` (``tests/test_wir_pool_ledger.py``
checks that they agree)."""

DISTINCT = (r"distinct_\d+_\d+",)
LEMMAS = (r"stored_\d+", r"unled_\d+", r"leads_\d+")
LEDGER = (r"ledger_\d+",)
"""``prove``'s patterns of the three groups of assertions, in proof order."""


def net_events(pool, r, incs=None, decs=None):
    """The net events naming register ``r`` on ``pool``'s increment ports ``incs`` and
    decrement ports ``decs`` (indices; default all): increments minus decrements (a signed
    value)."""
    incs = range(len(pool.inc)) if incs is None else incs
    decs = range(len(pool.dec)) if decs is None else decs
    return (popcount(Cat(pool.inc[i].valid & (pool.inc[i].preg == r) for i in incs))
            - popcount(Cat(pool.dec[i].valid & (pool.dec[i].preg == r) for i in decs)))


def named(pool, r):
    """Whether a valid port of ``pool`` names register ``r``."""
    return Cat(port.valid & (port.preg == r) for port in (*pool.inc, *pool.dec)).any()


class PoolLedgerFormal(FormalHarness):
    """The pool with free inputs, its ledger and the lemmas it follows from asserted."""

    block = RegisterPool
    SMALL = CONFIG

    def check(self, m):
        dut = self.dut
        self.free_ready(m, dut.alloc)
        self.free(m, dut.inc, dut.dec, dut.query)
        self._distinct(m)
        nets = [self._register(m, r) for r in range(dut.config.pregs)]
        self._leads(m, nets)

    def _distinct(self, m):
        """The merge register's leaders name distinct registers."""
        for s, t, distinct in leaders_distinct(self.dut):
            m.d.comb += Assert(distinct, f"distinct_{s}_{t}")

    def _register(self, m, r):
        """Register ``r``'s ``stored``, ``unled`` and ``ledger`` assertions; returns last
        cycle's net events naming it."""
        dut, width = self.dut, self.dut.config.count_width
        count, hits = pool_count(m, dut, r, range(-64, 128))
        allocated = dut.alloc.valid & dut.alloc.ready & (dut.alloc.payload == r)
        with m.If(self.running):
            m.d.comb += Assume(~(allocated & Cat(hits).any()))
        net = Signal(range(-32, 32), name=f"net_{r}")
        m.d.comb += net.eq(net_events(dut, r))
        last_net = Signal.like(net, name=f"last_net_{r}")
        last_named = Signal(name=f"last_named_{r}")
        stored_next = Signal(width, name=f"stored_next_{r}")
        expected = Signal(range(-64, 128), name=f"expected_{r}")
        m.d.sync += [last_net.eq(net), last_named.eq(named(dut, r)),
                     stored_next.eq(Mux(allocated, 1, count[:width])),
                     expected.eq(Mux(allocated, 1, count[:width]) + net)]
        stored = dut.counters.read_port(domain="comb")
        m.d.comb += stored.addr.eq(r)
        handed = self.after_reset & (dut.fresh > r)
        with m.If(handed):
            m.d.comb += [Assert(stored.data == stored_next, f"stored_{r}"),
                         Assert(count == expected, f"ledger_{r}")]
        with m.If(self.after_reset & ~Cat(hits).any()):
            m.d.comb += Assert(~last_named, f"unled_{r}")
        return last_net

    def _leads(self, m, nets):
        """A leading slot's change is last cycle's net events on its register."""
        dut = self.dut
        for s in range(dut.config.slots):
            slot = dut.pending[s]
            net = Signal.like(nets[0], name=f"slot_net_{s}")
            with m.Switch(slot.preg):
                for r, last in enumerate(nets):
                    with m.Case(r):
                        m.d.comb += net.eq(last)
            with m.If(self.after_reset & slot.leader):
                m.d.comb += Assert(slot.delta == net, f"leads_{s}")
