"""Formal harness of ``subcore.operand_collector`` in a small configuration.

Inputs are free (``AnySeq``) except for the stream rule on ``issue`` (valid and payload
held until ready) and a reset in the first cycle. The harness keeps its own shadow state
(request counts per bank, busy count, a delay line of grants) and asserts:

- per bank at most one grant a cycle, to a pending request of that bank, and a grant
  whenever the bank has a pending request; ``read[b]`` shows the granted address;
- ``queue_len[b]`` equals the shadow count: + requests posted on allocation (bank
  computed here from the spec) - grants, so no request is lost or duplicated;
- each valid operand of a busy CU is exactly one of pending, in flight (granted less than
  ``read_latency + 1`` cycles ago) or ready; a granted request's data reaches its CU's
  operand and sets ready the cycle after the bank returned it;
- the grant goes to the request of the earliest allocated CU (shadow allocation order),
  then the lowest operand index;
- a CU is offered on ``dispatch`` only when all its valid operands are ready, the payload
  is that CU's, an offer not taken is held unchanged, a fresh offer is the oldest complete
  CU; ``issue.ready`` is high iff a CU is free; the busy count follows issue - dispatch.
"""

import itertools

from amaranth import Cat, Elaboratable, Module, Mux, ResetSignal, Signal
from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cover

from gpurf.hw.subcore.operand_collector import OperandCollector

__all__ = ["SMALL", "OperandCollectorFormal"]

SMALL = {"cus": 2, "banks": 2, "operands": 3, "lanes": 1, "data_width": 2, "slots": 2,
         "reg_bits": 2, "read_latency": 1}
"""The proof configuration: 2 CUs, 2 banks, 3 operands, 2-bit registers, latency 1."""


def _popcount(bits):
    return sum(bits[i] for i in range(len(bits)))


class OperandCollectorFormal(Elaboratable):
    """The collector with free inputs and the invariants above (``params`` override SMALL)."""

    def __init__(self, *, block=OperandCollector, **params):
        self.dut = block(**{**SMALL, **params})
        cus = self.dut.config.cus
        self.older = [[Signal(name=f"shadow_older_{i}_{j}") for j in range(cus)]
                      for i in range(cus)]
        """Shadow allocation order: ``older[i][j]``, CU ``i`` allocated before CU ``j``."""

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.dut
        m.d.comb += Assume(ResetSignal() == Initial())
        self._drive(m)
        self._age(m)
        in_flight = self._grants(m)
        self._queue_lengths(m)
        self._operands(m, in_flight)
        self._dispatch(m)
        self._covers(m)
        return m

    def _covers(self, m):
        """The events the harness exercises: a bank conflict (two pending requests of one
        bank, one granted), a full collector (every CU busy), a dispatch, a refused offer."""
        dut, config = self.dut, self.dut.config
        conflicts = []
        for bank, grant in enumerate(dut.grants):
            pending = Cat(unit.pending[i] & unit.bank[i][bank]
                          for unit in dut.units for i in range(config.operands))
            conflicts.append(grant.any() & (_popcount(pending) >= 2))
        m.d.comb += [
            Cover(Cat(conflicts).any(), "bank_conflict"),
            Cover(~dut.issue.ready, "full"),
            Cover(dut.dispatch.valid & dut.dispatch.ready, "dispatch"),
            Cover(dut.dispatch.valid & ~dut.dispatch.ready, "dispatch_refused"),
        ]

    def _age(self, m):
        """The shadow allocation order follows the allocations."""
        cus = self.dut.config.cus
        for k, unit in enumerate(self.dut.units):
            with m.If(unit.allocate):
                for j in range(cus):
                    if j != k:
                        m.d.sync += [self.older[j][k].eq(1), self.older[k][j].eq(0)]

    def _before(self, r, s):
        """Request ``r`` has priority over request ``s``: older CU, then lower operand."""
        (cr, ir), (cs, is_) = (divmod(x, self.dut.config.operands) for x in (r, s))
        return self.older[cr][cs] if cr != cs else int(ir < is_)

    def _drive(self, m):
        """Free inputs; ``issue`` follows the stream rule."""
        dut = self.dut
        m.d.comb += [
            dut.issue.valid.eq(AnySeq(1)),
            dut.issue.payload.eq(AnySeq(dut.config.issue_layout.size)),
            dut.dispatch.ready.eq(AnySeq(1)),
        ]
        for port in dut.read:
            m.d.comb += port.data.eq(AnySeq(dut.config.register_layout.size))
        stalled = Signal()
        payload = Signal(dut.config.issue_layout.size)
        m.d.sync += [stalled.eq(dut.issue.valid & ~dut.issue.ready),
                     payload.eq(dut.issue.payload)]
        with m.If(stalled & ~ResetSignal()):
            m.d.comb += Assume(dut.issue.valid & (dut.issue.payload.as_value() == payload))

    def _request(self, r):
        """CU and operand index of request port ``r``."""
        cu, index = divmod(r, self.dut.config.operands)
        return self.dut.units[cu], index

    def _grants(self, m):
        """One grant per bank to a pending request of it; the delay line of grants."""
        dut, config = self.dut, self.dut.config
        line = []
        for bank, grant in enumerate(dut.grants):
            port = dut.read[bank]
            pending = Cat(unit.pending[i] & unit.bank[i][bank]
                          for unit in dut.units for i in range(config.operands))
            m.d.comb += [
                Assert((grant & (grant - 1)) == 0),
                Assert(port.valid == grant.any()),
                Assert(~pending.any() | port.valid),
                Assert((grant & ~pending) == 0),
            ]
            for r in range(config.requests):
                unit, i = self._request(r)
                with m.If(grant[r]):
                    m.d.comb += Assert((port.addr.warp == unit.warp)
                                       & (port.addr.reg == unit.reg_id[i]))
                    for s in range(config.requests):
                        if s != r:
                            m.d.comb += Assert(~(pending[s] & self._before(s, r)))
            stages = [Signal(config.requests, name=f"shadow_grant_{bank}_{k}")
                      for k in range(config.read_latency + 1)]
            m.d.sync += stages[0].eq(grant)
            for earlier, later in itertools.pairwise(stages):
                m.d.sync += later.eq(earlier)
            self._arrival(m, bank, stages[config.read_latency - 1])
            line.extend(stages[:config.read_latency])
        return line

    def _arrival(self, m, bank, arriving):
        """The data a bank returns for a grant is in the CU's operand the cycle after."""
        dut, config = self.dut, self.dut.config
        arrived = Signal(config.requests, name=f"arrived_{bank}")
        data = Signal(config.register_layout.size, name=f"arrived_data_{bank}")
        m.d.sync += [arrived.eq(arriving), data.eq(dut.read[bank].data)]
        for r in range(config.requests):
            unit, i = self._request(r)
            with m.If(arrived[r] & ~ResetSignal()):
                m.d.comb += Assert(unit.busy & unit.ready[i]
                                   & (unit.data[i].as_value() == data))

    def _queue_lengths(self, m):
        """``queue_len`` follows posted - granted requests, per bank."""
        dut, config = self.dut, self.dut.config
        transfer = dut.issue.valid & dut.issue.ready
        instr = dut.issue.payload
        for bank, grant in enumerate(dut.grants):
            shadow = Signal(config.queue_bits + 1, name=f"shadow_queue_{bank}")
            posted = [operand.valid & self._in_bank(instr.warp, operand.reg, bank)
                      for operand in instr.operand]
            m.d.sync += shadow.eq(shadow + _popcount(Cat(p & transfer for p in posted))
                                  - grant.any())
            m.d.comb += Assert(dut.queue_len[bank] == shadow)

    def _in_bank(self, warp, reg, bank):
        config = self.dut.config
        index = reg + warp if config.bank_map == "swizzle" else reg
        return (index % config.banks) == bank

    def _operands(self, m, in_flight):
        """Each valid operand of a busy CU is pending, in flight or ready — exactly one."""
        config = self.dut.config
        for r in range(config.requests):
            unit, i = self._request(r)
            flying = Cat(stage[r] for stage in in_flight).any()
            states = Cat(unit.pending[i], flying, unit.ready[i])
            with m.If(unit.busy & unit.valid[i]):
                m.d.comb += Assert(_popcount(states) == 1)
            with m.If(~unit.busy):
                m.d.comb += Assert(~unit.pending[i] & ~flying)
            with m.If(unit.busy & ~unit.valid[i]):
                m.d.comb += Assert(~unit.pending[i] & ~flying & ~unit.ready[i])

    def _dispatch(self, m):
        """Offers only complete CUs, holds a refused offer, tracks busy CUs."""
        dut, config = self.dut, self.dut.config
        payload = dut.dispatch.payload
        selected = dut.selected
        m.d.comb += [
            Assert((selected & (selected - 1)) == 0),
            Assert(dut.dispatch.valid == selected.any()),
            Assert(dut.issue.ready == ~Cat(u.busy for u in dut.units).all()),
        ]
        complete = Cat(unit.busy & (unit.ready | ~unit.valid).all() for unit in dut.units)
        for c, unit in enumerate(dut.units):
            with m.If(selected[c]):
                m.d.comb += [
                    Assert(complete[c]),
                    Assert((payload.warp == unit.warp) & (payload.valid == unit.valid)),
                ]
                for i in range(config.operands):
                    expected = Mux(unit.valid[i], unit.data[i].as_value(), 0)
                    m.d.comb += Assert(payload.data[i].as_value() == expected)
        held = Signal()
        offered = Signal(config.dispatch_layout.size)
        m.d.sync += [held.eq(dut.dispatch.valid & ~dut.dispatch.ready),
                     offered.eq(payload)]
        with m.If(held & ~ResetSignal()):
            m.d.comb += Assert(dut.dispatch.valid & (payload.as_value() == offered))
        with m.Elif(dut.dispatch.valid):
            for c in range(config.cus):
                for o in range(config.cus):
                    if o != c:
                        m.d.comb += Assert(~(selected[c] & complete[o] & self.older[o][c]))
        busy = Signal(range(config.cus + 1))
        m.d.sync += busy.eq(busy + (dut.issue.valid & dut.issue.ready)
                            - (dut.dispatch.valid & dut.dispatch.ready))
        m.d.comb += Assert(busy == _popcount(Cat(u.busy for u in dut.units)))
