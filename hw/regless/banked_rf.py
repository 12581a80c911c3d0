"""The baseline of RegLess's Fig. 11: a plain banked register file of one shard."""

import functools

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import memory

from gpurf.hw.gates import onehot, ripple_add
from gpurf.hw.params import ConfiguredComponent

from .configs import BankedRfConfig

__all__ = ["BankedRf"]


class BankedRf(ConfiguredComponent, config=BankedRfConfig):
    """A plain banked register file of one shard: the 2048-entry-per-SM baseline of RegLess's
    Fig. 11 (512 entries per shard x 4 shards), with the OSU's data ports.

    Register ``(warp, reg)`` (``reg < entries / warps``) lives in bank
    ``(warp + reg) & (banks - 1)`` (the OSU's mapping, paper 5.2) at row
    ``warp * (regs / banks) + reg // banks``. Each bank is an unmapped memory of
    ``entries / banks`` words of ``lanes x data_width`` bits with one synchronous read port
    and one write port; only the addressed bank's ports are enabled. No tags, lists or
    allocation: every register has its fixed place.

    - ``read`` ``{warp, reg}`` (always ready): ``read_resp`` (valid-only) carries the value
      1 cycle later, as ``Osu.read_resp``; its payload is 0 while not valid.
    - ``write`` ``{warp, reg, data}`` (always ready): stored at the clock edge.

    A read and a write in the same cycle both complete, even in the same bank (a read and a
    write port per bank). A read of the register written in the same cycle returns the
    **old** value (the read port is not transparent): the new value is visible to reads
    from the next cycle on. The contents are not reset (memories cannot be); they start at
    0 (the memories' initial value) and keep their values across a reset.

    **Interpretation.** The paper's baseline (6.1) also holds the read / writeback
    arbitration and the operand collectors; both RegLess and the baseline need those, so
    this block compares the storage with its decoding only, against an OSU with the same
    ports.

    Attributes
    ----------
    read : In(stream.Signature(osu_ref_layout))
    read_resp : Out(valid_only(warp_value_layout))
    write : In(stream.Signature(banked_rf_write_layout))
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    @functools.cached_property
    def banks(self) -> list[memory.Memory]:
        """One memory per bank (created on first use: elaboration)."""
        config = self.config
        return [memory.Memory(shape=config.value_layout, depth=config.rows, init=[])
                for _ in range(config.banks)]

    def _place(self, m, name, ref):
        """One-hot bank and row of ``ref`` (``{warp, reg}``), from one-bit gates
        (:func:`gpurf.hw.gates.ripple_add`; the row's ``warp * (regs / banks)`` as a sum of
        shifted copies of ``warp``)."""
        config = self.config
        bank = ripple_add(m, ref.warp, ref.reg, config.bank_bits, f"{name}_bank")
        select = onehot(m, bank, config.banks, f"{name}_select")
        row = ref.reg[config.bank_bits:]
        for j in range(config.rows_per_warp.bit_length()):
            if config.rows_per_warp >> j & 1:
                row = ripple_add(m, row, Cat(Const(0, j), ref.warp), config.row_bits,
                                 f"{name}_row{j}")
        return select, row

    def elaborate(self, platform):
        m = Module()
        config = self.config
        r_select, r_row = self._place(m, "read", self.read.payload)
        w_select, w_row = self._place(m, "write", self.write.payload)
        resp_select = Signal(config.banks)
        m.d.comb += [self.read.ready.eq(1), self.write.ready.eq(1)]
        m.d.sync += [self.read_resp.valid.eq(self.read.valid), resp_select.eq(r_select)]
        value = 0
        for b, bank in enumerate(self.banks):
            m.submodules[f"bank{b}"] = bank
            read = bank.read_port(transparent_for=())
            write = bank.write_port()
            m.d.comb += [
                read.en.eq(self.read.valid & r_select[b]),
                read.addr.eq(r_row),
                write.en.eq(self.write.valid & w_select[b]),
                write.addr.eq(w_row),
                write.data.eq(self.write.payload.data),
            ]
            value = value | Mux(resp_select[b], read.data.as_value(), 0)
        m.d.comb += self.read_resp.payload.eq(Mux(self.read_resp.valid, value, 0))
        return m
