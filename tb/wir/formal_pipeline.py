"""Formal harness of ``wir.pipeline``: no leak, assume-guarantee, in a small configuration.

Inputs are free (``AnySeq``) after a reset in the first cycle, except for the environment's
protocol: ``drop`` and ``reuse`` name only a register with an in-flight source reference
the environment holds (taken through ``held``; the harness counts them, ``holds``).

**Assumptions (the parts' proven properties, assume-guarantee).** The invariants proved
of ``wir.register_pool`` (``tb/wir/formal_register_pool.py``: the merge register's leaders
name distinct registers; ``fresh`` and ``queued`` at most ``pregs``) and of
``wir.value_signature_buffer`` (``tb/wir/formal_value_signature_buffer.py``: the valid
flip-flops and the table agree; a valid entry's register was handed out, ``< fresh``) are
assumed on the parts' state, as induction strengthenings; from reset they hold anyway.

**Guarantees (asserted).** Per physical register ``r``, its *holders* are the valid
mappings naming it, the valid VSB entries naming it and the environment's in-flight
references ``holds[r]``:

- **no leak, counted once**: a register with holders was handed out, is not in the free
  queue and its count (stored counter plus the merge register's pending change) equals its
  holders; a register without holders is free exactly once (never handed out, in the
  queue once, or returning with its update to zero);
- **every allocation is served**: when the decide stage asks the pool for a register,
  one is offered (``result.ready``'s credit);
- **the pool's protocol holds**: every reference event names a register with a reference
  (or the one allocated in the cycle), and no count leaves ``0..2**count_width - 1``;
- **the verify cache is coherent**: every valid line holds its register's value in the
  register file, so a verify-read it answers compares what a bank read would (the outcome
  never depends on the cache, only the bank reads saved do).
"""

from amaranth import Cat, Signal
from amaranth.hdl import Assert, Assume

from gpurf.hw.wir.layouts import Outcome
from gpurf.hw.wir.pipeline import Pipeline

from ..formal_base import FormalHarness, popcount
from .formal_register_pool import pool_count

__all__ = ["SMALL", "PipelineFormal"]

SMALL = {"warps": 1, "regs": 2, "lanes": 1, "data_width": 2, "hash_width": 1,
         "entries": 2, "pregs": 4, "count_width": 2, "low_water": 1, "verify_cache": 2}
"""The proof configuration: 2 mappings, 2 VSB entries, 4 registers (2 + 2 holders fill
the pool), 2-bit values and 1-bit hashes (collisions), 2-bit counts (saturation), a
2-line verify cache (a line replaced and a line invalidated within a few cycles)."""


class PipelineFormal(FormalHarness):
    """The pipeline with free inputs, the environment's protocol and the parts' proven
    invariants assumed, the guarantees above asserted."""

    block = Pipeline
    SMALL = SMALL

    def check(self, m):
        self._drive(m)
        holds = self._holds(m)
        self._parts(m)
        self._no_leak(m, holds)
        self._coherent(m)
        self._covers(m)

    def _drive(self, m):
        dut = self.dut
        self.free_streams(m, dut.result, dut.reuse, dut.hold, dut.unmap, dut.drop)
        config = dut.config
        for port in (dut.result, dut.hold, dut.unmap, dut.reuse):
            m.d.comb += Assume(port.payload.warp < config.warps)
            m.d.comb += Assume(port.payload.reg < config.regs)

    def _holds(self, m):
        """The environment's in-flight references per register, and its protocol."""
        dut, config = self.dut, self.dut.config
        holds = []
        reused = dut.reuse.valid & dut.reuse.ready
        for r in range(config.pregs):
            count = Signal(range(config.pool.max_count + 2), name=f"holds_{r}")
            taken = dut.held.valid & (dut.held.payload == r)
            dropped = dut.drop.valid & (dut.drop.payload == r)
            reuse = reused & (dut.reuse.payload.preg == r)
            with m.If(self.running):
                m.d.comb += Assume(count >= dropped + reuse)
            m.d.sync += count.eq(count + taken - dropped - reuse)
            holds.append(count)
        return holds

    def _parts(self, m):
        """The parts' proven invariants, assumed."""
        pool, vsb = self.dut.pool, self.dut.alloc.vsb
        config = pool.config
        for s in range(config.slots):
            for t in range(s + 1, config.slots):
                a, b = pool.pending[s], pool.pending[t]
                m.d.comb += Assume(~(a.leader & b.leader & (a.preg == b.preg)))
        m.d.comb += [Assume(pool.fresh <= config.pregs), Assume(pool.queued <= config.pregs)]
        for e in range(vsb.config.entries):
            read = vsb.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            with m.If(vsb.valid[e]):
                m.d.comb += Assume(read.data.preg < pool.fresh)

    def _vsb_entries(self, m):
        """Per VSB entry: (valid, register)."""
        vsb = self.dut.alloc.vsb
        entries = []
        for e in range(vsb.config.entries):
            read = vsb.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            entries.append((vsb.valid[e], read.data.preg))
        return entries

    def _no_leak(self, m, holds):
        dut, pool = self.dut, self.dut.pool
        config = pool.config
        entries = self._vsb_entries(m)
        slots = []
        for i in range(config.pregs):
            read = pool.queue.read_port(domain="comb")
            position = Signal(config.preg_bits, name=f"queue_pos_{i}")
            m.d.comb += [position.eq(i - pool.head), read.addr.eq(i)]
            slots.append((position < pool.queued, read.data))
        for r in range(config.pregs):
            mapped = popcount(Cat(e.valid & (e.preg == r) for e in dut.mapping))
            in_vsb = popcount(Cat(valid & (preg == r) for valid, preg in entries))
            holders = Signal(range(16), name=f"holders_{r}")
            m.d.comb += holders.eq(mapped + in_vsb + holds[r])
            count, hits = pool_count(m, pool, r, range(-16, 32))
            handed = pool.fresh > r
            queued = popcount(Cat(inside & (held == r) for inside, held in slots))
            returning = Cat(hits).any() & (count == 0)
            with m.If(holders != 0):
                m.d.comb += [Assert(handed), Assert(queued == 0), Assert(count == holders)]
            with m.Else():
                m.d.comb += Assert(~handed + queued + returning == 1)
        m.d.comb += Assert(~pool.alloc.ready | pool.alloc.valid)

    def _coherent(self, m):
        """Every valid verify-cache line holds its register's value (when configured)."""
        dut = self.dut
        if not dut.config.cache:
            return
        cache = dut.cache
        for e in range(cache.config.entries):
            line = cache.values.read_port(domain="comb")
            bank = dut.regfile.read_port(domain="comb")
            m.d.comb += [line.addr.eq(e), bank.addr.eq(cache.tag[e])]
            with m.If(cache.valid[e]):
                m.d.comb += Assert(line.data.as_value() == bank.data)

    def _covers(self, m):
        """Each outcome, an install displacing an entry, a sweep eviction, a full pool, a
        low-register miss, a result waiting, a hold refused, an unmap, a share the verify
        cache answered (out of reset)."""
        dut = self.dut
        retired = dut.retired
        vsb = dut.alloc.vsb
        self.covers(m, [
            *((retired.valid & (retired.payload.outcome == outcome), outcome.name.lower())
              for outcome in Outcome),
            (vsb.ref_dec.valid & dut.alloc.install.valid, "install_displaces"),
            (dut.alloc.evict.valid & dut.alloc.evict.ready & ~dut.retired.valid,
             "sweep_eviction"),
            (dut.in_use == dut.config.pregs, "full_pool"),
            (dut.low_register & dut.retired.valid
             & (dut.retired.payload.outcome == Outcome.ALLOCATED), "low_register_miss"),
            (dut.result.valid & ~dut.result.ready, "result_waits"),
            (dut.hold.valid & ~dut.hold.ready, "hold_refused"),
            (dut.unmap.valid & dut.unmap.ready, "unmap"),
            *([(dut.verify_cached & (dut.retired.payload.outcome == Outcome.SHARED),
                "verify_cache_hit")] if dut.config.cache else []),
        ], guard=self.running)
