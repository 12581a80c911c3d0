"""Formal harness of ``subcore.operand_collector`` in a small configuration.

Inputs are free (``AnySeq``, ``write`` included) except for the stream rule on ``issue``
(valid and payload held until ready) and a reset in the first cycle. The harness keeps its
own shadow state (the issue register, request counts per bank, busy count, a delay line of
grants) and asserts:

- per bank at most one grant a cycle, to a pending request of that bank, none while the
  bank is written, and a grant whenever the bank has a pending request and no write;
  ``read[b]`` shows the granted address;
- ``queue_len[b]`` equals the shadow count: + requests posted when the shadow issue
  register's instruction is allocated (bank computed here from the spec) - grants, so no
  request is lost or duplicated;
- each valid operand of a busy CU is exactly one of pending, in flight (granted at most
  ``read_latency`` cycles ago) or ready; in the cycle a bank returns a granted request's
  data the CU's operand shows it (bypass), and the next cycle it is stored and ready unless
  the CU was dispatched;
- the grant goes to the request of the earliest allocated CU (shadow allocation order),
  then the lowest operand index;
- a CU is offered on ``dispatch`` only when each valid operand is ready or arriving, the
  payload is that CU's, an offer not taken is held unchanged, a fresh offer is the oldest
  complete CU;
- ``issue.ready`` is high iff the shadow issue register is empty or a CU is free after this
  cycle's dispatch, whose lowest-numbered one is allocated; the busy count follows
  allocations - dispatches.
"""

import itertools

from amaranth import Cat, Mux, Signal
from amaranth.hdl import Assert
from amaranth.lib import data

from gpurf.hw.gates import or_all
from gpurf.hw.subcore.operand_collector import OperandCollector

from ..formal_base import FormalHarness, popcount

__all__ = ["SMALL", "OperandCollectorFormal"]

SMALL = {"cus": 2, "banks": 2, "operands": 3, "lanes": 1, "data_width": 2, "slots": 2,
         "reg_bits": 2, "read_latency": 1}
"""The proof configuration: 2 CUs, 2 banks, 3 operands, 2-bit registers, latency 1."""


class OperandCollectorFormal(FormalHarness):
    """The collector with free inputs and the invariants above (``params`` override SMALL)."""

    block = OperandCollector
    SMALL = SMALL

    def __init__(self, *, block=None, **params):
        super().__init__(block=block, **params)
        cus = self.dut.config.cus
        self.older = [[Signal(name=f"shadow_older_{i}_{j}") for j in range(cus)]
                      for i in range(cus)]
        """Shadow allocation order: ``older[i][j]``, CU ``i`` allocated before CU ``j``."""

    def check(self, m):
        self._drive(m)
        allocating = self._issue_register(m)
        self._age(m)
        in_flight, arriving = self._grants(m)
        self._queue_lengths(m, allocating)
        self._operands(m, in_flight)
        self._dispatch(m, arriving, allocating)
        self._covers(m)

    def _issue_register(self, m):
        """The shadow issue register; returns "its instruction is allocated this cycle"."""
        dut, config = self.dut, self.dut.config
        self.buffered = Signal(name="shadow_buffered")
        self.buffer = Signal(config.issue_layout.size, name="shadow_buffer")
        freed = Cat(dut.selected[c] & dut.dispatch.ready for c in range(config.cus))
        self.free_cus = Signal(config.cus, name="shadow_free")
        m.d.comb += self.free_cus.eq(Cat(~unit.busy for unit in dut.units) | freed)
        allocating = Signal(name="shadow_allocating")
        m.d.comb += [
            allocating.eq(self.buffered & self.free_cus.any()),
            Assert(dut.issue.ready == (~self.buffered | self.free_cus.any())),
        ]
        with m.If(dut.issue.valid & dut.issue.ready):
            m.d.sync += [self.buffered.eq(1), self.buffer.eq(dut.issue.payload)]
        with m.Elif(allocating):
            m.d.sync += self.buffered.eq(0)
        for c, unit in enumerate(dut.units):
            lowest = self.free_cus[c] & ~self.free_cus[:c].any() if c else self.free_cus[c]
            m.d.comb += Assert(unit.allocate == (allocating & lowest))
        return allocating

    def _covers(self, m):
        """The events the harness exercises: a bank conflict (two pending requests of one
        bank, one granted), a full collector (every CU busy), a dispatch, a refused offer."""
        dut, config = self.dut, self.dut.config
        conflicts = []
        for bank, grant in enumerate(dut.grants):
            pending = Cat(unit.pending[i] & unit.bank[i][bank]
                          for unit in dut.units for i in range(config.operands))
            conflicts.append(grant.any() & (popcount(pending) >= 2))
        blocked = []
        for bank in range(config.banks):
            pending = Cat(unit.pending[i] & unit.bank[i][bank]
                          for unit in dut.units for i in range(config.operands))
            blocked.append(dut.write[bank] & pending.any())
        self.covers(m, [
            (Cat(conflicts).any(), "bank_conflict"),
            (~dut.issue.ready, "full"),
            (dut.dispatch.valid & dut.dispatch.ready, "dispatch"),
            (dut.dispatch.valid & ~dut.dispatch.ready, "dispatch_refused"),
            (Cat(unit.free & unit.allocate for unit in dut.units).any(), "turnaround"),
            (Cat(blocked).any(), "write_blocks_read"),
        ])

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
        self.free_streams(m, dut.issue)
        self.free_ready(m, dut.dispatch)
        self.free(m, dut.write, *(port.data for port in dut.read))
        self.assume_held(m, dut.issue.valid, dut.issue.ready, dut.issue.payload)

    def _request(self, r):
        """CU and operand index of request port ``r``."""
        cu, index = divmod(r, self.dut.config.operands)
        return self.dut.units[cu], index

    def _grants(self, m):
        """One grant per bank to a pending request of it; the delay line of grants.
        Returns the grants in flight and, per bank, the grants whose data arrives now."""
        dut, config = self.dut, self.dut.config
        line, arriving = [], []
        for bank, grant in enumerate(dut.grants):
            port = dut.read[bank]
            pending = Cat(unit.pending[i] & unit.bank[i][bank]
                          for unit in dut.units for i in range(config.operands))
            m.d.comb += [
                Assert((grant & (grant - 1)) == 0),
                Assert(port.valid == grant.any()),
                Assert(~pending.any() | port.valid | dut.write[bank]),
                Assert(~(port.valid & dut.write[bank])),
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
            arriving.append(stages[config.read_latency - 1])
        return line, arriving

    def _arrival(self, m, bank, arriving):
        """The data a bank returns for a grant is in the CU's operand in that cycle (bypass)
        and stored, ready, the cycle after unless the CU was dispatched."""
        dut, config = self.dut, self.dut.config
        arrived = Signal(config.requests, name=f"arrived_{bank}")
        kept = Signal(config.cus, name=f"kept_{bank}")
        data = Signal(config.register_layout.size, name=f"arrived_data_{bank}")
        m.d.sync += [arrived.eq(arriving), data.eq(dut.read[bank].data),
                     kept.eq(Cat(~unit.free for unit in dut.units))]
        for r in range(config.requests):
            unit, i = self._request(r)
            cu = r // config.operands
            with m.If(arriving[r] & self.running):
                m.d.comb += Assert(unit.busy & unit.valid[i]
                                   & (unit.data[i].as_value() == dut.read[bank].data.as_value()))
            with m.If(arrived[r] & kept[cu] & self.running):
                m.d.comb += Assert(unit.busy & unit.ready[i]
                                   & (unit.data[i].as_value() == data))

    def _queue_lengths(self, m, allocating):
        """``queue_len`` follows posted - granted requests, per bank."""
        dut, config = self.dut, self.dut.config
        transfer = allocating
        instr = data.View(config.issue_layout, self.buffer)
        for bank, grant in enumerate(dut.grants):
            shadow = Signal(config.queue_bits + 1, name=f"shadow_queue_{bank}")
            posted = [operand.valid & self._in_bank(instr.warp, operand.reg, bank)
                      for operand in instr.operand]
            m.d.sync += shadow.eq(shadow + popcount(Cat(p & transfer for p in posted))
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
                m.d.comb += Assert(popcount(states) == 1)
            with m.If(~unit.busy):
                m.d.comb += Assert(~unit.pending[i] & ~flying)
            with m.If(unit.busy & ~unit.valid[i]):
                m.d.comb += Assert(~unit.pending[i] & ~flying & ~unit.ready[i])

    def _dispatch(self, m, arriving, allocating):
        """Offers only complete CUs, holds a refused offer, tracks busy CUs."""
        dut, config = self.dut, self.dut.config
        payload = dut.dispatch.payload
        selected = dut.selected
        m.d.comb += [
            Assert((selected & (selected - 1)) == 0),
            Assert(dut.dispatch.valid == selected.any()),
        ]
        landing = or_all(arriving)
        complete = Cat(
            unit.busy & (unit.ready | landing[c * config.operands:(c + 1) * config.operands]
                         | ~unit.valid).all()
            for c, unit in enumerate(dut.units))
        for c, unit in enumerate(dut.units):
            with m.If(selected[c]):
                m.d.comb += [
                    Assert(complete[c]),
                    Assert((payload.warp == unit.warp) & (payload.valid == unit.valid)),
                ]
                for i in range(config.operands):
                    expected = Mux(unit.valid[i], unit.data[i].as_value(), 0)
                    m.d.comb += Assert(payload.data[i].as_value() == expected)
        held = self.assert_held(m, dut.dispatch.valid, dut.dispatch.ready, payload,
                                name="dispatch")
        with m.If(~(held & self.running) & dut.dispatch.valid):
            for c in range(config.cus):
                for o in range(config.cus):
                    if o != c:
                        m.d.comb += Assert(~(selected[c] & complete[o] & self.older[o][c]))
        busy = Signal(range(config.cus + 1))
        m.d.sync += busy.eq(busy + allocating - (dut.dispatch.valid & dut.dispatch.ready))
        m.d.comb += Assert(busy == popcount(Cat(u.busy for u in dut.units)))
