"""The baseline of RegLess's Fig. 11: a plain banked register file of one shard."""

import functools
from dataclasses import dataclass

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, memory, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.gates import ripple_add
from gpurf.hw.params import check_int, check_int_choice, index_bits
from gpurf.hw.signatures import valid_only

from .layouts import banked_rf_write_layout, osu_ref_layout, warp_value_layout
from .osu import BANK_CHOICES

__all__ = ["BankedRf", "BankedRfConfig"]


@dataclass(frozen=True)
class BankedRfConfig:
    """Validated parameters of the banked register file and the widths derived from them
    (shared by :class:`BankedRf` and its golden model)."""

    entries: int
    banks: int
    warps: int
    lanes: int
    data_width: int

    def __post_init__(self):
        check_int("entries", self.entries, 1, 4096)
        check_int_choice("banks", self.banks, BANK_CHOICES)
        check_int("warps", self.warps, 1, 64)
        check_int("lanes", self.lanes, 1, 32)
        check_int("data_width", self.data_width, 1, 32)
        if self.entries % self.warps:
            raise ValueError(f"entries must be a multiple of warps ({self.warps}), "
                             f"not {self.entries}")
        if self.regs % self.banks:
            raise ValueError(f"registers per warp (entries / warps = {self.regs}) must be a "
                             f"multiple of banks ({self.banks})")

    @property
    def regs(self) -> int:
        """Registers per warp: ``entries / warps`` (32 at the defaults)."""
        return self.entries // self.warps

    @property
    def rows(self) -> int:
        """Rows of one bank: ``entries / banks`` (64 at the defaults)."""
        return self.entries // self.banks

    @property
    def rows_per_warp(self) -> int:
        """Rows one warp holds in every bank: ``regs / banks`` (4 at the defaults)."""
        return self.regs // self.banks

    @property
    def warp_bits(self) -> int:
        return index_bits(self.warps)

    @property
    def reg_bits(self) -> int:
        return index_bits(self.regs)

    @property
    def bank_bits(self) -> int:
        return index_bits(self.banks)

    @property
    def row_bits(self) -> int:
        return index_bits(self.rows)

    @property
    def value_layout(self) -> data.ArrayLayout:
        return warp_value_layout(lanes=self.lanes, data_width=self.data_width)

    @property
    def ref_layout(self) -> data.StructLayout:
        return osu_ref_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits)

    @property
    def write_layout(self) -> data.StructLayout:
        return banked_rf_write_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits,
                                      lanes=self.lanes, data_width=self.data_width)

    @property
    def data_bits(self) -> int:
        """The storage: ``entries x lanes x data_width`` (512 x 1024 at the defaults)."""
        return self.entries * self.lanes * self.data_width

    def bank_of(self, warp: int, reg: int) -> int:
        """As the OSU (paper 5.2): the low bits of ``warp + reg``."""
        return (warp + reg) & (self.banks - 1)

    def row_of(self, warp: int, reg: int) -> int:
        """``warp * (regs / banks) + reg // banks``: with the bank, a bijection of the
        ``entries`` registers onto ``banks x rows`` (``banks`` divides ``regs``)."""
        return warp * self.rows_per_warp + reg // self.banks


class BankedRf(wiring.Component):
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

    Parameters
    ----------
    entries : int
        Registers of the shard, 1..4096 (default 512: 2048 per SM over 4 shards), a
        multiple of ``warps`` with ``entries / warps`` a multiple of ``banks``.
    banks : int
        Banks, a power of two 2..32 (default 8, as the OSU).
    warps : int
        Warps of the shard, 1..64 (default 16).
    lanes : int
        Lanes of a warp register, 1..32 (default 32).
    data_width : int
        Bits per lane, 1..32 (default 32).

    Attributes
    ----------
    read : In(stream.Signature(osu_ref_layout))
    read_resp : Out(valid_only(warp_value_layout))
    write : In(stream.Signature(banked_rf_write_layout))
    """

    def __init__(self, *, entries=512, banks=8, warps=16, lanes=32, data_width=32):
        self.config = config = BankedRfConfig(entries=entries, banks=banks, warps=warps,
                                              lanes=lanes, data_width=data_width)
        super().__init__({
            "read": In(stream.Signature(config.ref_layout)),
            "read_resp": Out(valid_only(config.value_layout)),
            "write": In(stream.Signature(config.write_layout)),
        })

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
        select = Signal(config.banks, name=f"{name}_select")
        m.d.comb += select.eq(Const(1, config.banks) << bank)
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
