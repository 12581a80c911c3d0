"""Formal harness of ``greener.power_controller`` in a small configuration.

All inputs are free (``AnySeq``), including out-of-range warps/registers, colliding ports
and the reserved state code 10; a reset is assumed in the first cycle. Asserted:

- ``ready[w]`` is high exactly when ``head[w]`` is valid and every register its valid
  operands name is usable (ON, wake-up over): never ready with a non-ON operand register;
- a wake-up ends exactly on time: a register a valid head names while it is not ON, and
  no set-state port names in that cycle, is usable exactly ``sleep_wakeup`` (from SLEEP)
  or ``off_wakeup`` (from OFF) cycles later and not before, unless a set-state port names
  it in between (a shadow counter per register, started from the ports and the state);
- under GReEneR, a set whose ``keep_on`` bit is high (the correction table found another
  in-flight instruction using the register) leaves the register ON: with the correction
  table's own proof (its answer is exactly "another in-flight PC of the warp uses it"),
  a register kept ON by the table is never set to SLEEP/OFF while the entry exists;
- ``pop_off + pop_sleep + pop_on == warps * regs``, and each equals the number of registers
  in that state; no register holds code 10; a running timer implies ON.
"""

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert

from gpurf.hw.greener.power_controller import PowerController

from ..formal_base import FormalHarness, popcount

__all__ = ["SMALL", "PowerControllerFormal"]

SMALL = {"warps": 2, "regs": 4, "src_ports": 1, "dst_ports": 1, "sleep_wakeup": 2,
         "off_wakeup": 3, "counter_width": 4}
"""The proof configuration: 2 warps x 4 registers, 1 source + 1 destination port,
SLEEP->ON 2 cycles, OFF->ON 3 cycles, 4-bit cycle counters."""


class PowerControllerFormal(FormalHarness):
    """The controller with free inputs and the invariants above (``params`` override SMALL)."""

    block = PowerController
    SMALL = SMALL

    def check(self, m):
        dut = self.dut
        self.free(m, dut.src_set, dut.dst_set, dut.keep_on, dut.head)
        self._ready(m)
        self._wakeups(m)
        self._population(m)
        self._covers(m)

    def _covers(self, m):
        """The events: a ready warp after a wake-up from OFF, a wake-up from SLEEP, and
        (GReEneR) a set kept ON by the correction table."""
        dut, config = self.dut, self.dut.config
        waking = _any(dut.timer[0])
        ended = Signal(config.regs)
        m.d.sync += ended.eq(waking)
        # A wake-up ended this cycle: the timer ran last cycle and is over now.
        over = ended & ~waking & dut.on[0]
        started_off = Signal(config.regs)
        for r in range(config.regs):
            with m.If(self._named(0, r) & ~dut.on[0][r]):
                m.d.sync += started_off[r].eq(~dut.live[0][r])
        events = [((over & started_off).any() & dut.ready[0], "wakeup_from_off"),
                  ((over & ~started_off).any(), "wakeup_from_sleep")]
        if config.policy == "greener":
            kept = Cat(port.valid & keep & ~port.state[1] for port, keep in zip(
                dut.src_set, dut.keep_on.src, strict=True)).any()
            events.append((kept & self.running, "kept_on"))
        self.covers(m, events)

    def _ready(self, m):
        dut, config = self.dut, self.dut.config
        for w in range(config.warps):
            waking = Signal(config.regs, name=f"f_waking_{w}")
            m.d.comb += waking.eq(_any(dut.timer[w]))
            usable = dut.on[w] & ~waking
            head = dut.head[w]
            ok = [~op.valid | (op.reg >= config.regs) | usable.bit_select(op.reg, 1)
                  for op in (head.operand[i] for i in range(config.operands))]
            m.d.comb += Assert(dut.ready[w] == (head.valid & Cat(ok).all()))
            m.d.comb += [Assert((waking & ~dut.on[w]) == 0),
                         Assert((dut.on[w] & ~dut.live[w]) == 0)]

    def _set_hit(self, w, r):
        """``(hit, lowers, keeps)``: a set-state port names register ``(w, r)``; the first
        such port (priority order) moves it out of ON (keep_on and the reserved code 10 keep
        it ON; under Sleep-Reg every set lowers); that port carries ``keep_on``."""
        dut, config = self.dut, self.dut.config
        ports = [(dut.src_set[k], dut.keep_on.src[k]) for k in range(config.src_ports)]
        ports += [(dut.dst_set[k], dut.keep_on.dst[k]) for k in range(config.dst_ports)]
        lowers, keeps = 0, 0
        for port, keep in reversed(ports):
            names = port.valid & (port.warp == w) & (port.reg == r)
            to_low = 1 if config.policy == "sleep_reg" else ~keep & ~port.state[1]
            lowers = Mux(names, to_low, lowers)
            keeps = Mux(names, keep, keeps)
        hit = Cat(p.valid & (p.warp == w) & (p.reg == r) for p, _ in ports).any()
        return hit, lowers, keeps

    def _named(self, w, r):
        head, config = self.dut.head[w], self.dut.config
        return head.valid & Cat(op.valid & (op.reg == r) for op in
                                (head.operand[i] for i in range(config.operands))).any()

    def _wakeups(self, m):
        """Shadow per register: cycles since its wake-up started, and from which state."""
        dut, config = self.dut, self.dut.config
        width = config.off_wakeup.bit_length() + 1
        for w in range(config.warps):
            usable = dut.on[w] & ~_any(dut.timer[w])
            for r in range(config.regs):
                pending = Signal(name=f"f_pending_{w}_{r}")
                count = Signal(width, name=f"f_count_{w}_{r}")
                from_off = Signal(name=f"f_from_off_{w}_{r}")
                hit, lowers, keeps = self._set_hit(w, r)
                if config.policy == "greener":
                    kept = Signal(name=f"f_kept_{w}_{r}")
                    m.d.sync += kept.eq(keeps)
                    with m.If(kept & self.running):
                        m.d.comb += Assert(dut.on[w][r])
                latency = Signal(width, name=f"f_latency_{w}_{r}")
                m.d.comb += latency.eq(Mux(from_off, config.off_wakeup, config.sleep_wakeup))
                timer = Cat(plane[r] for plane in dut.timer[w])
                with m.If(pending & self.running):
                    m.d.comb += Assert(usable[r] == (count == latency))
                    m.d.comb += Assert(count <= latency)
                    m.d.comb += Assert(timer == latency - count)
                    m.d.comb += Assert(dut.on[w][r])
                with m.Elif(self.running):
                    m.d.comb += Assert(timer == 0)
                with m.If(pending):
                    m.d.sync += count.eq(count + 1)
                    with m.If(lowers | (count == latency)):
                        m.d.sync += pending.eq(0)
                with m.Elif(self._named(w, r) & ~dut.on[w][r] & ~hit):
                    m.d.sync += [pending.eq(1), count.eq(1), from_off.eq(~dut.live[w][r])]

    def _population(self, m):
        dut, config = self.dut, self.dut.config
        acct = dut.acct
        m.d.comb += Assert(acct.pop_off + acct.pop_sleep + acct.pop_on == config.registers)
        on = sum(popcount(dut.on[w]) for w in range(config.warps))
        live = sum(popcount(dut.live[w]) for w in range(config.warps))
        m.d.comb += [Assert(acct.pop_on == on), Assert(acct.pop_sleep == live - on),
                     Assert(acct.pop_off == config.registers - live)]


def _any(planes):
    result = planes[0]
    for plane in planes[1:]:
        result = result | plane
    return result
