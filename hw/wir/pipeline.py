"""WIR's allocation pipeline composed: register allocation (hash, VSB), verify, allocate or
install, retire into the rename mappings, with one reference-count protocol (paper V-A,
V-B, V-D, V-E, VII-E; docs/wir.md)."""

import functools

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, memory

from gpurf.hw.gates import equals
from gpurf.hw.params import ConfiguredComponent

from .configs import PipelineConfig
from .layouts import AllocKind, Outcome
from .register_alloc import RegisterAlloc
from .register_pool import RegisterPool
from .verify_cache import VerifyCache

__all__ = ["Pipeline", "PipelineConfig"]


class Pipeline(ConfiguredComponent, config=PipelineConfig):
    """The allocation path of WIR from a completed result to its retirement, composed of
    ``wir.register_alloc`` (``alloc``: H3 hash, then VSB lookup, 2 cycles) and
    ``wir.register_pool`` (``pool``) and, with ``verify_cache`` entries, ``wir.verify_cache``
    (``cache``), with the rename mappings (``warps x regs`` entries ``{preg, valid, pin}`` in
    flip-flops), the register file the verify-read and the dummy MOV read (``pregs``
    values, an unmapped memory), the verify comparator, installation, low-register
    eviction and retirement.

    **Stages.** A result taken on ``result`` in cycle ``t`` is hashed (``t``), looked up in
    the VSB (``t + 1``) and decided and retired in ``t + 2`` (``retired``), reading the
    mapping as it is then (so back-to-back results to one register see each other):

    - divergent (``mask`` not all ones), mapping pinned: ``PINNED``, the active lanes
      written in place; no reference change.
    - divergent, mapping not pinned: ``DUMMY_MOV``, a new register gets the active lanes
      and, from the old mapping's register (0 when unmapped), the others; the mapping
      becomes ``{new, pin}``. Divergent results are never looked up nor installed (V-D).
    - convergent VSB hit: the verify-read of the hit's register (the verify cache first,
      the banks on a miss) is compared with the value; equal: ``SHARED``, the mapping
      takes the hit's register, no write. Unequal (a hash collision): ``VERIFY_FAILED``,
      handled as a miss. A hit whose entry was rewritten in the lookup's cycle (an
      install or eviction of the same index, which the synchronous lookup did not see) is
      treated as a miss: its register may have lost its last reference. A hit on a
      saturated count is a miss (``register_alloc``).
    - convergent miss: ``ALLOCATED``, a new register written and ``{hash, new}``
      installed (displacing the entry's old register), unless in low-register mode, where
      the entry it would write is evicted instead (V-E).

    **Verify cache** (paper VI-C, the RLPV configurations; ``verify_cache`` 0 is its RLP).
    The verify-read looks the cache up in the decide cycle through a combinational read
    port on its value memory (:meth:`VerifyCache.peek`): a hit answers the compare and the
    banks are not read (``verify_cached`` high: one bank read saved); a miss compares the
    banks' value and fills the cache with it (FIFO replacement); every register-file write
    (allocation, dummy MOV, pinned write) invalidates the written register's line. Why a
    combinational port and not a verify stage: the paper's cache is accessed "before they
    access register banks" and "bypass[es] bank access" in the same verify-read (Table III:
    0.19 ns, within a cycle), and a stage would delay every decision, ``retired`` and the
    ``ready`` credits by a cycle, while the composed read changes no timing at all: only
    the bank reads. The outcome never depends on the cache: a line holds its register's
    current value (proved: ``tb/wir/formal_pipeline.py``), since the cache only answers
    for a register a VSB entry holds, which is never written in place (a pinned register is
    never installed) and never the register allocated in the same cycle. Cost (``gpurf
    synth wir.pipeline``, defaults): logic depth 52 -> 72 (tag compare, value mux and
    compare in series in the decide cycle), 737 more cells (docs/wir.md). Paper and spec
    agree on the cache (tagged by register, looked up before the banks, filled by a
    missed verify-read's bank read, a write evicts the register's line); the spec adds the
    FIFO replacement the paper leaves open. Here it has one read and one write (invalidate)
    port, the paper's Table III two of each: this pipeline serves one scheduler's stream
    (as its one rename table, below).

    **Reference-count protocol** (one count per register, the pool's; docs/wir.md). The
    holders are the mappings, the VSB entries and the in-flight source references taken
    by ``hold``; each holds one reference. An allocation starts the count at 1, the
    in-flight result's reference, which the mapping takes over at retirement in the same
    cycle (no event); a shared register gets +1 for its new mapping; the old mapping's
    register gets -1. The VSB's install and eviction events go to the pool as they are.
    ``reuse`` retires a reuse hit: the in-flight reference its ``preg`` carries (taken by
    ``hold``) is taken over by the mapping, the old mapping's is dropped.

    **Ports.** ``result`` (stream): ``ready`` only while the pool has more free
    registers than results in flight, so every allocation is served. ``hold``
    (stream): an in-flight source reference on the mapping of ``warp``/``reg``, +1 on its
    register, which ``held`` names (``held.valid`` low when unmapped: no reference);
    ``ready`` is low while the count is saturated or the cycle's verify hit names the
    same register. ``drop``: the end of such a reference, -1. ``reuse`` (stream; ``ready``
    while no result retires): a reuse hit retiring. ``unmap`` (stream; ``ready`` while
    neither a result nor a reuse hit retires): the mapping of ``warp``/``reg`` dies
    (an exit sweep), -1. Sweep eviction: in low-register mode an idle decide cycle evicts
    the VSB entry a rotating pointer names, so registers held only by the VSB return.

    Attributes
    ----------
    result : In(stream.Signature(result_layout))
    reuse : In(stream.Signature(reuse_layout))
    hold : In(stream.Signature(reg_layout))
    held : Out(valid_only(preg_bits))
    drop : In(valid_only(preg_bits))
    unmap : In(stream.Signature(reg_layout))
    retired : Out(valid_only(retired_layout))
    in_use, low_register : Out
        The pool's.
    verify_cached : Out(1)
        High in a decide cycle whose verify-read the verify cache answered (no bank read);
        0 without a cache. Bank verify-reads are the ``SHARED`` and ``VERIFY_FAILED``
        retirements less these.
    inc, dec : In(ArrayLayout(preg_ref_layout, extra_inc / extra_dec))
        With ``extra_inc`` / ``extra_dec``: reference events of a block in front (e.g. the
        reuse buffer's), to the pool after the pipeline's own ports.
    query : In(ArrayLayout(preg_bits, extra_query)), saturated : Out(extra_query)
        With ``extra_query``: the pool's saturation queries for a block in front.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.mapping = Signal(data.ArrayLayout(config.entry_layout, config.mappings))
        """The rename mappings, row ``warp * regs + reg``."""
        self.flight = Signal(data.ArrayLayout(config.result_layout, 2))
        """The results in the hash and table cycles, and their valid bits (``carried``)."""
        self.carried = Signal(2)
        self.sweep = Signal(range(config.entries))
        """The VSB entry the next sweep eviction names."""
        self.wrote = Signal()
        """Last cycle installed or evicted VSB entry ``wrote_index``."""
        self.wrote_index = Signal(range(config.entries))

    @functools.cached_property
    def alloc(self) -> RegisterAlloc:
        return RegisterAlloc(**self.config.alloc.params())

    @functools.cached_property
    def pool(self) -> RegisterPool:
        return RegisterPool(**self.config.pool.params())

    @functools.cached_property
    def cache(self) -> VerifyCache:
        """The verify cache (``verify_cache`` entries; only elaborated when non-zero)."""
        return VerifyCache(**self.config.cache.params())

    @functools.cached_property
    def regfile(self) -> memory.Memory:
        """The physical registers' values."""
        config = self.config
        return memory.Memory(shape=config.lanes * config.data_width, depth=config.pregs,
                             init=[])

    def elaborate(self, platform):
        m = Module()
        m.submodules.alloc = self.alloc
        m.submodules.pool = self.pool
        m.submodules.regfile = self.regfile
        if self.config.cache:
            m.submodules.cache = self.cache
        m.d.comb += [self.in_use.eq(self.pool.in_use),
                     self.low_register.eq(self.pool.low_register)]
        self._enter(m)
        decided = self._decide(m)
        self._sources(m, decided)
        self._reuse_and_unmap(m, decided)
        self._events(m, decided)
        return m

    def _row(self, m, reg, name):
        """The mapping rows ``reg`` (a ``reg_layout`` value) selects, one bit per row (a
        compare of ``{warp, reg}`` with each row's constant: no multiplier), and the
        selected entry."""
        config = self.config
        key = Cat(reg.reg, reg.warp)
        rows = Signal(config.mappings, name=f"{name}_rows")
        entry = Signal(config.entry_layout, name=f"{name}_entry")
        for r in range(config.mappings):
            warp, logical = divmod(r, config.regs)
            m.d.comb += rows[r].eq(equals(key, warp << config.reg_bits | logical))
            with m.If(rows[r]):
                m.d.comb += entry.eq(self.mapping[r])
        return rows, entry

    def entry_of(self, m, reg, name):
        """The mapping entry ``reg`` (a ``reg_layout`` value) selects, combinational (a
        read port of the mappings for a block in front)."""
        _, entry = self._row(m, reg, name)
        return entry

    def _map(self, m, rows, enable, entry):
        """Write ``entry`` into the row ``rows`` selects when ``enable``."""
        for r in range(self.config.mappings):
            with m.If(enable & rows[r]):
                m.d.sync += self.mapping[r].eq(entry)

    def _enter(self, m):
        """``result.ready`` from the free registers; the taken result enters the hash."""
        config, alloc, result = self.config, self.alloc, self.result
        free = Signal(range(config.pregs + 1))
        m.d.comb += [
            free.eq(config.pregs - self.pool.in_use),
            result.ready.eq(_exceeds(free, self.carried[0], self.carried[1])),
        ]
        taken = result.valid & result.ready
        payload = result.payload
        ticket = Signal(config.ticket_layout)
        m.d.comb += [
            ticket.warp.eq(payload.warp), ticket.reg.eq(payload.reg),
            ticket.mask.eq(payload.mask),
            alloc.result.valid.eq(taken),
            alloc.result.payload.value.eq(payload.value),
            alloc.result.payload.divergent.eq(~payload.mask.all()),
            alloc.result.payload.ticket.eq(ticket),
        ]
        m.d.sync += [self.carried.eq(Cat(taken, self.carried[0])),
                     self.flight[0].eq(payload), self.flight[1].eq(self.flight[0])]

    def _decide(self, m):
        """The decide-and-retire cycle: verify, allocate, write, install, map."""
        config, alloc, pool = self.config, self.alloc, self.pool
        out = alloc.out
        request = out.payload
        ticket = data.View(config.ticket_layout, request.ticket)
        value = self.flight[1].value.as_value()
        valid = Signal()
        m.d.comb += valid.eq(out.valid)
        row, current = self._row(m, ticket, "decide")
        index = request.hash[:config.alloc.vsb.index_bits]
        stale = self.wrote & (self.wrote_index == index)
        divergent = request.divergent
        pinned = divergent & current.valid & current.pin
        read = self.regfile.read_port(domain="comb")
        m.d.comb += [read.addr.eq(Mux(divergent, current.preg, request.preg)),
                     pool.query[0].eq(alloc.probe),
                     alloc.hit_saturated.eq(pool.saturated[0])]
        hit = Signal()
        m.d.comb += hit.eq(valid & equals(request.kind.as_value(), AllocKind.VERIFY.value)
                           & ~stale)
        stored = self._verify_read(m, hit, request.preg, read.data)
        shared = Signal()
        failed = Signal()
        allocates = Signal()
        m.d.comb += [shared.eq(hit & (stored == value)),
                     failed.eq(hit & (stored != value)),
                     allocates.eq(valid & ~pinned & ~shared),
                     pool.alloc.ready.eq(allocates)]
        new = pool.alloc.payload
        old = Mux(current.valid, read.data, 0)
        lanes = []
        for lane in range(config.lanes):
            width = config.data_width
            part = slice(lane * width, (lane + 1) * width)
            lanes.append(Mux(ticket.mask[lane], value[part], old[part]))
        write = self.regfile.write_port()
        m.d.comb += [write.en.eq(valid & ~shared),
                     write.addr.eq(Mux(pinned, current.preg, new)),
                     write.data.eq(Mux(divergent, Cat(*lanes), value))]
        self._invalidate(m, write)
        low = pool.low_register
        installs = allocates & ~divergent & ~low
        m.d.comb += [alloc.install.valid.eq(installs),
                     alloc.install.payload.hash.eq(request.hash),
                     alloc.install.payload.preg.eq(new),
                     alloc.evict.valid.eq(low & ~installs & (~valid | (allocates & ~divergent))),
                     alloc.evict.payload.eq(Mux(valid, index, self.sweep))]
        evicted = alloc.evict.valid & alloc.evict.ready
        with m.If(evicted & ~valid):
            m.d.sync += self.sweep.eq(self.sweep + 1)
        m.d.sync += [self.wrote.eq(installs | evicted),
                     self.wrote_index.eq(Mux(installs, index, alloc.evict.payload))]
        self._map(m, row, valid & ~pinned, Cat(Mux(shared, request.preg, new), 1, divergent))
        outcome = Mux(pinned, Outcome.PINNED,
                      Mux(divergent, Outcome.DUMMY_MOV,
                          Mux(shared, Outcome.SHARED,
                              Mux(failed, Outcome.VERIFY_FAILED, Outcome.ALLOCATED))))
        m.d.comb += [self.retired.valid.eq(valid),
                     self.retired.payload.warp.eq(ticket.warp),
                     self.retired.payload.reg.eq(ticket.reg),
                     self.retired.payload.preg.eq(Mux(pinned, current.preg,
                                                      Mux(shared, request.preg, new))),
                     self.retired.payload.outcome.eq(outcome)]
        return {"valid": valid, "current": current, "shared": shared, "pinned": pinned,
                "preg": request.preg}

    def _verify_read(self, m, hit, preg, banks):
        """The value a verify-read of ``preg`` compares: the verify cache's when it holds
        the register (``verify_cached``: no bank read), else the banks' (``banks``), which
        then fills the cache. Without a cache (``verify_cache`` 0), the banks'."""
        if not self.config.cache:
            return banks
        cache = self.cache
        cached, value = cache.peek(m, preg, "verify")
        answered = Signal()
        m.d.comb += [answered.eq(hit & cached),
                     self.verify_cached.eq(answered),
                     cache.fill.valid.eq(hit & ~cached),
                     cache.fill.payload.preg.eq(preg),
                     cache.fill.payload.value.eq(banks)]
        return Mux(answered, value, banks)

    def _invalidate(self, m, write):
        """Every register-file write invalidates the register's verify-cache line."""
        if self.config.cache:
            m.d.comb += [self.cache.invalidate_valid.eq(write.en),
                         self.cache.invalidate_preg[0].eq(write.addr)]

    def _sources(self, m, decided):
        """``hold`` -> ``held`` (+1), ``drop`` (-1)."""
        pool, hold = self.pool, self.hold
        _, entry = self._row(m, hold.payload, "hold")
        clash = decided["shared"] & (decided["preg"] == entry.preg)
        m.d.comb += [pool.query[1].eq(entry.preg),
                     hold.ready.eq(~entry.valid | ~(pool.saturated[1] | clash)),
                     self.held.valid.eq(hold.valid & hold.ready & entry.valid),
                     self.held.payload.eq(entry.preg)]

    def _reuse_and_unmap(self, m, decided):
        """A reuse hit retiring (the mapping takes its reference) and an unmap."""
        reuse, unmap = self.reuse, self.unmap
        reuse_row, _ = self._row(m, reuse.payload, "reuse")
        unmap_row, _ = self._row(m, unmap.payload, "unmap")
        m.d.comb += [reuse.ready.eq(~decided["valid"]),
                     unmap.ready.eq(~decided["valid"] & ~reuse.valid)]
        self._map(m, reuse_row, reuse.valid & reuse.ready, Cat(reuse.payload.preg, 1, 0))
        with m.If(reuse.valid & reuse.ready):
            m.d.comb += [self.retired.valid.eq(1),
                         self.retired.payload.warp.eq(reuse.payload.warp),
                         self.retired.payload.reg.eq(reuse.payload.reg),
                         self.retired.payload.preg.eq(reuse.payload.preg),
                         self.retired.payload.outcome.eq(Outcome.REUSED)]
        for r in range(self.config.mappings):
            with m.If(unmap.valid & unmap.ready & unmap_row[r]):
                m.d.sync += self.mapping[r].valid.eq(0)

    def _events(self, m, decided):
        """The reference events to the pool."""
        pool, alloc = self.pool, self.alloc
        _, reused_old = self._row(m, self.reuse.payload, "reuse_old")
        _, unmapped = self._row(m, self.unmap.payload, "unmapped")
        _, holding = self._row(m, self.hold.payload, "holding")
        current = decided["current"]
        retires_old = decided["valid"] & ~decided["pinned"] & current.valid
        reuse_old = self.reuse.valid & self.reuse.ready & reused_old.valid
        m.d.comb += [
            pool.inc[0].valid.eq(decided["shared"]),
            pool.inc[0].preg.eq(decided["preg"]),
            pool.inc[1].eq(alloc.ref_inc),
            pool.inc[2].valid.eq(self.held.valid),
            pool.inc[2].preg.eq(holding.preg),
            pool.dec[0].valid.eq(retires_old | reuse_old),
            pool.dec[0].preg.eq(Mux(retires_old, current.preg, reused_old.preg)),
            pool.dec[1].eq(alloc.ref_dec),
            pool.dec[2].valid.eq(self.drop.valid),
            pool.dec[2].preg.eq(self.drop.payload),
            pool.dec[3].valid.eq(self.unmap.valid & self.unmap.ready & unmapped.valid),
            pool.dec[3].preg.eq(unmapped.preg),
        ]
        self._extra(m)

    def _extra(self, m):
        """The pool's ports for a block in front: ``inc``/``dec`` after the pipeline's own,
        ``query`` after its two, answered on ``saturated``."""
        config, pool = self.config, self.pool
        m.d.comb += [pool.inc[3 + k].eq(self.inc[k]) for k in range(config.extra_inc)]
        m.d.comb += [pool.dec[4 + k].eq(self.dec[k]) for k in range(config.extra_dec)]
        m.d.comb += [pool.query[2 + k].eq(self.query[k]) for k in range(config.extra_query)]
        if config.extra_query:
            m.d.comb += self.saturated.eq(pool.saturated[2:])


def _exceeds(free, first, second):
    """``free > first + second`` for one-bit ``first`` and ``second``, as gates (a compare
    with a narrower sum is a WIDTHEXPAND in Verilator's lint)."""
    above = [free.any(), free[1:].any(), free[2:].any() | (free[0] & free[1])]
    return Mux(first & second, above[2], Mux(first | second, above[1], above[0]))
