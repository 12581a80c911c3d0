"""WIR in the golden SM: warp instruction reuse and warp register reuse (paper Sections V-VI).

:class:`WirStorage` is a :class:`~gpurf.sim.sm.values.RegisterStorage`: the timing model
hands it every register access with the values the functional run computed
(:mod:`gpurf.sim.sm.values`), and calls :meth:`WirStorage.issue` for every issued warp
instruction. Registers are renamed: each warp's logical 32-bit registers (one warp register
of 32 lanes, 1,024 bits) map to physical warp registers of a pool of 1,024 (the fermi
preset's 32,768 32-bit registers).

The parts are the golden WIR blocks driven on Python values: the H3 hash
(:func:`gpurf.golden.wir.h3_hash.h3`), the value signature buffer
(:class:`~gpurf.golden.wir.value_signature_buffer.ValueSignatureBuffer`), the reuse buffer
(:class:`~gpurf.golden.wir.reuse_buffer.ReuseBuffer`), the load filter's answer
(:func:`~gpurf.golden.wir.load_filter.load_answer`), the verify cache's lines
(:class:`~gpurf.golden.wir.verify_cache.VerifyCache`) and the register pool's free FIFO and
counts (:class:`~gpurf.golden.wir.register_pool.RegisterPool`). The rename tables and the
pending-retry queue's occupancy are kept here (the golden rename table clears and sweeps over
cycles, which the transaction-level SM does not model).

At issue (rename, reuse): a convergent instruction of an eligible kind (:func:`eligibility`)
looks the reuse buffer up with its renamed source registers, immediates, thread-block id
and barrier count. A hit skips read and execute (the timing model's
:meth:`~gpurf.sim.sm.timing.TimingSM.reuse`) and retires with the entry's register; its
result is compared with the functional result by the value check
(:meth:`~gpurf.sim.sm.values.RegisterStorage.result`). A pending hit (RLP and later) waits
for the reserving instruction's result when the queue has room and that instruction has
dispatched; otherwise it executes. A miss reserves the entry.

At writeback (register allocation): a convergent result is hashed; a VSB hit is
verify-read (verify cache first) and, if equal, the destination is mapped to that register
without a write; otherwise a register is allocated, written and installed. A divergent
result goes to a register pinned to its logical register (a new one, with a dummy MOV of
the other lanes, the first time in the divergent flow). A reused result maps the destination
to the reused register.

Reference-count protocol (one count per physical register; see docs/wir.md):

- holders: each rename mapping, each VSB entry, each reuse-buffer entry (each register
  operand and its result), each in-flight source operand (taken at issue, dropped when the
  collector reads it) and each in-flight result (a reuse hit's, a pending-retry ticket's);
- every holder takes its own reference when it starts holding and drops it when it stops;
  an allocation's count starts at 1 for the writing instruction's in-flight result;
- at retire the rename mapping takes a reference on the new register, then the instruction
  drops its in-flight result reference and the mapping's reference to the old register;
- a count reaching zero returns the register to the free FIFO.

:meth:`WirStorage.check_references` recounts every holder and compares (no leak, no early
free): tests call it during and after runs.
"""

from collections import deque
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np

from gpurf.golden.wir.load_filter import load_answer
from gpurf.golden.wir.register_pool import ProtocolError, RegisterPool
from gpurf.golden.wir.reuse_buffer import ReuseBuffer, fold_index
from gpurf.golden.wir.value_signature_buffer import ValueSignatureBuffer
from gpurf.golden.wir.verify_cache import VerifyCache
from gpurf.hw.wir.configs import h3_matrix
from gpurf.hw.wir.layouts import LoadKind
from gpurf.sim.ptx.ir import Addr, Imm, Reg, Sym

from .config import SMConfig
from .program import Program
from .values import LANES, RegisterStorage, ValueMismatchError, lane_mask, word_layout
from .wir_trace import Issued

__all__ = ["CONFIGS", "WirConfig", "WirStorage", "eligibility", "wir_sm_config"]

FULL = 0xFFFFFFFF
_INF = float("inf")
_OTHER = LoadKind.OTHER.value
_EMPTY: dict = {}
"""An empty mapping, never written (no rename mappings, no stores)."""


@dataclass(frozen=True)
class WirConfig:
    """A WIR configuration (paper Section VII-A; sizes Table II).

    Attributes
    ----------
    name : str
    loads : bool
        Load reuse (L, Section VI-A).
    pending_retry : bool
        The pending-retry queue (P, Section VI-B).
    verify_cache : int
        Verify-cache entries (V, Section VI-C); 0: none.
    capped : bool
        The capped-register policy (c, Section V-E) instead of max-register.
    """

    name: str
    loads: bool = False
    pending_retry: bool = False
    verify_cache: int = 0
    capped: bool = False
    reuse_entries: int = 256
    vsb_entries: int = 256
    pregs: int = 1024
    retry_depth: int = 16
    count_width: int = 10
    added_latency: int = 4
    """Cycles the rename, reuse and allocation stages add to every instruction (VII-E)."""
    reuse_latency: int = 3
    """Cycles from issue to retire of a reused instruction (rename, reuse, retire)."""
    low_water: int = 0
    """Low-register mode while at most this many registers may be allocated."""
    seed: int = 0
    """Seed of the H3 matrix."""


CONFIGS = {c.name: c for c in (
    WirConfig("R"),
    WirConfig("RL", loads=True),
    WirConfig("RLP", loads=True, pending_retry=True),
    WirConfig("RLPV", loads=True, pending_retry=True, verify_cache=8),
    WirConfig("RPV", pending_retry=True, verify_cache=8),
    WirConfig("RLPVc", loads=True, pending_retry=True, verify_cache=8, capped=True),
)}
"""The paper's configurations (Section VII-A)."""


def wir_sm_config(sm: SMConfig, wir: WirConfig) -> SMConfig:
    """``sm`` with WIR's added backend cycles on every unit's latency (VII-E: rename 1,
    reuse 1, register allocation 2)."""
    extra = wir.added_latency
    names = ("int_latency", "fp32_latency", "sfu_latency", "branch_latency", "const_latency",
             "shared_latency", "l1_hit_latency", "l1_miss_latency")
    return sm.replace(**{n: getattr(sm, n) + extra for n in names})


class Opcode(NamedTuple):
    """The reuse buffer's opcode code: operation ``op`` and operand kinds ``regs``."""

    op: int
    regs: int


class Lookup(NamedTuple):
    """The fields of the reuse buffer's ``lookup`` port."""

    opcode: Opcode
    operand: list
    tbid: int
    barrier: int
    divergent: int
    bypass: int


class Fill(NamedTuple):
    """The fields of the reuse buffer's ``fill`` port (``tag`` packed, as the entry holds
    it)."""

    index: int
    tag: dict
    result: int


class Install(NamedTuple):
    """The fields of the VSB's ``install`` port."""

    hash: int
    preg: int
    divergent: int = 0


@dataclass(frozen=True)
class Eligible:
    """How an instruction looks the reuse buffer up: ``fields`` (per operand field,
    ``("word", i)`` for source word ``i``, ``("imm", value)`` or ``("sym", index)``), its
    ``opcode`` code and ``kind`` (:class:`LoadKind` value)."""

    opcode: Opcode
    fields: tuple
    kind: int


_NEVER = ("atom", "red", "st", "bar", "bra", "ret", "exit", "membar", "vote", "shfl",
          "activemask", "prmt_random")


def eligibility(program: Program) -> list:
    """Per instruction an :class:`Eligible` or a string saying why it bypasses the buffer:
    not exactly one 32-bit destination word, a predicate or special-register source, a
    guard, more than three operand fields, a side effect, or no opcode code left."""
    layout = word_layout(program)
    kernel = program.kernel
    symbols = {name: i for i, name in enumerate(
        [p.name for p in kernel.params] + [v.name for v in kernel.shared])}
    codes: dict = {}
    return [_eligible(program, layout, pc, ins, codes, symbols)
            for pc, ins in enumerate(program.code)]


def _eligible(program, layout, pc, ins, codes, symbols):
    if ins.base in _NEVER or "volatile" in ins.mods:
        return "side effect"
    if len(layout.dests[pc]) != 1 or layout.dests[pc][0].reg is None:
        return "not one 32-bit destination"
    if ins.guard is not None:
        return "guarded"
    regs = program.kernel.regs
    words = {w.name: i for i, w in reversed(list(enumerate(layout.sources[pc])))}
    fields = []
    for op in ins.operands[1:]:
        parts = _operand_fields(op, regs, words, layout.sources[pc], symbols)
        if parts is None:
            return "predicate, special or unplaced source"
        fields.extend(parts)
    if len(fields) > 3:
        return "more than three operand fields"
    kinds = tuple(kind for kind, _ in fields)
    key = (ins.opcode, kinds)
    if key not in codes:
        if len(codes) == 32:
            return "no opcode code left"
        codes[key] = len(codes)
    regs_mask = sum(1 << k for k, kind in enumerate(kinds) if kind == "word")
    kind = LoadKind.OTHER.value
    if ins.base == "ld":
        kind = {"global": LoadKind.GLOBAL.value, "shared": LoadKind.SHARED.value}.get(
            ins.space, LoadKind.OTHER.value)
    return Eligible(Opcode(codes[key], regs_mask), tuple(fields), kind)


def _operand_fields(op, regs, words, sources, symbols):
    """The operand fields of one source operand, ``None`` if it cannot be tagged. A
    symbol is its index among the kernel's parameters and shared variables, a field kind
    of its own (so the opcode code tells it from an immediate of the same value)."""
    if isinstance(op, Imm):
        return [("imm", op.value & FULL)]
    if isinstance(op, Reg):
        return _reg_fields(op.name, regs, words, sources)
    if isinstance(op, Addr):
        base = ([("sym", symbols[op.base.name])] if isinstance(op.base, Sym)
                else _reg_fields(op.base.name, regs, words, sources))
        return None if base is None else [*base, ("imm", op.offset & FULL)]
    if isinstance(op, Sym) and op.name in symbols:
        return [("sym", symbols[op.name])]
    return None


def _reg_fields(name, regs, words, sources):
    if regs[name].width == 1 or name not in words:
        return None
    first = words[name]
    count = 2 if regs[name].width == 64 else 1
    if any(sources[first + k].reg is None for k in range(count)):
        return None
    return [("word", first + k) for k in range(count)]


@dataclass
class Plan:
    """What an issued instruction does at writeback."""

    reused: int | None = None
    """The register a reuse hit retires with (its in-flight reference is held)."""
    ticket: "Ticket | None" = None
    """A pending-retry wait on the reserving instruction's result."""
    fill: Fill | None = None
    """The reuse-buffer entry this instruction reserved (filled at writeback)."""
    done: int | None = None
    waiting: list = field(default_factory=list)
    """Tickets of pending hits on this instruction's entry."""
    completed: bool = False


@dataclass
class Ticket:
    """A pending hit's wait: the register the reserving instruction's result went to
    (``None`` until its writeback), with an in-flight reference held."""

    preg: int | None = None


class WirStorage(RegisterStorage):
    """Register storage with WIR (see the module docstring).

    Parameters
    ----------
    program : Program
    config : WirConfig
    registers_per_warp : int
        Logical registers of a warp (the capped-register policy's cap is this x the active
        warps).
    check_every : int
        Recount the references every this many writebacks (0: only when asked).
    """

    def __init__(self, program: Program, config: WirConfig, *, registers_per_warp: int = 63,
                 check_every: int = 0):
        self.program, self.config = program, config
        self.check_every = check_every
        """Recount the references (:meth:`check_references`) every this many register
        writebacks (0: never during the run)."""
        self.layout = word_layout(program)
        self.eligible = eligibility(program)
        self.stores = [_store_space(ins) for ins in program.code]
        self.source_regs = [[w.reg for w in words if w.reg is not None]
                            for words in self.layout.sources]
        """Per instruction, the registers of its source words in operand order."""
        self.bars = [ins.base == "bar" for ins in program.code]
        self.regs_per_warp = registers_per_warp
        self.unit_energy = [unit_energy(ins) for ins in program.code]
        self.rf_words = [(sum(w.reg is not None for w in s), sum(w.reg is not None for w in d))
                         for s, d in zip(self.layout.sources, self.layout.dests, strict=True)]
        self.masks = h3_matrix(LANES * 32, 32, config.seed)
        self.byte_hashes = h3_byte_tables(self.masks, LANES * 4)
        """The H3 hash by bytes: ``[p, b]`` is the hash of byte ``p`` of the value being
        ``b`` (every other byte 0); the hash is linear over GF(2), so a value's is the XOR
        of its bytes' (equal to the golden :func:`~gpurf.golden.wir.h3_hash.h3`, which
        tests check)."""
        self._flat_hashes = self.byte_hashes.ravel()
        self._byte_rows = np.arange(LANES * 4) * 256
        self.max_count = (1 << config.count_width) - 1
        self.launch = None
        """The timing model of the launch running (a new one empties every structure)."""
        self.writer = self.recorder = None
        self.tap = None
        """A :class:`~gpurf.sim.sm.wir_trace.PipelineTap` recording the kernel's register
        traffic through ``wir.pipeline`` (:meth:`record_pipeline`), or ``None``."""
        self.backend_tap = None
        """A :class:`~gpurf.sim.sm.wir_trace.BackendTap` recording the kernel's instruction
        stream through ``wir.backend`` (:meth:`record_backend`), or ``None``."""
        self._reset()
        self.stats = dict.fromkeys((
            "issued", "eligible", "lookups", "hits", "pending_hits", "retry_hits",
            "bypassed", "divergent", "reserved", "results", "hashes", "vsb_hits",
            "verify_reads", "verify_cache_hits", "verify_failures", "allocations", "writes",
            "writes_avoided", "dummy_movs", "reads", "frees", "ref_events", "evictions",
            "low_register", "rename_reads", "rename_writes", "fills", "vsb_writes",
            "in_use_sum", "in_use_samples", "in_use_peak", "base_rf_reads", "base_rf_writes",
            "base_unit_pj", "unit_pj", "launches", "reference_checks", "base_in_use_sum"), 0)

    def _reset(self) -> None:
        """Empty every structure, all registers free (at the start of each launch, so a
        launch's loads never reuse the memory of the previous one)."""
        config = self.config
        pregs = config.pregs
        if self.tap is not None:
            self.tap.drop_all()
        if self.backend_tap is not None:
            self.backend_tap.new_launch()
        self.values = np.zeros((pregs, LANES), np.uint32)
        self.pool = RegisterPool(pregs=pregs, count_width=config.count_width)
        self.vsb = ValueSignatureBuffer(entries=config.vsb_entries, pregs=pregs)
        self.buffer = ReuseBuffer(entries=config.reuse_entries)
        self._null_tbid = self.buffer.config.null_tbid
        self._barrier_saturated = (1 << self.buffer.config.barrier_bits) - 1
        self.cache = (VerifyCache(entries=config.verify_cache, pregs=pregs)
                      if config.verify_cache else None)
        self.rename: dict = {}
        self.inflight: dict = {}
        self.plans: dict = {}
        self.flags: dict = {}
        self.barriers: dict = {}
        self.queue: list = []
        """Retire cycles of the instructions in the pending-retry queue."""
        self.reservers: dict = {}
        """Reuse-buffer index -> (timing warp, pc, plan) of the instruction that reserved
        the entry and has not written back yet."""
        self.block_slots: dict = {}
        self.block_warps: dict = {}
        self.dispatching = None
        """The warp whose reused instruction the value check is dispatching (its operand
        reads are the check's, not the register file's)."""
        self.active_warps = set()

    # -- reference counts (the register pool) ------------------------------------------
    def inc(self, preg: int) -> None:
        counts = self.pool.counts
        count = counts.get(preg, 0)
        if count == 0:
            raise ProtocolError(f"reference to p{preg}, which is free")
        if count == self.max_count:
            raise ProtocolError(f"count of p{preg} would overflow")
        counts[preg] = count + 1
        self.stats["ref_events"] += 1

    def dec(self, preg: int) -> None:
        counts = self.pool.counts
        count = counts.get(preg, 0)
        if count == 0:
            raise ProtocolError(f"release of p{preg}, which has no reference")
        self.stats["ref_events"] += 1
        if count > 1:
            counts[preg] = count - 1
        else:
            del counts[preg]
            self.pool.free.append(preg)
            self.stats["frees"] += 1

    def _events(self, incs, decs) -> None:
        for preg in incs:
            if preg is not None:
                self.inc(preg)
        for preg in decs:
            if preg is not None:
                self.dec(preg)

    def saturated(self, preg: int | None) -> bool:
        return preg is not None and self.pool.counts.get(preg, 0) >= self.max_count

    def in_use(self) -> int:
        return self.config.pregs - len(self.pool.free)

    def _cap(self) -> int:
        if not self.config.capped:
            return self.config.pregs
        return min(self.config.pregs, self.regs_per_warp * max(1, len(self.active_warps)))

    def available(self) -> int:
        free = len(self.pool.free)
        if not self.config.capped:
            return free
        return min(free, max(self._cap() - (self.config.pregs - free), 0))

    def low_register(self) -> bool:
        return self.available() <= self.config.low_water

    def allocate(self) -> int:
        """A free register (count 1: the writing instruction's in-flight result). In
        low-register mode VSB and reuse-buffer entries are evicted until one is free."""
        while self.available() == 0:
            if not self._evict():
                if not self.pool.free:
                    raise RuntimeError("WIR: every physical register is referenced")
                break
        preg = self.pool.free.popleft()
        self.pool.counts[preg] = 1
        self.stats["allocations"] += 1
        used = self.in_use()
        stats = self.stats
        stats["in_use_sum"] += used
        stats["base_in_use_sum"] += min(self.regs_per_warp * len(self.active_warps),
                                        self.config.pregs)
        stats["in_use_samples"] += 1
        stats["in_use_peak"] = max(stats["in_use_peak"], used)
        return preg

    def _evict(self) -> bool:
        """Evict one VSB entry, else one reuse-buffer entry (low-register mode)."""
        self.stats["low_register"] += 1
        vsb = self.vsb
        if vsb.entries:
            index = next(iter(vsb.entries))
            out = self.vsb_cycle(evict=index)
            self._events((), (out["dec"],))
            self.stats["evictions"] += 1
            return True
        buffer = self.buffer
        for index, entry in enumerate(buffer.entries):
            if entry is not None and not entry.pending:
                buffer.cycle = index
                _, _, incs, decs = buffer.advance(None, None, low_reg=1)
                self._events(incs, decs)
                self.stats["evictions"] += 1
                return True
        return False

    # -- issue (rename, reuse) ---------------------------------------------------------
    def issue(self, warp, pc: int, now: int) -> bool:
        """The timing model's issue hook: ``warp`` (a timing warp) issues instruction
        ``pc`` in cycle ``now``. Returns whether it reuses a result."""
        if warp.sub.sm is not self.launch:
            if self.launch is not None:
                self.close_trace()
                self._reset()
            self.launch = warp.sub.sm
            self.stats["launches"] += 1
        key = (warp.block.id, warp.index)
        if key not in self.active_warps:
            self.active_warps.add(key)
            self.block_warps[warp.block.id] = self.block_warps.get(warp.block.id, 0) + 1
        stats = self.stats
        stats["issued"] += 1
        stats["rename_reads"] += 1
        self._memory_events(key, pc)
        rule = self.eligible[pc]
        if self.backend_tap is not None:
            self.backend_tap.issue(self._issued(warp, key, pc, rule))
        plan = None
        if isinstance(rule, Eligible):
            stats["eligible"] += 1
            plan = self._lookup(warp, key, pc, rule, now)
        reused = plan is not None and (plan.reused is not None or plan.ticket is not None)
        self._count_energy(pc, reused)
        if plan is not None:
            self.plans[(key, pc)] = plan
            if reused:
                return True
        self._hold_sources(key, pc)
        return False

    def _issued(self, warp, key, pc: int, rule) -> Issued:
        """Instruction ``pc`` of timing warp ``warp`` as :class:`~gpurf.sim.sm.wir_trace.
        BackendTap` takes it (no side effect on the SM's WIR state)."""
        sources, dests = self.layout.sources[pc], self.layout.dests[pc]
        values = warp.values
        mask = int(values.masks[warp.pos])
        lanes = lane_mask(mask) if mask else np.ones(LANES, bool)
        dst = value = None
        if dests and dests[0].reg is not None and mask:
            dst = dests[0].reg
            value = values.words[values.offsets[warp.pos] + len(sources)]
        eligible = isinstance(rule, Eligible) and (
            self.config.loads or rule.kind == LoadKind.OTHER.value)
        if eligible:
            fields = [sources[v].reg if kind == "word" else v for kind, v in rule.fields]
            opcode, regs, kind = rule.opcode.op, rule.opcode.regs, rule.kind
        else:
            fields = [w.reg for w in sources if w.reg is not None][:3]
            opcode, regs, kind = 0, (1 << len(fields)) - 1, LoadKind.OTHER.value
        return Issued(key, warp.block.id, opcode, regs, fields + [0] * (3 - len(fields)),
                      dst, value, lanes, kind, self.stores[pc], self.bars[pc], not eligible)

    def _count_energy(self, pc: int, reused: bool) -> None:
        """Backend energy of instruction ``pc`` in the baseline (always executed) and with
        WIR (executed unless ``reused``); register-file accesses are counted apart."""
        unit, rf = self.unit_energy[pc], self.rf_words[pc]
        stats = self.stats
        stats["base_unit_pj"] += unit
        stats["base_rf_reads"] += rf[0]
        stats["base_rf_writes"] += rf[1]
        if not reused:
            stats["unit_pj"] += unit

    def _queued(self, now: int) -> int:
        """Instructions in the pending-retry queue in cycle ``now``."""
        self.queue = [t for t in self.queue if t > now]
        return len(self.queue)

    def _memory_events(self, key, pc) -> None:
        space = self.stores[pc]
        if space is not None:
            self.flags.setdefault(key, set()).add(space)
        if self.bars[pc]:
            self.flags.pop(key, None)
            self.barriers[key] = self.barriers.get(key, 0) + 1

    def _hold_sources(self, key, pc) -> None:
        """In-flight source references of an executing instruction (dropped at read)."""
        mapping = self.rename.get(key, _EMPTY)
        held = self.inflight.setdefault(key, {})
        for reg in self.source_regs[pc]:
            entry = mapping.get(reg)
            if entry is not None:
                self.inc(entry[0])
                queue = held.get(reg)
                if queue is None:
                    queue = held[reg] = deque()
                queue.append(entry[0])
                if self.tap is not None:
                    self.tap.hold(key, reg)

    def lookup_fields(self, key, rule: Eligible, mapping, pc) -> list | None:
        """The operand fields: renamed source registers and immediates (``None``: a
        source is unmapped or pinned to a divergent flow)."""
        sources = self.layout.sources[pc]
        out = []
        for kind, value in rule.fields:
            if kind != "word":
                out.append(value)
                continue
            entry = mapping.get(sources[value].reg)
            if entry is None or entry[1]:
                return None
            out.append(entry[0])
        return out + [0] * (3 - len(out))

    def _lookup(self, warp, key, pc, rule: Eligible, now) -> Plan | None:
        config, stats = self.config, self.stats
        mask = int(warp.values.masks[warp.pos])
        if mask != FULL:
            stats["divergent"] += 1
            return None
        if rule.kind != _OTHER and not config.loads:
            stats["bypassed"] += 1
            return None
        operand = self.lookup_fields(key, rule, self.rename.get(key, _EMPTY), pc)
        slot = self._block_slot(warp.block.id)
        saturated = self._barrier_saturated
        answer = load_answer(rule.kind, self.flags.get(key, _EMPTY), slot,
                             min(self.barriers.get(key, 0), saturated), saturated=saturated,
                             null_tbid=self._null_tbid)
        if operand is None or not answer["reuse"] or answer["tbid"] is None:
            stats["bypassed"] += 1
            return None
        lookup = Lookup(rule.opcode, operand, answer["tbid"], answer["barrier"], 0, 0)
        return self._probe(warp, key, pc, lookup, now)

    def _probe(self, warp, key, pc, lookup: Lookup, now) -> Plan | None:
        buffer, stats = self.buffer, self.stats
        located = buffer.locate(lookup)
        tag, _, index = located
        entry = buffer.entries[index]
        counts, top = self.pool.counts, self.max_count
        result_saturated = bool(entry is not None and not entry.pending
                                and counts.get(entry.result, 0) >= top)
        regs = lookup.opcode.regs
        operand_saturated = any(counts.get(v, 0) >= top for k, v in enumerate(lookup.operand)
                                if regs >> k & 1)
        low = self.low_register()
        response, _, incs, decs = buffer.advance(
            lookup, None, result_saturated=int(result_saturated),
            operand_saturated=int(operand_saturated), low_reg=int(low), located=located)
        stats["lookups"] += 1
        stats["evictions"] += bool(low and any(d is not None for d in decs))
        self._events(incs, decs)
        if response["hit"]:
            stats["hits"] += 1
            return Plan(reused=response["result"])
        if response["pending"]:
            stats["pending_hits"] += 1
            return self._pending(entry, now)
        if response["reserved"]:
            stats["reserved"] += 1
            plan = Plan(fill=Fill(index, tag, 0))
            self.reservers[index] = (warp, pc, plan)
            return plan
        return None

    def _pending(self, entry, now) -> Plan | None:
        """A pending hit: wait for the reserving instruction when the queue has room and
        that instruction has dispatched (its writeback cycle is known)."""
        config = self.config
        if not config.pending_retry or self._queued(now) >= config.retry_depth:
            return None
        index = fold_index(entry.tag, self.buffer.tags.width, self.buffer.config.index_bits)
        producer = self.reservers.get(index)
        if producer is None:
            return None
        pwarp, ppc, pplan = producer
        slot = self.program.slots[self.program.code[ppc].dests[0]]
        done = pwarp.pending.get(slot, _INF)
        if done == _INF or pplan.completed:
            return None
        ticket = Ticket()
        pplan.waiting.append(ticket)
        finish = max(now + config.reuse_latency, int(done) + 1)
        self.queue.append(finish)
        self.stats["retry_hits"] += 1
        return Plan(ticket=ticket, done=finish)

    def _block_slot(self, block) -> int | None:
        """The thread-block slot of resident block ``block`` (``None``: more resident
        blocks than slots; its shared loads bypass the buffer)."""
        slots = self.block_slots
        if block not in slots:
            used = set(slots.values())
            free = [s for s in range(self.buffer.config.blocks) if s not in used]
            slots[block] = free[0] if free else None
        return slots[block]

    def _release_block(self, block) -> None:
        """A block left: its slot's shared-load entries are evicted (a later block in the
        slot restarts the barrier count, so they would match it)."""
        slot = self.block_slots.pop(block, None)
        self.block_warps.pop(block, None)
        if slot is None:
            return
        buffer = self.buffer
        for index, entry in enumerate(buffer.entries):
            if entry is not None and not entry.pending and \
                    buffer.tags.unpack(entry.tag).tbid == slot:
                buffer.cycle = index
                _, _, incs, decs = buffer.advance(None, None, low_reg=1)
                self._events(incs, decs)

    def retire_cycle(self, warp, pos: int, now: int) -> int:
        """The cycle reused dynamic instruction ``pos`` of ``warp``, issued in cycle
        ``now``, retires."""
        key = (warp.block.id, warp.index)
        self.dispatching = key
        plan = self.plans.get((key, warp.pcs[pos]))
        if plan is not None and plan.done is not None:
            return plan.done
        return now + self.config.reuse_latency

    # -- the value hooks ---------------------------------------------------------------
    def read(self, warp, reg, cycle, lanes):
        key = (warp.block, warp.warp)
        entry = self.rename.get(key, _EMPTY).get(reg)
        if key != self.dispatching:
            self.stats["reads"] += 1
            held = self.inflight.get(key, _EMPTY).get(reg)
            if held:
                self.dec(held.popleft())
                if self.tap is not None:
                    self.tap.drop(key, reg)
        if entry is None:
            return np.zeros(LANES, np.uint32)
        return self.values[entry[0]]

    def result(self, warp, pc, cycle):
        self.dispatching = None
        plan = self.plans.get(((warp.block, warp.warp), pc))
        if plan is None or plan.reused is None:
            return None
        (word,) = self.layout.dests[pc]
        return {word.reg: self.values[plan.reused]}

    def write(self, warp, reg, values, lanes, cycle, pc):
        stats = self.stats
        stats["results"] += 1
        if self.check_every and stats["results"] % self.check_every == 0:
            self.check_references()
            stats["reference_checks"] += 1
        key = (warp.block, warp.warp)
        if self.tap is not None:
            self.tap.result(key, reg, values, lanes)
        plan = self.plans.pop((key, pc), None)
        if plan is not None and plan.ticket is not None:
            preg = plan.ticket.preg
            if preg is None or not np.array_equal(self.values[preg][lanes], values[lanes]):
                raise ValueMismatchError(
                    f"{warp}, pc {pc}, cycle {cycle}: pending-retry reuse of R{reg} "
                    f"delivers a value that differs from the functional result", warp=warp,
                    pc=pc, reg=reg, cycle=cycle)
            self._retire(key, reg, preg, pinned=False)
            return
        if plan is not None and plan.reused is not None:
            self._retire(key, reg, plan.reused, pinned=False)
            return
        mapping = self.rename.setdefault(key, {})
        old = mapping.get(reg)
        if not lanes.all():
            preg = self._divergent(old, values, lanes)
            if old is not None and old[1] and old[0] == preg:
                return
            self._retire(key, reg, preg, pinned=True)
            return
        preg = self._allocate_result(values)
        if plan is not None:
            self._complete(plan, preg)
        self._retire(key, reg, preg, pinned=False)

    def _divergent(self, old, values, lanes) -> int:
        """The pinned register of a divergent write: the current one if pinned, else a new
        one filled by a dummy MOV of the other lanes."""
        if old is not None and old[1]:
            preg = old[0]
            self._write(preg, np.where(lanes, values, self.values[preg]))
            return preg
        preg = self.allocate()
        base = self.values[old[0]] if old is not None else np.zeros(LANES, np.uint32)
        if old is not None:
            self.stats["dummy_movs"] += 1
        self._write(preg, np.where(lanes, values, base))
        return preg

    def _allocate_result(self, values) -> int:
        """Register allocation (Fig. 6): hash, VSB lookup, verify, else allocate+install.
        Returns the register with the in-flight result reference taken."""
        stats, vsb = self.stats, self.vsb
        signature = self.signature(values)
        stats["hashes"] += 1
        if self.recorder is None and vsb.answer is None:
            hit, preg = vsb.search(signature)  # the two cycles below, which change nothing
        else:
            self.vsb_cycle(lookup=signature)
            hit, preg = self.vsb_cycle()["result"]
        if hit:
            stats["vsb_hits"] += 1
            if self.verify(preg, values):
                self.inc(preg)
                stats["writes_avoided"] += 1
                return preg
            stats["verify_failures"] += 1
        preg = self.allocate()
        self._write(preg, values)
        if self.low_register():
            out = self.vsb_cycle(evict=vsb.config.index(signature))
            stats["evictions"] += out["dec"] is not None
        else:
            out = self.vsb_cycle(install=Install(signature, preg))
            stats["vsb_writes"] += 1
        self._events((out["inc"],), (out["dec"],))
        return preg

    def vsb_cycle(self, lookup=None, install=None, evict=None) -> dict:
        """One cycle of the VSB: :meth:`ValueSignatureBuffer.advance`'s answer, through
        its ports (:meth:`~ValueSignatureBuffer.step`) while a trace is recorded."""
        if self.recorder is None:
            return self.vsb.advance(lookup, install=install, evict=evict)
        ports = self.vsb.ports
        inputs = {"lookup__valid": int(lookup is not None),
                  "lookup__payload": 0 if lookup is None else ports["lookup__payload"].pack(
                      lookup),
                  "install__valid": int(install is not None),
                  "install__payload": 0 if install is None else ports["install__payload"]
                  .pack(install),
                  "evict__valid": int(evict is not None and install is None),
                  "evict__payload": 0 if evict is None else ports["evict__payload"].pack(evict)}
        out = self.recorder.step(inputs)
        result = (tuple(ports["result__payload"].unpack(out["result__payload"]))
                  if out["result__valid"] else None)
        inc, dec = (ports[name].unpack(out[name]) for name in ("ref_inc", "ref_dec"))
        return {"result": None if result is None else (result[0], result[1]),
                "inc": inc.preg if inc.valid else None, "dec": dec.preg if dec.valid else None}

    def record_vsb(self, path, source: dict) -> None:
        """Record the VSB's ports to the trace ``path`` (format: docs/traces.md) from the
        next launch on, until :meth:`close_trace` or the launch ends; replay it with
        ``gpurf replay PATH``."""
        from gpurf.golden.trace import Recorder, TraceWriter, layout_of
        from gpurf.hw.registry import get_block

        block = get_block("wir.value_signature_buffer")
        params = block.resolve({"entries": self.config.vsb_entries, "hash_width": 32,
                                "pregs": self.config.pregs})
        header = {"block": block.qualname, "params": params, "seed": self.config.seed,
                  "sm": None, "unmodeled": [], "source": source}
        self.writer = TraceWriter(path, layout_of(block.build(params)), header)
        self.recorder = Recorder(self.vsb, self.writer)

    def record_pipeline(self, path, source: dict) -> None:
        """Record the run's register traffic through ``wir.pipeline`` to the trace
        ``path`` (:mod:`gpurf.sim.sm.wir_trace`) until :meth:`close_pipeline`."""
        from .wir_trace import PipelineTap

        self.tap = PipelineTap(path, source, self.config.seed,
                               verify_cache=self.config.verify_cache)

    def record_backend(self, path, source: dict) -> None:
        """Record the run's instruction stream through ``wir.backend`` to the trace ``path``
        (:class:`~gpurf.sim.sm.wir_trace.BackendTap`) until :meth:`close_backend`."""
        from .wir_trace import BackendTap

        self.backend_tap = BackendTap(path, source, self.config.seed,
                                      verify_cache=self.config.verify_cache)

    def close_backend(self) -> tuple[int, dict, dict]:
        """Close the backend trace; its cycle count (0: none recorded), retirements per
        outcome and ``out`` answers per kind."""
        tap, self.backend_tap = self.backend_tap, None
        if tap is None:
            return 0, {}, {}
        return tap.close(), dict(tap.outcomes), dict(tap.responses)

    def close_pipeline(self) -> tuple[int, dict, int]:
        """Close the pipeline trace; its cycle count (0: none recorded), retirements per
        outcome and verify-reads its verify cache answered."""
        if self.tap is None:
            return 0, {}, 0
        tap, self.tap = self.tap, None
        return tap.close(), dict(tap.outcomes), tap.verify_cached

    def close_trace(self) -> int:
        """Close the trace being recorded; its cycle count (0: none recorded)."""
        if self.writer is None:
            return 0
        self.writer.close()
        cycles, self.writer, self.recorder = self.writer.cycles, None, None
        return cycles

    def signature(self, values) -> int:
        """The H3 hash of a 1,024-bit warp register (lane 0 in the low bits): bit ``j`` is
        the parity of the value's bits ``i`` with ``Q[i][j] = 1`` (the XOR of its bytes'
        hashes, :attr:`byte_hashes`)."""
        data = np.asarray(values, "<u4").view(np.uint8)
        return int(np.bitwise_xor.reduce(self._flat_hashes.take(self._byte_rows + data)))

    def verify(self, preg: int, values) -> bool:
        """Verify-read ``preg`` (the verify cache first) and compare with ``values``."""
        cache, stats = self.cache, self.stats
        stored = None
        if cache is not None:
            line = cache.find(preg)
            if line is not None:
                stats["verify_cache_hits"] += 1
                stored = cache.lines[line][1]
        if stored is None:
            stats["verify_reads"] += 1
            stored = self.values[preg].copy()
            if cache is not None:
                cache.lines[cache.pointer] = (preg, stored)
                cache.pointer = (cache.pointer + 1) % cache.config.entries
        return bool(np.array_equal(stored, values))

    def _write(self, preg: int, values) -> None:
        self.values[preg] = values
        self.stats["writes"] += 1
        cache = self.cache
        if cache is not None:
            line = cache.find(preg)
            if line is not None:
                cache.lines[line] = None

    def _complete(self, plan: Plan, preg: int) -> None:
        """Fill the reserved reuse-buffer entry; hand the result to waiting tickets."""
        if plan.fill is not None:
            buffer = self.buffer
            _, _, incs, decs = buffer.advance(None, plan.fill._replace(result=preg))
            self._events(incs, decs)
            self.stats["fills"] += 1
            if self.reservers.get(plan.fill.index, (None, None, None))[2] is plan:
                del self.reservers[plan.fill.index]
        plan.fill, plan.completed = None, True
        for ticket in plan.waiting:
            self.inc(preg)
            ticket.preg = preg

    def _retire(self, key, reg, preg, *, pinned: bool) -> None:
        """Map ``reg`` to ``preg``: the mapping takes a reference, the instruction drops
        its in-flight result reference and the mapping's old register."""
        mapping = self.rename.setdefault(key, {})
        old = mapping.get(reg)
        self.inc(preg)
        mapping[reg] = (preg, pinned)
        self.stats["rename_writes"] += 1
        self.dec(preg)
        if old is not None:
            self.dec(old[0])

    def free(self, warp):
        key = (warp.block, warp.warp)
        if self.tap is not None:
            self.tap.unmap(key, self.rename.get(key, {}))
        if self.backend_tap is not None:
            self.backend_tap.exit(key)
        for preg, _ in self.rename.pop(key, {}).values():
            self.dec(preg)
        held = self.inflight.pop(key, {})
        for queue in held.values():
            for preg in queue:
                self.dec(preg)
        self.flags.pop(key, None)
        self.barriers.pop(key, None)
        if key in self.active_warps:
            self.active_warps.discard(key)
            self.block_warps[warp.block] -= 1
            if not self.block_warps[warp.block]:
                self._release_block(warp.block)

    # -- checks and statistics ---------------------------------------------------------
    def references(self) -> dict:
        """Every holder's references, recounted: register -> count."""
        counts: dict = {}

        def add(preg):
            counts[preg] = counts.get(preg, 0) + 1

        for mapping in self.rename.values():
            for preg, _ in mapping.values():
                add(preg)
        for _, preg in self.vsb.entries.values():
            add(preg)
        for entry in self.buffer.entries:
            if entry is not None:
                for preg in entry.refs:
                    if preg is not None:
                        add(preg)
                if not entry.pending:
                    add(entry.result)
        for held in self.inflight.values():
            for queue in held.values():
                for preg in queue:
                    add(preg)
        for plan in self.plans.values():
            if plan.reused is not None:
                add(plan.reused)
            if plan.ticket is not None and plan.ticket.preg is not None:
                add(plan.ticket.preg)
        return counts

    def check_references(self) -> None:
        """Raise :class:`ProtocolError` unless every register is free or referenced
        exactly as counted (no leak, no early free, no register both free and held)."""
        expected = self.references()
        if expected != self.pool.counts:
            wrong = sorted(set(expected) ^ set(self.pool.counts)
                           | {p for p in expected if expected[p] != self.pool.counts.get(p)})
            shown = ", ".join(f"p{p}: {self.pool.counts.get(p, 0)} counted, "
                              f"{expected.get(p, 0)} held" for p in wrong[:4])
            raise ProtocolError(f"reference counts differ from the holders: {shown}")
        free = set(self.pool.free)
        if len(free) != len(self.pool.free) or free & set(expected):
            raise ProtocolError("a register is free twice or free and referenced")
        if len(free) + len(expected) != self.config.pregs:
            raise ProtocolError(f"{self.config.pregs - len(free) - len(expected)} registers "
                                "are neither free nor referenced (leaked)")

    def summary(self) -> dict:
        """The run's WIR statistics (see docs/wir.md). ``baseline_in_use_mean``: the
        registers a file without renaming holds (every active warp's), sampled where
        ``in_use_mean`` is (at each allocation)."""
        s = dict(self.stats)
        issued = max(s["issued"], 1)
        reused = s["hits"] + s["retry_hits"]
        s["reused"] = reused
        s["reuse_rate"] = reused / issued
        s["retry_gain"] = s["retry_hits"] / issued
        s["vsb_hit_rate"] = s["vsb_hits"] / max(s["hashes"], 1)
        s["in_use_mean"] = s["in_use_sum"] / max(s["in_use_samples"], 1)
        s["baseline_in_use_mean"] = s["base_in_use_sum"] / max(s["in_use_samples"], 1)
        return s


def h3_byte_tables(masks, width: int) -> np.ndarray:
    """``(width, 256)`` uint32: entry ``[p, b]`` is the H3 hash (``masks``: column ``j``
    of ``Q`` as an int) of the value whose byte ``p`` is ``b`` and every other byte 0."""
    rows = np.array([sum((mask >> i & 1) << j for j, mask in enumerate(masks))
                     for i in range(8 * width)], np.uint32).reshape(width, 8)
    byte = np.arange(256)
    tables = np.zeros((width, 256), np.uint32)
    for k in range(8):
        tables ^= np.where((byte >> k & 1).astype(bool), rows[:, k:k + 1], np.uint32(0))
    return tables


def _store_space(ins) -> str | None:
    if ins.base in ("st", "atom", "red"):
        space = ins.mods[0] if ins.mods else "global"
        return "shared" if space == "shared" else "global"
    return None



# -- energy ----------------------------------------------------------------------------

TABLE_III_PJ = {
    "rename table": 3.50, "reuse buffer": 4.71, "hash generation": 4.85,
    "value signature buffer": 4.96, "register allocator": 1.35, "reference count": 0.32,
    "verify cache": 2.93,
}
"""Energy per access of WIR's added structures (paper Table III, 45 nm)."""

HOROWITZ_45NM_PJ = {
    "sram_8kb_64b": 10.0, "int32_add": 0.1, "int32_mult": 3.1, "fp32_add": 0.9,
    "fp32_mult": 3.7,
}
"""Baseline energies per operation at 45 nm, 0.9 V: M. Horowitz, "Computing's energy
problem (and what we can do about it)", ISSCC 2014, Fig. 1.1.9 (the paper's own energy
model is 45 nm too). An 8 KB SRAM's 64-bit access stands for a register-bank access and an
L1 access (the paper's register banks are 2 KB, Fermi's L1 16 KB)."""

LANES_PER_BANK_ACCESS = 2
"""A 64-bit SRAM access carries two 32-bit lanes: a 1,024-bit warp register is 16."""

WARP_REGISTER_PJ = HOROWITZ_45NM_PJ["sram_8kb_64b"] * LANES // LANES_PER_BANK_ACCESS
MEMORY_ACCESS_PJ = WARP_REGISTER_PJ
"""A warp load's L1 or shared-memory access: one 128-byte line (16 x 64-bit)."""


def unit_energy(ins) -> float:
    """Functional-unit (and L1) energy of one warp instruction: 32 lanes of its operation
    (Horowitz's figures; an FMA is a multiply and an add, a 64-bit or special-function
    operation counts as an fp32 multiply, moves, conversions and logic as an int32 add)."""
    e = HOROWITZ_45NM_PJ
    if ins.base == "ld" or ins.base == "st" or ins.base in ("atom", "red"):
        return 0.0 if ins.space == "param" else float(MEMORY_ACCESS_PJ)
    if ins.base in ("bra", "ret", "exit", "bar"):
        return 0.0
    floating = any(m.startswith("f") for m in ins.mods)
    if ins.base in ("fma", "mad"):
        per_lane = e["fp32_mult"] + e["fp32_add"] if floating else e["int32_mult"] + \
            e["int32_add"]
    elif ins.base == "mul":
        per_lane = e["fp32_mult"] if floating else e["int32_mult"]
    elif ins.base in ("add", "sub", "min", "max", "setp", "selp", "neg", "abs"):
        per_lane = e["fp32_add"] if floating else e["int32_add"]
    elif ins.base in ("div", "rcp", "sqrt", "rsqrt", "sin", "cos", "ex2", "lg2", "rem"):
        per_lane = e["fp32_mult"]
    else:
        per_lane = e["int32_add"]
    return per_lane * LANES


def energy(summary: dict, config: WirConfig) -> dict:
    """Backend energy (pJ) of a run without and with WIR, and WIR's added structures.

    Baseline: register-file reads and writes (every source and destination word) plus
    functional units and L1 of every instruction. WIR: the reads the collector made, the
    writes made (allocations, pinned writes, dummy MOVs) and the verify-reads that missed
    the verify cache; units of the executed instructions; and the structures of
    :data:`TABLE_III_PJ` per access counted in the run.
    """
    s, t = summary, TABLE_III_PJ
    added = {
        "rename table": s["rename_reads"] + s["rename_writes"],
        "reuse buffer": s["lookups"] + s["reserved"] + s["fills"],
        "hash generation": s["hashes"],
        "value signature buffer": s["hashes"] + s["vsb_writes"] + s["evictions"],
        "register allocator": s["allocations"] + s["frees"],
        "reference count": s["ref_events"],
        "verify cache": (s["vsb_hits"] + s["verify_reads"]) if config.verify_cache else 0,
    }
    added_pj = {name: count * t[name] for name, count in added.items()}
    base_rf = (s["base_rf_reads"] + s["base_rf_writes"]) * WARP_REGISTER_PJ
    wir_rf = (s["reads"] + s["writes"] + s["verify_reads"] + s["dummy_movs"]) * \
        WARP_REGISTER_PJ
    base = base_rf + s["base_unit_pj"]
    total = wir_rf + s["unit_pj"] + sum(added_pj.values())
    return {"baseline_pj": base, "baseline_rf_pj": base_rf, "wir_pj": total,
            "wir_rf_pj": wir_rf, "added_pj": sum(added_pj.values()), "added": added_pj,
            "saving": 1 - total / base if base else 0.0}


# -- a run -------------------------------------------------------------------------------

def run_wir(kernel: str, config: str = "RLPV", size: str = "test", *, seed: int = 0,
            sm: SMConfig | None = None, baseline: bool = True, check_every: int = 0,
            record_vsb: str | None = None, record_pipeline: str | None = None,
            record_backend: str | None = None, mechanism=None) -> dict:
    """Run workload ``kernel`` with WIR configuration ``config`` (a name of
    :data:`CONFIGS`) on the fermi preset (or ``sm``) with every register access checked;
    what ``gpurf sm run KERNEL --mechanism wir:CONFIG`` prints.

    Returns the statistics of :meth:`WirStorage.summary`, the energy of :func:`energy`,
    ``cycles``, ``baseline_cycles`` and ``speedup`` (with ``baseline``), ``passed``
    (outputs equal numpy). ``check_every``: recount the references during the run too;
    ``record_vsb``: a trace file for the VSB's ports (the first launch; ``vsb_cycles``);
    ``record_pipeline``: a trace file of the run's register traffic through ``wir.pipeline``
    (every launch; ``pipeline_cycles``, ``pipeline_outcomes``, ``pipeline_verify_cached``:
    the verify-reads its verify cache answered); ``record_backend``: a trace
    file of the run's instruction stream through ``wir.backend`` (every launch;
    ``backend_cycles``, ``backend_outcomes``, ``backend_responses``); ``mechanism``: more
    options for the WIR run's timing model (:func:`~gpurf.sim.sm.run.run_kernel`'s
    ``mechanism``; :func:`gpurf.sim.sm.record_mechanisms.record_wir` records its blocks).
    Raises :class:`~gpurf.sim.sm.values.ValueMismatchError` on a
    false reuse or share and :class:`ProtocolError` on a reference-count error.
    """
    from .config import load_config
    from .run import load_workload, run_kernel

    if config not in CONFIGS:
        raise KeyError(f"unknown WIR configuration {config!r}; known: {', '.join(CONFIGS)}")
    wir = replace(CONFIGS[config], seed=seed)
    sm = sm or load_config(preset="fermi")
    _, program, _ = load_workload(kernel)
    storage = WirStorage(program, wir, registers_per_warp=_registers_per_warp(program),
                         check_every=check_every)
    if record_vsb is not None:
        storage.record_vsb(record_vsb, {"kind": "kernel", "kernel": kernel, "size": size,
                                        "configuration": config})
    if record_pipeline is not None:
        storage.record_pipeline(record_pipeline, {"kind": "kernel", "kernel": kernel,
                                                  "size": size, "configuration": config})
    if record_backend is not None:
        storage.record_backend(record_backend, {"kind": "kernel", "kernel": kernel,
                                                "size": size, "configuration": config})
    run = run_kernel(kernel, size, timing=wir_sm_config(sm, wir), values=storage,
                     mechanism=mechanism)
    backend_cycles, backend_outcomes, backend_responses = storage.close_backend()
    vsb_cycles = storage.close_trace()
    pipeline_cycles, pipeline_outcomes, pipeline_cached = storage.close_pipeline()
    storage.check_references()
    out = storage.summary()
    out.update(kernel=kernel, config=config, size=size, seed=seed, passed=run.passed,
               vsb_cycles=vsb_cycles, pipeline_cycles=pipeline_cycles,
               pipeline_outcomes=pipeline_outcomes, pipeline_verify_cached=pipeline_cached,
               backend_cycles=backend_cycles,
               backend_outcomes=backend_outcomes, backend_responses=backend_responses,
               cycles=run.stats["timing"].cycles, energy=energy(out, wir),
               warp_instructions=run.stats["warp_instructions"])
    if baseline:
        base = run_kernel(kernel, size, timing=sm, values=True)
        out["baseline_cycles"] = base.stats["timing"].cycles
        out["speedup"] = out["baseline_cycles"] / out["cycles"]
        out["passed"] = out["passed"] and base.passed
    return out


def _registers_per_warp(program: Program) -> int:
    from .timing import static_info

    return static_info(program).registers
