"""The register pool's ledger at ``wir.backend``'s pool configuration, an open proof
(docs/reliability.md, "Not yet proved", session 20).

``python docs/examples/wir_pool_ledger.py [ENGINE] [TIMEOUT]`` (defaults ``smtbmc yices``,
600 s) proves, on ``RegisterPool`` alone with 4 registers, 5-bit counts, 14 decrement and
11 increment ports (``BackendFormal().dut.back.pool.config``), by k-induction of depth 1
(or ``abc pdr``): per register handed out, its count next cycle (stored counter plus the
pending change) is 1 if it was allocated, else its count, plus the net events naming it
(``ledger_r``); and the merge's leaders name distinct registers (``distinct_s_t``). An
allocated register being led in the same cycle is assumed away (in the backend an
allocated register is free, and no merge slot leads a free one). Session 20: no verdict
in 1,500 s with yices; ``abc pdr`` proves the 300 ``distinct`` assertions in seconds and
times out on the ledgers. It prints the verdict and the log's tail.
"""

import sys

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.wir.register_pool import RegisterPool
from gpurf.sim.formal import prove
from gpurf.tb.formal_base import FormalHarness, popcount
from gpurf.tb.wir.formal_register_pool import pool_count

CONFIG = {"pregs": 4, "count_width": 5, "inc_ports": 11, "dec_ports": 14, "query_ports": 9,
          "policy": "max_register", "low_water": 1, "headroom": 9}
"""``wir.backend``'s pool at ``formal_backend.SMALL``."""


class PoolLedger(FormalHarness):
    """The pool with free inputs, its leaders distinct and its ledger asserted."""

    block = RegisterPool
    SMALL = CONFIG

    def check(self, m):
        dut = self.dut
        self.free_ready(m, dut.alloc)
        self.free(m, dut.inc, dut.dec, dut.query)
        self._distinct(m)
        past = Signal(name="past")
        m.d.sync += past.eq(1)
        for r in range(dut.config.pregs):
            self._ledger(m, r, past)

    def _distinct(self, m):
        """The merge register's leaders name distinct registers."""
        pending, slots = self.dut.pending, self.dut.config.slots
        for s in range(slots):
            for t in range(s + 1, slots):
                m.d.comb += Assert(~(pending[s].leader & pending[t].leader
                                     & (pending[s].preg == pending[t].preg)),
                                   f"distinct_{s}_{t}")

    def _ledger(self, m, r, past):
        """Register ``r``'s count next cycle from its count and this cycle's events."""
        dut, config = self.dut, self.dut.config
        count, hits = pool_count(m, dut, r, range(-64, 128))
        allocated = dut.alloc.valid & dut.alloc.ready & (dut.alloc.payload == r)
        with m.If(self.running):
            m.d.comb += Assume(~(allocated & Cat(hits).any()))
        net = Signal(range(-32, 32), name=f"net_{r}")
        m.d.comb += net.eq(popcount(Cat(p.valid & (p.preg == r) for p in dut.inc))
                           - popcount(Cat(p.valid & (p.preg == r) for p in dut.dec)))
        expected = Signal(range(-64, 128), name=f"expected_{r}")
        m.d.sync += expected.eq(Mux(allocated, 1, count) + net)
        with m.If(past & (dut.fresh > r)):
            m.d.comb += Assert((count - expected)[:config.count_width] == 0, f"ledger_{r}")


def main(argv: list[str]) -> int:
    engine = argv[0] if argv else "smtbmc yices"
    timeout = float(argv[1]) if len(argv) > 1 else 600
    result = prove(PoolLedger(), name="wir_pool_ledger", mode="prove", depth=1,
                   engine=engine, timeout=timeout)
    print(result)
    print(result.log_tail)
    return 0 if result.passed else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
