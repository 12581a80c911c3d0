"""Formal harness of ``wir.value_signature_buffer`` in a small configuration.

Inputs are free (``AnySeq``) after a reset in the first cycle. The harness keeps the spec's
view of the table (per entry: valid, hash, register), written from the paper's rules: a
non-divergent install replaces its hash's entry, an evict (taken when no install is offered)
empties its entry. It asserts:

- a lookup answers one cycle later exactly the spec's table: ``hit`` iff the entry was
  valid with an equal hash (so a hit implies tag equality), ``preg`` its register or 0;
- the reference events are exactly the spec's: ``ref_inc`` names an installed register,
  ``ref_dec`` the displaced or evicted valid entry's register;
- no leak: per register, increments minus decrements since reset (the harness's counter)
  equal the number of valid entries holding it;
- (induction strengthening) the valid flip-flops and the memory's valid entries equal the
  spec's table.
"""

from amaranth import Cat, Mux, Signal
from amaranth.asserts import Initial
from amaranth.hdl import Assert

from gpurf.hw.wir.value_signature_buffer import ValueSignatureBuffer

from ..formal_base import FormalHarness

__all__ = ["SMALL", "ValueSignatureBufferFormal"]

SMALL = {"entries": 4, "hash_width": 3, "pregs": 4}
"""The proof configuration: 4 entries, 3-bit hashes (two per entry), 4 registers."""


class ValueSignatureBufferFormal(FormalHarness):
    """The VSB with free inputs and the invariants above (``params`` override SMALL)."""

    block = ValueSignatureBuffer
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.lookup, dut.install, dut.evict)
        valid = Signal(config.entries)
        hashes = [Signal(config.hash_width, name=f"hash_{e}") for e in range(config.entries)]
        pregs = [Signal(config.preg_bits, name=f"preg_{e}") for e in range(config.entries)]
        self._answers(m, valid, hashes, pregs)
        self._events(m, valid, pregs)
        self._counts(m, valid, pregs)
        self._strengthen(m, valid, hashes, pregs)

    def _answers(self, m, valid, hashes, pregs):
        dut, config = self.dut, self.dut.config
        want_hit, want_preg, want_valid = Signal(), Signal(config.preg_bits), Signal()
        index = dut.lookup.payload[:config.index_bits]
        hit_now = Signal()
        preg_now = Signal(config.preg_bits)
        for e in range(config.entries):
            with m.If(index == e):
                m.d.comb += [hit_now.eq(valid[e] & (hashes[e] == dut.lookup.payload)),
                             preg_now.eq(pregs[e])]
        m.d.sync += [want_valid.eq(dut.lookup.valid), want_hit.eq(hit_now),
                     want_preg.eq(Mux(hit_now, preg_now, 0))]
        with m.If(~Initial()):
            m.d.comb += Assert(dut.result.valid == want_valid)
            with m.If(want_valid):
                m.d.comb += [Assert(dut.result.payload.hit == want_hit),
                             Assert(dut.result.payload.preg == want_preg)]

    def _events(self, m, valid, pregs):
        """Spec updates of the table and the events they cause."""
        dut, config = self.dut, self.dut.config
        install = dut.install.payload
        installing = dut.install.valid & ~install.divergent
        evicting = dut.evict.valid & ~dut.install.valid
        target = Mux(dut.install.valid, install.hash[:config.index_bits], dut.evict.payload)
        dec_valid, dec_preg = Signal(), Signal(config.preg_bits)
        for e in range(config.entries):
            hit = (target == e) & (installing | evicting)
            with m.If(hit):
                m.d.comb += [dec_valid.eq(valid[e]), dec_preg.eq(pregs[e])]
                m.d.sync += valid[e].eq(installing)
            with m.If(hit & installing):
                m.d.sync += pregs[e].eq(install.preg)
        m.d.comb += [
            Assert(dut.evict.ready == ~dut.install.valid),
            Assert(dut.ref_inc.valid == installing),
            Assert(dut.ref_dec.valid == dec_valid),
        ]
        with m.If(installing):
            m.d.comb += Assert(dut.ref_inc.preg == install.preg)
        with m.If(dec_valid):
            m.d.comb += Assert(dut.ref_dec.preg == dec_preg)
        # The events: a hit, an install replacing a valid entry, an eviction.
        self.covers(m, [
            (dut.result.valid & dut.result.payload.hit, "hit"),
            (dec_valid & installing, "replacement"),
            (dec_valid & evicting, "eviction"),
        ])

    def _counts(self, m, valid, pregs):
        """Per register: net events since reset == valid entries holding it."""
        dut, config = self.dut, self.dut.config
        for p in range(config.pregs):
            count = Signal(range(config.entries + 2), name=f"count_{p}")
            inc = dut.ref_inc.valid & (dut.ref_inc.preg == p)
            dec = dut.ref_dec.valid & (dut.ref_dec.preg == p)
            m.d.sync += count.eq(count + inc - dec)
            held = sum((valid[e] & (pregs[e] == p)) for e in range(config.entries))
            m.d.comb += Assert(count == held)

    def _strengthen(self, m, valid, hashes, pregs):
        """The RTL's valid bits and valid memory words equal the spec's table."""
        dut, config = self.dut, self.dut.config
        install = dut.install.payload
        for e in range(config.entries):
            with m.If(dut.install.valid & ~install.divergent
                      & (install.hash[:config.index_bits] == e)):
                m.d.sync += hashes[e].eq(install.hash)
        m.d.comb += Assert(dut.valid == valid)
        for e in range(config.entries):
            read = dut.table.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            with m.If(valid[e]):
                m.d.comb += Assert(Cat(read.data.hash == hashes[e],
                                       read.data.preg == pregs[e]).all())
