"""Timing model of an SM partitioned into sub-cores, built from the golden sub-core blocks.

The SM (:class:`TimingSM`) admits thread blocks in order while warp slots, registers and
shared memory allow; a block has run functionally before it is admitted (in a cohort of
blocks run together, :func:`gpurf.sim.sm.batch.run_blocks`, recording every warp's instruction
stream and L1 requests) and its warps are then replayed cycle by cycle. Functional results therefore
never depend on timing, as in the trace-driven simulator the sub-core paper used
(Accel-Sim); the kernels do not communicate through memory between barriers.

Per cycle, per sub-core:

1. The golden :class:`~gpurf.golden.subcore.operand_collector.OperandCollector` decides this
   cycle's bank grants (a bank written back this cycle grants no read: writebacks have the
   bank's port first) and the collector unit (CU) it offers for dispatch; the offer is
   taken when the instruction's functional unit is free.
2. The scheduler picks one ready warp (not finished, not at a barrier, its registers --
   virtual, and its destinations' physical ones -- not pending in the scoreboard, no
   destination still to be read by an older instruction of the warp in the collector, no
   branch in flight), if the collector's issue register is
   free after this cycle's dispatch and allocation: GTO and RBA through
   the golden :func:`~gpurf.golden.subcore.warp_selector.select_warp` (RBA with scores from the
   golden :class:`~gpurf.golden.subcore.rba_scorer.RbaScorer`, fed this cycle's queue lengths),
   LRR and two-level (Narasiman et al., MICRO 2011: an active set of
   ``two_level_active`` warps, a warp leaving it on a global load or a barrier) here.
3. The collector takes the clock edge with the issue (:meth:`OperandCollector.advance`,
   the same state update its port model's ``step`` performs): dispatch, then reads, then
   the issue register's instruction into a free CU, as Accel-Sim orders a cycle.

Warps go to sub-cores through the golden
:class:`~gpurf.golden.subcore.subcore_assigner.SubcoreAssigner` (its table written with the
``rr``, ``srr`` or ``shuffle`` policy bytes of :mod:`gpurf.golden.subcore.assignment`), counting
warps since the kernel's launch. Registers map to banks through the register allocator
(:mod:`gpurf.sim.ptx.regalloc`): a 64-bit value is two 32-bit registers, read as two
requests (both queued, both in RBA scores); predicates are not register-file reads. A CU
holds ``operands`` 32-bit reads: an instruction with more (``add.s64`` of two 64-bit
registers reads 4) is read as its first ``operands`` (ptxas would split it into two 32-bit
instructions). A register the allocator did not place is an error.

At dispatch an instruction's completion is known: ALU results after the unit's latency,
memory requests queue for the L1, which serves one request per cycle in order (so their
service times and hits are computed at dispatch), a branch releases its warp, a barrier
arrival is counted, an exit retires the warp. A block's warp slots are freed when its last
warp has retired. Cycles in which no sub-core can act are skipped to the next event.

On the baseline SM (golden blocks, GTO, RBA or LRR, no mechanism) :meth:`TimingSM.run_blocks`
runs this loop compiled (:mod:`gpurf.sim.sm.timing_core`, the same decisions cycle by cycle);
the Python loop here is its reference and the fallback (``GPURF_SM_CORE=python``, or no g++).
"""

import bisect
import dataclasses
import heapq
import itertools
import time
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from functools import cache

import numpy as np

from gpurf.golden.subcore.assignment import shuffle_table, srr_table
from gpurf.golden.subcore.operand_collector import OperandCollector, Unit, bank_of
from gpurf.golden.subcore.rba_scorer import RbaScorer
from gpurf.golden.subcore.warp_selector import pick_warp
from gpurf.hw.subcore.subcore_assigner import MODE_HASHED, MODE_ROUND_ROBIN
from gpurf.sim.ptx.regalloc import allocate_registers

from . import timing_core
from .batch import COHORT
from .blocks import GOLDEN, GoldenBlocks
from .config import SMConfig
from .program import ALU, BAR, BRA, EXIT, Program
from .recording import run_cohort
from .stats import STALLS, TimingStats
from .timing_core import POLICIES, CompiledCore
from .values import value_check
from .warp import ExecutionError

__all__ = ["UNITS", "TimingSM"]

INF = float("inf")
UNITS = ("int", "fp32", "sfu", "mem", "branch")
INT, FP32, SFU, MEM, BRANCH = range(len(UNITS))


def unit_of(ins) -> int:
    """The functional unit class of an instruction."""
    if ins.base in ("ld", "st", "atom", "red"):
        return MEM
    if ins.base in ("bra", "ret", "exit", "bar"):
        return BRANCH
    types = [m for m in ins.mods if m[:1] in "fubs" and m[1:].isdigit()]
    if ins.base in ("div", "rem", "sqrt", "rcp", "rsqrt", "ex2", "lg2", "sin", "cos", "tanh") \
            or "f64" in types:
        return SFU
    return FP32 if any(t in ("f32", "f16") for t in types) else INT


@dataclass(frozen=True)
class StaticInfo:
    """Per instruction of a program: what the timing model needs, computed once."""

    unit: tuple
    kind: tuple
    space: tuple
    needs: tuple
    """Scoreboard keys that must not be pending to issue: register slots (sources, guard,
    destinations) and the destinations' physical registers (:func:`_register_keys`)."""
    dests: tuple
    """Scoreboard keys an instruction writes (slots and physical registers, as ``needs``)."""
    reads: tuple
    """Physical 32-bit registers read from the register file (a 64-bit source: both of its
    registers; predicates excluded)."""
    long_latency: tuple
    registers: int
    writes: tuple = ()
    """Physical 32-bit registers an instruction writes back (predicates excluded)."""
    records: tuple = ()
    """The instruction has an L1 request record in a warp's trace (memory, not ``param``)."""
    issue: tuple = ()
    """Per instruction: ``{operand index: register}`` of its reads as the collector takes
    them (capped at the configured operands by :meth:`TimingSM.__init__`)."""


def _physical(kernel, alloc, ins, names) -> tuple:
    """The physical 32-bit registers of register operands ``names`` of ``ins`` (two per
    64-bit register, none for a predicate), each once, in operand order."""
    phys = []
    for name in names:
        width = kernel.regs[name].width
        if width == 1:
            continue
        first = alloc.physical.get(name)
        if first is None:
            raise ExecutionError(f"{kernel.file}: line {ins.line}: register {name} of "
                                 f"'{ins.base}' has no physical register (the register "
                                 "allocator did not place it)")
        phys.extend((first, first + 1) if width == 64 else (first,))
    return tuple(dict.fromkeys(phys))


@cache
def static_info(program: Program) -> StaticInfo:
    kernel, slots = program.kernel, program.slots
    alloc = allocate_registers(kernel)
    unit, needs, dests, reads, writes, space, long = [], [], [], [], [], [], []
    for ins in program.code:
        unit.append(unit_of(ins))
        physical = _register_keys(alloc, ins.dests, len(slots))
        needs.append((*(slots[n] for n in dict.fromkeys((*ins.sources, *ins.dests))),
                      *physical))
        dests.append((*(slots[n] for n in ins.dests), *physical))
        reads.append(_physical(kernel, alloc, ins, ins.sources))
        writes.append(_physical(kernel, alloc, ins, ins.dests))
        space.append(ins.space)
        long.append(ins.base == "ld" and ins.space == "global")
    records = tuple(u == MEM and sp != "param" for u, sp in zip(unit, space, strict=True))
    return StaticInfo(tuple(unit), tuple(program.kinds), tuple(space), tuple(needs),
                      tuple(dests), tuple(reads), tuple(long), alloc.registers, tuple(writes),
                      records)


def _register_keys(alloc, names, base: int) -> tuple[int, ...]:
    """Scoreboard keys of the physical registers of ``names`` (``base`` + register; the
    predicate file after the 4,096 32-bit registers the allocator may use).

    The scoreboard tracks virtual registers, but the allocator puts values whose lives do
    not overlap in one physical register: an instruction also waits for the pending writes
    of its destinations' physical registers, or a long-latency write of a value never read
    (an atomic's unused old value) could land after a younger value's write."""
    keys = []
    for name in names:
        first = alloc.physical.get(name)
        if first is None:
            continue
        units = alloc.units[name]
        offset = base + (4096 if units == 0 else 0)
        keys.extend(offset + r for r in range(first, first + max(1, units)))
    return tuple(keys)


class _Warp:
    """A warp being replayed: its trace, position, scoreboard and state."""

    __slots__ = ("at_bar", "block", "done_at", "hold", "index", "pcs", "pending", "pos",
                 "reading", "requests", "rpos", "slot", "sub", "values", "wake")

    def __init__(self, block, index, trace):
        self.block = block
        self.index = index
        self.pcs = trace.pcs
        self.requests = trace.requests
        self.values = trace.values
        self.pos = 0
        self.rpos = 0
        self.pending = {}
        """Scoreboard key (register slot or physical register, :attr:`StaticInfo.needs`) ->
        cycle its pending write completes (INF: not yet known)."""
        self.reading = {}
        """Physical register -> reads of it issued and not yet made (write-after-read)."""
        self.hold = 0
        """Cycle a branch or barrier in flight releases the warp (INF: not yet known)."""
        self.wake = 0
        """Earliest cycle the next instruction may issue (INF: finished or blocked)."""
        self.done_at = None
        self.at_bar = False
        self.slot = self.sub = None

    def update_wake(self, needs):
        if self.pos >= len(self.pcs):
            self.wake = INF
            return
        t = self.hold
        pending = self.pending
        if pending and t != INF:
            for s in needs[self.pcs[self.pos]]:
                r = pending.get(s, 0)
                if r > t:
                    t = r
        self.wake = t
        sub = self.sub
        if sub is not None and t < sub.soonest:
            sub.soonest = t


def _slot_of(warp: _Warp) -> int:
    return warp.slot


def _unread(warp: _Warp, regs) -> None:
    """Reads of ``regs`` by ``warp`` are made (:meth:`_SubCore._ready`)."""
    reading = warp.reading
    for reg in regs:
        left = reading[reg] - 1
        if left:
            reading[reg] = left
        else:
            del reading[reg]


class _Block:
    __slots__ = ("arrived", "exited", "id", "last", "live", "warps")

    def __init__(self, block_id, warps):
        self.id = block_id
        self.warps = warps
        self.live = len(warps)
        """Warps that have not dispatched their exit."""
        self.arrived = []
        self.exited = 0
        self.last = 0


class _L1:
    """The SM's L1: LRU sets of 128-byte lines, one request per cycle in FIFO order."""

    def __init__(self, config: SMConfig):
        lines = config.l1_bytes // 128
        self.ways = config.l1_ways
        self.sets = [OrderedDict() for _ in range(max(1, lines // config.l1_ways))]
        self.enabled = lines > 0
        self.free = 0
        self.hits = self.misses = self.requests = self.wait = 0

    def serve(self, now: int) -> int:
        """The cycle the next request is served (one per cycle, after ``now``)."""
        t = max(now + 1, self.free)
        self.wait += t - now - 1
        self.free = t + 1
        self.requests += 1
        return t

    def lookup(self, line: int, allocate: bool) -> bool:
        if not self.enabled:
            self.misses += 1
            return False
        entries = self.sets[line % len(self.sets)]
        if line in entries:
            entries.move_to_end(line)
            self.hits += 1
            return True
        self.misses += 1
        if allocate:
            entries[line] = True
            if len(entries) > self.ways:
                entries.popitem(last=False)
        return False


class _SubCore:
    """One sub-core: warp slots, scheduler state, the golden collector (and scorer)."""

    def __init__(self, sm: "TimingSM", index: int):
        config = sm.config
        self.sm = sm
        self.index = index
        self.slots: list[_Warp | None] = [None] * config.slots
        self.order: list[int] = []
        self.age: list[int] = [0] * config.slots
        self.policy = config.scheduler
        self.picks = config.scheduler in ("gto", "rba")
        """The golden :func:`pick_warp` chooses the warp (else :meth:`_select`)."""
        self.rba_greedy = config.rba_greedy
        self.score_latency = config.score_latency
        self.ops_table: list = [None] * (len(sm.program.code) * config.slots)
        """Per ``pc * slots + slot``: the scorer's ``(valid, bank)`` operand list."""
        self.no_ops = [(0, 0)] * config.operands
        self.slot_ops: list = [self.no_ops] * config.slots
        """Per slot, the ``(valid, bank)`` operands of its warp's next instruction (replaced,
        never changed in place: the scorer keeps the list it saw a cycle)."""
        self.live: list[_Warp] = []
        """Warps in slots that have instructions left to issue, by slot (so the ready
        slots reach :func:`pick_warp` in ascending order)."""
        blocks = sm.blocks
        self.oc = blocks.collector(config, index)
        self.scorer = blocks.scorer(config, index) if config.scheduler == "rba" else None
        self.pick_warp = blocks.selector(config, index) if self.picks else None
        self.gto = config.scheduler == "gto"
        self.spares: list[Unit] = []
        """Collector units dispatched by :meth:`fast_cycle`, reused by its allocations (no
        one else holds them)."""
        self.allocations = [None] * (len(sm.program.code) * config.slots)
        """Per ``pc * slots + slot``: the collector's operands and queue posts of the
        instruction (:meth:`fast_cycle`; the operands shared: no data is carried)."""
        if (sm.fast and type(blocks) is GoldenBlocks and type(self.oc) is OperandCollector
                and (self.policy == "lrr" or (self.picks and self.pick_warp is pick_warp
                     and type(self.scorer) in (type(None), RbaScorer)))):
            self.cycle = self.fast_cycle
        self.lag = 0
        """Cycles the scorer has not seen (idle collector, constant inputs)."""
        self.soonest = 0
        """A lower bound of the wake cycles of the warps in slots: no warp is ready before
        it (every lowered wake lowers it; :meth:`_gto_pick` raises it when it finds none)."""
        info = sm.info
        self.unit_of, self.kinds, self.reads_of = info.unit, info.kind, info.reads
        self.dests_of, self.needs_of, self.records_of = info.dests, info.needs, info.records
        self.slot_count = config.slots
        self.read_latency = config.read_latency
        self.values = sm.values
        self.issue_regs = sm.issue_regs
        self.writes: dict[int, int] = {}
        """Cycle -> mask of the banks a writeback uses in it (known at dispatch)."""
        self.write_banks: dict[int, int] = {}
        """``pc * slots + slot`` -> mask of the banks instruction ``pc`` writes back."""
        self.unit_free = [0] * len(UNITS)
        self.interval = [-(-32 // w) for w in (config.int_width, config.fp32_width,
                                              config.sfu_width, config.lsu_width, 32)]
        self.alu_after = [sm.latency[unit] + stage if kind == ALU and unit != MEM else None
                          for unit, kind, stage in zip(self.unit_of, self.kinds, sm.stages,
                                                       strict=True)]
        """Per instruction: cycles from dispatch to completion of an ALU-kind instruction
        that is not a memory one (:meth:`_fast_dispatch`), else ``None``."""
        self.stages = sm.stages
        self.uncollected = sm.uncollected
        self.greedy = None
        self.last = -1
        self.active: list[int] = []
        self.issued = 0
        self.stalls = dict.fromkeys(STALLS, 0)
        self.reason = "no_warp"
        self.conflicts = 0
        self.reads = 0
        self.dispatch_stalls = 0

    # -- slots -------------------------------------------------------------------------
    def place(self, warp: _Warp, slot: int) -> None:
        self.catch_up()
        warp.slot, warp.sub = slot, self
        self.slots[slot] = warp
        self.order.append(slot)
        bisect.insort(self.live, warp, key=_slot_of)
        self._ages()
        self._refresh(slot)

    def free(self, warp: _Warp) -> None:
        self.catch_up()
        self.slots[warp.slot] = None
        self.order.remove(warp.slot)
        if warp.slot in self.active:
            self.active.remove(warp.slot)
        self._ages()
        self._refresh(warp.slot)

    def _ages(self):
        """Ages of the occupied slots: rank in assignment order, larger = older."""
        n = len(self.order)
        for k, slot in enumerate(self.order):
            self.age[slot] = n - 1 - k

    # -- RBA scores --------------------------------------------------------------------
    def _operands(self, warp: _Warp | None):
        """``(valid, bank)`` of the next instruction's register operands, as the scorer
        sees a slot."""
        if warp is None or warp.pos >= len(warp.pcs):
            return self.no_ops
        pc = warp.pcs[warp.pos]
        key = pc * self.slot_count + warp.slot
        ops = self.ops_table[key]
        if ops is None:
            config = self.sm.config
            ops = list(self.no_ops)
            for k, reg in enumerate(self.sm.info.reads[pc][:config.operands]):
                ops[k] = (1, bank_of(reg, warp.slot, banks=config.banks,
                                     bank_map=config.bank_map))
            self.ops_table[key] = ops
        return ops

    def _refresh(self, slot: int) -> None:
        """Keep :attr:`slot_ops` (the scorer's view of ``slot``) after its warp or the
        warp's position changed."""
        if self.scorer is not None:
            ops = self._operands(self.slots[slot])
            if ops is not self.slot_ops[slot]:
                slot_ops = self.slot_ops.copy()
                slot_ops[slot] = ops
                self.slot_ops = slot_ops

    def _scores(self, queue_len):
        # A copy: the scorer keeps the list a cycle (score_latency) while slots change.
        return self.scorer.advance(list(self.slot_ops), queue_len, lazy=True)

    def catch_up(self) -> None:
        """Feed the scorer the idle cycles it missed (zero queues, unchanged slots)."""
        if self.scorer is not None and self.lag:
            zeros = [0] * self.sm.config.banks
            for _ in range(min(self.lag, self.sm.config.score_latency + 1)):
                self._scores(zeros)
        self.lag = 0

    # -- one cycle ---------------------------------------------------------------------
    def _stall(self, now: int) -> bool:
        """A cycle the sub-core cannot use: its writebacks dropped, the scorer one more cycle
        behind, the stall's reason counted; ``False``."""
        self.writes.pop(now, None)
        self.lag += 1
        self.reason = reason = self._stall_reason()
        self.stalls[reason] += 1
        return False

    def cycle(self, now: int) -> bool:
        """Run cycle ``now``; ``False`` if the sub-core could do nothing (state unchanged)."""
        oc = self.oc
        ready = None
        if oc.idle:
            ready = self._ready(now)
            if not ready:
                return self._stall(now)
        if self.lag:
            self.catch_up()
        grants = oc.grants(self.writes.pop(now, 0) if self.writes else 0)
        offer = oc.offer()
        if grants and self.values is not None:
            self.values.read(self, grants, now)
        if grants:
            self._read(grants)
            granted = len(grants)
            self.reads += granted
            self.conflicts += oc.queued - granted
        dispatched = None
        if offer is not None:
            dispatched = oc.units[offer].tag
            if self.unit_free[self.unit_of[dispatched[1]]] > now:
                dispatched = None
                self.dispatch_stalls += 1
        scores = self._scores(oc.queue_lengths()) if self.scorer is not None else None
        accepts = oc.accepts(dispatched is not None)
        if accepts and ready is None:
            ready = self._ready(now)
        if accepts and ready and self.sm.power is not None:
            ready = self.sm.power.ready(self, ready, now)
        if accepts and ready:
            if self.picks:
                chosen = self.slots[self.pick_warp(ready, self.age, scores,
                                                   policy=self.policy, greedy=self.greedy,
                                                   rba_greedy=self.rba_greedy)]
            else:
                chosen = self.slots[self._select(ready)]
            pc, pos = chosen.pcs[chosen.pos], chosen.pos
            reused = self.sm.reuses(chosen, pc, now)
            oc.advance(grants, offer, dispatched is not None, None if reused else
                       (chosen.slot, self.issue_regs[pc], (chosen, pc, chosen.rpos, pos)))
        else:
            chosen = None
            oc.advance(grants, offer, dispatched is not None, None)
        if dispatched is not None:
            done = self.sm.dispatch(self, *dispatched[:3], now)
            if self.sm.uncollected[dispatched[1]]:
                _unread(dispatched[0], self.sm.uncollected[dispatched[1]])
            if self.values is not None:
                self.values.dispatch(dispatched[0], dispatched[1], dispatched[3], now, done)
        if chosen is not None:
            self._issued(chosen, pc)
            if self.sm.power is not None:
                self.sm.power.issued(self, chosen, pc, now)
            if reused:
                self.sm.reuse(chosen, pc, pos, now)
        else:
            if ready is None:
                ready = bool(self._ready(now))
            self.reason = reason = "collector_full" if ready else self._stall_reason()
            self.stalls[reason] += 1
        return True

    def fast_cycle(self, now: int) -> bool:
        """:meth:`cycle` for the golden blocks without mechanism hooks: the same decisions
        and state updates (the collector's :meth:`~OperandCollector.grants`,
        :meth:`~OperandCollector.offer`, :meth:`~OperandCollector.accepts` and
        :meth:`~OperandCollector.advance`, the golden :func:`pick_warp` or LRR's
        :meth:`_select`, the SM's :meth:`TimingSM.dispatch` of an ALU instruction and
        :meth:`_issued`) computed inline, with the GTO warp found without listing every ready
        warp (:meth:`_gto_pick`). Under LRR or RBA, register power states
        (:class:`gpurf.sim.sm.power.RegisterPower`) filter the ready warps and are told of
        every issue and dispatch where :meth:`cycle` does so. ``tests/test_timing_fast.py``
        and ``tests/test_greener_sm_fast.py`` check it against :meth:`cycle` cycle by
        cycle."""
        oc = self.oc
        order = oc.order
        buffer = oc.buffer
        gto = self.gto
        power = self.sm.power
        if not order and buffer is None:
            if gto:
                chosen = None if now < self.soonest else self._gto_pick(now)
                if chosen is None:
                    return self._stall(now)
            elif not self._fast_ready(now):
                return self._stall(now)
        elif gto:
            chosen = False
        if self.lag:
            self.catch_up()
        units = oc.units
        writes = self.writes
        writes = writes.pop(now, 0) if writes else 0
        offer = oc.held
        cycle = oc.cycle
        if offer is None:
            for c in order:
                unit = units[c]
                if not unit.waiting and unit.ready_at <= cycle:
                    offer = c
                    break
        if self.scorer is not None:
            basis = self._score_basis(list(map(len, oc.queues)))
        if oc.queued:  # :meth:`OperandCollector._grant` and :meth:`_read`, inline
            due = cycle + self.read_latency
            granted = 0
            for bank, queue in enumerate(oc.queues):
                if queue and not writes >> bank & 1:
                    cu, index = queue.popleft()
                    unit = units[cu]
                    unit.waiting -= 1
                    unit.ready_at = due
                    granted += 1
                    reading = unit.tag[0].reading
                    reg = unit.operands[index].reg
                    left = reading[reg] - 1
                    if left:
                        reading[reg] = left
                    else:
                        del reading[reg]
            if granted:
                oc.queued -= granted
                self.reads += granted
                self.conflicts += oc.queued
        dispatched = None
        if offer is not None:
            dispatched = units[offer].tag
            if self.unit_free[self.unit_of[dispatched[1]]] > now:
                dispatched = None
                self.dispatch_stalls += 1
        accepts = buffer is None or dispatched is not None or None in units
        if not accepts:
            chosen = None
        elif not gto:
            ready = self._fast_ready(now)
            if ready and power is not None:
                ready = power.ready(self, ready, now)
            chosen = (self._fast_pick(ready, basis) if self.scorer is not None
                      else self._lrr_pick(ready))
        elif chosen is False:
            chosen = None if now < self.soonest else self._gto_pick(now)
        if dispatched is not None:
            self.spares.append(units[offer])
            units[offer] = None
            order.remove(offer)
            oc.held = None
        else:
            oc.held = offer
        if buffer is not None and None in units:  # :meth:`OperandCollector._allocate`, inline
            cu = units.index(None)
            slot, _, tag = buffer
            key = tag[1] * self.slot_count + slot
            entry = self.allocations[key]
            if entry is None:
                entry = self.allocations[key] = oc._operands(slot, buffer[1])
            operands, posts = entry
            queues = oc.queues
            for bank, index in posts:
                queues[bank].append((cu, index))
            spares = self.spares
            if spares:
                unit = units[cu] = spares.pop()
                unit.warp, unit.operands, unit.waiting, unit.ready_at, unit.tag = (
                    slot, operands, len(posts), 0, tag)
            else:
                units[cu] = Unit(slot, operands, len(posts), 0, tag)
            oc.queued += len(posts)
            order.append(cu)
            oc.buffer = None
        if chosen is not None:
            pc = chosen.pcs[chosen.pos]
            oc.buffer = (chosen.slot, self.issue_regs[pc], (chosen, pc, chosen.rpos, chosen.pos))
        oc.cycle = cycle + 1
        if dispatched is not None:
            self._fast_dispatch(dispatched, now)
        if chosen is not None:
            self._fast_issued(chosen, pc)
            if power is not None:
                power.issued(self, chosen, pc, now)
        else:
            # As :meth:`cycle`: readiness after this cycle's dispatch unless it was checked
            ready = not accepts and (
                (now >= self.soonest and self._gto_pick(now) is not None) if gto
                else self._any_ready(now))
            self.reason = reason = "collector_full" if ready else self._stall_reason()
            self.stalls[reason] += 1
        return True

    def _fast_dispatch(self, dispatched, now: int) -> None:
        """:meth:`TimingSM.dispatch` (and the reads beyond the collector's operands), with the
        completion, scoreboard, writeback and wake-up of an instruction that is not a branch,
        barrier or exit inline (without register power states: they hook the dispatch)."""
        warp, pc = dispatched[0], dispatched[1]
        sm = self.sm
        after = self.alu_after[pc]
        if sm.power is not None or (after is None and self.kinds[pc] != ALU):
            sm.dispatch(self, warp, pc, dispatched[2], now)
        else:
            unit = self.unit_of[pc]
            self.unit_free[unit] = now + self.interval[unit]
            done = (now + after if after is not None
                    else sm._memory(warp, pc, dispatched[2], now) + self.stages[pc])
            pending = warp.pending
            # A finite wake saw no pending write of its needs; if every destination was
            # pending until now (:meth:`_fast_issued`), none is a need: the wake holds.
            stale = warp.wake == INF
            for d in self.dests_of[pc]:
                if pending.get(d) != INF:
                    stale = True
                pending[d] = done
            mask = self.write_banks.get(pc * self.slot_count + warp.slot)
            if mask is None:
                self.write_back(warp, pc, done)
            elif mask:
                writes = self.writes
                writes[done] = writes.get(done, 0) | mask
            if warp.done_at is not None and pending:
                sm._retire_warp(warp)
            if not stale:
                pass
            elif warp.pos >= len(warp.pcs):
                warp.wake = INF
            else:
                t = warp.hold
                if t != INF:
                    for key in self.needs_of[warp.pcs[warp.pos]]:
                        r = pending.get(key, 0)
                        if r > t:
                            t = r
                warp.wake = t
                if t < self.soonest:
                    self.soonest = t
        uncollected = self.uncollected[pc]
        if uncollected:
            _unread(warp, uncollected)

    def _fast_issued(self, warp: _Warp, pc: int) -> None:
        """:meth:`_issued` under GTO or RBA (no active set to keep)."""
        reading = warp.reading
        for reg in self.reads_of[pc]:
            reading[reg] = reading.get(reg, 0) + 1
        self.issued += 1
        self.greedy = self.last = warp.slot
        pos = warp.pos = warp.pos + 1
        if self.records_of[pc]:
            warp.rpos += 1
        if self.scorer is not None:
            self._refresh(warp.slot)
        pending = warp.pending
        for d in self.dests_of[pc]:
            pending[d] = INF
        kind = self.kinds[pc]
        if kind != ALU:
            warp.hold = INF
            warp.at_bar = kind == BAR
        if pos >= len(warp.pcs):
            self.live.remove(warp)
            warp.wake = INF
        elif kind != ALU:
            warp.wake = INF  # held until the branch or barrier completes (at dispatch)
        else:
            t = warp.hold
            if t != INF:
                for key in self.needs_of[warp.pcs[pos]]:
                    r = pending.get(key, 0)
                    if r > t:
                        t = r
            warp.wake = t
            if t < self.soonest:
                self.soonest = t

    def _score_basis(self, queue_len):
        """:meth:`RbaScorer.advance` without :class:`LazyScores`: the scorer's clock edge,
        returning the slot operands and queue lengths this cycle's scores are of."""
        scorer = self.scorer
        if not self.score_latency:
            return self.slot_ops, queue_len
        basis = (scorer._previous, scorer._queues[0])
        scorer._queues.append(queue_len)
        scorer._previous = self.slot_ops  # never changed in place (:meth:`_refresh`)
        return basis

    def _fast_pick(self, ready: list[int], basis) -> _Warp | None:
        """The warp RBA issues from the ``ready`` slots (``basis``: from
        :meth:`_score_basis`)."""
        if not ready:
            return None
        if len(ready) == 1:
            return self.slots[ready[0]]
        if self.rba_greedy and self.greedy in ready:
            return self.slots[self.greedy]
        return self.slots[self._rba_pick(ready, *basis)]

    def _lrr_pick(self, ready: list[int]) -> _Warp | None:
        """:meth:`_select` under LRR: the first ready slot after the last to issue, wrapping
        round (``ready`` is in ascending slot order, as :attr:`live`)."""
        if not ready:
            return None
        last = self.last
        for slot in ready:
            if slot > last:
                return self.slots[slot]
        return self.slots[ready[0]]

    def _rba_pick(self, ready, slot_ops, queue_len) -> int:
        """:func:`pick_warp` under RBA: the ready slot with the lowest score
        (:func:`~gpurf.golden.subcore.rba_scorer.rba_score`), ties to the oldest."""
        age, score_max, banks = self.age, self.scorer._score_max, len(queue_len)
        best, best_total, best_age = None, INF, -1
        for slot in ready:
            total = 0
            if slot_ops is not None:
                for valid, bank in slot_ops[slot]:
                    if valid and bank < banks:
                        total += queue_len[bank]
            if total > score_max:
                total = score_max
            # Lowest score, ties to the oldest (occupied slots' ages differ).
            if total < best_total or (total == best_total and age[slot] > best_age):
                best, best_total, best_age = slot, total, age[slot]
        return best

    def _gto_pick(self, now: int) -> _Warp | None:
        """The warp :func:`pick_warp` chooses under GTO in cycle ``now``: the greedy slot's
        warp if ready, else the oldest ready warp (assignment order: :attr:`order`); none
        before :attr:`soonest`."""
        if now < self.soonest:
            return None
        slots, writes = self.slots, self.sm.overwrites
        if self.greedy is not None:
            w = slots[self.greedy]
            if w is not None and w.wake <= now and not (
                    w.reading and not w.reading.keys().isdisjoint(writes[w.pcs[w.pos]])):
                return w
        soonest = INF
        for slot in self.order:
            w = slots[slot]
            wake = w.wake
            if wake <= now:
                if not (w.reading and not w.reading.keys().isdisjoint(writes[w.pcs[w.pos]])):
                    return w
                soonest = now  # waits for a read of this sub-core's collector only
            elif wake < soonest:
                soonest = wake
        self.soonest = soonest
        return None

    def _fast_ready(self, now: int) -> list[int]:
        """:meth:`_ready`, none before :attr:`soonest` (raised when none is ready)."""
        if now < self.soonest:
            return []
        ready = self._ready(now)
        if not ready:
            soonest = INF
            for w in self.live:
                if w.wake <= now:  # waits for a read of this sub-core's collector only
                    return ready
                soonest = min(soonest, w.wake)
            self.soonest = soonest
        return ready

    def _any_ready(self, now: int) -> bool:
        """Whether :meth:`_ready` lists a warp in cycle ``now`` (stops at the first; leaves
        :attr:`soonest`, a lower bound, as it is)."""
        if now < self.soonest:
            return False
        writes = self.sm.overwrites
        for w in self.live:
            if w.wake <= now and not (
                    w.reading and not w.reading.keys().isdisjoint(writes[w.pcs[w.pos]])):
                return True
        return False

    def _ready(self, now: int) -> list[int]:
        """Slots of the warps that may issue in cycle ``now``: scoreboard clear, and no
        register the next instruction writes still to be read by an older instruction of
        the warp (the collector may dispatch a younger instruction first, so its write
        could overtake the older read: write-after-read)."""
        writes = self.sm.overwrites
        return [w.slot for w in self.live if w.wake <= now
                and not (w.reading and not w.reading.keys().isdisjoint(writes[w.pcs[w.pos]]))]

    def _read(self, grants) -> None:
        """The reads granted this cycle are made (see :meth:`_ready`)."""
        units = self.oc.units
        for cu, index in grants.values():
            unit = units[cu]
            reading = unit.tag[0].reading
            reg = unit.operands[index].reg
            left = reading[reg] - 1
            if left:
                reading[reg] = left
            else:
                del reading[reg]

    def write_back(self, warp: _Warp, pc: int, when: int) -> None:
        """Instruction ``pc`` of ``warp`` writes its registers back in cycle ``when``: their
        banks grant no read then (several writes to one bank in a cycle count once)."""
        key = pc * len(self.slots) + warp.slot
        mask = self.write_banks.get(key)
        if mask is None:
            config = self.sm.config
            mask = 0
            for reg in self.sm.info.writes[pc]:
                mask |= 1 << bank_of(reg, warp.slot, banks=config.banks,
                                     bank_map=config.bank_map)
            self.write_banks[key] = mask
        if mask:
            self.writes[when] = self.writes.get(when, 0) | mask

    def forget_writes(self, before: int) -> None:
        """Drop the writebacks of cycles before ``before`` (skipped: the collector was idle)."""
        if self.writes:
            self.writes = {c: m for c, m in self.writes.items() if c >= before}

    def _stall_reason(self) -> str:
        if not self.live:
            return "no_warp"
        if all(w.at_bar for w in self.live):
            return "barrier"
        return "scoreboard"

    def _issued(self, warp: _Warp, pc: int) -> None:
        info = self.sm.info
        reading = warp.reading
        for reg in info.reads[pc]:
            reading[reg] = reading.get(reg, 0) + 1
        self.issued += 1
        self.greedy = self.last = warp.slot
        warp.pos += 1
        if info.records[pc]:
            warp.rpos += 1
        if self.scorer is not None:
            self._refresh(warp.slot)
        pending = warp.pending
        for d in info.dests[pc]:
            pending[d] = INF
        kind = info.kind[pc]
        if kind != ALU:
            warp.hold = INF
            warp.at_bar = kind == BAR
        finished = warp.pos >= len(warp.pcs)
        if finished:
            self.live.remove(warp)
            warp.wake = INF
        elif kind != ALU:
            warp.wake = INF  # held until the branch or barrier completes (at dispatch)
        else:
            t = warp.hold
            if t != INF:
                for key in info.needs[warp.pcs[warp.pos]]:
                    r = pending.get(key, 0)
                    if r > t:
                        t = r
            warp.wake = t  # :meth:`_Warp.update_wake`, inlined
            if t < self.soonest:
                self.soonest = t
        if (self.policy == "two_level" and (info.long_latency[pc] or kind == BAR or finished)
                and warp.slot in self.active):
            self.active.remove(warp.slot)

    # -- schedulers --------------------------------------------------------------------
    def _select(self, ready: list[int]) -> int:
        """The slot LRR or two-level issues from among the ``ready`` slots (GTO and RBA go
        to the golden :func:`pick_warp`)."""
        if self.policy == "two_level":
            self._fill_active()
            ready = [slot for slot in ready if slot in self.active] or ready
        n, last = len(self.slots), self.last
        return min(ready, key=lambda slot: (slot - last - 1) % n)

    def _fill_active(self):
        size = self.sm.config.two_level_active
        if len(self.active) >= size:
            return
        for slot in self.order:
            w = self.slots[slot]
            if slot not in self.active and w in self.live and w.hold != INF:
                self.active.append(slot)
                if len(self.active) >= size:
                    return


@dataclass
class _Run:
    blocks: object
    """Iterator over the block ids still to admit."""
    total: int
    on_block: object = None
    admitted: int = 0
    done: int = 0
    ready: deque = field(default_factory=deque)
    """Blocks run functionally and not yet admitted, with their traces."""
    events: list = field(default_factory=list)


class TimingSM:
    """An SM running the blocks of one launch of ``program`` (see the module docstring).

    Parameters
    ----------
    program : Program
    config : SMConfig
    make_block : callable
        ``make_block(block_id) -> ThreadBlock`` (shares the launch's global memory).
    cohort : int
        Blocks run functionally together (:func:`gpurf.sim.sm.batch.run_blocks`) when the next
        block to admit has not run yet.
    values : bool or RegisterStorage
        Carry register values through timing and check every register access
        (:mod:`gpurf.sim.sm.values`; ``True``: a plain register file).
    power : callable, optional
        ``power(sm)`` returns the register power states riding on this SM
        (:class:`gpurf.sim.sm.power.RegisterPower`: consulted at issue, told of issues and
        dispatches).
    registers : int, optional
        Registers per thread that admission counts (default: the allocator's); a
        compressed register file's (:mod:`gpurf.sim.sm.compression`).
    stages : sequence of int, optional
        Per instruction, cycles a mechanism's added pipeline stages add to its completion
        (:mod:`gpurf.sim.sm.compression`).
    overwrites : sequence of sets, optional
        Per instruction, the registers whose pending reads it must not overtake (default:
        those it writes; a compressed file's writes also overwrite the slices of others).
    needs : sequence of tuples, optional
        Per instruction, the register slots whose pending writes it waits for (default:
        its sources, guard and destinations).
    blocks : GoldenBlocks, optional
        Factory of the sub-core blocks the SM consults (:mod:`gpurf.sim.sm.blocks`;
        default: the golden models).
    functional : callable, optional
        ``functional(block_ids) -> [(RecordedBlock, traces)]``: the blocks of a cohort run
        functionally (default: :func:`gpurf.sim.sm.recording.run_cohort` with
        ``make_block``; a :class:`~gpurf.sim.sm.recording.LaunchRecording` records or
        replays them).
    fast : bool
        Run the sub-cores' inlined cycle (:meth:`_SubCore.fast_cycle`) when the blocks are
        the golden ones, the scheduler is GTO, RBA or LRR, and no mechanism hooks in but
        register power states under LRR or RBA (``False``: always :meth:`_SubCore.cycle`,
        the blocks' methods called one by one).
    core : str, optional
        Which timing loop runs (:mod:`gpurf.sim.sm.timing_core`): ``"auto"`` (the compiled
        core when it covers the SM: the fast cycle under GTO, RBA or LRR, no mechanism; else
        the Python path), ``"python"`` or ``"compiled"`` (an error where it cannot run).
        Default: ``$GPURF_SM_CORE``, else ``"auto"``.
    """

    def __init__(self, program: Program, config: SMConfig, make_block, *,
                 cohort: int = COHORT, values=False, power=None, registers=None,
                 stages=None, overwrites=None, needs=None, blocks=GOLDEN,
                 functional=None, fast=True, core=None):
        self.cohort = cohort
        self.blocks = blocks
        self.program = program
        self.config = config
        self.info = static_info(program)
        if needs is not None:
            self.info = dataclasses.replace(self.info, needs=tuple(needs))
        self.registers = self.info.registers if registers is None else registers
        self.stages = list(stages) if stages is not None else [0] * len(program.code)
        self.overwrites = self.info.writes if overwrites is None else overwrites
        self.issue_regs = [dict(enumerate(reads[:config.operands]))
                           for reads in self.info.reads]
        self.uncollected = [tuple(r for r in reads if r not in regs.values())
                            for reads, regs in zip(self.info.reads, self.issue_regs,
                                                   strict=True)]
        """Per instruction, the registers it reads beyond the collector's operands (made at
        dispatch)."""
        self.values = value_check(program, values, self.issue_regs)
        self.reuser = getattr(values, "issue", None)
        """A reuse mechanism's issue hook (:meth:`gpurf.sim.sm.wir.WirStorage.issue`)."""
        self.functional = functional or (
            lambda ids: run_cohort(make_block, ids, values=self.values is not None))
        hooked = (self.values is not None or self.reuser is not None
                  or (power is not None and config.scheduler == "gto"))
        self.fast = False if hooked else fast
        """Sub-cores run :meth:`_SubCore.fast_cycle` where it applies (its inlined GTO pick
        does not consult register power states: GTO with them takes
        :meth:`_SubCore.cycle`)."""
        self.core = timing_core.requested(core)
        self.baseline = not hooked and power is None and all(
            option is None for option in (registers, stages, overwrites, needs))
        """No mechanism rides on this SM (what the compiled core covers)."""
        self.core_used = None
        """Which timing loop the last :meth:`run_blocks` ran: ``"compiled"``, or
        ``"python (why)"``."""
        self.l1 = _L1(config)
        self.assigner = blocks.assigner(config)
        self.pipe = config.pipeline
        self.latency = [self._after(config.int_latency), self._after(config.fp32_latency),
                        self._after(config.sfu_latency), 0,
                        self._after(config.branch_latency)]
        self.const_after = self._after(config.const_latency)
        self.shared_after = self._after(config.shared_latency)
        self.hit_after = self._after(config.l1_hit_latency)
        self.miss_after = self._after(config.l1_miss_latency)
        self.loads = [ins.base == "ld" for ins in program.code]
        self.subcores = [_SubCore(self, i) for i in range(config.subcores)]
        self.used_warps = self.used_blocks = self.used_regs = self.used_shared = 0
        self.now = 0
        self.power = power(self) if power is not None else None

    def _after(self, latency: int) -> int:
        """Cycles a unit adds after dispatch (see :mod:`gpurf.sim.sm.config`)."""
        return max(1, latency - self.pipe)

    # -- assignment --------------------------------------------------------------------
    def _launch(self) -> None:
        config = self.config
        self._upcoming: list[int] = []
        """Sub-cores the assigner gave the next warps to be admitted (drawn by :meth:`_fits`,
        one assigner step per warp in launch order, taken when the block is admitted)."""
        hashed = config.assign != "rr"
        self.mode = MODE_HASHED if hashed else MODE_ROUND_ROBIN
        self._assign_step({"launch": 1})
        if hashed:
            table = (srr_table(depth=config.hash_depth) if config.assign == "srr" else
                     shuffle_table(config.shuffle_seed, depth=config.hash_depth))
            for index, byte in enumerate(table):
                self._assign_step({"table_we": 1, "table_index": index, "table_data": byte})

    def _assign_step(self, inputs):
        ports = {"warp": 0, "launch": 0, "mode": self.mode, "table_we": 0, "table_index": 0,
                 "table_data": 0, **inputs}
        return self.assigner.step(ports)

    def _picks(self, warps: int) -> list[int]:
        """The sub-cores of the next ``warps`` warps to be admitted."""
        upcoming = self._upcoming
        while len(upcoming) < warps:
            pick = self._assign_step({"warp": 1})["subcore"]
            upcoming.append(0 if self.config.subcores == 1 else pick)
        return upcoming[:warps]

    def _take_picks(self, warps: int) -> list[int]:
        """The sub-cores of the next ``warps`` warps, taken (their block is admitted)."""
        picks = self._picks(warps)
        del self._upcoming[:warps]
        return picks

    # -- blocks ------------------------------------------------------------------------
    def _fits(self, warps: int) -> list[int] | None:
        """The sub-cores the next ``warps`` warps would take, if the block fits now."""
        config = self.config
        regs = self.registers * 32 * warps
        shared = self.program.kernel.shared_bytes
        if (self.used_blocks + 1 > config.max_blocks or self.used_warps + warps >
                config.max_warps or self.used_regs + regs > config.registers
                or self.used_shared + shared > config.shared_bytes):
            return None
        picks = self._picks(warps)
        for sub in self.subcores:
            if picks.count(sub.index) > sub.slots.count(None):
                return None
        return picks

    def _admit(self, run: _Run, now: int) -> None:
        while run.admitted < run.total:
            if not run.ready:
                self._run_cohort(run)
            block, traces = run.ready[0]
            if self._fits(block.warp_count) is None:
                if self.used_blocks == 0:
                    raise self._misfit(block.warp_count)
                return
            run.ready.popleft()
            if run.on_block is not None:
                run.on_block(block)
            picks = self._take_picks(block.warp_count)
            warps = [_Warp(None, i, t) for i, t in enumerate(traces)]
            record = _Block(block.block_id, warps)
            for warp, sub in zip(warps, picks, strict=True):
                warp.block = record
                subcore = self.subcores[sub]
                subcore.place(warp, subcore.slots.index(None))
                warp.wake = now
                warp.update_wake(self.info.needs)
            self.used_blocks += 1
            self.used_warps += block.warp_count
            self.used_regs += self.registers * 32 * block.warp_count
            self.used_shared += self.program.kernel.shared_bytes
            run.admitted += 1
            for warp in warps:
                if not warp.pcs:
                    warp.sub.live.remove(warp)
                    self._exit(warp, now)

    def _run_cohort(self, run: _Run) -> None:
        """Run the next ``cohort`` blocks functionally (:attr:`functional`), recording
        their traces, and queue them for admission."""
        run.ready.extend(self.functional(list(itertools.islice(run.blocks, self.cohort))))

    def _retire(self, record: _Block) -> None:
        for warp in record.warps:
            warp.sub.free(warp)
        self.used_blocks -= 1
        self.used_warps -= len(record.warps)
        self.used_regs -= self.registers * 32 * len(record.warps)
        self.used_shared -= self.program.kernel.shared_bytes

    # -- dispatch ----------------------------------------------------------------------
    def reuses(self, warp: _Warp, pc: int, now: int) -> bool:
        """Whether instruction ``pc`` of ``warp``, issuing in cycle ``now``, reuses a
        result (it then skips the collector and the functional units)."""
        if self.reuser is None:
            return False
        self.values.read(warp.sub, {}, now)  # writes due by now reach the rename tables
        return self.reuser(warp, pc, now)

    def reuse(self, warp: _Warp, pc: int, pos: int, now: int) -> None:
        """Instruction ``pc`` (dynamic position ``pos``) of ``warp`` issued in cycle ``now``
        reuses a result: it takes the mechanism's latency, reads and writes no bank (its L1
        request record, counted at issue, is skipped)."""
        info = self.info
        done = self.values.storage.retire_cycle(warp, pos, now)
        for d in info.dests[pc]:
            warp.pending[d] = done
        _unread(warp, info.reads[pc])
        if warp.done_at is not None and warp.pending:
            self._retire_warp(warp)
        warp.update_wake(info.needs)
        self.values.dispatch(warp, pc, pos, now, done)

    def dispatch(self, sub: _SubCore, warp: _Warp, pc: int, request: int, now: int) -> int:
        """Instruction ``pc`` of ``warp`` leaves the collector in cycle ``now``; a memory
        instruction's L1 requests are the warp's ``request``-th record (counted at issue:
        the collector may dispatch a warp's instructions out of order). Returns the cycle
        it completes."""
        info = self.info
        unit = info.unit[pc]
        sub.unit_free[unit] = now + sub.interval[unit]
        kind = info.kind[pc]
        done = (self._memory(warp, pc, request, now) if unit == MEM
                else now + self.latency[unit]) + self.stages[pc]
        if self.power is not None:
            done = self.power.dispatched(sub, warp, pc, now, done)
        if kind == ALU:
            pending = warp.pending
            for d in info.dests[pc]:
                pending[d] = done
            sub.write_back(warp, pc, done)
        elif kind == BRA:
            warp.hold = done
        elif kind == BAR:
            self._arrive(warp, done)
        elif kind == EXIT:
            self._exit(warp, done)
        if warp.done_at is not None and warp.pending:
            self._retire_warp(warp)
        warp.update_wake(info.needs)
        return done

    def _memory(self, warp: _Warp, pc: int, request: int, now: int) -> int:
        space = self.info.space[pc]
        if space == "param":
            return now + self.const_after
        requests = warp.requests[request]
        l1 = self.l1
        if space == "shared":
            done = now
            for _ in range(requests):
                done = l1.serve(now)
            return done + self.shared_after
        load = self.loads[pc]
        hit, miss = self.hit_after, self.miss_after
        done = now
        for line in requests:
            t = l1.serve(now) + (hit if l1.lookup(line, load) else miss)
            if t > done:
                done = t
        return done

    def _arrive(self, warp: _Warp, when: int) -> None:
        record = warp.block
        record.arrived.append(warp)
        record.last = max(record.last, when)
        self._release(record)

    def _release(self, record: _Block) -> None:
        if record.arrived and len(record.arrived) >= record.live:
            for w in record.arrived:
                w.hold = record.last
                w.at_bar = False
                w.update_wake(self.info.needs)
            record.arrived = []
            record.last = 0

    def _exit(self, warp: _Warp, when: int) -> None:
        record = warp.block
        record.live -= 1
        warp.done_at = when
        self._release(record)
        self._retire_warp(warp)

    def _retire_warp(self, warp: _Warp) -> None:
        """Retire a warp whose exit has dispatched once its last register write is known
        (the collector may dispatch an exit before an earlier instruction still reading
        its operands)."""
        if warp.pending and max(warp.pending.values()) == INF:
            return
        warp.done_at = max(warp.done_at, *warp.pending.values())
        warp.pending = {}
        record = warp.block
        record.exited += 1
        if record.exited == len(record.warps):
            finish = max(w.done_at for w in record.warps)
            heapq.heappush(self.run.events, (finish, record.id, record))

    # -- the run -----------------------------------------------------------------------
    def run_blocks(self, blocks, total: int, on_block=None) -> TimingStats:
        """Run the ``total`` blocks whose ids ``blocks`` yields in launch order (it may be
        a progress bar: it advances as blocks run functionally, a cohort at a time);
        ``on_block(block)`` is called as each block is admitted (after its functional
        run; a :class:`~gpurf.sim.sm.recording.RecordedBlock`). Returns the statistics."""
        self.run = run = _Run(iter(blocks), total, on_block)
        self._launch()
        start = time.perf_counter()
        lib = self._compiled()
        if lib is not None:
            return self._run_compiled(lib, run, start)
        now = 0
        self._admit(run, now)
        cycles = [sub.cycle for sub in self.subcores]
        with np.errstate(all="ignore"):
            while run.done < run.total:
                events = run.events
                while events and events[0][0] <= now:
                    _, _, record = heapq.heappop(events)
                    self._retire(record)
                    run.done += 1
                    self._admit(run, now)
                if run.done == run.total:
                    break
                busy = False
                for cycle in cycles:
                    if cycle(now):
                        busy = True
                if busy:
                    now += 1
                    continue
                now = self._skip(now, run)
        self.now = now
        return self._stats(time.perf_counter() - start)

    def _misfit(self, warps: int) -> ExecutionError:
        """The error for a block of ``warps`` warps that an empty SM cannot hold (both
        timing loops)."""
        return ExecutionError(f"a block of {warps} warps does not fit the SM "
                              f"({self.config.max_warps} warps, "
                              f"{self.config.registers} registers)")

    def _stuck(self, now: int) -> ExecutionError:
        """The error for a run in which nothing can happen any more (both timing loops)."""
        return ExecutionError(f"{self.program.kernel.file}: the timing model is stuck at "
                              f"cycle {now}")

    def _skip(self, now: int, run: _Run) -> int:
        """The next cycle anything can happen in, accounting the idle cycles between."""
        wakes = [w.wake for sub in self.subcores for w in sub.live if now < w.wake < INF]
        candidates = [*wakes, *(e[0] for e in run.events[:1])]
        if not candidates:
            if run.done >= run.total:
                return now + 1
            raise self._stuck(now)
        nxt = max(now + 1, int(min(candidates)))
        for sub in self.subcores:
            skipped = nxt - now - 1
            sub.stalls[sub.reason] += skipped
            sub.lag += skipped
            sub.forget_writes(nxt)
        return nxt

    def _stats(self, seconds: float) -> TimingStats:
        subs = self.subcores
        stalls = {reason: sum(s.stalls[reason] for s in subs) for reason in STALLS}
        return self._timing_stats(
            issued=[s.issued for s in subs], bank_conflicts=sum(s.conflicts for s in subs),
            register_reads=sum(s.reads for s in subs),
            dispatch_stalls=sum(s.dispatch_stalls for s in subs), stalls=stalls,
            l1=(self.l1.requests, self.l1.hits, self.l1.misses, self.l1.wait),
            seconds=seconds)

    def _timing_stats(self, *, l1, **figures) -> TimingStats:
        """The run's :class:`TimingStats` from its ``figures`` and ``l1`` counters
        (requests, hits, misses, port-wait cycles)."""
        return TimingStats(
            cycles=self.now, **figures, l1_requests=l1[0], l1_hits=l1[1], l1_misses=l1[2],
            l1_queue_cycles=l1[3],
            values=self.values.stats() if self.values is not None else {},
            config={k: v for k, v in vars(self.config).items()})

    # -- the compiled core (:mod:`gpurf.sim.sm.timing_core`) ----------------------------
    def _core_blocker(self) -> str | None:
        """Why the compiled core does not cover this SM (``None``: it does)."""
        if self.config.scheduler not in POLICIES:
            return f"the compiled core has no {self.config.scheduler} scheduler"
        if not self.baseline:
            return "a mechanism rides on the SM"
        if not all(sub.cycle == sub.fast_cycle for sub in self.subcores):
            return "the sub-cores do not take the fast cycle (fast=False or other blocks)"
        return None

    def _compiled(self):
        """The compiled core's library when it runs this SM (:attr:`core_used` says which
        loop runs, and why not the compiled one)."""
        if self.core == "python":
            self.core_used = "python (asked for)"
            return None
        blocker = self._core_blocker()
        lib, where = (None, blocker) if blocker else timing_core.load()
        if lib is None:
            if self.core == "compiled":
                raise ExecutionError(f"the compiled timing core cannot run: {where}")
            self.core_used = f"python ({where})"
            return None
        self.core_used = "compiled"
        return lib

    def _core_config(self, keys: int, regs: int) -> np.ndarray:
        """The configuration as ``timing_core.cpp``'s ``Cfg`` lists it."""
        config, sub, l1 = self.config, self.subcores[0], self.l1
        score_max = sub.scorer._score_max if sub.scorer is not None else 0
        values = [config.subcores, config.slots, config.banks, config.cus, config.operands,
                  config.read_latency, config.bank_map == "swizzle", POLICIES[config.scheduler],
                  config.rba_greedy, config.score_latency, score_max, config.max_blocks,
                  config.max_warps, config.registers, config.shared_bytes,
                  self.registers * 32, self.program.kernel.shared_bytes, *self.latency,
                  self.const_after, self.shared_after, self.hit_after, self.miss_after,
                  *sub.interval, len(l1.sets), l1.ways, l1.enabled, keys, regs]
        return np.array(values, np.int64)

    def _run_compiled(self, lib, run: _Run, start: float) -> TimingStats:
        """:meth:`run_blocks`'s loop in the compiled core: the blocks run functionally a
        cohort at a time when it needs them, admitted blocks are reported to ``on_block``."""
        static, keys, regs = timing_core.pack_static(
            info=self.info, issue_regs=self.issue_regs, uncollected=self.uncollected,
            overwrites=self.overwrites, loads=self.loads, stages=self.stages)
        core = CompiledCore(lib, config=self._core_config(keys, regs), static=static,
                            total=run.total)
        queued = deque()
        while (status := core.run()) != timing_core.DONE:
            self._report_admitted(core, queued, run)
            if status == timing_core.NEED_BLOCKS:
                cohort = self.functional(list(itertools.islice(run.blocks, self.cohort)))
                if not cohort:
                    raise ExecutionError(f"{self.program.kernel.file}: the launch ran out of "
                                         f"blocks after {run.admitted} of {run.total}")
                core.add_blocks(cohort, [s for block, _ in cohort
                                         for s in self._take_picks(block.warp_count)])
                queued.extend(block for block, _ in cohort)
            elif status == timing_core.DOES_NOT_FIT:
                raise self._misfit(core.misfit)
            else:
                raise self._stuck(core.now)
        self._report_admitted(core, queued, run)
        figures = core.stats()
        self.now = figures["cycles"]
        return self._timing_stats(
            issued=figures["issued"], bank_conflicts=figures["bank_conflicts"],
            register_reads=figures["register_reads"],
            dispatch_stalls=figures["dispatch_stalls"],
            stalls=dict(zip(STALLS, figures["stalls"], strict=True)), l1=figures["l1"],
            seconds=time.perf_counter() - start)

    @staticmethod
    def _report_admitted(core: CompiledCore, queued: deque, run: _Run) -> None:
        """``run.on_block`` of every block the core admitted since the last report."""
        while run.admitted < core.admitted:
            block = queued.popleft()
            run.admitted += 1
            if run.on_block is not None:
                run.on_block(block)
