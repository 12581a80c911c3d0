"""Configurations of the RegLess blocks: parameters declared once, widths derived once, and
each block's port signature.

Components, golden models and benches import these (with :mod:`.layouts`), never each other:
a component is ``XConfig(**params).signature()`` plus its ``elaborate``; a golden model reads
its ports through the codecs of the same signature (``config.codecs``). A composition's
configuration (:class:`OsuConfig`, :class:`CapacityManagerConfig`, :class:`ShardConfig`)
validates its parts by building their configurations.
"""

from functools import cached_property

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import BlockConfig, index_width, param
from gpurf.hw.signatures import valid_only

from .layouts import (
    CompressorOp,
    WarpState,
    banked_rf_write_layout,
    cm_issue_layout,
    cm_region_word_layout,
    cm_want_layout,
    cm_written_layout,
    compressed_line_layout,
    compressor_l1_request_layout,
    compressor_request_layout,
    compressor_response_layout,
    osu_ack_layout,
    osu_fetch_layout,
    osu_fill_layout,
    osu_line_layout,
    osu_preload_layout,
    osu_ref_layout,
    osu_release_layout,
    osu_reserve_layout,
    osu_reserved_layout,
    osu_write_layout,
    osu_writeback_layout,
    shard_l1_request_layout,
    slot_layout,
    warp_value_layout,
)

__all__ = ["BANK_CHOICES", "POWERS", "BankedRfConfig", "CapacityManagerConfig",
           "CompressorConfig", "OsuBankConfig", "OsuConfig", "ShardConfig"]

BANK_CHOICES = (2, 4, 8, 16, 32)
_INSTRUCTIONS = ("Instructions the OSU serves per cycle (paper 5.2: \"it is possible for each "
                 "OSU to service two instructions per cycle\"): 2 read and 2 release ports, 1 "
                 "reserve and 1 write port per instruction.")
"""Bank counts the OSU takes: powers of two (the bank is the low bits of ``warp + reg``)."""

POWERS = tuple(1 << k for k in range(1, 9))
"""Powers of two 2..256: the compressor's register counts (and, up to 16, its warps)."""

_WARPS = "Warps of the shard."
_REGS = "Registers per warp."
_LANES = "Lanes of a warp register."
_DATA_WIDTH = "Bits per lane."


# --- OSU bank and OSU -------------------------------------------------------------------


class OsuBankConfig(BlockConfig):
    """An OSU bank's parameters and the widths derived from them (also each bank's of an
    :class:`OsuConfig`)."""

    lines: int = param(16, "Lines of the bank (16: 128 per OSU over 8 banks).",
                       low=1, high=256)
    warps: int = param(16, _WARPS, low=1, high=64)
    regs: int = param(64, _REGS, low=1, high=256)
    lanes: int = param(32, _LANES, low=1, high=32)
    data_width: int = param(32, _DATA_WIDTH, low=1, high=32)

    warp_bits = index_width("warps")
    reg_bits = index_width("regs")
    line_bits = index_width("lines")

    @property
    def value_layout(self) -> data.ArrayLayout:
        return warp_value_layout(lanes=self.lanes, data_width=self.data_width)

    def _regs(self) -> dict:
        return {"warp_bits": self.warp_bits, "reg_bits": self.reg_bits}

    def _values(self) -> dict:
        return {"lanes": self.lanes, "data_width": self.data_width}

    @property
    def ref_layout(self) -> data.StructLayout:
        return osu_ref_layout(**self._regs())

    @property
    def reserve_layout(self) -> data.StructLayout:
        return osu_reserve_layout(**self._regs())

    @property
    def preload_layout(self) -> data.StructLayout:
        return osu_preload_layout(**self._regs())

    @property
    def release_layout(self) -> data.StructLayout:
        return osu_release_layout(**self._regs())

    @property
    def write_layout(self) -> data.StructLayout:
        return osu_write_layout(line_shape=self.line_bits, **self._values())

    @property
    def fill_layout(self) -> data.StructLayout:
        return osu_fill_layout(line_shape=self.line_bits, **self._values())

    @property
    def data_bits(self) -> int:
        """The data store: ``lines x lanes x data_width`` (16 x 1024 at the defaults)."""
        return self.lines * self.lanes * self.data_width

    @property
    def tag_bits(self) -> int:
        """The tag store: ``lines x (1 + warp_bits + reg_bits)`` (16 x 11 at the defaults)."""
        return self.lines * (1 + self.warp_bits + self.reg_bits)

    def signature(self) -> wiring.Signature:
        """The request streams ``read``, ``reserve``, ``write``, ``preload``, ``fill``,
        ``release``; the responses ``read_resp``, ``reserve_resp``, ``preloaded``; the
        output streams ``fetch``, ``writeback``; ``protocol_error``."""
        line = self.line_bits
        return wiring.Signature({
            "read": In(stream.Signature(self.ref_layout)),
            "read_resp": Out(valid_only(self.value_layout)),
            "reserve": In(stream.Signature(self.reserve_layout)),
            "reserve_resp": Out(valid_only(osu_reserved_layout(line_shape=line))),
            "write": In(stream.Signature(self.write_layout)),
            "preload": In(stream.Signature(self.preload_layout)),
            "preloaded": Out(valid_only(self.warp_bits)),
            "fetch": Out(stream.Signature(osu_fetch_layout(line_shape=line, **self._regs()))),
            "fill": In(stream.Signature(self.fill_layout)),
            "release": In(stream.Signature(self.release_layout)),
            "writeback": Out(stream.Signature(
                osu_writeback_layout(line_shape=line, **self._regs(), **self._values()))),
            "protocol_error": Out(1),
        })


class OsuConfig(BlockConfig):
    """The OSU's parameters, the configuration of its banks and the derived widths."""

    lines: int = param(128, "Lines of the OSU, a multiple of ``banks`` with at most 256 per "
                            "bank (128: 512 registers per SM over 4 shards, the paper's "
                            "design point).", low=1, high=4096)
    banks: int = param(8, "Banks, a power of two (a register's bank is the low bits of "
                          "``warp + reg``).", choices=BANK_CHOICES)
    warps: int = param(16, _WARPS, low=1, high=64)
    regs: int = param(64, _REGS, low=1, high=256)
    lanes: int = param(32, _LANES, low=1, high=32)
    data_width: int = param(32, _DATA_WIDTH, low=1, high=32)
    instructions: int = param(2, _INSTRUCTIONS, low=1, high=4)

    def validate(self):
        if self.lines % self.banks:
            raise ValueError(f"lines must be a multiple of banks ({self.banks}), "
                             f"not {self.lines}")
        _ = self.bank  # building the banks' configuration checks the lines per bank

    @cached_property
    def bank(self) -> OsuBankConfig:
        """The configuration of each bank: ``lines / banks`` lines."""
        return OsuBankConfig(lines=self.lines // self.banks, warps=self.warps, regs=self.regs,
                             lanes=self.lanes, data_width=self.data_width)

    bank_bits = index_width("banks")

    @property
    def read_ports(self) -> int:
        """Read ports, as many release ports: two source operands per instruction."""
        return 2 * self.instructions

    @property
    def write_ports(self) -> int:
        """Reserve ports, as many write ports: one destination per instruction."""
        return self.instructions

    def port_count(self, kind: str) -> int:
        """Ports of request ``kind`` (``read``, ``reserve``, ``write``, ``release``)."""
        return self.read_ports if kind in ("read", "release") else self.write_ports

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
    def preload_layout(self) -> data.StructLayout:
        return self.bank.preload_layout

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

    def signature(self) -> wiring.Signature:
        """A bank's ports with lines named ``{line, bank}``, :attr:`read_ports` ``read`` /
        ``read_resp`` and ``release`` ports, :attr:`write_ports` ``reserve`` /
        ``reserve_resp`` and ``write`` ports, one ``preload`` stream per bank and one
        acknowledgement per bank in ``preloaded``."""
        bank, reads, writes = self.bank, self.read_ports, self.write_ports
        return wiring.Signature({
            "read": In(stream.Signature(bank.ref_layout)).array(reads),
            "read_resp": Out(valid_only(bank.value_layout)).array(reads),
            "reserve": In(stream.Signature(bank.reserve_layout)).array(writes),
            "reserve_resp": Out(valid_only(self.reserved_layout)).array(writes),
            "write": In(stream.Signature(self.write_layout)).array(writes),
            "preload": In(stream.Signature(bank.preload_layout)).array(self.banks),
            "preloaded": Out(data.ArrayLayout(self.ack_layout, self.banks)),
            "fetch": Out(stream.Signature(self.fetch_layout)),
            "fill": In(stream.Signature(self.fill_layout)),
            "release": In(stream.Signature(bank.release_layout)).array(reads),
            "writeback": Out(stream.Signature(self.writeback_layout)),
            "protocol_error": Out(1),
        })


# --- baseline: banked register file --------------------------------------------------------


class BankedRfConfig(BlockConfig):
    """The banked register file's parameters and the widths derived from them."""

    entries: int = param(512, "Registers of the shard (512: 2048 per SM over 4 shards), a "
                              "multiple of ``warps`` with ``entries / warps`` a multiple of "
                              "``banks``.", low=1, high=4096)
    banks: int = param(8, "Banks, a power of two (8, as the OSU).", choices=BANK_CHOICES)
    warps: int = param(16, _WARPS, low=1, high=64)
    lanes: int = param(32, _LANES, low=1, high=32)
    data_width: int = param(32, _DATA_WIDTH, low=1, high=32)

    def validate(self):
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

    warp_bits = index_width("warps")
    reg_bits = index_width("regs")
    bank_bits = index_width("banks")
    row_bits = index_width("rows")

    @property
    def value_layout(self) -> data.ArrayLayout:
        return warp_value_layout(lanes=self.lanes, data_width=self.data_width)

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

    def signature(self) -> wiring.Signature:
        """``read`` ``{warp, reg}``, ``read_resp`` (the value), ``write``
        ``{warp, reg, data}``."""
        return wiring.Signature({
            "read": In(stream.Signature(osu_ref_layout(warp_bits=self.warp_bits,
                                                       reg_bits=self.reg_bits))),
            "read_resp": Out(valid_only(self.value_layout)),
            "write": In(stream.Signature(banked_rf_write_layout(
                warp_bits=self.warp_bits, reg_bits=self.reg_bits, lanes=self.lanes,
                data_width=self.data_width))),
        })


# --- capacity manager -----------------------------------------------------------------------


class CapacityManagerConfig(BlockConfig):
    """The capacity manager's parameters and the widths derived from them (warp, register
    and bank widths are the OSU's, so the shard's ports match)."""

    warps: int = param(16, _WARPS, low=1, high=64)
    banks: int = param(8, "OSU banks.", choices=BANK_CHOICES)
    lines: int = param(128, "OSU lines of the shard, a multiple of ``banks`` with at most 256 "
                            "per bank.", low=1, high=4096)
    regs: int = param(64, _REGS, low=1, high=256)
    max_entries: int = param(64, "Most entry words of a region.", low=1, high=1024)

    def validate(self):
        _ = self.osu  # lines and banks as the OSU's

    @cached_property
    def osu(self) -> OsuConfig:
        return OsuConfig(lines=self.lines, banks=self.banks, warps=self.warps, regs=self.regs,
                         lanes=1, data_width=1)

    @property
    def lines_per_bank(self) -> int:
        return self.lines // self.banks

    @property
    def warp_bits(self) -> int:
        return self.osu.bank.warp_bits

    @property
    def reg_bits(self) -> int:
        return self.osu.bank.reg_bits

    @property
    def bank_bits(self) -> int:
        return self.osu.bank_bits

    @property
    def count_bits(self) -> int:
        """Bits of a line count ``0..lines_per_bank`` (free lines, bank usage,
        outstanding writes)."""
        return self.lines_per_bank.bit_length()

    @property
    def entry_bits(self) -> int:
        """Bits of an entry count ``0..max_entries``."""
        return self.max_entries.bit_length()

    @property
    def stack_bits(self) -> int:
        """Bits of the stack's fill ``0..warps``."""
        return self.warps.bit_length()

    def bank_of(self, warp: int, reg: int) -> int:
        return self.osu.bank_of(warp, reg)

    @property
    def region_layout(self) -> data.StructLayout:
        return cm_region_word_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits,
                                     entry_bits=self.entry_bits, count_bits=self.count_bits,
                                     banks=self.banks)

    @property
    def preload_layout(self) -> data.StructLayout:
        return self.osu.preload_layout

    @property
    def counts_layout(self) -> data.ArrayLayout:
        """One line count per bank (``free``, a region's usage, a warp's outstanding
        writes)."""
        return data.ArrayLayout(self.count_bits, self.banks)

    def signature(self) -> wiring.Signature:
        """``want`` / ``region`` (the descriptor stream), ``preload`` / ``preloaded`` (per
        bank), ``issue``, ``written``, ``at_barrier``, and the state views ``eligible``,
        ``state``, ``free``."""
        warp_bits, bank_bits = self.warp_bits, self.bank_bits
        return wiring.Signature({
            "want": Out(valid_only(cm_want_layout(warp_bits=warp_bits))),
            "region": In(stream.Signature(self.region_layout)),
            "preload": Out(stream.Signature(self.preload_layout)).array(self.banks),
            "preloaded": In(data.ArrayLayout(self.osu.ack_layout, self.banks)),
            "issue": In(valid_only(cm_issue_layout(warp_bits=warp_bits,
                                                   bank_bits=bank_bits))),
            "written": In(valid_only(cm_written_layout(warp_bits=warp_bits,
                                                       bank_bits=bank_bits))),
            "at_barrier": In(self.warps),
            "eligible": Out(self.warps),
            "state": Out(data.ArrayLayout(WarpState, self.warps)),
            "free": Out(self.counts_layout, init=[self.lines_per_bank] * self.banks),
        })


# --- compressor -----------------------------------------------------------------------------


class CompressorConfig(BlockConfig):
    """The compressor's parameters and the widths derived from them."""

    lanes: int = param(32, "Lanes per warp register.", choices=(4, 8, 16, 32))
    data_width: int = param(32, _DATA_WIDTH, low=4, high=32)
    warps: int = param(16, _WARPS, choices=POWERS[:4])
    regs: int = param(64, "Registers per warp, a power of two.", choices=POWERS)
    lines: int = param(16, "Compressed lines in the internal store.", low=2, high=16)

    @property
    def half(self) -> int:
        return self.lanes // 2

    @property
    def line_bits(self) -> int:
        """One L1 line = one warp register: 1024 bits by default."""
        return self.lanes * self.data_width

    @property
    def slots(self) -> int:
        """Compressed registers per line: two bases and a 3-bit state each, 15 by default."""
        return self.line_bits // (2 * self.data_width + 3)

    warp_bits = index_width("warps")
    reg_bits = index_width("regs")

    @property
    def registers(self) -> int:
        """Registers of the shard, one "is compressed" bit each (1024 by default)."""
        return self.warps * self.regs

    @property
    def compressed_lines(self) -> int:
        """Compressed lines of the shard in L1 (69 by default)."""
        return -(-self.registers // self.slots)

    line_addr_bits = index_width("compressed_lines")

    @property
    def storage_bits(self) -> int:
        """Internal store (memory) + bit vector + tags, valid and dirty bits (flip-flops)."""
        return (self.lines * self.line_bits + self.registers
                + self.lines * (self.line_addr_bits + 2))

    @property
    def value_layout(self) -> data.ArrayLayout:
        return warp_value_layout(lanes=self.lanes, data_width=self.data_width)

    @property
    def slot_layout(self) -> data.StructLayout:
        return slot_layout(data_width=self.data_width)

    @property
    def line_layout(self) -> data.StructLayout:
        return compressed_line_layout(lanes=self.lanes, data_width=self.data_width,
                                      slots=self.slots)

    @property
    def request_layout(self) -> data.StructLayout:
        return compressor_request_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits,
                                         lanes=self.lanes, data_width=self.data_width)

    @property
    def response_layout(self) -> data.StructLayout:
        return compressor_response_layout(lanes=self.lanes, data_width=self.data_width)

    @property
    def l1_request_layout(self) -> data.StructLayout:
        return compressor_l1_request_layout(line_bits=self.line_addr_bits, lanes=self.lanes,
                                            data_width=self.data_width)

    def index(self, warp: int, reg: int) -> int:
        """``g = reg * warps + warp`` (all R0s first, paper 5.2.3)."""
        return reg * self.warps + warp

    def signature(self) -> wiring.Signature:
        """``request`` / ``response`` to the OSU side, ``l1_request`` / ``l1_response``."""
        return wiring.Signature({
            "request": In(stream.Signature(self.request_layout)),
            "response": Out(stream.Signature(self.response_layout)),
            "l1_request": Out(stream.Signature(self.l1_request_layout)),
            "l1_response": In(stream.Signature(self.value_layout)),
        })


# --- shard ----------------------------------------------------------------------------------


class ShardConfig(BlockConfig):
    """A shard's parameters, which its three blocks must all take (each range is the
    intersection of theirs), and the configurations of those blocks."""

    lines: int = param(128, "OSU lines of the shard, a multiple of ``banks`` with at most 256 "
                            "per bank (128: the paper's 512 registers per SM over 4 shards).",
                       low=1, high=4096)
    banks: int = param(8, "OSU banks.", choices=BANK_CHOICES)
    warps: int = param(16, _WARPS, choices=POWERS[:4])
    regs: int = param(64, "Registers per warp, a power of two.", choices=POWERS)
    lanes: int = param(32, _LANES, choices=(4, 8, 16, 32))
    data_width: int = param(32, _DATA_WIDTH, low=4, high=32)
    compressor_lines: int = param(16, "Compressed lines in the compressor's store.",
                                  low=2, high=16)
    max_entries: int = param(64, "Preload / invalidation entries per region.",
                             low=1, high=1024)
    instructions: int = param(2, _INSTRUCTIONS, low=1, high=4)
    l1_reads_in_flight: int = param(
        1, "Requests the transfer unit's L1 stage holds, so preload misses whose L1 reads "
           "may be outstanding at once (1: one request from the compressor's answer to the "
           "fill; the RTL's ring has one slot and one-hot pointer bit per request).",
        low=1, high=32)

    def validate(self):
        self.parts()

    def parts(self) -> tuple:
        """The configurations of the OSU, the compressor and the capacity manager (building
        them validates the shard's parameters against each block's rules)."""
        return self.osu, self.compressor, self.capacity_manager

    @cached_property
    def osu(self) -> OsuConfig:
        return OsuConfig(lines=self.lines, banks=self.banks, warps=self.warps, regs=self.regs,
                         lanes=self.lanes, data_width=self.data_width,
                         instructions=self.instructions)

    @cached_property
    def compressor(self) -> CompressorConfig:
        return CompressorConfig(lanes=self.lanes, data_width=self.data_width, warps=self.warps,
                                regs=self.regs, lines=self.compressor_lines)

    @cached_property
    def capacity_manager(self) -> CapacityManagerConfig:
        return CapacityManagerConfig(warps=self.warps, banks=self.banks, lines=self.lines,
                                     regs=self.regs, max_entries=self.max_entries)

    @property
    def addr_bits(self) -> int:
        """An L1 address: a packed ``{warp, reg}`` or a compressed line number."""
        return max(self.osu.ref_layout.size, self.compressor.line_addr_bits)

    @property
    def l1_request_layout(self) -> data.StructLayout:
        return shard_l1_request_layout(addr_bits=self.addr_bits, lanes=self.lanes,
                                       data_width=self.data_width)

    def signature(self) -> wiring.Signature:
        """The CM's ports to the scheduler, the OSU's to the register units, one L1 port."""
        cm, osu = self.capacity_manager.signature().members, self.osu.signature().members
        return wiring.Signature({
            **{name: cm[name] for name in ("want", "region", "eligible", "issue", "written",
                                           "at_barrier")},
            **{name: osu[name] for name in ("read", "read_resp", "reserve", "reserve_resp",
                                            "write", "release", "protocol_error")},
            "l1_request": Out(stream.Signature(self.l1_request_layout)),
            "l1_response": In(stream.Signature(self.osu.value_layout)),
        })

    @property
    def transfer_job_layout(self) -> data.StructLayout:
        """One request the transfer unit holds in a stage: the compressor ``op``, the
        register ``ref``, the OSU ``line`` it came from or goes to, and the ``value`` (an
        evicted line, or the value fetched for a fill)."""
        osu = self.osu
        return data.StructLayout({"op": CompressorOp, "ref": osu.ref_layout,
                                  "line": osu.line_layout, "value": osu.value_layout})

    def transfer_signature(self) -> wiring.Signature:
        """The transfer unit's ports: the OSU's ``fetch`` / ``writeback`` / ``fill``, the
        compressor's ``request`` / ``response``, and L1."""
        osu = self.osu.signature().members
        compressor = self.compressor.signature().members
        return wiring.Signature({
            **{name: osu[name].flip() for name in ("fetch", "writeback", "fill")},
            **{name: compressor[name].flip() for name in ("request", "response")},
            "l1_request": Out(stream.Signature(self.l1_request_layout)),
            "l1_response": In(stream.Signature(self.compressor.value_layout)),
        })
