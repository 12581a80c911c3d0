"""Operand collector of a sub-core (RBA paper, Fig. 2 and Fig. 6 items 6-11)."""

import functools
import itertools

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.gates import or_all
from gpurf.hw.params import ConfiguredComponent

from .configs import BANK_MAPS, OperandCollectorConfig, bank_read_signature

__all__ = ["BANK_MAPS", "CollectorUnit", "OperandCollector", "OperandCollectorConfig",
           "bank_read_signature"]


def _bank_of(m, config, warp, reg, name):
    """The bank a register lives in, one-hot: ``(reg + warp) % banks`` or ``reg % banks``."""
    if config.banks == 1:
        return Const(1, 1)
    width = max(config.reg_bits, config.warp_bits) + 1
    index = Signal(width, name=f"{name}_index")
    if config.bank_map == "swizzle":
        reg_wide = Signal(width, name=f"{name}_reg")
        warp_wide = Signal(width, name=f"{name}_warp")
        m.d.comb += [reg_wide.eq(reg), warp_wide.eq(warp), index.eq(reg_wide + warp_wide)]
    else:
        m.d.comb += index.eq(reg)
    if config.banks & (config.banks - 1) == 0:
        number = index[:config.bank_bits]
    else:
        number = _modulo(m, index, config.banks, name)
    onehot = Signal(config.banks, name=f"{name}_onehot")
    with m.Switch(number):
        for bank in range(config.banks):
            with m.Case(bank):
                m.d.comb += onehot.eq(1 << bank)
        with m.Default():
            m.d.comb += onehot.eq(0)
    return onehot


def _modulo(m, value, divisor, name):
    """``value % divisor`` for a small constant: MSB first, ``r = (2r + bit) mod divisor``,
    each step a table over the ``2 * divisor`` reachable values of ``2r + bit``."""
    width = divisor.bit_length()
    remainder = Const(0, width)
    for position in reversed(range(len(value))):
        doubled = Signal(width + 1, name=f"{name}_mod_{position}_in")
        step = Signal(width, name=f"{name}_mod_{position}")
        m.d.comb += doubled.eq(Cat(value[position], remainder))
        with m.Switch(doubled):
            for case in range(1 << (width + 1)):
                with m.Case(case):
                    m.d.comb += step.eq(case % divisor)
        remainder = step
    return remainder


class CollectorUnit(wiring.Component):
    """One collector unit (CU): a warp instruction's operand entries while they are read.

    Per operand it keeps valid, pending (requested, not yet granted), ready, register id,
    bank (one-hot: bit ``b`` = bank ``b``) and the warp register's data in flip-flops
    (``reset_less``: an operand's data is only used once ``ready`` says it was written).

    Attributes
    ----------
    allocate : In(1)
        Take ``instr`` on this edge (only while ``busy`` is low).
    instr : In(issue_layout)
        The instruction to allocate.
    grant : In(operands)
        Operand ``i``'s read request is granted this cycle (clears pending).
    capture : In(operands)
        Operand ``i``'s data is at ``capture_data[i]`` this cycle (sets ready from the next
        cycle; this cycle the data bypasses the stored entry to ``data``).
    capture_data : In(ArrayLayout(register_layout, operands))
        Per operand: the read data of the operand's bank.
    free : In(1)
        The instruction is dispatched on this edge.
    busy, warp, valid, pending, ready, reg_id, bank : Out
        The stored entry.
    data : Out
        Per operand: the data captured this cycle, else the stored data; zero while the
        operand is not valid.
    complete : Out(1)
        Busy, and every valid operand is ready or captured this cycle.

    A CU freed and allocated on the same edge holds the new instruction (allocation wins).
    """

    def __init__(self, config: OperandCollectorConfig):
        self.config = config
        ops = config.operands
        super().__init__({
            "allocate": In(1),
            "instr": In(config.issue_layout),
            "grant": In(ops),
            "capture": In(ops),
            "capture_data": In(data.ArrayLayout(config.register_layout, ops)),
            "free": In(1),
            "busy": Out(1),
            "warp": Out(config.warp_bits),
            "valid": Out(ops),
            "pending": Out(ops),
            "ready": Out(ops),
            "reg_id": Out(data.ArrayLayout(config.reg_bits, ops)),
            "bank": Out(data.ArrayLayout(config.banks, ops)),
            "data": Out(data.ArrayLayout(config.register_layout, ops)),
            "complete": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        config = self.config
        width = config.register_layout.size
        for i in range(config.operands):
            stored = Signal(width, name=f"data_{i}", reset_less=True)
            current = Mux(self.capture[i], self.capture_data[i].as_value(), stored)
            m.d.comb += self.data[i].eq(Mux(self.valid[i], current, 0))
            with m.If(self.grant[i]):
                m.d.sync += self.pending[i].eq(0)
            with m.If(self.capture[i]):
                m.d.sync += [self.ready[i].eq(1), stored.eq(self.capture_data[i])]
        m.d.comb += self.complete.eq(
            self.busy & (self.ready | self.capture | ~self.valid).all())
        with m.If(self.free):
            m.d.sync += self.busy.eq(0)
        with m.If(self.allocate):
            m.d.sync += [self.busy.eq(1), self.warp.eq(self.instr.warp), self.ready.eq(0)]
            for i, operand in enumerate(self.instr.operand):
                m.d.sync += [
                    self.valid[i].eq(operand.valid),
                    self.pending[i].eq(operand.valid),
                    self.reg_id[i].eq(operand.reg),
                    self.bank[i].eq(_bank_of(m, config, self.instr.warp, operand.reg, f"bank_{i}")),
                ]
        return m


class OperandCollector(ConfiguredComponent, config=OperandCollectorConfig):
    """Operand collector: collector units, per-bank arbitration, dispatch selection.

    The register-file banks are outside the block; it has one read port per bank, and a
    ``write`` input saying which banks a writeback uses this cycle. A cycle follows
    Accel-Sim's collector order (dispatch, bank reads, allocation), so a CU dispatched in a
    cycle is allocated again in the same cycle and, without bank conflicts, turns over every
    ``1 + L`` cycles (``L`` = ``read_latency``; 2 CUs: one instruction a cycle at ``L = 1``):

    - ``issue`` fills an issue register (the issue -> collector pipeline register).
      ``issue.ready`` is high when the register is empty or its instruction is allocated
      this cycle: to the lowest-numbered CU free at the start of the cycle or freed by this
      cycle's dispatch (so ``issue.ready`` depends on ``dispatch.ready``). An instruction
      accepted in cycle ``t`` is allocated in ``t+1`` at the earliest and its valid
      operands' requests are pending (counted in ``queue_len``, eligible for a grant) from
      the cycle after its allocation.
    - Each cycle each bank not in ``write`` grants at most one pending request: the one of
      the CU allocated earliest, then the lowest operand index (**interpretation** of the
      paper's queue); a written bank grants none (the write port has priority, as in
      Accel-Sim). A grant in cycle ``g`` drives ``read[b].valid`` and
      ``read[b].addr = {warp, reg}`` in cycle ``g``; the bank's data is sampled from
      ``read[b].data`` in cycle ``g+L`` (it bypasses to ``dispatch`` in that cycle) and the
      operand is ready from ``g+L+1``.
    - A CU whose valid operands are all ready or arriving (complete) can offer its
      instruction on ``dispatch``: in the cycle its last read's data arrives, or from the
      cycle after its allocation with no valid operand. The offer goes to the earliest
      allocated complete CU; an offer not taken is held, same CU, until ``dispatch.ready``
      (the stream rule; **interpretation**: an older CU completing meanwhile waits). The
      CU is freed on the accepting edge.
    - ``queue_len[b]`` is the number of pending requests to bank ``b`` at the start of
      the cycle, before this cycle's grant (0..``cus * operands``).
    - ``dispatch.payload.data[i]`` is zero for an operand that is not valid.

    Attributes
    ----------
    issue : In(stream.Signature(issue_layout))
        Issued instructions: ``payload.warp``, ``payload.operand[i].{valid, reg}``.
    dispatch : Out(stream.Signature(dispatch_layout))
        Collected instructions: ``payload.warp``, ``payload.valid`` (operand mask),
        ``payload.data[i]`` (operand ``i``'s warp register).
    read : Out(bank_read_signature).array(banks)
        Per bank: ``valid``, ``addr`` (``{warp, reg}``) out, ``data`` in.
    write : In(banks)
        Bit ``b``: a writeback uses bank ``b``'s port this cycle (no read is granted).
    queue_len : Out(queue_len_layout)
        Per bank: pending requests at the start of the cycle.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        cus, banks = config.cus, config.banks
        self.older = [[Signal(name=f"older_{i}_{j}") for j in range(cus)] for i in range(cus)]
        """``older[i][j]``: CU ``i`` was allocated before CU ``j`` (both busy)."""
        self.grants = [Signal(config.requests, name=f"grant_{b}") for b in range(banks)]
        """Per bank: the granted request this cycle, one-hot over ``cu * operands + i``."""
        self.selected = Signal(cus)
        """The CU offered on ``dispatch``, one-hot."""
        self.held = Signal(cus)
        """The CU offered but not taken in the previous cycle, one-hot."""
        self.buffered = Signal()
        """The issue register holds an instruction."""
        self.buffer = Signal(config.issue_layout)
        """The issue register's instruction."""
        self.free_now = Signal(cus)
        """Per CU: free at the start of the cycle or freed by this cycle's dispatch."""

    @functools.cached_property
    def units(self) -> list[CollectorUnit]:
        """The collector units, created on first use (elaboration or a formal harness)."""
        return [CollectorUnit(self.config) for _ in range(self.config.cus)]

    def elaborate(self, platform):
        m = Module()
        for index, unit in enumerate(self.units):
            m.submodules[f"cu{index}"] = unit
        self._allocation(m)
        self._age(m)
        for bank in range(self.config.banks):
            self._arbiter(m, bank)
        self._captures(m)
        self._dispatch(m)
        return m

    def _allocation(self, m):
        """The issue register's instruction goes to the lowest-numbered CU free after this
        cycle's dispatch; the register takes ``issue`` when it is empty after that."""
        free = self.free_now
        m.d.comb += free.eq(Cat(~unit.busy | unit.free for unit in self.units))
        for index, unit in enumerate(self.units):
            first_free = free[index] & ~free[:index].any() if index else free[index]
            m.d.comb += [
                unit.allocate.eq(self.buffered & first_free),
                unit.instr.eq(self.buffer),
            ]
        m.d.comb += self.issue.ready.eq(~self.buffered | free.any())
        with m.If(self.issue.ready):
            m.d.sync += [self.buffered.eq(self.issue.valid), self.buffer.eq(self.issue.payload)]

    def _age(self, m):
        """Pairwise allocation order: a CU allocated on an edge is younger than every other."""
        cus = self.config.cus
        for i in range(cus):
            for j in range(i + 1, cus):
                with m.If(self.units[j].allocate):
                    m.d.sync += self.older[i][j].eq(1)
                with m.If(self.units[i].allocate):
                    m.d.sync += self.older[i][j].eq(0)
                m.d.comb += self.older[j][i].eq(~self.older[i][j])

    def _written(self, bank):
        """A writeback uses ``bank``'s port this cycle (reads wait)."""
        return self.write[bank]

    def _requests_to(self, m, bank):
        """Per CU, per operand: a pending request to ``bank``."""
        wants = []
        for index, unit in enumerate(self.units):
            want = Signal(self.config.operands, name=f"want_{bank}_cu{index}")
            m.d.comb += want.eq(Cat(unit.pending[i] & unit.bank[i][bank]
                                    for i in range(self.config.operands)))
            wants.append(want)
        return wants

    def _arbiter(self, m, bank):
        """Grant the oldest CU's lowest pending operand to ``bank``; count the queue."""
        config = self.config
        wants = self._requests_to(m, bank)
        grants = []
        for c, want in enumerate(wants):
            beaten = [wants[o].any() & self.older[o][c] for o in range(config.cus) if o != c]
            wins = want.any() & ~self._written(bank)
            if beaten:
                wins &= ~Cat(beaten).any()
            first = [want[i] & ~want[:i].any() if i else want[i] for i in range(config.operands)]
            grants.append(Mux(wins, Cat(first), 0))
        grant = self.grants[bank]
        m.d.comb += [
            grant.eq(Cat(grants)),
            self.queue_len[bank].eq(sum(Cat(wants))),
        ]
        port = self.read[bank]
        m.d.comb += port.valid.eq(grant.any())
        addresses = []
        for c, unit in enumerate(self.units):
            for i in range(config.operands):
                hit = grant[c * config.operands + i]
                addresses.append(Mux(hit, Cat(unit.warp, unit.reg_id[i]), 0))
        m.d.comb += port.addr.eq(or_all(addresses))

    def _captures(self, m):
        """A granted request's data is captured ``read_latency`` cycles later."""
        config = self.config
        granted = Signal(config.requests)
        m.d.comb += granted.eq(or_all(self.grants))
        line = [Signal(config.requests, name=f"in_flight_{k}")
                for k in range(config.read_latency)]
        m.d.sync += line[0].eq(granted)
        for earlier, later in itertools.pairwise(line):
            m.d.sync += later.eq(earlier)
        for c, unit in enumerate(self.units):
            ops = slice(c * config.operands, (c + 1) * config.operands)
            m.d.comb += [unit.grant.eq(granted[ops]), unit.capture.eq(line[-1][ops])]
            for i in range(config.operands):
                m.d.comb += unit.capture_data[i].eq(or_all(
                    Mux(unit.bank[i][b], port.data.as_value(), 0)
                    for b, port in enumerate(self.read)))

    def _dispatch(self, m):
        """Offer the earliest allocated complete CU; free it when the offer is taken."""
        cus = self.config.cus
        complete = Cat(unit.complete for unit in self.units)
        oldest = Signal(cus)
        for c in range(cus):
            beaten = [complete[o] & self.older[o][c] for o in range(cus) if o != c]
            m.d.comb += oldest[c].eq(complete[c] & ~Cat(beaten).any() if beaten else complete[c])
        m.d.comb += self.selected.eq(Mux(self.held.any(), self.held, oldest))
        m.d.sync += self.held.eq(Mux(self.dispatch.ready, 0, self.selected))
        for c, unit in enumerate(self.units):
            m.d.comb += unit.free.eq(self.selected[c] & self.dispatch.ready)
        payload = self.dispatch.payload
        m.d.comb += [
            self.dispatch.valid.eq(complete.any()),
            payload.warp.eq(or_all(Mux(self.selected[c], unit.warp, 0)
                                   for c, unit in enumerate(self.units))),
            payload.valid.eq(or_all(Mux(self.selected[c], unit.valid, 0)
                                    for c, unit in enumerate(self.units))),
            payload.data.eq(or_all(Mux(self.selected[c], unit.data.as_value(), 0)
                                   for c, unit in enumerate(self.units))),
        ]

