"""Formal harness of the composition ``wir.register_alloc`` (H3 hash, then VSB), assume-
guarantee, in a small configuration.

Inputs are free (``AnySeq``) after a reset in the first cycle.

**Assumption (the part's proven property).** The VSB's state equals the spec's table (valid
flip-flops, and each valid entry's hash and register in the memory): the invariant
``tb/wir/formal_value_signature_buffer.py`` proves by k-induction, assumed here on the
part inside the composition.

**Guarantees (asserted).** The harness computes the H3 hash itself (bit ``j`` is the
parity of the value under mask ``j``), keeps the spec's table (an install replaces its
hash's entry unless divergent, an evict empties its entry when no install is offered) and
a two-stage shadow of the results in flight:

- ``out`` is valid exactly two cycles after a valid ``result``, with its ``hash``,
  ``divergent`` and ``ticket``;
- its ``kind``: ``PINNED`` with the destination's register for a divergent result whose
  destination entry is valid and pinned; ``VERIFY`` with the entry's register when the
  result is convergent, its hash's entry held an equal hash at the lookup (the table
  cycle, before that cycle's writes) and ``hit_saturated`` is low; else ``ALLOCATE``
  (register 0); ``probe`` is the looked-up hit's register (0 otherwise);
- the reference events are the spec's (an install's register; the displaced or evicted
  valid entry's register) and, per register, the events since reset balance the valid
  entries holding it (no leak).
"""

from amaranth import Cat, Mux, Signal, Value
from amaranth.asserts import Initial
from amaranth.hdl import Assert, Assume

from gpurf.hw.wir.layouts import AllocKind
from gpurf.hw.wir.register_alloc import RegisterAlloc

from ..formal_base import FormalHarness

__all__ = ["SMALL", "RegisterAllocFormal"]

SMALL = {"lanes": 2, "data_width": 2, "hash_width": 2, "entries": 2, "pregs": 4,
         "ticket_bits": 1, "matrix": [0b0011, 0b0101]}
"""The proof configuration: 4-bit values, 2-bit hashes (4 values per hash: collisions),
2 entries, 4 registers."""


class RegisterAllocFormal(FormalHarness):
    """The stage with free inputs, the VSB's proven invariant assumed, the guarantees
    above asserted (``params`` override SMALL)."""

    block = RegisterAlloc
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.result, dut.install, dut.evict)
        self.free(m, dut.hit_saturated)
        entries = config.vsb.entries
        table = [(Signal(name=f"valid_{e}"), Signal(config.hash_width, name=f"hash_{e}"),
                  Signal(config.preg_bits, name=f"preg_{e}")) for e in range(entries)]
        self._table(m, table)
        self._part_assumed(m, table)
        self._requests(m, table)

    def _hash(self, m):
        """The H3 hash of ``result.payload.value``, bit by bit."""
        config = self.dut.config
        value = Value.cast(self.dut.result.payload.value)
        bits = [(value & mask).xor() for mask in config.hash.masks]
        expected = Signal(config.hash_width)
        m.d.comb += expected.eq(Cat(*bits))
        return expected

    def _table(self, m, table):
        """The spec's table and the reference events it implies."""
        dut, config = self.dut, self.dut.config
        index_bits = config.vsb.index_bits
        install = dut.install.payload
        installing = dut.install.valid & ~install.divergent
        evicting = dut.evict.valid & ~dut.install.valid
        target = Mux(dut.install.valid, install.hash[:index_bits], dut.evict.payload)
        dec_valid, dec_preg = Signal(), Signal(config.preg_bits)
        for e, (valid, hash_value, preg) in enumerate(table):
            written = (target == e) & (installing | evicting)
            with m.If(written):
                m.d.comb += [dec_valid.eq(valid), dec_preg.eq(preg)]
                m.d.sync += valid.eq(installing)
            with m.If(written & installing):
                m.d.sync += [hash_value.eq(install.hash), preg.eq(install.preg)]
        m.d.comb += [Assert(dut.ref_inc.valid == installing),
                     Assert(dut.ref_dec.valid == dec_valid)]
        with m.If(installing):
            m.d.comb += Assert(dut.ref_inc.preg == install.preg)
        with m.If(dec_valid):
            m.d.comb += Assert(dut.ref_dec.preg == dec_preg)
        for p in range(config.pregs):
            count = Signal(range(len(table) + 2), name=f"count_{p}")
            inc = dut.ref_inc.valid & (dut.ref_inc.preg == p)
            dec = dut.ref_dec.valid & (dut.ref_dec.preg == p)
            m.d.sync += count.eq(count + inc - dec)
            held = sum(valid & (preg == p) for valid, _, preg in table)
            m.d.comb += Assert(count == held)
        self.covers(m, [(dec_valid & installing, "replacement"),
                        (dec_valid & evicting, "eviction")])

    def _part_assumed(self, m, table):
        """The VSB's proven invariant: its state is the spec's table."""
        vsb = self.dut.vsb
        for e, (valid, hash_value, preg) in enumerate(table):
            read = vsb.table.read_port(domain="comb")
            m.d.comb += [read.addr.eq(e), Assume(vsb.valid[e] == valid)]
            with m.If(valid):
                m.d.comb += Assume((read.data.hash == hash_value) & (read.data.preg == preg))

    def _requests(self, m, table):
        """The shadow pipeline and the request it implies two cycles after a result."""
        dut, config = self.dut, self.dut.config
        result = dut.result
        expected = self._hash(m)
        stages = [{name: Signal(shape, name=f"{name}_{s}") for name, shape in (
            ("valid", 1), ("hash", config.hash_width), ("divergent", 1),
            ("dst", len(Value.cast(result.payload.dst))), ("ticket", config.ticket_bits),
            ("hit", 1), ("preg", config.preg_bits))} for s in range(2)]
        first, second = stages
        m.d.sync += [first["valid"].eq(result.valid), first["hash"].eq(expected),
                     first["divergent"].eq(result.payload.divergent),
                     first["dst"].eq(result.payload.dst),
                     first["ticket"].eq(result.payload.ticket)]
        hit, preg = Signal(), Signal(config.preg_bits)
        index = first["hash"][:config.vsb.index_bits]
        for e, (valid, hash_value, entry_preg) in enumerate(table):
            with m.If(index == e):
                m.d.comb += [hit.eq(valid & (hash_value == first["hash"])),
                             preg.eq(entry_preg)]
        looks_up = first["valid"] & ~first["divergent"]
        m.d.sync += [second[name].eq(first[name])
                     for name in ("valid", "hash", "divergent", "dst", "ticket")]
        m.d.sync += [second["hit"].eq(looks_up & hit), second["preg"].eq(Mux(hit, preg, 0))]
        self._check(m, second)

    def _check(self, m, second):
        dut, out = self.dut, self.dut.out
        dst = self.dut.result.payload.dst.shape()(second["dst"])
        pinned = second["divergent"] & dst.valid & dst.pin
        verify = second["hit"] & ~dut.hit_saturated
        kind = Mux(pinned, AllocKind.PINNED, Mux(verify, AllocKind.VERIFY, AllocKind.ALLOCATE))
        preg = Mux(pinned, dst.preg, Mux(verify, second["preg"], 0))
        with m.If(~Initial()):
            m.d.comb += Assert(out.valid == second["valid"])
            m.d.comb += Assert(dut.probe == Mux(second["hit"], second["preg"], 0))
            with m.If(second["valid"]):
                m.d.comb += [Assert(out.payload.kind.as_value() == kind),
                             Assert(out.payload.preg == preg),
                             Assert(out.payload.hash == second["hash"]),
                             Assert(out.payload.divergent == second["divergent"]),
                             Assert(out.payload.ticket == second["ticket"])]
        self.covers(m, [
            (out.valid & (out.payload.kind == AllocKind.VERIFY), "verify"),
            (out.valid & (out.payload.kind == AllocKind.PINNED), "pinned"),
            (out.valid & second["hit"] & dut.hit_saturated, "saturated_hit"),
            (out.valid & (out.payload.kind == AllocKind.ALLOCATE) & ~second["divergent"],
             "allocate"),
        ], guard=self.running)
