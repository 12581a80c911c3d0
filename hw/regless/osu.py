"""RegLess's operand staging unit: ``banks`` OSU banks and their routing (paper 5.2, Fig. 10)."""

import functools
from dataclasses import dataclass

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int, check_int_choice, index_bits
from gpurf.hw.signatures import valid_only

from .layouts import (
    osu_ack_layout,
    osu_fetch_layout,
    osu_fill_layout,
    osu_line_layout,
    osu_reserved_layout,
    osu_write_layout,
    osu_writeback_layout,
)
from .osu_bank import OsuBank, OsuBankConfig

__all__ = ["BANK_CHOICES", "Osu", "OsuConfig"]

BANK_CHOICES = (2, 4, 8, 16, 32)
"""Bank counts the OSU takes: powers of two (the bank is the low bits of ``warp + reg``)."""


@dataclass(frozen=True)
class OsuConfig:
    """Validated parameters of the OSU and the widths derived from them."""

    lines: int
    banks: int
    warps: int
    regs: int
    lanes: int
    data_width: int

    def __post_init__(self):
        check_int("lines", self.lines, 1, 4096)
        check_int_choice("banks", self.banks, BANK_CHOICES)
        if self.lines % self.banks:
            raise ValueError(f"lines must be a multiple of banks ({self.banks}), "
                             f"not {self.lines}")
        OsuBankConfig(lines=self.lines // self.banks, warps=self.warps, regs=self.regs,
                      lanes=self.lanes, data_width=self.data_width)

    @property
    def bank(self) -> OsuBankConfig:
        """The configuration of each bank: ``lines / banks`` lines."""
        return OsuBankConfig(lines=self.lines // self.banks, warps=self.warps, regs=self.regs,
                             lanes=self.lanes, data_width=self.data_width)

    @property
    def bank_bits(self) -> int:
        return index_bits(self.banks)

    @property
    def line_layout(self) -> data.StructLayout:
        return osu_line_layout(line_bits=self.bank.line_bits, bank_bits=self.bank_bits)

    def bank_of(self, warp: int, reg: int) -> int:
        """Paper 5.2: the low bits of ``warp + reg``."""
        return (warp + reg) & (self.banks - 1)

    def _regs(self) -> dict:
        return {"warp_bits": self.bank.warp_bits, "reg_bits": self.bank.reg_bits}

    def _values(self) -> dict:
        return {"lanes": self.lanes, "data_width": self.data_width}

    @property
    def ref_layout(self) -> data.StructLayout:
        return self.bank.ref_layout

    @property
    def reserve_layout(self) -> data.StructLayout:
        return self.bank.reserve_layout

    @property
    def preload_layout(self) -> data.StructLayout:
        return self.bank.preload_layout

    @property
    def release_layout(self) -> data.StructLayout:
        return self.bank.release_layout

    @property
    def value_layout(self) -> data.ArrayLayout:
        return self.bank.value_layout

    @property
    def reserved_layout(self) -> data.StructLayout:
        return osu_reserved_layout(line_shape=self.line_layout)

    @property
    def write_layout(self) -> data.StructLayout:
        return osu_write_layout(line_shape=self.line_layout, **self._values())

    @property
    def fetch_layout(self) -> data.StructLayout:
        return osu_fetch_layout(line_shape=self.line_layout, **self._regs())

    @property
    def fill_layout(self) -> data.StructLayout:
        return osu_fill_layout(line_shape=self.line_layout, **self._values())

    @property
    def writeback_layout(self) -> data.StructLayout:
        return osu_writeback_layout(line_shape=self.line_layout, **self._regs(),
                                    **self._values())

    @property
    def ack_layout(self) -> data.StructLayout:
        return osu_ack_layout(warp_bits=self.bank.warp_bits)


class Osu(wiring.Component):
    """The operand staging unit of one shard: ``banks`` :class:`OsuBank` and the routing.

    A register ``(warp, reg)`` lives in bank ``(warp + reg) & (banks - 1)`` (paper 5.2); a
    line is named ``{line, bank}`` (``osu_line_layout``). Every bank works as documented in
    :mod:`gpurf.hw.regless.osu_bank` (one tag operation per cycle, read > reserve > preload >
    release; one data access, write > read > fill > eviction read-out); the OSU adds no
    state on the request side and no latency:

    - ``read``, ``reserve``, ``release`` go to the register's bank; ``write`` and ``fill``
      to the bank of their line; each request's ``ready`` is its bank's. One request of
      each kind per cycle (the register read / writeback units arbitrate above the OSU;
      **interpretation**: the paper leaves the number of ports open).
    - ``preload[b]`` / ``preloaded[b]``: one CM queue and acknowledgement port per bank
      (paper 5.2.1: preloads are passed to the banks in parallel); a request on
      ``preload[b]`` must belong to bank ``b``.
    - ``read_resp`` (1 cycle after the read) and ``reserve_resp`` (same cycle) come from the
      bank that took the request; ``reserve_resp.line.bank`` names it.
    - ``fetch`` and ``writeback``: the banks' output streams merged, lowest bank first; an
      offer not taken stays offered (the grant is held while ``valid & ~ready``), so the
      merged streams keep the stream rule.
    - ``protocol_error``: any bank's sticky error.

    Parameters
    ----------
    lines : int
        Lines of the OSU, 1..4096, a multiple of ``banks`` (default 128: 512 registers per
        SM over 4 shards, the paper's design point).
    banks : int
        Banks, a power of two 2..32 (default 8).
    warps, regs, lanes, data_width : int
        As :class:`~gpurf.hw.regless.osu_bank.OsuBank` (defaults 16, 64, 32, 32).

    Attributes
    ----------
    read : In(stream.Signature(osu_ref_layout))
    read_resp : Out(valid_only(warp_value_layout))
    reserve : In(stream.Signature(osu_reserve_layout))
    reserve_resp : Out(valid_only(osu_reserved_layout with osu_line_layout))
    write : In(stream.Signature(osu_write_layout))
    preload : In(stream.Signature(osu_preload_layout)).array(banks)
    preloaded : Out(ArrayLayout(osu_ack_layout, banks))
    fetch : Out(stream.Signature(osu_fetch_layout))
    fill : In(stream.Signature(osu_fill_layout))
    release : In(stream.Signature(osu_release_layout))
    writeback : Out(stream.Signature(osu_writeback_layout))
    protocol_error : Out(1)
    """

    def __init__(self, *, lines=128, banks=8, warps=16, regs=64, lanes=32, data_width=32):
        self.config = config = OsuConfig(lines=lines, banks=banks, warps=warps, regs=regs,
                                         lanes=lanes, data_width=data_width)
        bank = config.bank
        super().__init__({
            "read": In(stream.Signature(bank.ref_layout)),
            "read_resp": Out(valid_only(bank.value_layout)),
            "reserve": In(stream.Signature(bank.reserve_layout)),
            "reserve_resp": Out(valid_only(config.reserved_layout)),
            "write": In(stream.Signature(config.write_layout)),
            "preload": In(stream.Signature(bank.preload_layout)).array(banks),
            "preloaded": Out(data.ArrayLayout(config.ack_layout, banks)),
            "fetch": Out(stream.Signature(config.fetch_layout)),
            "fill": In(stream.Signature(config.fill_layout)),
            "release": In(stream.Signature(bank.release_layout)),
            "writeback": Out(stream.Signature(config.writeback_layout)),
            "protocol_error": Out(1),
        })

    @functools.cached_property
    def banks(self) -> list[OsuBank]:
        """The banks, created on first use (elaboration), so that building an OSU only to
        read its ports or validate parameters leaves no unused elaboratable behind."""
        return [OsuBank(**vars(self.config.bank)) for _ in range(self.config.banks)]

    def elaborate(self, platform):
        m = Module()
        for b, bank in enumerate(self.banks):
            m.submodules[f"bank{b}"] = bank
        self._requests(m)
        self._responses(m)
        self._merge(m, "fetch", ("warp", "reg", "invalidate"))
        self._merge(m, "writeback", ("warp", "reg", "data"))
        error = 0
        for bank in self.banks:
            error = error | bank.protocol_error
        m.d.comb += self.protocol_error.eq(error)
        return m

    def _bank_select(self, m, name, warp, reg):
        """One-hot bank of ``(warp, reg)``."""
        config = self.config
        total = Signal(config.bank_bits, name=f"{name}_bank")
        m.d.comb += total.eq(_ripple_sum(warp, reg, config.bank_bits))
        return self._onehot(m, name, total)

    def _onehot(self, m, name, index):
        select = Signal(self.config.banks, name=f"{name}_select")
        m.d.comb += select.eq(Const(1, self.config.banks) << index[:self.config.bank_bits])
        return select

    def _route(self, m, name, port, select, payload=None):
        """Valid and payload of ``port`` to the selected bank; ``ready`` from it."""
        ready = 0
        for b, bank in enumerate(self.banks):
            target = getattr(bank, name)
            m.d.comb += [target.valid.eq(port.valid & select[b]),
                         target.payload.eq(port.payload if payload is None else payload)]
            ready = ready | (select[b] & target.ready)
        m.d.comb += port.ready.eq(ready)

    def _requests(self, m):
        for name in ("read", "reserve", "release"):
            port = getattr(self, name)
            self._route(m, name, port, self._bank_select(m, name, port.payload.warp,
                                                         port.payload.reg))
        bank = self.config.bank
        for name in ("write", "fill"):
            port = getattr(self, name)
            local = Signal(getattr(bank, f"{name}_layout"), name=f"{name}_local")
            m.d.comb += [local.line.eq(port.payload.line.line),
                         local.data.eq(port.payload.data)]
            if name == "write":
                m.d.comb += local.last_use.eq(port.payload.last_use)
            self._route(m, name, port, self._onehot(m, name, port.payload.line.bank), local)
        for b, osu_bank in enumerate(self.banks):
            wiring.connect(m, wiring.flipped(self.preload[b]), osu_bank.preload)
            m.d.comb += [self.preloaded[b].valid.eq(osu_bank.preloaded.valid),
                         self.preloaded[b].warp.eq(Mux(osu_bank.preloaded.valid,
                                                       osu_bank.preloaded.payload, 0))]

    def _responses(self, m):
        valid, payload, r_valid, r_line, r_bank, last_use = 0, 0, 0, 0, 0, 0
        for b, bank in enumerate(self.banks):
            valid = valid | bank.read_resp.valid
            payload = payload | Mux(bank.read_resp.valid, bank.read_resp.payload.as_value(), 0)
            here = bank.reserve_resp.valid
            r_valid = r_valid | here
            r_line = r_line | Mux(here, bank.reserve_resp.payload.line, 0)
            r_bank = r_bank | Mux(here, b, 0)
            last_use = last_use | (here & bank.reserve_resp.payload.last_use)
        m.d.comb += [
            self.read_resp.valid.eq(valid),
            self.read_resp.payload.eq(payload),
            self.reserve_resp.valid.eq(r_valid),
            self.reserve_resp.payload.line.line.eq(r_line),
            self.reserve_resp.payload.line.bank.eq(r_bank),
            self.reserve_resp.payload.last_use.eq(last_use),
        ]

    def _merge(self, m, name, fields):
        """The banks' ``name`` streams merged, lowest bank first, the grant held while an
        offer waits."""
        config = self.config
        out = getattr(self, name)
        valids = Signal(config.banks, name=f"{name}_valids")
        m.d.comb += valids.eq(Cat(getattr(bank, name).valid for bank in self.banks))
        locked = Signal(name=f"{name}_locked")
        held = Signal(config.bank_bits, name=f"{name}_held")
        lowest = Signal(config.bank_bits, name=f"{name}_lowest")
        first = 0
        for b in reversed(range(config.banks)):
            first = Mux(valids[b], b, first)
        m.d.comb += lowest.eq(first)
        grant = Signal(config.bank_bits, name=f"{name}_grant")
        m.d.comb += grant.eq(Mux(locked, held, lowest))
        select = self._onehot(m, f"{name}_grant", grant)
        m.d.comb += out.valid.eq(valids.any())
        merged = 0
        for b, bank in enumerate(self.banks):
            source = getattr(bank, name)
            offer = Signal(out.payload.shape(), name=f"{name}_offer_{b}")
            m.d.comb += [getattr(offer, f).eq(getattr(source.payload, f)) for f in fields]
            m.d.comb += [offer.line.line.eq(source.payload.line), offer.line.bank.eq(b),
                         source.ready.eq(out.ready & select[b])]
            merged = merged | Mux(select[b], offer.as_value(), 0)
        m.d.comb += out.payload.eq(merged)
        m.d.sync += [locked.eq(out.valid & ~out.ready), held.eq(grant)]


def _ripple_sum(a, b, width):
    """The low ``width`` bits of ``a + b`` as a ripple of one-bit gates (a native adder of
    operands narrower than its result is a Verilator WIDTHEXPAND finding, and Amaranth
    trims a zero-extension written as a wider signal)."""
    bits, carry = [], None
    for i in range(width):
        terms = [v[i] for v in (a, b) if i < len(v)] + ([carry] if carry is not None else [])
        if not terms:
            bits.append(Const(0, 1))
            continue
        total = terms[0]
        for term in terms[1:]:
            total = total ^ term
        bits.append(total)
        if len(terms) == 3:
            carry = (terms[0] & terms[1]) | (terms[2] & (terms[0] ^ terms[1]))
        elif len(terms) == 2:
            carry = terms[0] & terms[1]
        else:
            carry = None
    return Cat(bits)
