"""Hand-made mutants of the WIR blocks, each killed by its block's formal harness
(``tests/test_wir_*.py::test_formal_kills_mutant``); :class:`BarrierIgnored` is the mutant
that survived every registered configuration (issue 21), killed at ``barrier_bits=2``."""

from amaranth import Cat, Const, Mux, Signal

from gpurf.hw.gates import bit
from gpurf.hw.wir.backend import Backend
from gpurf.hw.wir.configs import DEC_PORTS, SOURCES
from gpurf.hw.wir.layouts import AllocKind
from gpurf.hw.wir.load_filter import LoadFilter
from gpurf.hw.wir.pending_retry import PendingRetry
from gpurf.hw.wir.pipeline import Pipeline
from gpurf.hw.wir.register_alloc import RegisterAlloc
from gpurf.hw.wir.register_pool import RegisterPool
from gpurf.hw.wir.rename_reuse import RenameReuse
from gpurf.hw.wir.rename_table import RenameTable
from gpurf.hw.wir.reuse_buffer import ReuseBuffer
from gpurf.hw.wir.value_signature_buffer import ValueSignatureBuffer
from gpurf.hw.wir.verify_cache import VerifyCache

__all__ = ["AcceptsWhenFull", "BarrierIgnored", "CacheNotInvalidated", "CounterWraps",
           "HitNotCounted", "HitSourcesKept", "LastIncrementLost", "LookupIgnoresWrite",
           "OldMappingKept", "RemapCounted", "ReplacedNotReleased", "ResultReferenceKept",
           "SaturatedHitVerifies", "SaturationFromMemory", "StaleHitTrusted"]


class ResultReferenceKept(ReuseBuffer):
    """A displaced filled entry does not release its result register's reference (``dec[3]``
    never valid): a leak. Killed by the reference balance."""

    def _displace(self, m, word, displaced):
        super()._displace(m, word, displaced)
        m.d.comb += self.dec[3].valid.eq(0)


class BarrierIgnored(ReuseBuffer):
    """The lookup's tag comparison leaves out the barrier count: a hit on an entry computed
    before the barrier. Survives wherever two tags differing only in the barrier never share
    an index (every registered configuration); killed where they do (``barrier_bits=2`` with
    2 entries: barriers ``b`` and ``b ^ 0b11`` fold to one index) by "a hit implies tag
    equality"."""

    def _lookup(self, m, table):
        config, lookup, response = self.config, self.lookup, self.response
        tag, fits = self._tag(m)
        index = self._fold(m, tag)
        read = table.read_port(domain="comb")
        write = table.write_port()
        addr = Signal(config.index_bits)
        entry_valid = Signal()
        m.d.comb += [
            addr.eq(Mux(lookup.valid, index, self.pointer)),
            read.addr.eq(addr),
            entry_valid.eq(bit(m, self.valid, addr, "entry_valid_row")),
            self.probe.eq(read.data.result),
        ]
        word = read.data
        eligible, match = Signal(), Signal()
        hit, pending, miss, reserve, evict = (Signal(name=n) for n in
                                              ("hit", "pending_hit", "miss", "reserve", "evict"))
        payload = lookup.payload

        def unbarriered(t):
            return Cat(t.opcode.as_value(), t.operand.as_value(), t.tbid)

        m.d.comb += [
            eligible.eq(lookup.valid & ~payload.divergent & ~payload.bypass & fits),
            match.eq(eligible & entry_valid & (unbarriered(word.tag) == unbarriered(tag))),
            hit.eq(match & ~word.pending & ~self.result_saturated),
            pending.eq(match & word.pending),
            miss.eq(eligible & ~hit & ~pending),
            reserve.eq(miss & ~self.low_reg & ~self.operand_saturated),
            evict.eq(self.low_reg & (miss | ~lookup.valid)),
        ]
        m.d.comb += [
            response.valid.eq(lookup.valid),
            response.payload.hit.eq(hit),
            response.payload.pending.eq(pending),
            response.payload.reserved.eq(reserve),
            response.payload.index.eq(index),
            response.payload.result.eq(Mux(hit, word.result, 0)),
            write.addr.eq(index),
            write.en.eq(reserve),
            write.data.tag.eq(tag),
            write.data.pending.eq(1),
        ]
        self._references(m, tag, reserve, hit, word.result)
        one = Const(1, config.entries) << addr
        with m.If(reserve):
            m.d.sync += self.valid.eq(self.valid | one)
        with m.Elif(evict):
            m.d.sync += self.valid.eq(self.valid & ~one)
        writes = Signal()
        m.d.comb += writes.eq(reserve | evict)
        return addr, word, entry_valid, writes


class ReplacedNotReleased(ValueSignatureBuffer):
    """An install over a valid entry does not release the old register (``ref_dec``
    never valid): a leak. Killed by "ref_dec follows the displaced entry" and the count."""

    def _update(self, m):
        super()._update(m)
        m.d.comb += self.ref_dec.valid.eq(0)


class SaturationFromMemory(RegisterPool):
    """``saturated`` reads the stored counter only, ignoring the events merged this cycle
    (a stale answer). Killed by "saturated == (count == max)"."""

    def _queries(self, m, new):
        super()._queries(m, new)
        bits = self.config.preg_bits
        for q in range(self.config.query_ports):
            preg = self.query[q]
            read = self.counters.read_port(domain="comb")
            handed = self.fresh[bits] | (preg < self.fresh[:bits])
            m.d.comb += [read.addr.eq(preg), self.saturated[q].eq(read.data.all() & handed)]


class LastIncrementLost(RegisterPool):
    """The merge never sees the last increment port (its events are not counted): a count
    too low, a register freed while referenced. Killed by the ledger's ``leads_s`` and
    ``ledger_r`` (``formal_pool_ledger.py``)."""

    def _events(self):
        events = super()._events()
        _, preg, sign = events[-1]
        return [*events[:-1], (Const(0, 1), preg, sign)]


class RemapCounted(RenameTable):
    """A retire that maps a register to the physical register it already holds counts a
    new reference anyway: a leak. Killed by "increments minus decrements == entries"."""

    def _update(self, m):
        super()._update(m)
        m.d.comb += self.ref_inc.valid.eq(self.retire.valid & self.retire.ready)


class LookupIgnoresWrite(VerifyCache):
    """A lookup hits on a register an invalidate port writes in the same cycle (the
    lookup's write check dropped): a stale value. Killed by "a hit returns the last filled
    value of a register not written since"."""

    def _written(self, m, preg, name):
        written = super()._written(m, preg, name)
        if name == "lookup_written":
            m.d.comb += written.eq(0)
        return written


class CounterWraps(LoadFilter):
    """A block's barrier counter wraps to 0 instead of saturating: after ``2**bits``
    barriers a load looks up the buffer with the count of a pre-barrier entry. Killed by
    "the barrier field is the block's saturating count" (and the strengthening)."""

    def _counters(self, m):
        super()._counters(m)
        config, barrier, launch = self.config, self.barrier, self.launch
        for b in range(config.blocks):
            count = self.counts[b]
            with m.If(launch.valid & (launch.payload.tb == b)):
                m.d.sync += count.eq(0)
            with m.Elif(barrier.valid & (barrier.payload.tb == b)):
                m.d.sync += count.eq(count + 1)


class AcceptsWhenFull(PendingRetry):
    """``enq.ready`` stays high when the queue is full: the enqueue overwrites the oldest
    instruction. Killed by "enq.ready is low exactly when full" and the queue's contents."""

    def elaborate(self, platform):
        m = super().elaborate(platform)
        m.d.comb += self.enq.ready.eq(1)
        return m


class OldMappingKept(Pipeline):
    """A retirement does not release the old mapping's register (``dec[0]`` never valid):
    a leak. Killed by "a register with holders has a count equal to its holders"."""

    def _events(self, m, decided):
        super()._events(m, decided)
        m.d.comb += self.pool.dec[0].valid.eq(0)


class StaleHitTrusted(Pipeline):
    """A VSB hit whose entry was rewritten in the lookup's cycle is trusted (the guard
    ``wrote`` never set): the hit's register may have lost its last reference, and the
    verify hit's +1 then lands on a free register. Killed by the no-leak assertions."""

    def _decide(self, m):
        decided = super()._decide(m)
        m.d.sync += self.wrote.eq(0)
        return decided


class CacheNotInvalidated(Pipeline):
    """A register-file write leaves the register's verify-cache line valid: once the
    register is freed, reallocated and rewritten, the cache answers a verify-read with its
    old value (a share decided on a stale line). Killed by "every valid line holds its
    register's value"."""

    def _invalidate(self, m, write):
        pass


class SaturatedHitVerifies(RegisterAlloc):
    """A VSB hit asks for a verify-read even when the register's count is saturated
    (``hit_saturated`` ignored): the count would overflow. Killed by the request's kind."""

    def _request(self, m, looked, answer):
        hit, pinned = Signal(), Signal()
        m.d.comb += [
            self.probe.eq(Mux(answer.valid, answer.payload.preg, 0)),
            hit.eq(answer.valid & answer.payload.hit),
            pinned.eq(looked.divergent & looked.dst.valid & looked.dst.pin),
            self.out.valid.eq(looked.valid),
        ]
        kind = Mux(pinned, AllocKind.PINNED, Mux(hit, AllocKind.VERIFY, AllocKind.ALLOCATE))
        preg = Mux(pinned, looked.dst.preg, Mux(hit, answer.payload.preg, 0))
        out = self.out.payload
        m.d.comb += [out.kind.eq(kind), out.preg.eq(preg), out.hash.eq(looked.hash),
                     out.divergent.eq(looked.divergent), out.ticket.eq(looked.ticket)]


class HitNotCounted(RenameReuse):
    """The composition leaves the reuse buffer's hit event (its ``inc[3]``, the hit
    instruction's in-flight result reference) off its ``inc`` port: a reused register could
    be freed while the hit carries it to retirement. Killed by the reference balance of
    ``formal_rename_reuse.py``."""

    def _events(self, m, rename, reuse):
        super()._events(m, rename, reuse)
        m.d.comb += self.inc[1 + 3].valid.eq(0)


class HitSourcesKept(Backend):
    """A reuse hit leaving on ``out`` keeps its in-flight source references (the backend
    never ends them): a leak. Killed by the no-leak proof of ``formal_backend.py``."""

    def _out_sources(self, m):
        super()._out_sources(m)
        m.d.comb += [self.back.dec[DEC_PORTS + k].valid.eq(0) for k in range(SOURCES)]
