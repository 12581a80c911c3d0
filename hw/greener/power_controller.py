"""Register power-state controller of GReEneR (paper Section 3.4, Fig. 5 labels 3-5)."""

from dataclasses import dataclass
from typing import Any

from amaranth import Cat, Const, Module, Mux, Signal

from gpurf.hw.gates import bit, onehot, or_all, ripple_add
from gpurf.hw.params import ConfiguredComponent

from .configs import (
    POLICIES,
    STATES,
    TRANSITIONS,
    PowerControllerConfig,
    accounting_signature,
)

__all__ = ["POLICIES", "STATES", "TRANSITIONS", "PowerController", "PowerControllerConfig",
           "accounting_signature"]


class PowerController(ConfiguredComponent, config=PowerControllerConfig):
    """Per-register ON/SLEEP/OFF states, wake-up timers, per-warp "operands ready" and
    leakage accounting (paper 3.4 items 3-5, Fig. 5 labels 3-5).

    **State.** Every warp register (the 32 thread registers of one warp register, one power
    domain) has a 2-bit state (OFF = 00, SLEEP = 01, ON = 11; the reserved code 10 on an
    input is read as ON, and only the three codes are ever stored) and a wake-up timer.
    After reset every register is OFF (unallocated, Sleep-Reg's rule for unallocated
    registers; a kernel's first write needs an OFF->ON wake-up of its destination).

    **Storage: flip-flops.** The state array is ``warps x regs x (2 + timer_bits)`` bits
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

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        warps, regs = config.warps, config.regs
        stride = config.stride
        self.on_rows = [Signal(stride, name=f"on_{w}") for w in range(warps)]
        self.live_rows = [Signal(stride, name=f"live_{w}") for w in range(warps)]
        self.timer_rows = [[Signal(stride, name=f"timer_{w}_b{k}")
                            for k in range(config.timer_bits)] for w in range(warps)]
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
        ports = []
        for index, (port, keep, is_source) in enumerate(self._ports()):
            warp_hot = onehot(m, port.warp, config.warps, f"set_warp_{index}")
            reg_hot = onehot(m, port.reg, config.regs, f"set_reg_{index}")
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

    def _decode(self, m, reg, enable, name):
        """One-hot ``regs``-bit mask of ``reg`` when ``enable`` (0 beyond ``regs``). The
        enable gates the named one-hot signal ``{name}_raw``, not the shift as
        :func:`~gpurf.hw.gates.onehot`'s ``enable`` does: that form maps to more cells (3,451
        against 3,425 at ``warps=3, regs=5``)."""
        regs = self.config.regs
        mask = Signal(regs, name=name)
        m.d.comb += mask.eq(Mux(enable, onehot(m, reg, regs, f"{name}_raw"), 0))
        return mask

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
            rows = self._row(m, w, ports)
            for kind, bits in zip(("sleep", "off"), self._operand_starts(m, w, rows),
                                  strict=True):
                starts[kind].extend(bits)
        counts = tuple(_popcount(m, starts[kind], config.count_bits, f"n_wake_{kind}")
                       for kind in ("sleep", "off"))
        self._sets(m, ports, counts)

    def _operand_starts(self, m, w, rows):
        """Per operand of warp ``w``'s head: it starts a wake-up from SLEEP / from OFF (the
        register is named, not ON, not set this cycle, and no lower operand names it; ``rows``:
        the row's ``on``, ``live`` and ``set_any`` words from :meth:`_row`).
        Counting these bits, not the rows' start masks, keeps the counters' adders
        ``warps x operands`` bits wide instead of ``warps x regs``."""
        config, head = self.config, self.head[w]
        from_sleep, from_off = [], []
        for i in range(config.operands):
            operand = head.operand[i]
            state = {label: bit(m, row, operand.reg, f"op_{label}_{w}_{i}")
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
        ``ready``); returns its ``on``, ``live`` and ``set_any`` words."""
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
            s["set_live"].eq(or_all(placed["to_live"])),
            s["set_low"].eq(or_all(placed["to_low"])),
            s["set_any"].eq(s["set_live"] | s["set_low"]),
            s["set_on"].eq(s["set_live"] & ~s["set_low"]),
            s["waking"].eq(or_all(self.timer_rows[w])),
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
        return {"on": on, "live": live, "set_any": s["set_any"]}

    def _timers(self, m, w, from_sleep, from_off, cancel):
        """Count every running timer of row ``w`` down; load started ones with
        ``latency - 1``; clear timers whose register a set-state port moves out of ON."""
        config, stride = self.config, self.config.stride
        planes = self.timer_rows[w]
        borrow = Signal(stride, name=f"borrow_{w}_0")
        m.d.comb += borrow.eq(or_all(planes))
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
        return (bit(m, row_on, port.reg, f"old_on_{index}"),
                bit(m, row_live, port.reg, f"old_live_{index}"))

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
        width = config.count_bits
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
        width = config.count_bits
        for state in STATES:
            pop = getattr(acct, f"pop_{state}")
            gained = _sum(m, [c for t, c in counts.items() if t.endswith(f"_{state}")], width,
                          f"into_{state}")
            lost = _sum(m, [c for t, c in counts.items() if t.startswith(f"{state}_")], width,
                        f"out_of_{state}")
            plus = ripple_add(m, pop, gained, width, f"pop_{state}_plus")
            minus = ripple_add(m, plus, lost, width, f"pop_{state}_next", subtract=True)
            m.d.sync += pop.eq(minus[:config.pop_bits])
            cycles = getattr(acct, f"cycles_{state}")
            m.d.sync += cycles.eq(ripple_add(m, cycles, pop, config.acct_bits,
                                       f"cycles_{state}_next"))
        for t, count in counts.items():
            counter = getattr(acct, t)
            m.d.sync += counter.eq(ripple_add(m, counter, count, config.acct_bits, f"{t}_next"))


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


def _popcount(m, bits, width, name):
    """The number of set ``bits`` as a ``width``-bit signal: a balanced tree of adders
    each one bit wider than its operands (:func:`~gpurf.hw.gates.ripple_add`), about one
    full adder per bit."""
    level, depth = [(one, 1) for one in bits], 0
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


def _sum(m, values, width, name):
    """Sum of ``values`` modulo ``2**width``: a balanced tree of
    :func:`~gpurf.hw.gates.ripple_add` (gates, so an operand the policy makes constant folds
    away without a width-mismatched ``+``)."""
    level, depth = list(values), 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level) - 1, 2):
            nxt.append(ripple_add(m, level[i], level[i + 1], width, f"{name}_l{depth}_{i // 2}"))
        level, depth = nxt + level[len(level) - len(level) % 2:], depth + 1
    return level[0]
