"""Register power-state controller of GReEneR (paper Section 3.4, Fig. 5 labels 3-5)."""

from dataclasses import dataclass
from typing import Any

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.gates import ripple_add
from gpurf.hw.params import check_choice, check_int, index_bits

from .layouts import PowerState, head_layout, keep_on_layout, set_state_layout

__all__ = ["POLICIES", "STATES", "TRANSITIONS", "PowerController", "PowerControllerConfig",
           "accounting_signature"]

POLICIES = ("greener", "sleep_reg")
STATES = ("off", "sleep", "on")
"""Power states in accounting order (the ``pop_*`` / ``cycles_*`` counters)."""
TRANSITIONS = ("sleep_on", "on_sleep", "off_on", "on_off", "sleep_off", "off_sleep")
"""Counted transitions ``<from>_<to>`` (Table 4 charges SLEEP<->ON and OFF<->ON)."""


@dataclass(frozen=True)
class PowerControllerConfig:
    """Validated parameters of the power controller and the widths derived from them.

    Shared by :class:`PowerController`, its golden model and the bench, so all reject the
    same parameters with the same message and agree on every width.
    """

    warps: int
    regs: int
    src_ports: int
    dst_ports: int
    sleep_wakeup: int
    off_wakeup: int
    policy: str
    counter_width: int

    def __post_init__(self):
        check_int("warps", self.warps, 2, 64)
        check_int("regs", self.regs, 2, 256)
        check_int("src_ports", self.src_ports, 1, 4)
        check_int("dst_ports", self.dst_ports, 1, 4)
        check_int("sleep_wakeup", self.sleep_wakeup, 1, 4)
        check_int("off_wakeup", self.off_wakeup, 2, 8)
        check_choice("policy", self.policy, POLICIES)
        check_int("counter_width", self.counter_width, 4, 64)

    @property
    def warp_width(self) -> int:
        return (self.warps - 1).bit_length()

    @property
    def reg_width(self) -> int:
        return (self.regs - 1).bit_length()

    @property
    def operands(self) -> int:
        """Operand registers of one instruction: sources, then destinations."""
        return self.src_ports + self.dst_ports

    @property
    def timer_width(self) -> int:
        """Bits of a wake-up timer: it holds up to ``max(latency) - 1``."""
        return index_bits(max(self.sleep_wakeup, self.off_wakeup))

    @property
    def stride(self) -> int:
        """Bits per warp row of the state: ``2**reg_width`` (padding beyond ``regs`` stays
        0: never set, never woken)."""
        return 1 << self.reg_width

    @property
    def registers(self) -> int:
        return self.warps * self.regs

    @property
    def pop_width(self) -> int:
        """Bits of a population count (0..warps*regs)."""
        return self.registers.bit_length()

    @property
    def count_width(self) -> int:
        """Bits of the per-cycle transition counts and population arithmetic: up to one
        transition per set-state port and per head operand of every warp."""
        most = self.operands + self.warps * self.operands
        return max(self.pop_width, most.bit_length())

    @property
    def acct_width(self) -> int:
        """Bits of every accounting counter: ``counter_width`` bits of cycles, times up to
        ``warps*regs`` register-cycles (or transitions) per cycle, without wrapping."""
        return self.counter_width + (self.registers - 1).bit_length()

    def latency(self, state: PowerState) -> int:
        """Wake-up latency in cycles from ``state`` (SLEEP or OFF) to ON."""
        return self.sleep_wakeup if state is PowerState.SLEEP else self.off_wakeup

    @property
    def set_layout(self) -> data.StructLayout:
        return set_state_layout(warp_width=self.warp_width, reg_bits=self.reg_width)

    @property
    def src_layout(self) -> data.ArrayLayout:
        return data.ArrayLayout(self.set_layout, self.src_ports)

    @property
    def dst_layout(self) -> data.ArrayLayout:
        return data.ArrayLayout(self.set_layout, self.dst_ports)

    @property
    def keep_on_layout(self) -> data.StructLayout:
        return keep_on_layout(sources=self.src_ports, dests=self.dst_ports)

    @property
    def head_layout(self) -> data.StructLayout:
        return head_layout(reg_bits=self.reg_width, operands=self.operands)

    @property
    def heads_layout(self) -> data.ArrayLayout:
        return data.ArrayLayout(self.head_layout, self.warps)


def accounting_signature(config: PowerControllerConfig) -> wiring.Signature:
    """The accounting outputs: ``pop_<state>``, ``cycles_<state>``, and one count per
    transition of :data:`TRANSITIONS`."""
    members = {f"pop_{s}": Out(config.pop_width, init=config.registers if s == "off" else 0)
               for s in STATES}
    members.update({f"cycles_{s}": Out(config.acct_width) for s in STATES})
    members.update({t: Out(config.acct_width) for t in TRANSITIONS})
    return wiring.Signature(members)


class PowerController(wiring.Component):
    """Per-register ON/SLEEP/OFF states, wake-up timers, per-warp "operands ready" and
    leakage accounting (paper 3.4 items 3-5, Fig. 5 labels 3-5).

    **State.** Every warp register (the 32 thread registers of one warp register, one power
    domain) has a 2-bit state (OFF = 00, SLEEP = 01, ON = 11; the reserved code 10 on an
    input is read as ON, and only the three codes are ever stored) and a wake-up timer.
    After reset every register is OFF (unallocated, Sleep-Reg's rule for unallocated
    registers; a kernel's first write needs an OFF->ON wake-up of its destination).

    **Storage: flip-flops.** The state array is ``warps x regs x (2 + timer_width)`` bits
    (12,288 at the defaults, 4,096 x 3). Every cycle up to ``src_ports + dst_ports`` set-state
    ports write it, every warp's head checks ``src_ports + dst_ports`` of its registers, and
    every running wake-up timer counts down: dozens of read and write ports and a
    whole-array update each cycle, which no SRAM macro provides. The array is kept as
    per-warp bit planes (``on``: state is ON, ``live``: state is not OFF, one plane per
    timer bit), so the per-register logic is a handful of word-wide operations per warp.

    **Set-state ports** (``src_set`` from the read-operand stage, ``dst_set`` from writeback;
    paper 3.2/3.4: sources change state after they are read, destinations after they are
    written). A valid port sets the register's state at the clock edge: to ON when its
    ``keep_on`` bit is set (run-time correction, paper 3.3: another in-flight instruction of
    the warp uses the register), else to the port's ``state``. Under ``policy="sleep_reg"``
    (the paper's Sleep-Reg baseline, warped register file) every accessed register goes to
    SLEEP, whatever the port's state and ``keep_on`` (the baseline has no correction table).
    A set applies immediately (the access implies the register was ON; it is no wake-up).
    A set to SLEEP/OFF cancels a wake-up in progress; a set to ON lets it run on.
    Several ports naming one register in a cycle: the lowest port wins, in the order
    ``src_set[0..S-1]``, ``dst_set[0..D-1]`` (the spec's arbitration default; a correct
    pipeline never does this, as the scoreboard serializes RAR/WAR/RAW on a register).
    A port naming a warp or register beyond ``warps``/``regs`` is ignored.

    **Wake-up** (paper 3.4 item 3, **spec interpretation: at decode**). Every register named
    by a valid operand of a valid ``head`` whose state is not ON, and which no set-state port
    names this cycle, starts a wake-up at the clock edge: its state becomes ON (it is counted
    as ON, drawing ON leakage while the supply ramps up: a conservative choice, the paper
    gives no figure) and its timer is loaded so that it becomes *usable* exactly
    ``sleep_wakeup`` (from SLEEP) or ``off_wakeup`` (from OFF) clock edges after the first
    cycle the head showed it. A started wake-up runs to completion even if the head changes.
    **Destinations too**: the paper makes a warp ready "only when all its operand registers
    are in ON state", and a write into a drowsy (SLEEP) or gated (OFF) cell is not possible,
    so destinations are woken and checked like sources.

    **ready[w]** (combinational, latency 0 from ``head``): ``head[w].valid`` and every valid
    operand register is usable (ON, timer expired), from the state at the start of the
    cycle (a set in the same cycle shows from the next one). Operands naming a register
    beyond ``regs`` are ignored.

    **Error** (protocol check). A valid ``src_set`` port naming a register that is OFF at the
    start of the cycle read a dropped value: ``error`` rises at the clock edge and stays
    (until reset); ``error_warp``/``error_reg`` hold the register of the first such read
    (lowest source port in the first erroneous cycle), 0 before. Writes (``dst_set``) to OFF
    registers are legal: they allocate the register anew.

    **Accounting** (``acct``, registered). ``pop_<state>``: registers in the state now (kept
    by transitions, reset ``pop_off = warps*regs``); ``cycles_<state>``: sum over registers of
    the cycles spent in the state since reset (each clock edge adds the population);
    ``<from>_<to>``: transitions taken since reset, by set-state ports and wake-up starts.
    Every counter is ``counter_width + ceil(log2(warps*regs))`` bits and wraps modulo its
    width, so ``2**counter_width`` cycles never wrap.

    Parameters
    ----------
    warps : int
        Resident warps, 2..64 (default 64, paper Table 2: 2048 threads per SM).
    regs : int
        Warp registers per warp, 2..256 (default 64, paper 5.6: R = 64).
    src_ports : int
        Source set-state ports = an instruction's sources, 1..4 (default 4, PTXPlus).
    dst_ports : int
        Destination set-state ports = an instruction's destinations, 1..4 (default 4).
    sleep_wakeup : int
        SLEEP -> ON latency in cycles, 1..4 (default 1, paper Section 4; 5.7 sweeps 1-4).
    off_wakeup : int
        OFF -> ON latency in cycles, 2..8 (default 2, paper Section 4; 5.7 sweeps 2-8).
    policy : str
        ``"greener"`` (encoded states + keep_on) or ``"sleep_reg"`` (every access -> SLEEP).
    counter_width : int
        Cycles the accounting counters cover without wrapping, as bits, 4..64 (default 32).

    Attributes
    ----------
    src_set : In(ArrayLayout(set_state_layout, src_ports))
        Per source port: ``valid``, ``warp``, ``reg``, ``state`` (after the read).
    dst_set : In(ArrayLayout(set_state_layout, dst_ports))
        Per destination port: ``valid``, ``warp``, ``reg``, ``state`` (after the write).
    keep_on : In(keep_on_layout)
        ``src[k]``/``dst[k]``: the correction table found another in-flight instruction of
        the warp using port ``k``'s register: it goes/stays ON.
    head : In(ArrayLayout(head_layout, warps))
        Per warp: the decoded instruction at the head of its instruction buffer: ``valid``,
        ``operand[i]`` = {``valid``, ``reg``}, sources first, then destinations.
    ready : Out(warps)
        Bit ``w``: warp ``w``'s head is valid and all its operand registers are usable.
    error : Out(1)
        Sticky: some source port read an OFF register.
    error_warp : Out(range(warps)), error_reg : Out(range(regs))
        The first such register.
    acct : Out(accounting_signature)
        ``pop_off/sleep/on``, ``cycles_off/sleep/on`` and the transition counts
        ``sleep_on, on_sleep, off_on, on_off, sleep_off, off_sleep``.
    on, live, timer : lists of Signal(regs), per warp
        The state bit planes (``timer[w][k]``: bit ``k`` of every timer), for formal harnesses.
    """

    def __init__(self, *, warps=64, regs=64, src_ports=4, dst_ports=4, sleep_wakeup=1,
                 off_wakeup=2, policy="greener", counter_width=32):
        self.config = config = PowerControllerConfig(
            warps=warps, regs=regs, src_ports=src_ports, dst_ports=dst_ports,
            sleep_wakeup=sleep_wakeup, off_wakeup=off_wakeup, policy=policy,
            counter_width=counter_width)
        super().__init__({
            "src_set": In(config.src_layout),
            "dst_set": In(config.dst_layout),
            "keep_on": In(config.keep_on_layout),
            "head": In(config.heads_layout),
            "ready": Out(warps),
            "error": Out(1),
            "error_warp": Out(config.warp_width),
            "error_reg": Out(config.reg_width),
            "acct": Out(accounting_signature(config)),
        })
        stride = config.stride
        self.on_rows = [Signal(stride, name=f"on_{w}") for w in range(warps)]
        self.live_rows = [Signal(stride, name=f"live_{w}") for w in range(warps)]
        self.timer_rows = [[Signal(stride, name=f"timer_{w}_b{k}")
                            for k in range(config.timer_width)] for w in range(warps)]
        self.on = [row[:regs] for row in self.on_rows]
        self.live = [row[:regs] for row in self.live_rows]
        self.timer = [[plane[:regs] for plane in planes] for planes in self.timer_rows]

    def _ports(self):
        """``(port, keep_on bit, is_source)`` for every set-state port, in priority order."""
        src = [(self.src_set[k], self.keep_on.src[k], True)
               for k in range(self.config.src_ports)]
        dst = [(self.dst_set[k], self.keep_on.dst[k], False)
               for k in range(self.config.dst_ports)]
        return src + dst

    def _decode(self, m, reg, enable, name):
        """One-hot ``regs``-bit mask of ``reg`` when ``enable`` (0 beyond ``regs``)."""
        regs = self.config.regs
        mask = Signal(regs, name=name)
        m.d.comb += mask.eq(Mux(enable, _one_hot(m, reg, regs, f"{name}_raw"), 0))
        return mask

    def _new_state(self, m, port, keep, index):
        """``(on, live)`` bits of the state port ``index`` sets (policy, keep_on, 10 -> ON)."""
        new_on = Signal(name=f"new_on_{index}")
        new_live = Signal(name=f"new_live_{index}")
        if self.config.policy == "sleep_reg":
            m.d.comb += [new_on.eq(0), new_live.eq(1)]
        else:
            m.d.comb += [new_on.eq(keep | port.state[1]), new_live.eq(keep | port.state.any())]
        return new_on, new_live

    def elaborate(self, platform):
        m = Module()
        config = self.config
        self._rows = {}
        ports = []
        for index, (port, keep, is_source) in enumerate(self._ports()):
            warp_hot = _one_hot(m, port.warp, config.warps, f"set_warp_{index}")
            reg_hot = _one_hot(m, port.reg, config.regs, f"set_reg_{index}")
            in_range = Signal(name=f"in_range_{index}")
            m.d.comb += in_range.eq(warp_hot.any() & reg_hot.any())
            same = [p.port.valid & (p.port.warp == port.warp) & (p.port.reg == port.reg)
                    for p in ports]
            wins = Signal(name=f"wins_{index}")
            m.d.comb += wins.eq(port.valid & in_range & ~(Cat(same).any() if same else 0))
            new_on, new_live = self._new_state(m, port, keep, index)
            masks = []
            for label, gate in (("to_live", wins & new_live), ("to_low", wins & ~new_on)):
                mask = Signal(config.regs, name=f"set_{label}_{index}")
                m.d.comb += mask.eq(Mux(gate, reg_hot, 0))
                masks.append(mask)
            ports.append(_SetPort(port, is_source, in_range, wins, warp_hot, *masks,
                                  new_on, new_live))
        self._state(m, ports)
        return m

    def _named(self, m, w):
        """Row of the registers warp ``w``'s valid head names (one shift per operand)."""
        config = self.config
        head = self.head[w]
        named = Const(0, config.regs)
        for i in range(config.operands):
            operand = head.operand[i]
            named = named | self._decode(m, operand.reg, head.valid & operand.valid,
                                         f"named_{w}_{i}")
        row = Signal(config.stride, name=f"named_{w}")
        m.d.comb += row.eq(named)
        return row

    def _state(self, m, ports):
        """Per warp row: set-state, wake-up starts, timers and ``ready``; then the counts of
        wake-up starts, one bit per head operand that starts one (from SLEEP / from OFF)."""
        config = self.config
        starts = {"sleep": [], "off": []}
        for w in range(config.warps):
            self._row(m, w, ports)
            for kind, bits in zip(("sleep", "off"), self._operand_starts(m, w), strict=True):
                starts[kind].extend(bits)
        counts = tuple(_popcount(m, starts[kind], config.count_width, f"n_wake_{kind}")
                       for kind in ("sleep", "off"))
        self._sets(m, ports, counts)

    def _operand_starts(self, m, w):
        """Per operand of warp ``w``'s head: it starts a wake-up from SLEEP / from OFF (the
        register is named, not ON, not set this cycle, and no lower operand names it).
        Counting these bits, not the rows' start masks, keeps the counters' adders
        ``warps x operands`` bits wide instead of ``warps x regs``."""
        config, head = self.config, self.head[w]
        rows = {label: self._rows[w][label] for label in ("on", "live", "set_any")}
        from_sleep, from_off = [], []
        for i in range(config.operands):
            operand = head.operand[i]
            state = {label: _bit(m, row, operand.reg, f"op_{label}_{w}_{i}")
                     for label, row in rows.items()}
            earlier = [head.operand[j].valid & (head.operand[j].reg == operand.reg)
                       for j in range(i)]
            in_range = 1 if config.regs == config.stride else operand.reg < config.regs
            start = Signal(name=f"op_start_{w}_{i}")
            m.d.comb += start.eq(head.valid & operand.valid & in_range
                                 & ~state["on"] & ~state["set_any"]
                                 & ~(Cat(earlier).any() if earlier else 0))
            from_sleep.append(start & state["live"])
            from_off.append(start & ~state["live"])
        return from_sleep, from_off

    def _row(self, m, w, ports):
        """Row ``w``: one word-wide operation per step (set-state, wake-up starts, timers,
        ``ready``)."""
        config = self.config
        stride = config.stride
        on, live = self.on_rows[w], self.live_rows[w]
        signals = {label: Signal(stride, name=f"{label}_{w}") for label in (
            "set_live", "set_low", "set_any", "set_on", "waking", "usable", "start",
            "wake_sleep", "wake_off")}
        s = signals
        placed = {label: [] for label in ("to_live", "to_low")}
        for index, port in enumerate(ports):
            for label in placed:
                row = Signal(stride, name=f"{label}_{w}_{index}")
                m.d.comb += row.eq(Mux(port.warp_hot[w], getattr(port, label), 0))
                placed[label].append(row)
        named = self._named(m, w)
        m.d.comb += [
            s["set_live"].eq(_any_planes(placed["to_live"])),
            s["set_low"].eq(_any_planes(placed["to_low"])),
            s["set_any"].eq(s["set_live"] | s["set_low"]),
            s["set_on"].eq(s["set_live"] & ~s["set_low"]),
            s["waking"].eq(_any_planes(self.timer_rows[w])),
            s["usable"].eq(on & ~s["waking"]),
            s["start"].eq(named & ~on & ~s["set_any"]),
            s["wake_sleep"].eq(s["start"] & live),
            s["wake_off"].eq(s["start"] & ~live),
            self.ready[w].eq(self.head[w].valid & ~(named & ~s["usable"]).any()),
        ]
        m.d.sync += [
            on.eq((s["set_any"] & s["set_on"]) | (~s["set_any"] & (on | s["start"]))),
            live.eq((s["set_any"] & s["set_live"]) | (~s["set_any"] & (live | s["start"]))),
        ]
        self._timers(m, w, s["wake_sleep"], s["wake_off"], s["set_any"] & ~s["set_on"])
        self._rows[w] = {"on": on, "live": live, "set_any": s["set_any"]}

    def _timers(self, m, w, from_sleep, from_off, cancel):
        """Count every running timer of row ``w`` down; load started ones with
        ``latency - 1``; clear timers whose register a set-state port moves out of ON."""
        config, stride = self.config, self.config.stride
        planes = self.timer_rows[w]
        borrow = Signal(stride, name=f"borrow_{w}_0")
        m.d.comb += borrow.eq(_any_planes(planes))
        for k, plane in enumerate(planes):
            load = Const(0, stride)
            if (config.sleep_wakeup - 1) >> k & 1:
                load = load | from_sleep
            if (config.off_wakeup - 1) >> k & 1:
                load = load | from_off
            m.d.sync += plane.eq(((plane ^ borrow) & ~cancel) | load)
            next_borrow = Signal(stride, name=f"borrow_{w}_{k + 1}")
            m.d.comb += next_borrow.eq(borrow & ~plane)
            borrow = next_borrow

    def _old_state(self, m, port, index):
        """``(on, live)`` of the register ``port`` names, at the start of the cycle: the
        warp's row by a case statement, then the register's bit."""
        config = self.config
        row_on = Signal(config.regs, name=f"row_on_{index}")
        row_live = Signal(config.regs, name=f"row_live_{index}")
        with m.Switch(port.warp):
            for w in range(config.warps):
                with m.Case(w):
                    m.d.comb += [row_on.eq(self.on[w]), row_live.eq(self.live[w])]
            with m.Default():
                m.d.comb += [row_on.eq(0), row_live.eq(0)]
        return (_bit(m, row_on, port.reg, f"old_on_{index}"),
                _bit(m, row_live, port.reg, f"old_live_{index}"))

    def _sets(self, m, ports, starts):
        """Transitions of the set-state ports and the wake-up starts, the protocol check and
        the accounting counters."""
        config = self.config
        moves = {t: [] for t in TRANSITIONS}
        errors = []
        for index, set_port in enumerate(ports):
            port, new_on, new_live = set_port.port, set_port.new_on, set_port.new_live
            old_on, old_live = self._old_state(m, port, index)
            wins = set_port.wins
            old_off, old_sleep = ~old_live, old_live & ~old_on
            new_off, new_sleep = ~new_live, new_live & ~new_on
            moves["sleep_on"].append(wins & old_sleep & new_on)
            moves["off_on"].append(wins & old_off & new_on)
            moves["on_sleep"].append(wins & old_on & new_sleep)
            moves["on_off"].append(wins & old_on & new_off)
            moves["sleep_off"].append(wins & old_sleep & new_off)
            moves["off_sleep"].append(wins & old_off & new_sleep)
            if set_port.is_source:
                bad = Signal(name=f"bad_read_{index}")
                m.d.comb += bad.eq(port.valid & set_port.in_range & old_off)
                errors.append((bad, port))
        width = config.count_width
        counts = {t: [_popcount(m, bits, width, f"n_{t}_ports")] for t, bits in moves.items()}
        counts["sleep_on"].append(starts[0])
        counts["off_on"].append(starts[1])
        counts = {t: _sum(m, values, width, f"n_{t}") for t, values in counts.items()}
        self._error(m, errors)
        self._accounting(m, counts)

    def _error(self, m, errors):
        """Sticky ``error``; ``error_warp``/``error_reg`` of the first bad read."""
        with m.If(~self.error):
            for bad, port in reversed(errors):
                with m.If(bad):
                    m.d.sync += [self.error.eq(1), self.error_warp.eq(port.warp),
                                 self.error_reg.eq(port.reg)]

    def _accounting(self, m, counts):
        """Population counts kept by transitions; cycle and transition counters."""
        config, acct = self.config, self.acct
        width = config.count_width
        for state in STATES:
            pop = getattr(acct, f"pop_{state}")
            gained = _sum(m, [c for t, c in counts.items() if t.endswith(f"_{state}")], width,
                          f"into_{state}")
            lost = _sum(m, [c for t, c in counts.items() if t.startswith(f"{state}_")], width,
                        f"out_of_{state}")
            plus = ripple_add(m, pop, gained, width, f"pop_{state}_plus")
            minus = ripple_add(m, plus, lost, width, f"pop_{state}_next", subtract=True)
            m.d.sync += pop.eq(minus[:config.pop_width])
            cycles = getattr(acct, f"cycles_{state}")
            m.d.sync += cycles.eq(ripple_add(m, cycles, pop, config.acct_width,
                                       f"cycles_{state}_next"))
        for t, count in counts.items():
            counter = getattr(acct, t)
            m.d.sync += counter.eq(ripple_add(m, counter, count, config.acct_width, f"{t}_next"))


def _any_planes(planes):
    """Bitwise OR of equal-width bit planes."""
    result = planes[0]
    for plane in planes[1:]:
        result = result | plane
    return result


@dataclass(frozen=True)
class _SetPort:
    """One set-state port with its decoded fields: ``wins`` (valid, in range, no lower port
    names the register), ``warp_hot`` (one-hot warp), the register's one-hot masks
    ``to_live`` (set to SLEEP or ON) and ``to_low`` (set to SLEEP or OFF) when it wins —
    two masks encode the four cases none/OFF/SLEEP/ON — and the state bits it sets."""

    port: Any
    is_source: bool
    in_range: Any
    wins: Any
    warp_hot: Any
    to_live: Any
    to_low: Any
    new_on: Any
    new_live: Any


def _one_hot(m, index, width, name):
    """``1 << index`` in ``width`` bits: one-hot, 0 when ``index >= width`` (one shift:
    one netlist cell and one C++ shift in Verilator, unlike a gate-level decoder)."""
    hot = Signal(width, name=name)
    m.d.comb += hot.eq(Const(1, width) << index)
    return hot


def _popcount(m, bits, width, name):
    """The number of set ``bits`` as a ``width``-bit signal: a balanced tree of adders
    each one bit wider than its operands (:func:`_add`), about one full adder per bit."""
    level, depth = [(bit, 1) for bit in bits], 0
    while len(level) > 1:
        paired = []
        for i in range(0, len(level) - 1, 2):
            (a, wa), (b, wb) = level[i], level[i + 1]
            size = min(max(wa, wb) + 1, width)
            paired.append((ripple_add(m, a, b, size, f"{name}_l{depth}_{i // 2}"), size))
        level, depth = paired + level[len(level) - len(level) % 2:], depth + 1
    count = Signal(width, name=name)
    m.d.comb += count.eq(level[0][0] if level else 0)
    return count


def _bit(m, vector, index, name):
    """Bit ``index`` of ``vector`` (0 beyond its width), shifted into a full-width signal
    first so the Verilog has no truncating shift (WIDTHTRUNC)."""
    shifted = Signal(len(vector), name=name)
    m.d.comb += shifted.eq(vector >> index)
    return shifted[0]


def _sum(m, values, width, name):
    """Sum of ``values`` modulo ``2**width``: a balanced tree of :func:`_add` (gates, so
    an operand the policy makes constant folds away without a width-mismatched ``+``)."""
    level, depth = list(values), 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            nxt.append(ripple_add(m, level[i], level[i + 1], width, f"{name}_l{depth}_{i // 2}"))
        level, depth = nxt + level[len(level) - len(level) % 2:], depth + 1
    return level[0]
