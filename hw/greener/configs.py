"""Configurations of the GReEneR blocks: parameters declared once, widths derived once, and
each block's port signature.

Components, golden models and benches import these (with :mod:`.layouts`), never each other:
a component is ``XConfig(**params).signature()`` plus its ``elaborate``; a golden model reads
its ports through :func:`gpurf.hw.ports.port_codecs` of the same signature.
"""

from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import BlockConfig, index_bits, index_width, param

from .layouts import (
    PowerState,
    correction_entry_layout,
    correction_insert_layout,
    correction_query_layout,
    correction_remove_layout,
    correction_row_layout,
    head_layout,
    keep_on_layout,
    scoreboard_check_layout,
    scoreboard_release_layout,
    scoreboard_reserve_layout,
    set_state_layout,
)

__all__ = ["POLICIES", "STATES", "TRANSITIONS", "CorrectionTableConfig", "PowerControllerConfig",
           "ScoreboardExtConfig", "accounting_signature"]

POLICIES = ("greener", "sleep_reg")
"""Power-state policies of the controller: GReEneR's encoded states, the Sleep-Reg baseline."""
STATES = ("off", "sleep", "on")
"""Power states in accounting order (the ``pop_*`` / ``cycles_*`` counters)."""
TRANSITIONS = ("sleep_on", "on_sleep", "off_on", "on_off", "sleep_off", "off_sleep")
"""Counted transitions ``<from>_<to>`` (Table 4 charges SLEEP<->ON and OFF<->ON)."""


class CorrectionTableConfig(BlockConfig):
    """The run-time correction table's parameters (the paper's values as defaults) and
    derived widths."""

    warps: int = param(64, "Resident warps of the SM (W).", low=2, high=64)
    entries: int = param(4, "Entries per warp (w).", low=1, high=8)
    entry_regs: int = param(4, "Operand registers stored per instruction (r).", low=1, high=8)
    regs: int = param(64, "Registers per thread (R; 64: 6-bit register ids).", low=2, high=256)
    pc_bits: int = param(16, "Width of a stored PC.", low=2, high=32)
    query_ports: int = param(8, "Set-state query ports.", low=1, high=16)

    warp_bits = index_width("warps")
    reg_bits = index_width("regs", "Bits of a register id: log2(R), rounded up.")

    @property
    def empty_pc(self) -> int:
        """The reserved all-ones PC of an empty entry."""
        return (1 << self.pc_bits) - 1

    @property
    def storage_bits(self) -> int:
        """The paper's size ``W x w x (sizeof(PC) + r x log2(R))`` in bits."""
        return self.warps * self.entries * (self.pc_bits + self.entry_regs * self.reg_bits)

    @property
    def entry_layout(self) -> data.StructLayout:
        return correction_entry_layout(pc_bits=self.pc_bits, reg_bits=self.reg_bits,
                                       entry_regs=self.entry_regs)

    @property
    def row_layout(self) -> data.ArrayLayout:
        return correction_row_layout(entries=self.entries, pc_bits=self.pc_bits,
                                     reg_bits=self.reg_bits, entry_regs=self.entry_regs)

    @property
    def insert_layout(self) -> data.StructLayout:
        return correction_insert_layout(warp_bits=self.warp_bits, pc_bits=self.pc_bits,
                                        reg_bits=self.reg_bits, entry_regs=self.entry_regs)

    @property
    def remove_layout(self) -> data.StructLayout:
        return correction_remove_layout(warp_bits=self.warp_bits, pc_bits=self.pc_bits)

    @property
    def query_layout(self) -> data.StructLayout:
        return correction_query_layout(warp_bits=self.warp_bits, pc_bits=self.pc_bits,
                                       reg_bits=self.reg_bits)

    def signature(self) -> wiring.Signature:
        """``insert`` and ``remove`` streams and ``query`` (per port) in; ``keep_on`` (a bit
        per query port) and ``ready`` out."""
        return wiring.Signature({
            "insert": In(stream.Signature(self.insert_layout)),
            "remove": In(stream.Signature(self.remove_layout)),
            "query": In(data.ArrayLayout(self.query_layout, self.query_ports)),
            "keep_on": Out(self.query_ports),
            "ready": Out(1),
        })


class ScoreboardExtConfig(BlockConfig):
    """The scoreboard extension's parameters (the paper's values as defaults) and derived
    widths."""

    warps: int = param(64, "Resident warps (W).", low=2, high=64)
    regs: int = param(64, "Registers per thread (R; 64: 6-bit register ids).", low=2, high=256)
    sources: int = param(4, "Source operands of an instruction = reservation slots per warp.",
                         low=1, high=8)
    dests: int = param(4, "Destination operands checked for WAR.", low=1, high=8)
    check_ports: int = param(1, "Issue candidates checked per cycle.", low=1, high=8)
    release_ports: int = param(4, "Source set-state ports releasing reservations.",
                               low=1, high=8)

    warp_bits = index_width("warps")
    reg_bits = index_width("regs", "Bits of a register id: log2(R), rounded up.")

    @property
    def storage_bits(self) -> int:
        """The paper's ``4 x W x log2(R)`` register-number bits (``sources`` = 4)."""
        return self.sources * self.warps * self.reg_bits

    @property
    def slot_layout(self) -> data.ArrayLayout:
        """One warp's reservation slots (register ids), slot 0 first."""
        return data.ArrayLayout(self.reg_bits, self.sources)

    @property
    def reserve_layout(self) -> data.StructLayout:
        return scoreboard_reserve_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits,
                                         sources=self.sources)

    @property
    def release_layout(self) -> data.StructLayout:
        return scoreboard_release_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits)

    @property
    def check_layout(self) -> data.StructLayout:
        return scoreboard_check_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits,
                                       sources=self.sources, dests=self.dests)

    def signature(self) -> wiring.Signature:
        """``reserve`` stream, ``release`` and ``check`` (per port) in; ``hazard`` and
        ``full`` (a bit per check port) out."""
        return wiring.Signature({
            "reserve": In(stream.Signature(self.reserve_layout)),
            "release": In(data.ArrayLayout(self.release_layout, self.release_ports)),
            "check": In(data.ArrayLayout(self.check_layout, self.check_ports)),
            "hazard": Out(self.check_ports),
            "full": Out(self.check_ports),
        })


class PowerControllerConfig(BlockConfig):
    """The power controller's parameters (the paper's values as defaults) and derived
    widths."""

    warps: int = param(64, "Resident warps (64: paper Table 2, 2048 threads per SM).",
                       low=2, high=64)
    regs: int = param(64, "Warp registers per warp (64: paper 5.6, R = 64).", low=2, high=256)
    src_ports: int = param(4, "Source set-state ports = an instruction's sources (4: "
                              "PTXPlus).", low=1, high=4)
    dst_ports: int = param(4, "Destination set-state ports = an instruction's destinations.",
                           low=1, high=4)
    sleep_wakeup: int = param(1, "SLEEP -> ON latency in cycles (1: paper Section 4; 5.7 "
                                 "sweeps 1-4).", low=1, high=4)
    off_wakeup: int = param(2, "OFF -> ON latency in cycles (2: paper Section 4; 5.7 sweeps "
                               "2-8).", low=2, high=8)
    policy: str = param("greener", '``"greener"`` (encoded states + keep_on) or '
                                   '``"sleep_reg"`` (every access -> SLEEP).', choices=POLICIES)
    counter_width: int = param(32, "Cycles the accounting counters cover without wrapping, "
                                   "as bits.", low=4, high=64)

    warp_bits = index_width("warps")
    reg_bits = index_width("regs")

    @property
    def operands(self) -> int:
        """Operand registers of one instruction: sources, then destinations."""
        return self.src_ports + self.dst_ports

    @property
    def timer_bits(self) -> int:
        """Bits of a wake-up timer: it holds up to ``max(latency) - 1``."""
        return index_bits(max(self.sleep_wakeup, self.off_wakeup))

    @property
    def stride(self) -> int:
        """Bits per warp row of the state: ``2**reg_bits`` (padding beyond ``regs`` stays
        0: never set, never woken)."""
        return 1 << self.reg_bits

    @property
    def registers(self) -> int:
        return self.warps * self.regs

    @property
    def pop_bits(self) -> int:
        """Bits of a population count (0..warps*regs)."""
        return self.registers.bit_length()

    @property
    def count_bits(self) -> int:
        """Bits of the per-cycle transition counts and population arithmetic: up to one
        transition per set-state port and per head operand of every warp."""
        most = self.operands + self.warps * self.operands
        return max(self.pop_bits, most.bit_length())

    @property
    def acct_bits(self) -> int:
        """Bits of every accounting counter: ``counter_width`` bits of cycles, times up to
        ``warps*regs`` register-cycles (or transitions) per cycle, without wrapping."""
        return self.counter_width + (self.registers - 1).bit_length()

    def latency(self, state: PowerState) -> int:
        """Wake-up latency in cycles from ``state`` (SLEEP or OFF) to ON."""
        return self.sleep_wakeup if state is PowerState.SLEEP else self.off_wakeup

    @property
    def set_layout(self) -> data.StructLayout:
        return set_state_layout(warp_bits=self.warp_bits, reg_bits=self.reg_bits)

    @property
    def keep_on_layout(self) -> data.StructLayout:
        return keep_on_layout(sources=self.src_ports, dests=self.dst_ports)

    @property
    def head_layout(self) -> data.StructLayout:
        return head_layout(reg_bits=self.reg_bits, operands=self.operands)

    def signature(self) -> wiring.Signature:
        """``src_set``, ``dst_set`` (per port), ``keep_on`` and ``head`` (per warp) in;
        ``ready``, ``error``, ``error_warp``, ``error_reg`` and ``acct``
        (:func:`accounting_signature`) out."""
        return wiring.Signature({
            "src_set": In(data.ArrayLayout(self.set_layout, self.src_ports)),
            "dst_set": In(data.ArrayLayout(self.set_layout, self.dst_ports)),
            "keep_on": In(self.keep_on_layout),
            "head": In(data.ArrayLayout(self.head_layout, self.warps)),
            "ready": Out(self.warps),
            "error": Out(1),
            "error_warp": Out(self.warp_bits),
            "error_reg": Out(self.reg_bits),
            "acct": Out(accounting_signature(self)),
        })


def accounting_signature(config: PowerControllerConfig) -> wiring.Signature:
    """The accounting outputs: ``pop_<state>``, ``cycles_<state>``, and one count per
    transition of :data:`TRANSITIONS`."""
    members = {f"pop_{s}": Out(config.pop_bits, init=config.registers if s == "off" else 0)
               for s in STATES}
    members.update({f"cycles_{s}": Out(config.acct_bits) for s in STATES})
    members.update({t: Out(config.acct_bits) for t in TRANSITIONS})
    return wiring.Signature(members)
