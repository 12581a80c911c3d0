"""Formal harness of ``greener.scoreboard_ext`` in a small configuration.

Inputs are free (``AnySeq``; warps and valid registers in range) except for the stream
rule on ``reserve`` (valid and payload
held until ready) and a reset in the first cycle. The harness keeps the spec's view,
independent of the RTL's slots: per warp and register, how many slots hold it (a release
empties them, an accepted reserve adds one per valid source naming it). It asserts:

- a reserved register is reported (``hazard``) by every check of its warp that names it,
  as a source or a destination, until it is released, and a released (or never reserved)
  register is not reported;
- ``full`` and ``reserve.ready`` follow the free-slot count ``sources - reserved``;
- no slot is lost or duplicated: each warp's occupied slots equal its reservations, and
  (the induction strengthening) each count equals the occupied slots holding the register.
"""

from amaranth import Cat, Signal
from amaranth.hdl import Assert

from gpurf.hw.greener.scoreboard_ext import ScoreboardExt

from ..formal_base import FormalHarness, popcount

__all__ = ["SMALL", "ScoreboardExtFormal"]

SMALL = {"warps": 2, "regs": 4, "sources": 2, "dests": 2, "check_ports": 2, "release_ports": 2}
"""The proof configuration: 2 warps x 2 slots, 4 registers, 2 check and 2 release ports."""


class ScoreboardExtFormal(FormalHarness):
    """The scoreboard extension with free inputs and the invariants above."""

    block = ScoreboardExt
    SMALL = SMALL

    def check(self, m):
        self._drive(m)
        counts = self._shadow(m)
        self._slots(m, counts)
        self._answers(m, counts)
        self._covers(m)

    def _covers(self, m):
        """The events: a hazard, a full warp (a reserve refused), a release."""
        dut = self.dut
        self.covers(m, [
            (dut.hazard.any(), "hazard"),
            (dut.reserve.valid & ~dut.reserve.ready, "full"),
            (dut.full.any(), "check_full"),
            (Cat(port.valid for port in dut.release).any()
             & Cat(dut.occupied[w].any() for w in range(dut.config.warps)).any(), "release"),
        ])

    def _slots(self, m, counts):
        """Induction strengthening: each count is the number of occupied slots holding the
        register (read through the harness's own ports of the slot memory)."""
        dut, config = self.dut, self.dut.config
        for w, (row, _) in enumerate(counts):
            read = dut.slots.read_port(domain="comb")
            m.d.comb += read.addr.eq(w)
            for r, count in enumerate(row):
                holding = Cat(dut.occupied[w][j] & (read.data[j] == r)
                              for j in range(config.sources))
                m.d.comb += Assert(count == popcount(holding))

    def _drive(self, m):
        dut = self.dut
        reserve = dut.reserve
        self.free_streams(m, reserve)
        self.free(m, dut.release, dut.check)
        self._in_range(m)
        self.assume_held(m, reserve.valid, reserve.ready, reserve.payload)

    def _in_range(self, m):
        """Warps below ``warps`` and registers below ``regs`` (``reserve.ready`` looks at
        the payload even while ``reserve.valid`` is low)."""
        dut, config = self.dut, self.dut.config
        reserve = dut.reserve.payload
        rules = [(1, reserve.warp < config.warps)]
        rules += [(reserve.valid[k], reserve.reg[k] < config.regs)
                  for k in range(config.sources)]
        for port in dut.release:
            rules.append((port.valid, (port.warp < config.warps) & (port.reg < config.regs)))
        for check in (dut.check[c] for c in range(config.check_ports)):
            rules.append((1, check.warp < config.warps))
            rules += [(check.src_valid[k], check.src[k] < config.regs)
                      for k in range(config.sources)]
            rules += [(check.dst_valid[k], check.dst[k] < config.regs)
                      for k in range(config.dests)]
        self.assume_when(m, rules)

    def _shadow(self, m):
        """``counts[w][r]``: slots of warp ``w`` holding register ``r``."""
        dut, config = self.dut, self.dut.config
        reserve = dut.reserve
        transfer = reserve.valid & reserve.ready
        counts = []
        for w in range(config.warps):
            row = []
            for r in range(config.regs):
                count = Signal(range(config.sources + 1), name=f"count_w{w}_r{r}")
                released = Cat(port.valid & (port.warp == w) & (port.reg == r)
                               for port in dut.release).any()
                added = popcount(Cat(
                    transfer & (reserve.payload.warp == w) & reserve.payload.valid[k]
                    & (reserve.payload.reg[k] == r) for k in range(config.sources)))
                kept = Signal.like(count, name=f"kept_w{w}_r{r}")
                m.d.comb += kept.eq(count)
                with m.If(released):
                    m.d.comb += kept.eq(0)
                m.d.sync += count.eq(kept + added)
                row.append(count)
            reserved = Signal(range(config.sources * config.regs + 1), name=f"reserved_w{w}")
            m.d.comb += [
                reserved.eq(sum(row)),
                Assert(reserved <= config.sources),
                Assert(popcount(dut.occupied[w]) == reserved),
            ]
            counts.append((row, reserved))
        return counts

    def _free(self, counts, warp):
        """Free slots of the (dynamic) ``warp``: ``sources - reserved``."""
        result = 0
        for w, (_, reserved) in enumerate(counts):
            result = result | ((warp == w) * (self.dut.config.sources - reserved))
        return result

    def _held(self, counts, warp, reg):
        """Register ``reg`` of ``warp`` has a reservation."""
        return Cat((warp == w) & (reg == r) & (count > 0)
                   for w, (row, _) in enumerate(counts) for r, count in enumerate(row)).any()

    def _answers(self, m, counts):
        dut, config = self.dut, self.dut.config
        payload = dut.reserve.payload
        free = Signal(range(config.sources + 1))
        m.d.comb += [free.eq(self._free(counts, payload.warp)),
                     Assert(dut.reserve.ready == (popcount(payload.valid) <= free))]
        for c in range(config.check_ports):
            check = dut.check[c]
            operands = ([(check.src_valid[k], check.src[k]) for k in range(config.sources)]
                        + [(check.dst_valid[k], check.dst[k]) for k in range(config.dests)])
            touched = Cat(valid & self._held(counts, check.warp, reg) for valid, reg in operands)
            check_free = Signal(range(config.sources + 1), name=f"check_{c}_free")
            m.d.comb += [
                check_free.eq(self._free(counts, check.warp)),
                Assert(dut.hazard[c] == (check.valid & touched.any())),
                Assert(dut.full[c] == (check.valid & (popcount(check.src_valid) > check_free))),
            ]
