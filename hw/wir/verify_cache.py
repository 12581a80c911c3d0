"""Verify cache in front of the register banks for verify-reads (WIR paper Section VI-C)."""

from dataclasses import dataclass

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, memory, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.gates import equals
from gpurf.hw.params import check_int, index_bits
from gpurf.hw.signatures import valid_only

from .layouts import verify_fill_layout, verify_result_layout, warp_value_layout

__all__ = ["VerifyCache", "VerifyCacheConfig"]


@dataclass(frozen=True)
class VerifyCacheConfig:
    """Validated parameters of the verify cache and the widths derived from them."""

    entries: int
    pregs: int
    lanes: int
    data_width: int
    invalidate_ports: int

    def __post_init__(self):
        check_int("entries", self.entries, 2, 64)
        check_int("pregs", self.pregs, 2, 4096)
        check_int("lanes", self.lanes, 1, 32)
        check_int("data_width", self.data_width, 1, 32)
        check_int("invalidate_ports", self.invalidate_ports, 1, 8)

    @property
    def preg_bits(self) -> int:
        return (self.pregs - 1).bit_length()

    @property
    def value_bits(self) -> int:
        return self.lanes * self.data_width

    @property
    def pointer_bits(self) -> int:
        return index_bits(self.entries)

    @property
    def entry_bits(self) -> int:
        """valid + preg tag + value: 1 + 10 + 1024 = 1035 bits by default."""
        return 1 + self.preg_bits + self.value_bits

    @property
    def storage_bits(self) -> int:
        """``entries x entry_bits``: 8 x 1035 = 8,280 bits by default."""
        return self.entries * self.entry_bits

    @property
    def value_layout(self) -> data.ArrayLayout:
        return warp_value_layout(lanes=self.lanes, data_width=self.data_width)

    @property
    def fill_layout(self) -> data.StructLayout:
        return verify_fill_layout(preg_bits=self.preg_bits, lanes=self.lanes,
                                  data_width=self.data_width)

    @property
    def result_layout(self) -> data.StructLayout:
        return verify_result_layout(lanes=self.lanes, data_width=self.data_width)


class VerifyCache(wiring.Component):
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

    Parameters
    ----------
    entries : int
        Cache entries, 2..64 (default 8).
    pregs : int
        Physical warp registers, 2..4096 (default 1024: 10-bit tags).
    lanes : int
        Lanes of a warp register, 1..32 (default 32).
    data_width : int
        Bits per lane, 1..32 (default 32).
    invalidate_ports : int
        Register writes per cycle, 1..8 (default 2: two warp instructions a cycle).

    Attributes
    ----------
    lookup : In(valid_only(preg_bits))
        Verify-read of a register.
    result : Out(valid_only(result_layout))
        One cycle after each lookup: ``hit``, ``value``.
    fill : In(valid_only(fill_layout))
        ``preg``, ``value`` read from the banks.
    invalidate_valid : In(invalidate_ports)
        Bit ``p``: register ``invalidate_preg[p]`` is written this cycle.
    invalidate_preg : In(ArrayLayout(preg_bits, invalidate_ports))
        The written registers.
    """

    def __init__(self, *, entries=8, pregs=1024, lanes=32, data_width=32, invalidate_ports=2):
        self.config = config = VerifyCacheConfig(
            entries=entries, pregs=pregs, lanes=lanes, data_width=data_width,
            invalidate_ports=invalidate_ports)
        preg = config.preg_bits
        super().__init__({
            "lookup": In(valid_only(preg)),
            "result": Out(valid_only(config.result_layout)),
            "fill": In(valid_only(config.fill_layout)),
            "invalidate_valid": In(invalidate_ports),
            "invalidate_preg": In(data.ArrayLayout(preg, invalidate_ports)),
        })
        self.valid = Signal(entries)
        """Valid bit of each entry (flip-flops)."""
        self.tag = Signal(data.ArrayLayout(preg, entries))
        """The register each entry holds (flip-flops)."""
        self.pointer = Signal(range(entries))
        """The FIFO pointer: the entry the next allocating fill takes."""
        self.values = memory.Memory(shape=config.value_layout, depth=entries, init=[])
        """The cached values."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.values = self.values
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
