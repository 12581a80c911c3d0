"""Formal harness of ``compression.indirection_table`` in a small configuration.

Inputs are free (``AnySeq``) except for a reset in the first cycle, the stream rule on each
lookup port (valid and payload held until ready), and a tag the harness chooses: each
lookup's ``tag`` is ``{seq, reg}`` (``reg`` in the low bits), ``seq`` being the number of
lookups the port had accepted before it, modulo 4. The harness asserts, independently of the
RTL's structure:

- **no lost or duplicated lookup, in order**: the results of a port carry the sequence
  numbers 0, 1, 2, ... in turn, a port never has a result without an accepted lookup
  outstanding, and never more than ``buffer + 1`` outstanding;
- **correct data**: a result for the watched register (``AnyConst``) carries the entry the
  harness's shadow of that register held in the cycle of the grant (loads seen next cycle);
- **one grant per bank**: at most one of the internal ``grant[b]`` bits per bank, and at
  most one result per bank per cycle (seen at the ports, through the tags);
- **fixed priority** (source table, ``buffer = 0``): a port is ready exactly when it offers
  and no lower-numbered port offers a register of the same bank;
- **bounded wait**: while a watched port (``AnyConst``) has a lookup offered or outstanding
  and no port makes a new offer, it is served within ``ports x (buffer + 1) + 2`` cycles.
"""

from amaranth import Cat, Signal
from amaranth.asserts import AnyConst
from amaranth.hdl import Assert, Assume

from gpurf.hw.compression.configs import IndirectionTableConfig
from gpurf.hw.compression.indirection_table import IndirectionTable
from gpurf.hw.compression.layouts import indirection_entry_layout

from ..formal_base import FormalHarness

__all__ = ["CHECKS", "SMALL", "IndirectionTableFormal"]

SEQ_BITS = 2

SMALL = {"entries": 8, "banks": 2, "ports": 3, "buffer": 0}
"""The proof configuration: 8 registers in 2 banks, 3 ports, the source table."""


CHECKS = ("data", "banks", "priority", "wait")
"""Optional property groups beside the ordering one (``wait``: the bounded wait, whose
fairness assumption is kept out of the other proofs; one SMT problem with every group
takes the solver far longer than the groups one by one)."""


class IndirectionTableFormal(FormalHarness):
    """The table with free inputs and the invariants above (``params`` override SMALL);
    ``checks`` selects the property groups besides ordering (default: all but ``wait``)."""

    block = IndirectionTable
    SMALL = SMALL

    def __init__(self, *, block=None, checks=("data", "banks", "priority"), **params):
        unknown = set(checks) - set(CHECKS)
        if unknown:
            raise ValueError(f"checks must be among {', '.join(CHECKS)}, not {sorted(unknown)}")
        self.checks = frozenset(checks)
        super().__init__(block=block, **params)

    def configuration(self, params):
        """``SMALL`` overridden by ``params``, with tags of ``{seq, reg}``."""
        full = super().configuration(params)
        return {**full, "tag_width": IndirectionTableConfig(**full).reg_bits + SEQ_BITS}

    def check(self, m):
        dut = self.dut
        held = self._drive(m)
        outstanding = [self._order(m, p) for p in range(dut.config.ports)]
        if "data" in self.checks:
            self._data(m)
        if "banks" in self.checks:
            self._banks(m)
        if "priority" in self.checks and not dut.config.buffer:
            self._priority(m)
        if "wait" in self.checks:
            self._bounded_wait(m, held, outstanding)
        self._covers(m, held, outstanding)

    def _covers(self, m, held, outstanding):
        """The events: a bank conflict (two ports offering one bank in a cycle), a stalled
        offer held, a full port (``buffer + 1`` lookups outstanding), a result."""
        dut, config = self.dut, self.dut.config
        banks = [dut.lookup[p].reg[:config.bank_bits] for p in range(config.ports)]
        conflict = Cat(dut.lookup_valid[p] & dut.lookup_valid[q] & (banks[p] == banks[q])
                       for p in range(config.ports) for q in range(p + 1, config.ports))
        self.covers(m, [
            (self.running & conflict.any(), "bank_conflict"),
            (Cat(held).any(), "stall"),
            (Cat(o == config.buffer + 1 for o in outstanding).any(), "full"),
            (dut.result_valid.any(), "result"),
        ])

    def _reg_bits(self):
        return self.dut.config.reg_bits

    def _drive(self, m):
        """Free inputs, the stream rule, and the ``{seq, reg}`` tags; returns per port
        whether its offer is held from the previous cycle."""
        dut = self.dut
        config = dut.config
        self.free(m, dut.lookup_valid, dut.lookup)
        self.free_streams(m, dut.load)
        return [self.assume_held(m, dut.lookup_valid[p], dut.lookup_ready[p], dut.lookup[p],
                                 name=f"lookup_{p}")
                for p in range(config.ports)]

    def _order(self, m, p):
        """Port ``p``: results in acceptance order, exactly once each; returns the count of
        accepted lookups without a result."""
        dut, reg_bits = self.dut, self._reg_bits()
        lookup, result = dut.lookup[p], dut.result[p]
        accepted = Signal(SEQ_BITS, name=f"accepted_{p}")
        returned = Signal(SEQ_BITS, name=f"returned_{p}")
        outstanding = Signal(range(8), name=f"outstanding_{p}")
        accept = Signal(name=f"accept_{p}")
        m.d.comb += accept.eq(dut.lookup_valid[p] & dut.lookup_ready[p])
        with m.If(dut.lookup_valid[p]):
            m.d.comb += Assume((lookup.tag[:reg_bits] == lookup.reg)
                               & (lookup.tag[reg_bits:] == accepted))
        with m.If(dut.result_valid[p]):
            m.d.comb += [Assert(result.tag[reg_bits:] == returned), Assert(outstanding > 0)]
        m.d.comb += Assert(outstanding <= dut.config.buffer + 1)
        m.d.sync += [
            accepted.eq(accepted + accept),
            returned.eq(returned + dut.result_valid[p]),
            outstanding.eq(outstanding + accept - dut.result_valid[p]),
        ]
        return outstanding

    def _data(self, m):
        """A result of the watched register is its shadow entry at the grant."""
        dut, reg_bits = self.dut, self._reg_bits()
        watched = Signal(reg_bits)
        m.d.comb += watched.eq(AnyConst(reg_bits))
        shadow = Signal(indirection_entry_layout(), reset_less=True)
        at_grant = Signal(indirection_entry_layout(), reset_less=True)
        load = dut.load.payload
        with m.If(dut.load.valid & (load.reg == watched)):
            m.d.sync += shadow.eq(load.entry)
        m.d.sync += at_grant.eq(shadow)
        for p in range(dut.config.ports):
            result = dut.result[p]
            with m.If(dut.result_valid[p] & (result.tag[:reg_bits] == watched)):
                m.d.comb += Assert(result.entry == at_grant)

    def _banks(self, m):
        """At most one grant per bank, and at most one result per bank per cycle."""
        dut = self.dut
        config = dut.config
        for b in range(config.banks):
            grants = dut.grant[b]
            m.d.comb += Assert((grants & (grants - 1)) == 0)
            hits = [dut.result_valid[p] & (dut.result[p].tag[:config.bank_bits] == b)
                    for p in range(config.ports)]
            m.d.comb += Assert(sum(hits) <= 1)

    def _priority(self, m):
        """Source table: ready iff offered and no lower port offers the same bank."""
        dut = self.dut
        config = dut.config
        for p in range(config.ports):
            bank = dut.lookup[p].reg[:config.bank_bits]
            beaten = Cat(dut.lookup_valid[q] & (dut.lookup[q].reg[:config.bank_bits] == bank)
                         for q in range(p)).any() if p else 0
            m.d.comb += Assert(dut.lookup_ready[p] == (dut.lookup_valid[p] & ~beaten))

    def _bounded_wait(self, m, held, outstanding):
        """The watched port is served within the bound while no port makes a new offer."""
        dut = self.dut
        config = dut.config
        watched = Signal(range(config.ports))
        m.d.comb += [watched.eq(AnyConst(len(watched))), Assume(watched < config.ports)]
        busy = Signal()
        m.d.comb += busy.eq(Cat((watched == p) & (held[p] | (outstanding[p] > 0))
                                for p in range(config.ports)).any())
        with m.If(busy):
            for p in range(config.ports):
                m.d.comb += Assume(~dut.lookup_valid[p] | held[p])
        bound = config.ports * (config.buffer + 1) + 2
        waited = Signal(range(bound + 2))
        with m.If(busy):
            m.d.sync += waited.eq(waited + (waited <= bound))
        with m.Else():
            m.d.sync += waited.eq(0)
        m.d.comb += Assert(waited <= bound)
