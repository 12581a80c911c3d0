"""Value signature buffer of WIR's register allocation stage (paper Section V-A, Fig. 6)."""

import functools

from amaranth import Module, Mux, Signal
from amaranth.lib import memory

from gpurf.hw.gates import equals, select
from gpurf.hw.params import ConfiguredComponent

from .configs import ValueSignatureBufferConfig

__all__ = ["ValueSignatureBuffer", "ValueSignatureBufferConfig"]


class ValueSignatureBuffer(ConfiguredComponent, config=ValueSignatureBufferConfig):
    """Direct-indexed table of ``{valid, hash, preg}``: which physical register holds the value
    with a given hash (paper V-A). Entry ``i`` is selected by the low ``log2(entries)`` hash
    bits and stores the full hash; ``{hash, preg}`` live in an unmapped memory, the valid bits
    in flip-flops (cleared by reset), ``entries x 43`` bits in all by default.

    Ports and timing:

    - **lookup** (valid-only) -> **result** one cycle later (a synchronous memory read,
      latency 1): ``hit`` when the selected entry is valid and holds the same 32-bit hash;
      ``preg`` is its register on a hit, 0 on a miss. The lookup sees the table as at the
      start of its cycle (installs and evictions of that cycle are not seen).
    - **install** (valid-only, always taken): writes ``{hash, preg}`` into the hash's entry
      and sets it valid, visible to lookups from the next cycle. ``ref_inc`` names ``preg``
      (the entry now references it) and, when the entry was valid, ``ref_dec`` names the
      displaced entry's register (its reference is dropped); both in the same cycle
      (latency 0), even when the two registers are equal (the counts net to zero).
      An install with ``divergent`` set is ignored, no write and no event: divergent results
      live in pinned registers and are never shared (paper V-D).
    - **evict** (stream; ``ready`` is low while an install is offered): invalidates the entry
      ``payload`` and, if it was valid, releases its register on ``ref_dec`` in the same
      cycle. Low-register mode uses it (paper V-E: a miss evicts the entry, or a random
      entry is evicted on an idle cycle; the composition picks the index).

    How the allocation stage uses it (paper V-A, the composition's protocol): a miss
    allocates a new register, writes the value and installs ``{hash, new}``; a hit sends a
    verify-read of ``preg``; if the verify-read mismatches (a hash collision) a new register
    is allocated and written and ``{hash, new}`` is installed too (**interpretation**: a
    false positive is treated as a miss, so the newest value owns the signature and the
    colliding register's VSB reference is released); a hit on a register whose reference
    count is saturated is also treated as a miss.

    Attributes
    ----------
    lookup : In(valid_only(hash_width))
        A result's hash to look up.
    result : Out(valid_only(result_layout))
        One cycle after each lookup: ``hit``, ``preg``.
    install : In(valid_only(install_layout))
        ``hash``, ``preg``, ``divergent``.
    evict : In(stream.Signature(range(entries)))
        The entry to invalidate.
    ref_inc : Out(preg_ref_layout)
        ``valid``, ``preg``: a register gains the reference of an installed entry
        (``preg`` is 0 while ``valid`` is low).
    ref_dec : Out(preg_ref_layout)
        ``valid``, ``preg``: a register loses the reference of a displaced or evicted entry
        (``preg`` is 0 while ``valid`` is low).
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.valid = Signal(config.entries)
        """The entries' valid bits (flip-flops)."""

    @functools.cached_property
    def table(self) -> memory.Memory:
        """``{hash, preg}`` of every entry. Created on first use (elaboration, or a formal
        harness's own ports), so that a component built only to check its parameters or read
        its ports leaves no unused memory behind."""
        return memory.Memory(shape=self.config.entry_layout, depth=self.config.entries, init=[])

    def elaborate(self, platform):
        m = Module()
        m.submodules.table = self.table
        self._lookup(m)
        self._update(m)
        return m

    def _lookup(self, m):
        """Synchronous read of the hash's entry; compare one cycle later."""
        config, lookup = self.config, self.lookup
        read = self.table.read_port()
        index = lookup.payload[:config.index_bits]
        hash_was = Signal(config.hash_width)
        valid_was = Signal()
        m.d.comb += read.addr.eq(index)
        m.d.sync += [
            self.result.valid.eq(lookup.valid),
            hash_was.eq(lookup.payload),
            valid_was.eq(select(m, self.valid, index, "lookup_entry_valid")),
        ]
        hit = Signal()
        m.d.comb += [
            hit.eq(valid_was & (read.data.hash == hash_was)),
            self.result.payload.hit.eq(hit),
            self.result.payload.preg.eq(Mux(hit, read.data.preg, 0)),
        ]

    def _update(self, m):
        """Install or evict: one entry a cycle, the old entry read combinationally."""
        config, install, evict = self.config, self.install, self.evict
        read = self.table.read_port(domain="comb")
        write = self.table.write_port()
        installing = Signal()
        index = Signal(config.index_bits)
        m.d.comb += [
            evict.ready.eq(~install.valid),
            installing.eq(install.valid & ~install.payload.divergent),
            index.eq(Mux(install.valid, install.payload.hash[:config.index_bits],
                         evict.payload)),
            read.addr.eq(index),
            write.addr.eq(index),
            write.data.hash.eq(install.payload.hash),
            write.data.preg.eq(install.payload.preg),
            write.en.eq(installing),
        ]
        was_valid = Signal()
        touched = Signal()
        m.d.comb += [
            was_valid.eq(select(m, self.valid, index, "update_entry_valid")),
            touched.eq(installing | (evict.valid & evict.ready)),
            self.ref_inc.valid.eq(installing),
            self.ref_inc.preg.eq(Mux(installing, install.payload.preg, 0)),
            self.ref_dec.valid.eq(touched & was_valid),
            self.ref_dec.preg.eq(Mux(self.ref_dec.valid, read.data.preg, 0)),
        ]
        for e in range(config.entries):
            with m.If(touched & equals(index, e)):
                m.d.sync += self.valid[e].eq(installing)
