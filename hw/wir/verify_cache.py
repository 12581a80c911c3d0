"""Verify cache in front of the register banks for verify-reads (WIR paper Section VI-C)."""

import functools

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, memory

from gpurf.hw.gates import equals
from gpurf.hw.params import ConfiguredComponent

from .configs import VerifyCacheConfig

__all__ = ["VerifyCache", "VerifyCacheConfig"]


class VerifyCache(ConfiguredComponent, config=VerifyCacheConfig):
    """A small fully associative cache of register values tagged by physical register id
    (paper VI-C): verify-reads check it before the banks.

    Storage: the values in an unmapped memory (``entries x lanes x data_width``), the valid
    bits and ``preg`` tags in flip-flops (compared in parallel), ``entries x 1035`` bits by
    default; plus the one FIFO pointer (``log2(entries)`` flip-flops, not per entry).

    Ports and timing:

    - **lookup** (valid-only) -> **result** one cycle later (the value memory is read
      synchronously, latency 1): ``hit`` when a valid entry holds the register, with its
      ``value`` (zero on a miss). The lookup sees the cache as at the start of its cycle,
      except that an invalidate of the same register in the same cycle turns it into a miss
      (the register is being written).
    - **fill** (valid-only, always taken) after a missed verify-read's bank read: when a
      valid entry already holds ``preg``, its value is overwritten in place; otherwise the
      entry at the FIFO pointer takes ``{preg, value}`` (whatever it held is dropped) and the
      pointer advances (FIFO replacement, one pointer for the cache). A fill in the cycle of
      an invalidate of the same register is dropped (its value is stale). Visible from the
      next cycle.
    - **invalidate** (``invalidate_ports`` valid-only ports, for the register file's
      writes): the entry holding ``invalidate_preg[p]`` (if any) becomes invalid.

    At most one valid entry holds a given register.

    Attributes
    ----------
    lookup : In(valid_only(preg_bits))
        Verify-read of a register (with ``lookup_port``).
    result : Out(valid_only(result_layout))
        One cycle after each lookup: ``hit``, ``value`` (with ``lookup_port``).
    fill : In(valid_only(fill_layout))
        ``preg``, ``value`` read from the banks.
    invalidate_valid : In(invalidate_ports)
        Bit ``p``: register ``invalidate_preg[p]`` is written this cycle.
    invalidate_preg : In(ArrayLayout(preg_bits, invalidate_ports))
        The written registers.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.valid = Signal(config.entries)
        """Valid bit of each entry (flip-flops)."""
        self.tag = Signal(data.ArrayLayout(config.preg_bits, config.entries))
        """The register each entry holds (flip-flops)."""
        self.pointer = Signal(range(config.entries))
        """The FIFO pointer: the entry the next allocating fill takes."""

    @functools.cached_property
    def values(self) -> memory.Memory:
        """The cached values. Created on first use (elaboration, or a formal harness's own
        ports), so that a component built only to check its parameters or read its ports
        leaves no unused memory behind."""
        return memory.Memory(shape=self.config.value_layout, depth=self.config.entries, init=[])

    def elaborate(self, platform):
        m = Module()
        m.submodules.values = self.values
        if self.config.lookup_port:
            self._lookup(m)
        self._fill(m)
        return m

    def _match(self, m, preg, name):
        """One bit per entry: valid and tagged ``preg`` (at the start of the cycle)."""
        match = Signal(self.config.entries, name=name)
        m.d.comb += match.eq(Cat(self.valid[e] & (self.tag[e] == preg)
                                 for e in range(self.config.entries)))
        return match

    def _encode(self, onehot):
        """The index of the set bit of ``onehot`` (0 when none), as AND-OR gates: a
        continuous expression, so Icarus evaluates it from time 0 (a combinational process
        whose inputs never change after reset would stay X there)."""
        bits = len(self.pointer)
        return Cat(Cat(onehot[e] for e in range(self.config.entries) if e >> j & 1).any()
                   for j in range(bits))

    def _written(self, m, preg, name):
        """Some invalidate port names ``preg`` this cycle."""
        written = Signal(name=name)
        m.d.comb += written.eq(Cat(self.invalidate_valid[p] & (self.invalidate_preg[p] == preg)
                                   for p in range(self.config.invalidate_ports)).any())
        return written

    def peek(self, m, preg, name):
        """A combinational read of ``preg`` for a composition (``wir.pipeline``'s verify in
        its decide cycle): a second, asynchronous read port on the value memory, addressed
        by the tag match. Returns ``(hit, value)`` as the cache is at the start of the
        cycle; no same-cycle invalidate is checked, so the caller must never write the
        register it peeks in that cycle (the pipeline's verify-read names a register its
        VSB entry holds, never the one it allocates). Make the calls before elaboration
        ends (the memory builds its ports then)."""
        match = self._match(m, preg, f"{name}_match")
        read = self.values.read_port(domain="comb")
        m.d.comb += read.addr.eq(self._encode(match))
        return match.any(), read.data.as_value()

    def _lookup(self, m):
        lookup = self.lookup
        match = self._match(m, lookup.payload, "lookup_match")
        written = self._written(m, lookup.payload, "lookup_written")
        read = self.values.read_port()
        m.d.comb += read.addr.eq(self._encode(match))
        hit = Signal()
        m.d.sync += [self.result.valid.eq(lookup.valid),
                     hit.eq(match.any() & ~written)]
        m.d.comb += [self.result.payload.hit.eq(hit),
                     self.result.payload.value.eq(Mux(hit, read.data, 0))]

    def _fill(self, m):
        config, fill = self.config, self.fill
        payload = fill.payload
        match = self._match(m, payload.preg, "fill_match")
        written = self._written(m, payload.preg, "fill_written")
        storing = Signal()
        m.d.comb += storing.eq(fill.valid & ~written)
        target = Signal(range(config.entries))
        m.d.comb += target.eq(Mux(match.any(), self._encode(match), self.pointer))
        write = self.values.write_port()
        m.d.comb += [write.addr.eq(target), write.data.eq(payload.value), write.en.eq(storing)]
        with m.If(storing & ~match.any()):
            last = equals(self.pointer, config.entries - 1)
            m.d.sync += self.pointer.eq(Mux(last, 0, self.pointer + 1))
        for e in range(config.entries):
            dropped = self._written(m, self.tag[e], f"entry_{e}_written")
            with m.If(storing & equals(target, e)):
                m.d.sync += [self.valid[e].eq(1), self.tag[e].eq(payload.preg)]
            with m.Elif(dropped):
                m.d.sync += self.valid[e].eq(0)
