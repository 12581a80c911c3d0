"""Value signature buffer of WIR's register allocation stage (paper Section V-A, Fig. 6)."""

from dataclasses import dataclass

from amaranth import Module, Mux, Signal
from amaranth.lib import memory, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.gates import equals, select
from gpurf.hw.params import check_int, check_int_choice
from gpurf.hw.signatures import valid_only

from .layouts import (
    preg_ref_layout,
    vsb_entry_layout,
    vsb_install_layout,
    vsb_result_layout,
)

__all__ = ["ValueSignatureBuffer", "ValueSignatureBufferConfig"]

ENTRY_CHOICES = tuple(1 << k for k in range(1, 13))


@dataclass(frozen=True)
class ValueSignatureBufferConfig:
    """Validated parameters of the VSB and the widths derived from them."""

    entries: int
    hash_width: int
    pregs: int

    def __post_init__(self):
        check_int_choice("entries", self.entries, ENTRY_CHOICES)
        check_int("hash_width", self.hash_width, 1, 64)
        check_int("pregs", self.pregs, 2, 4096)
        if self.index_bits > self.hash_width:
            raise ValueError(f"hash_width must be at least log2(entries) = {self.index_bits}, "
                             f"not {self.hash_width}")

    @property
    def index_bits(self) -> int:
        return (self.entries - 1).bit_length()

    @property
    def preg_bits(self) -> int:
        return (self.pregs - 1).bit_length()

    @property
    def entry_bits(self) -> int:
        """Bits of one entry as the paper counts it: valid + hash + preg (43 by default)."""
        return 1 + self.hash_width + self.preg_bits

    @property
    def storage_bits(self) -> int:
        """``entries x (1 + hash + preg)``: 256 x 43 = 11,008 bits by default."""
        return self.entries * self.entry_bits

    def index(self, hash_value: int) -> int:
        """The entry a hash selects: its low ``log2(entries)`` bits."""
        return hash_value & (self.entries - 1)

    @property
    def entry_layout(self):
        return vsb_entry_layout(hash_width=self.hash_width, preg_bits=self.preg_bits)

    @property
    def result_layout(self):
        return vsb_result_layout(preg_bits=self.preg_bits)

    @property
    def install_layout(self):
        return vsb_install_layout(hash_width=self.hash_width, preg_bits=self.preg_bits)


class ValueSignatureBuffer(wiring.Component):
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

    Parameters
    ----------
    entries : int
        Entries, a power of two 2..4096 (default 256).
    hash_width : int
        Hash bits stored per entry, 1..64, at least ``log2(entries)`` (default 32).
    pregs : int
        Physical warp registers, 2..4096 (default 1024: 10-bit ids).

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

    def __init__(self, *, entries=256, hash_width=32, pregs=1024):
        self.config = config = ValueSignatureBufferConfig(
            entries=entries, hash_width=hash_width, pregs=pregs)
        preg = config.preg_bits
        super().__init__({
            "lookup": In(valid_only(hash_width)),
            "result": Out(valid_only(config.result_layout)),
            "install": In(valid_only(config.install_layout)),
            "evict": In(stream.Signature(range(entries))),
            "ref_inc": Out(preg_ref_layout(preg_bits=preg)),
            "ref_dec": Out(preg_ref_layout(preg_bits=preg)),
        })
        self.valid = Signal(entries)
        """The entries' valid bits (flip-flops)."""
        self.table = memory.Memory(shape=config.entry_layout, depth=entries, init=[])
        """``{hash, preg}`` of every entry."""

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
