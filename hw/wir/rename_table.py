"""Rename tables of WIR: per warp, logical -> physical warp register (paper Section V-B, V-D)."""

import functools

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory

from gpurf.hw.gates import equals, select
from gpurf.hw.params import ConfiguredComponent

from .configs import RenameTableConfig

__all__ = ["RenameTable", "RenameTableConfig"]


class RenameTable(ConfiguredComponent, config=RenameTableConfig):
    """The rename tables of all warps: entry ``{preg, valid, pin}`` per (warp, logical reg).

    Storage: one unmapped memory row per warp holding its ``regs`` entries, ``warps x regs x
    12`` = 36,288 bits by default, nothing else per entry.

    Ports and timing (every ``warp`` and register index must be in range):

    - **Clear after reset** (the memory cannot be reset): for ``warps`` cycles after reset
      the table writes all-invalid rows, one warp a cycle, with ``ready`` and every stream's
      ``ready`` low. Afterwards all entries are invalid with clear pin bits (paper V-B).
    - **issue** -> **renamed** one cycle later (synchronous read of the warp's row, latency
      1): the entries of ``src[0..sources-1]`` and of ``dst`` (its pin bit, for divergence,
      and its current mapping, the source of a dummy MOV). All reads of one issue are of one
      warp, so they share one row read (the paper's 4 read ports of a table). The issue sees
      the table as at the start of its cycle. The payload is zero while ``valid`` is low.
    - **retire** writes ``reg -> preg`` with ``valid`` set and ``pin = divergent`` (paper V-D:
      a divergent write pins the register, the first convergent redefinition unpins it),
      visible to issues from the next cycle. In the same cycle (latency 0) ``ref_inc`` names
      the new register and ``ref_dec`` the old mapping's register when it was valid; when both
      are the same register (a pinned register rewritten in place) neither is emitted.
      Protocol (asserted by the golden model): a divergent retire on a pinned entry carries
      the entry's register; a divergent retire on an unpinned valid entry a different one.
    - **exit** (a warp finishes): sweeps its entries one per cycle for ``regs`` cycles,
      starting the cycle after the transfer, writing each as all zero (invalid) and
      releasing each valid mapping's register on ``ref_dec``; every stream's ``ready`` is
      low meanwhile.

    Attributes
    ----------
    issue : In(stream.Signature(issue_layout))
        ``warp``, ``src[sources]``, ``dst``.
    renamed : Out(valid_only(renamed_layout))
        One cycle after each issue: ``src[sources]`` and ``dst`` entries.
    retire : In(stream.Signature(retire_layout))
        ``warp``, ``reg``, ``preg``, ``divergent``.
    exit : In(stream.Signature(warp_bits))
        The warp whose mappings are released.
    ref_inc : Out(preg_ref_layout)
        ``valid``, ``preg``: a register gains a mapping's reference (``preg`` 0 if not valid).
    ref_dec : Out(preg_ref_layout)
        ``valid``, ``preg``: a register loses a mapping's reference (``preg`` 0 if not
        valid).
    ready : Out(1)
        The clear after reset is done.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.clearing = Signal(init=1)
        """High during the clear after reset."""
        self.clear_row = Signal(range(config.warps))
        """The row the clear writes this cycle."""
        self.sweeping = Signal()
        """An exit sweep is in progress."""
        self.sweep_warp = Signal(config.warp_bits)
        self.sweep_reg = Signal(range(config.regs))

    @functools.cached_property
    def table(self) -> memory.Memory:
        """One row per warp. Created on first use (elaboration, or a formal harness's own
        ports), so that a component built only to check its parameters or read its ports
        leaves no unused memory behind."""
        return memory.Memory(shape=self.config.row_layout, depth=self.config.warps, init=[])

    def elaborate(self, platform):
        m = Module()
        m.submodules.table = self.table
        idle = Signal()
        m.d.comb += [
            idle.eq(~self.clearing & ~self.sweeping),
            self.ready.eq(~self.clearing),
            self.issue.ready.eq(idle),
            self.retire.ready.eq(idle),
            self.exit.ready.eq(idle),
        ]
        self._clear(m)
        self._issue(m)
        self._update(m)
        return m

    def _clear(self, m):
        """Count through the rows after reset."""
        with m.If(self.clearing):
            m.d.sync += self.clear_row.eq(self.clear_row + 1)
            with m.If(equals(self.clear_row, self.config.warps - 1)):
                m.d.sync += self.clearing.eq(0)

    def _issue(self, m):
        """One synchronous row read; the entries are selected a cycle later."""
        config, issue = self.config, self.issue
        read = self.table.read_port()
        taken = Signal()
        m.d.comb += [taken.eq(issue.valid & issue.ready), read.addr.eq(issue.payload.warp)]
        src = Signal(data.ArrayLayout(config.reg_bits, config.sources))
        dst = Signal(config.reg_bits)
        m.d.sync += [self.renamed.valid.eq(taken), src.eq(issue.payload.src),
                     dst.eq(issue.payload.dst)]
        answer = Signal(config.renamed_layout)
        entries = [read.data[r] for r in range(config.regs)]
        for k in range(config.sources):
            m.d.comb += answer.src[k].eq(select(m, entries, src[k], f"src_{k}_entry"))
        m.d.comb += [answer.dst.eq(select(m, entries, dst, "dst_entry")),
                     self.renamed.payload.eq(Mux(self.renamed.valid, answer, 0))]

    def _update(self, m):
        """Retire, exit sweep or reset clear: one write a cycle, old entry read first."""
        config, retire = self.config, self.retire
        read = self.table.read_port(domain="comb")
        write = self.table.write_port(granularity=1)
        warp = Signal(config.warp_bits)
        reg = Signal(range(config.regs))
        m.d.comb += [
            warp.eq(Mux(self.sweeping, self.sweep_warp, retire.payload.warp)),
            reg.eq(Mux(self.sweeping, self.sweep_reg, retire.payload.reg)),
            read.addr.eq(warp),
        ]
        old = Signal(config.entry_layout)
        new = Signal(config.entry_layout)
        m.d.comb += [
            old.eq(select(m, [read.data[r] for r in range(config.regs)], reg, "old_entry")),
            new.eq(Mux(self.sweeping, 0, Cat(retire.payload.preg, Const(1, 1),
                                               retire.payload.divergent))),
        ]
        retiring = Signal()
        same = Signal()
        m.d.comb += [
            retiring.eq(retire.valid & retire.ready),
            same.eq(old.valid & (old.preg == retire.payload.preg)),
            self.ref_inc.valid.eq(retiring & ~same),
            self.ref_inc.preg.eq(Mux(self.ref_inc.valid, retire.payload.preg, 0)),
            self.ref_dec.valid.eq(old.valid & ((retiring & ~same) | self.sweeping)),
            self.ref_dec.preg.eq(Mux(self.ref_dec.valid, old.preg, 0)),
        ]
        onehot = Signal(config.regs)
        for r in range(config.regs):
            m.d.comb += onehot[r].eq(equals(reg, r))
        with m.If(self.clearing):
            m.d.comb += [write.addr.eq(self.clear_row),
                         write.en.eq(Const(-1, config.regs)),
                         write.data.as_value().eq(0)]
        with m.Else():
            m.d.comb += [write.addr.eq(warp),
                         write.en.eq(Mux(retiring | self.sweeping, onehot, 0)),
                         write.data.as_value().eq(Cat(new.as_value()
                                                      for _ in range(config.regs)))]
        self._sweep(m)

    def _sweep(self, m):
        """Start an exit sweep on an ``exit`` transfer; walk the warp's registers."""
        with m.If(self.exit.valid & self.exit.ready):
            m.d.sync += [self.sweeping.eq(1), self.sweep_warp.eq(self.exit.payload),
                         self.sweep_reg.eq(0)]
        with m.If(self.sweeping):
            m.d.sync += self.sweep_reg.eq(self.sweep_reg + 1)
            with m.If(equals(self.sweep_reg, self.config.regs - 1)):
                m.d.sync += self.sweeping.eq(0)

