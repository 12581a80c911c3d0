"""RegLess' compiler pass (paper Section 4): regions, register lifetimes, preloads.

Region creation is Algorithm 1. Every basic block starts as a region; a region that is not
valid (``IsValid``) is split at ``FindSplitPoint`` and the second part goes back on the
worklist. A region is valid when

- its most concurrently held registers (:attr:`Region.max_live`) are at most
  ``max_live_registers``,
- its most concurrently held registers of one OSU bank are at most ``lines_per_bank``,
- it does not hold a global load together with the first use of the loaded value.

``FindSplitPoint``: ``upperBound`` is the first pc whose instruction makes the first part
invalid (the split pc, the first instruction of the second part, is at most that);
``lowerBound`` the first split pc that leaves the fewest global-load / first-use pairs
inside the two parts, moved to at least ``min_region_instructions`` after the start (the
paper's ``startPC + 48``: six 8-byte instructions) but not past ``upperBound``; the split
is the pc of that window with the fewest inputs + outputs of the two parts together (ties:
the latest, so the first part is the larger).

Lifetimes (Sections 4.3-4.4). A register's line is held from the region's start (an input,
preloaded) or from its first write in the region, to its last access in the region, which
carries the last-use flag: **erase** (the value is dead after it for every lane: the line
goes to the free list) or **evict** (still live: the line goes to the clean/dirty list and
may move to L1). Inputs are the registers read before being written in the region and the
registers with a **soft definition** in it; a soft definition may not rewrite all 32 lanes,
so the region preloads the register to keep the other lanes' values (paper 5.2.3). A
preload whose value is dead at the region's exit, or overwritten by a full write in it, is
an **invalidating** preload (its L1 copy is dropped, ``r2`` of Fig. 6). A live range that
control flow kills (live at the end of a region, dead at the entry of a successor: ``r3``
of Fig. 6) is **invalidated** once, at the entry of the region that post-dominates its
definitions and death points (Section 4.4; the rule is stated in
:mod:`gpurf.sim.passes.regless.invalidation`); ``RegionConfig(invalidation="entry")`` instead
invalidates it at the entry of every region where it becomes dead (the placement before
the post-dominator was computed), for comparison (:func:`invalidation_summary`).

Soft definitions are Algorithm 2 as written (:func:`is_soft_def`) on the per-thread
liveness, plus:

- a guarded instruction's destination (it writes only the lanes whose guard holds);
- ``parked_soft_defs`` (default on): a definition on one side of a divergent branch of a
  register that the lanes waiting meanwhile still need (:func:`parking`). Algorithm 2
  misses the if/else shape where both sides write a register, neither reads it first, and
  it is read after the join: the side that runs second allocates a fresh line and the
  other side's lanes are lost at its eviction. No workload has that shape; the enforcement
  run catches it on a vecadd variant built that way when the rule is off
  (tests/test_passes_regless.py).

Liveness: live ranges do not end at a soft definition (the pass' own backward dataflow
on physical registers, a soft definition being a use and not a kill), made warp-level as
in :func:`gpurf.sim.passes.dataflow.warp_liveness`: registers the waiting lanes need are live on
the side of the branch that runs meanwhile. Unlike that function (which adds the fall-through's
and the reconvergence point's needs to both sides, right for the functional model, which
runs the taken side first), :func:`parking` adds to each side the other side's entry and
the reconvergence point, whichever side runs first. With warp-level liveness "dead at a
region's entry" means dead for every lane, waiting lanes included, so an invalidation
placed there cannot drop a value some lane still needs. Both placements only invalidate
where that holds. The post-dominator one (the paper's) does not rely on it as much: on a
vecadd variant whose waiting lanes need two registers the running side does not, with
:func:`parking` turned off the entry placement invalidates them at that side's entry and
the waiting lanes read poison, while the post-dominator places them at the join and the
run is clean (tests/test_passes_regless.py). It also places fewer invalidations: a live
range dying on several edges gets one.

Interpretations:

- Registers are the allocator's physical 32-bit registers (:func:`gpurf.sim.passes.dataflow.
  register_keys`; a 64-bit value is two registers, in two banks); predicates are not staged
  in the OSU (the GPU keeps them in their own file) and get no annotation.
- Bank usage is per bank the most lines held at once in the region, for warp 0; warp ``w``
  uses bank ``(b + w) % banks`` for the count of bank ``b`` (:meth:`Region.descriptor`).
  A line is counted held at an instruction that reads it for the last time and also at the
  instruction writing the line it reserves (reserve happens at register read), which is
  never less than the hardware needs.
- ``max_live_registers`` defaults to 32, a quarter of a 128-line OSU (the paper gives no
  number, only "not too large a fraction of the OSU"); banks 8 x 16 lines are the spec's.
- Evict vs erase follows liveness, not the input/interior class of the spec: an input
  whose value dies in the region is erased at its last use (its L1 copy went with the
  invalidating preload); an interior register is always erased, an output always evicted.
- A region that is a single instruction and still invalid (more registers than the
  limits) cannot be split: :class:`ValueError`.
"""

import json
import re
from collections import deque
from dataclasses import dataclass, field
from itertools import pairwise

from gpurf.hw.params import check_bool, check_choice, check_int, check_int_choice
from gpurf.sim.passes.dataflow import EXIT, KernelFlow, kernel_flow
from gpurf.sim.passes.enforcement import ALL_LANES, Enforcement
from gpurf.sim.passes.regless.invalidation import (
    entry_invalidations,
    post_dominator_invalidations,
    region_graph,
)
from gpurf.sim.ptx.ir import Kernel

__all__ = ["INVALIDATION_CHOICES", "Region", "RegionConfig", "RegionPass", "global_load_uses",
           "invalidation_summary", "is_soft_def", "parking", "regless_pass", "soft_definitions"]

MAX_LINES_PER_BANK = 256
BANK_CHOICES = (1, 2, 4, 8, 16, 32)
ERASE, EVICT = "erase", "evict"
INVALIDATION_CHOICES = ("post_dominator", "entry")


@dataclass(frozen=True)
class RegionConfig:
    """Validated parameters of :func:`regless_pass` (defaults: spec / paper values).

    Attributes
    ----------
    max_live_registers : int
        Most registers a region may hold at once (``1..banks * lines_per_bank``).
    banks : int
        OSU banks (one of 1, 2, 4, 8, 16, 32).
    lines_per_bank : int
        Lines per OSU bank (``1..256``).
    min_region_instructions : int
        The split window starts at least this many instructions after the region's start
        when possible (``1..64``).
    parked_soft_defs : bool
        Also treat definitions the lanes parked by a divergent branch depend on as soft.
    invalidation : str
        Where a register dead by control flow is invalidated: ``"post_dominator"`` (the
        paper: once per live range, in the post-dominator of its definitions and death
        points, :mod:`gpurf.sim.passes.regless.invalidation`) or ``"entry"`` (at the entry of every
        region where it becomes dead).
    """

    max_live_registers: int = 32
    banks: int = 8
    lines_per_bank: int = 16
    min_region_instructions: int = 6
    parked_soft_defs: bool = True
    invalidation: str = "post_dominator"

    def __post_init__(self):
        check_int_choice("banks", self.banks, BANK_CHOICES)
        check_int("lines_per_bank", self.lines_per_bank, 1, MAX_LINES_PER_BANK)
        check_int("max_live_registers", self.max_live_registers, 1,
                  self.banks * self.lines_per_bank)
        check_int("min_region_instructions", self.min_region_instructions, 1, 64)
        check_bool("parked_soft_defs", self.parked_soft_defs)
        check_choice("invalidation", self.invalidation, INVALIDATION_CHOICES)


@dataclass(frozen=True)
class Region:
    """One region and its annotations: what the capacity manager's region descriptor is
    built from (:meth:`descriptor`).

    Attributes
    ----------
    index : int
        Position in pc order.
    block : int
        Its basic block.
    start, end : int
        Instructions ``start:end``.
    preloads : tuple of str
        Registers fetched before the region runs (inputs, soft-defined registers).
    invalidating : frozenset of str
        Preloads whose L1 copy is dropped by the preload (the value is not needed from L1
        again).
    invalidations : tuple of str
        Registers dead from the region's entry on (invalidated in L1 at activation).
    soft : frozenset of str
        Registers with a soft definition in the region (all preloaded).
    outputs : tuple of str
        Registers written in the region and live at its exit.
    interiors : tuple of str
        Registers written in the region, neither input nor output.
    bank_usage : tuple of int
        Per OSU bank (for warp 0), the most lines the region holds at once.
    max_live : int
        The most lines held at once over all banks.
    last_use : dict
        pc -> {register: ``"evict"`` or ``"erase"``}: the flag carried by the last access
        of each register in the region.
    """

    index: int
    block: int
    start: int
    end: int
    preloads: tuple
    invalidating: frozenset
    invalidations: tuple
    soft: frozenset
    outputs: tuple
    interiors: tuple
    bank_usage: tuple
    max_live: int
    last_use: dict = field(repr=False)

    @property
    def instructions(self) -> int:
        return self.end - self.start

    def descriptor(self, warp: int = 0) -> dict:
        """The region descriptor of the spec for ``warp``: header ``{warp, bank_usage,
        n_entries}`` and entries ``(reg, kind)``: invalidations first, then each preload
        (an invalidating preload is followed by an ``invalidate`` of the same register,
        processed after it in queue order)."""
        banks = len(self.bank_usage)
        usage = [0] * banks
        for b, n in enumerate(self.bank_usage):
            usage[(b + warp) % banks] = n
        entries = [(_number(k), "invalidate") for k in self.invalidations]
        for k in self.preloads:
            entries.append((_number(k), "preload"))
            if k in self.invalidating:
                entries.append((_number(k), "invalidate"))
        return {"warp": warp, "bank_usage": usage, "n_entries": len(entries),
                "entries": entries}


def _number(key: str) -> int:
    """The register number: ``R12`` -> 12 (``%r12`` for hand-written physical code)."""
    return int(re.search(r"\d+$", key).group())


def _order(keys) -> tuple:
    return tuple(sorted(keys, key=lambda k: (_number(k), k)))


def is_soft_def(cfg, live_in: list, pc: int, reg: str) -> bool:
    """Algorithm 2 as written: whether the definition of ``reg`` at ``pc`` is soft.
    ``live_in`` is per block the registers live at its entry (the edge's liveness)."""
    insn_bb = cfg.block_of[pc]
    doms = _chain(cfg.idom, insn_bb)
    for dom_bb in doms - {insn_bb}:
        strict_pdoms = _chain(cfg.ipdom, dom_bb) - {dom_bb}
        if doms & strict_pdoms:
            continue
        for succ in cfg.blocks[dom_bb].succs:
            if succ == EXIT or cfg.dominates(succ, insn_bb):
                continue
            if reg in live_in[succ]:
                return True
    return False


def _chain(tree: dict, node: int) -> set:
    """``node`` and its (post-)dominators."""
    result = set()
    while node in tree and node not in result:
        result.add(node)
        node = tree[node]
    return result


def parking(flow: KernelFlow) -> list[tuple[frozenset, tuple]]:
    """Per side of every guarded branch: ``(pcs of that side, pcs where the other lanes
    wait meanwhile)``. A side is the blocks reachable from the branch target (or the
    fall-through) without passing the reconvergence block; while it runs, the other lanes
    wait at the other side's first instruction (if it has not run yet) or at the
    reconvergence point (``len(code)`` for the exit is left out). Independent of which
    side the SIMT stack runs first."""
    cfg, code = flow.cfg, flow.kernel.instructions
    sides = []
    for block in cfg.blocks:
        pc = block.end - 1
        if not (code[pc].is_branch and code[pc].guard is not None):
            continue
        stop = cfg.ipdom.get(block.index, EXIT)
        rpc = cfg.reconvergence_pc(pc)
        target = flow.kernel.labels[code[pc].operands[0].name]
        for start, other in ((target, pc + 1), (pc + 1, target)):
            if start >= len(code) or cfg.block_of[start] == stop:
                continue
            pcs = _side(cfg, cfg.block_of[start], stop)
            sides.append((pcs, tuple(p for p in (other, rpc) if p < len(code))))
    return sides


def _side(cfg, first: int, stop: int) -> frozenset:
    seen, todo = set(), [first]
    while todo:
        b = todo.pop()
        if b in seen or b in (EXIT, stop):
            continue
        seen.add(b)
        todo.extend(cfg.blocks[b].succs)
    return frozenset(pc for b in seen for pc in range(cfg.blocks[b].start, cfg.blocks[b].end))


def soft_definitions(flow: KernelFlow, parked: bool = True) -> list[frozenset]:
    """Per pc, the physical registers it defines softly: a guarded instruction's, those of
    Algorithm 2 (per-thread liveness of the physical registers), and with ``parked`` those
    of the divergent-region rule (module docstring). Physical, not virtual: the allocator
    (per-thread liveness) lets a temporary of one side of a branch share the register of a
    value the lanes parked on the other side still need (``hotspot``)."""
    code = flow.kernel.instructions

    def keys(vregs):
        return frozenset(k for v in vregs for k in flow.keys.get(v, ()))

    live_in = [keys(s) for s in flow.live.live_in]
    parked_at = [frozenset()] * len(code)
    if parked:
        for pcs, parks in parking(flow):
            need = keys(set().union(*(flow.live.live_before[p] for p in parks)))
            for pc in pcs:
                parked_at[pc] |= need
    return [frozenset(k for k in keys(ins.dests)
                      if ins.guard is not None or k in parked_at[pc]
                      or is_soft_def(flow.cfg, live_in, pc, k))
            for pc, ins in enumerate(code)]


def global_load_uses(flow: KernelFlow) -> list[tuple[int, int]]:
    """``(load pc, first-use pc)`` of every global load whose value is read in its own
    basic block."""
    code, cfg = flow.kernel.instructions, flow.cfg
    pairs = []
    for pc, ins in enumerate(code):
        if ins.base not in ("ld", "atom") or "global" not in ins.mods or not ins.dests:
            continue
        end = cfg.blocks[cfg.block_of[pc]].end
        value = ins.dests[0]
        for use in range(pc + 1, end):
            if value in code[use].sources:
                pairs.append((pc, use))
                break
            if value in code[use].dests and code[use].guard is None:
                break
    return pairs


class _Facts:
    """Per-instruction register facts on physical registers (predicates left out)."""

    def __init__(self, flow: KernelFlow, config: RegionConfig):
        self.flow, self.config = flow, config
        code = flow.kernel.instructions
        self.reads = [self._keys(ins.sources) for ins in code]
        self.writes = [self._keys(ins.dests) for ins in code]
        self.soft = [s & w for s, w in zip(soft_definitions(flow, config.parked_soft_defs),
                                           self.writes, strict=True)]
        self.pairs = global_load_uses(flow)
        self.before, self.after = self._liveness()

    def _keys(self, vregs) -> frozenset:
        regs = self.flow.kernel.regs
        return frozenset(k for v in vregs if regs[v].type != "pred"
                         for k in self.flow.keys.get(v, ()))

    def _effects(self, pc):
        return self.reads[pc] | self.soft[pc], self.writes[pc] - self.soft[pc]

    def _liveness(self):
        """Warp-level liveness on physical registers in which a soft definition is a use
        and not a kill."""
        cfg = self.flow.cfg
        n = len(self.reads)
        live_in = [frozenset()] * len(cfg.blocks)
        changed = True
        while changed:
            changed = False
            for block in reversed(cfg.blocks):
                live = set().union(*(live_in[s] for s in block.succs if s != EXIT))
                for pc in range(block.end - 1, block.start - 1, -1):
                    uses, kills = self._effects(pc)
                    live = (live - kills) | uses
                if live != live_in[block.index]:
                    live_in[block.index] = frozenset(live)
                    changed = True
        before, after = [frozenset()] * n, [frozenset()] * n
        for block in cfg.blocks:
            live = set().union(*(live_in[s] for s in block.succs if s != EXIT))
            for pc in range(block.end - 1, block.start - 1, -1):
                after[pc] = frozenset(live)
                uses, kills = self._effects(pc)
                live = (live - kills) | uses
                before[pc] = frozenset(live)
        for pcs, parks in parking(self.flow):
            need = frozenset().union(*(before[p] for p in parks))
            for pc in pcs:
                after[pc] |= need
        for pc in range(n):
            uses, kills = self._effects(pc)
            before[pc] = uses | (after[pc] - kills)
        return before, after


@dataclass(frozen=True)
class _Span:
    """What :func:`_analyze` finds about instructions ``start:end`` as one region."""

    inputs: frozenset
    defined: frozenset
    last: dict
    max_live: int
    bank_usage: tuple
    pairs: int


def _analyze(facts: _Facts, start: int, end: int) -> _Span:
    inputs, defined, first, last = set(), set(), {}, {}
    for pc in range(start, end):
        for k in facts.reads[pc]:
            if k not in defined:
                inputs.add(k)
            first.setdefault(k, pc)
            last[k] = pc
        for k in facts.writes[pc]:
            if k in facts.soft[pc] and k not in defined:
                inputs.add(k)
            defined.add(k)
            first.setdefault(k, pc)
            last[k] = pc
    banks = facts.config.banks
    delta = [[0] * (end - start + 1) for _ in range(banks)]
    for k, stop in last.items():
        begin = start if k in inputs else first[k]
        row = delta[_number(k) % banks]
        row[begin - start] += 1
        row[stop - start + 1] -= 1
    held = [_running(row) for row in delta]
    total = max((sum(col) for col in zip(*held, strict=True)), default=0)
    pairs = sum(start <= load and use < end for load, use in facts.pairs)
    return _Span(frozenset(inputs), frozenset(defined), last, total,
                 tuple(max(row, default=0) for row in held), pairs)


def _running(delta: list) -> list:
    out, acc = [], 0
    for d in delta[:-1]:
        acc += d
        out.append(acc)
    return out


def _valid(facts: _Facts, span: _Span) -> bool:
    config = facts.config
    return (span.max_live <= config.max_live_registers
            and max(span.bank_usage, default=0) <= config.lines_per_bank
            and span.pairs == 0)


def _io(facts: _Facts, start: int, end: int) -> int:
    span = _analyze(facts, start, end)
    outputs = span.defined & facts.after[end - 1]
    return len(span.inputs) + len(outputs)


def _find_split_point(facts: _Facts, start: int, end: int) -> int:
    """FindSplitPoint: the first pc of the second part (see the module docstring)."""
    upper = next(e for e in range(start + 1, end + 1)
                 if not _valid(facts, _analyze(facts, start, e))) - 1
    if upper == start:
        span = _analyze(facts, start, start + 1)
        raise ValueError(
            f"{facts.flow.kernel.name}: pc {start} alone holds {span.max_live} registers "
            f"(at most {max(span.bank_usage)} in one bank), more than max_live_registers="
            f"{facts.config.max_live_registers} or lines_per_bank={facts.config.lines_per_bank}")
    candidates = range(start + 1, upper + 1)
    uncut = {p: sum((start <= load and use < p) or (p <= load and use < end)
                    for load, use in facts.pairs) for p in candidates}
    fewest = min(uncut.values())
    lower = min(p for p in candidates if uncut[p] == fewest)
    lower = min(max(start + facts.config.min_region_instructions, lower), upper)
    return min(range(lower, upper + 1),
               key=lambda p: (_io(facts, start, p) + _io(facts, p, end), -p))


def _create_regions(facts: _Facts) -> list[tuple[int, int, int]]:
    """Algorithm 1: ``(block, start, end)`` of every region, in pc order; a barrier ends
    its region (:func:`_barrier_spans`)."""
    worklist = deque(span for b in facts.flow.cfg.blocks for span in _barrier_spans(facts, b))
    regions = []
    while worklist:
        block, start, end = worklist.popleft()
        if not _valid(facts, _analyze(facts, start, end)):
            split = _find_split_point(facts, start, end)
            worklist.append((block, split, end))
            end = split
        regions.append((block, start, end))
    return sorted(regions, key=lambda r: r[1])


def _barrier_spans(facts: _Facts, block) -> list[tuple[int, int, int]]:
    """Basic block ``block`` cut after each barrier (``bar``). **Interpretation** (the paper
    does not mention barriers): a warp waiting at a barrier must hold no OSU lines, or the
    warps it waits for may find no capacity to activate their regions and never arrive;
    ending the region at the barrier drains it before the wait."""
    code = facts.flow.kernel.instructions
    cuts = [pc + 1 for pc in range(block.start, block.end - 1) if code[pc].base == "bar"]
    bounds = [block.start, *cuts, block.end]
    return [(block.index, a, b) for a, b in pairwise(bounds)]


def _invalidations(facts: _Facts, spans: list) -> list[frozenset]:
    """Per region, the registers invalidated at its entry (``config.invalidation``)."""
    if facts.config.invalidation == "entry":
        succs = region_graph(facts.flow.cfg, spans)
        return entry_invalidations(spans, succs, facts.before, facts.after)
    uses = [r | s for r, s in zip(facts.reads, facts.soft, strict=True)]
    kills = [w - s for w, s in zip(facts.writes, facts.soft, strict=True)]
    return post_dominator_invalidations(facts.flow.cfg, spans, uses, facts.writes, kills,
                                        facts.before, facts.after)


def _annotate(facts: _Facts, index: int, block: int, start: int, end: int,
              dead: frozenset) -> Region:
    span = _analyze(facts, start, end)
    live_out = facts.after[end - 1]
    outputs = span.defined & live_out
    hard = set().union(*(facts.writes[pc] - facts.soft[pc] for pc in range(start, end)))
    invalidating = frozenset(k for k in span.inputs if k not in live_out or k in hard)
    last_use = {}
    for k, pc in span.last.items():
        last_use.setdefault(pc, {})[k] = EVICT if k in facts.after[pc] else ERASE
    soft = frozenset().union(*(facts.soft[pc] for pc in range(start, end)))
    return Region(index, block, start, end, _order(span.inputs), invalidating, _order(dead),
                  soft, _order(outputs), _order(span.defined - span.inputs - outputs),
                  span.bank_usage, span.max_live, last_use)


@dataclass(frozen=True)
class RegionPass:
    """Result of :func:`regless_pass`.

    Attributes
    ----------
    flow : KernelFlow
    config : RegionConfig
    regions : tuple of Region
        In pc order; together they cover every instruction once.
    live_before, live_after : list of frozenset
        Per pc, the warp-level live physical registers (soft definitions do not kill).
    """

    flow: KernelFlow
    config: RegionConfig
    regions: tuple
    live_before: list
    live_after: list

    def region_of(self, pc: int) -> Region:
        return next(r for r in self.regions if r.start <= pc < r.end)

    def operand_flags(self, pc: int) -> list[tuple[str, str, str | None]]:
        """``(register, role, flag)`` per register operand of ``pc`` (destination first):
        the last-use flag rides on the destination when the instruction writes the
        register, else on the source."""
        ins = self.flow.kernel.instructions[pc]
        flags = dict(self.region_of(pc).last_use.get(pc, {}))
        result = []
        for role, vregs in (("dst", ins.dests), ("src", ins.sources)):
            for v in vregs:
                keys = [k for k in self.flow.keys.get(v, ()) if k in flags]
                result.append((v, role, flags[keys[0]] if keys else None))
                for k in keys:
                    del flags[k]
        return result

    def enforcement(self) -> Enforcement:
        """The annotations as poison (:func:`gpurf.sim.sm.poison.run_enforced`). Per warp the
        run keeps, besides the OSU view (``poison``: lanes this region cannot read), the lanes
        whose value the backing store (L1) has lost (``scratch["lost"]``: erased,
        invalidated, or never written into a line that was then written back). At a
        region's entry: invalidations lose their register; every register is unreadable
        except the preloads, which read the backing store (an invalidating preload then
        loses it there). After a last use: erase loses the register; evict of a line
        written in the region (dirty) writes it back, its unreadable lanes lost; evict of a
        clean line writes nothing (the OSU may drop it). Registers are readable once written."""
        regs = self.flow.kernel.regs
        registers = _order({k for v, keys in self.flow.keys.items() for k in keys
                            if regs[v].type != "pred"})
        entry = {r.start: r for r in self.regions}
        code = self.flow.kernel.instructions
        written = [tuple(k for v in ins.dests if regs[v].type != "pred"
                         for k in self.flow.keys.get(v, ())) for ins in code]
        flags = [()] * len(code)
        for r in self.regions:
            for pc, keys in r.last_use.items():
                flags[pc] = tuple(keys.items())

        def before(poison, scratch, step):
            region = entry.get(step.pc)
            if region is None:
                return
            lost = scratch.setdefault("lost", {})
            scratch["dirty"] = set()
            for k in region.invalidations:
                lost[k] = ALL_LANES
            for k in registers:
                poison[k] = ALL_LANES
            for k in region.preloads:
                poison[k] = lost.get(k, 0)
            for k in region.invalidating:
                lost[k] = ALL_LANES

        def after(poison, scratch, step):
            lost, dirty = scratch.setdefault("lost", {}), scratch.setdefault("dirty", set())
            dirty.update(written[step.pc])
            for k, flag in flags[step.pc]:
                if flag == ERASE:
                    lost[k] = ALL_LANES
                elif k in dirty:
                    lost[k] = poison.get(k, 0)
                poison[k] = ALL_LANES

        return Enforcement(self.flow.keys, [frozenset()] * len(code), "regless", before, after)

    def summary(self) -> dict:
        """Regions, mean instructions / held registers / preloads per region."""
        n = len(self.regions)
        return {"kernel": self.flow.kernel.name, "regions": n,
                "instructions_per_region": sum(r.instructions for r in self.regions) / n,
                "max_live_mean": sum(r.max_live for r in self.regions) / n,
                "max_live_max": max(r.max_live for r in self.regions),
                "preloads_per_region": sum(len(r.preloads) for r in self.regions) / n,
                "invalidations": self.invalidation_count()}

    def invalidation_count(self) -> int:
        """Invalidations placed (static): region-entry invalidations, not counting the
        invalidating preloads."""
        return sum(len(r.invalidations) for r in self.regions)

    def listing(self) -> str:
        """The kernel as PTX, a header line per region (preloads, ``!`` = invalidating;
        invalidations; bank usage) and the last-use flags after each instruction."""
        code = self.flow.kernel.instructions
        label_at = {i: name for name, i in self.flow.kernel.labels.items()}
        lines = []
        for r in self.regions:
            if r.start in label_at:
                lines.append(f"{label_at[r.start]}:")
            pre = " ".join(k + ("!" if k in r.invalidating else "") for k in r.preloads)
            lines.append(f"  // region {r.index}: preload [{pre}] invalidate "
                         f"[{' '.join(r.invalidations)}] banks {list(r.bank_usage)} "
                         f"live {r.max_live}")
            for pc in range(r.start, r.end):
                flags = ", ".join(f"{k}:{f}" for k, f in r.last_use.get(pc, {}).items())
                lines.append(f"  {pc:4d}  {code[pc]}" + (f"  // {flags}" if flags else ""))
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({"kernel": self.flow.kernel.name, "regions": [{
            "index": r.index, "block": r.block, "start": r.start, "end": r.end,
            "preloads": list(r.preloads), "invalidating": sorted(r.invalidating, key=_number),
            "invalidations": list(r.invalidations), "outputs": list(r.outputs),
            "interiors": list(r.interiors), "bank_usage": list(r.bank_usage),
            "max_live": r.max_live,
            "last_use": {str(pc): flags for pc, flags in sorted(r.last_use.items())}}
            for r in self.regions]}, indent=1)


def regless_pass(kernel: Kernel | KernelFlow, **config) -> RegionPass:
    """RegLess' regions and annotations of ``kernel`` (a :class:`KernelFlow` to choose the
    registers); keyword arguments are :class:`RegionConfig`'s."""
    config = RegionConfig(**config)
    flow = kernel if isinstance(kernel, KernelFlow) else kernel_flow(kernel)
    facts = _Facts(flow, config)
    spans = _create_regions(facts)
    regions = tuple(_annotate(facts, i, *r, dead)
                    for i, (r, dead) in enumerate(zip(spans, _invalidations(facts, spans),
                                                      strict=True)))
    return RegionPass(flow, config, regions, facts.before, facts.after)


def invalidation_summary(kernel: Kernel | KernelFlow, **config) -> dict:
    """The invalidations placed (static count) in ``kernel`` with each placement of
    :attr:`RegionConfig.invalidation`, the registers whose invalidation moved, and the
    invalidating preloads (the same with both); keyword arguments are
    :class:`RegionConfig`'s."""
    flow = kernel if isinstance(kernel, KernelFlow) else kernel_flow(kernel)
    passes = {p: regless_pass(flow, **{**config, "invalidation": p})
              for p in INVALIDATION_CHOICES}
    placed = {p: {(r.index, k) for r in rp.regions for k in r.invalidations}
              for p, rp in passes.items()}
    return {"regions": len(passes["entry"].regions),
            **{f"{p} invalidations": len(placed[p]) for p in INVALIDATION_CHOICES},
            "moved": len(placed["post_dominator"] - placed["entry"]),
            "invalidating preloads": sum(len(r.invalidating) for r in passes["entry"].regions)}
