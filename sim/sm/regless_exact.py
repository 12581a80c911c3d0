"""RegLess in the golden SM with the port-exact golden shard: ``--mechanism regless:exact``.

:class:`ReglessExactSM` rides on :class:`~gpurf.sim.sm.timing.TimingSM` through the same two
hooks as the fast model (:mod:`gpurf.sim.sm.regless`): ``power=`` (a warp may issue only
while its shard's capacity manager holds it ACTIVE) and ``values=`` (every operand read is
answered from the shard's OSU and checked against the functional run). Each sub-core's
shard is :class:`gpurf.golden.regless.shard.Shard`, stepped by its ports once per SM
cycle; :class:`ShardPorts` plays everything outside it, as :mod:`gpurf.tb.regless.workload`
does for random regions, but driven by the kernel:

- **metadata store**: ``want`` names a warp slot; its answer, in the same cycle (``want``
  depends on the capacity manager's state only), is the descriptor
  (``cm_region_word_layout`` words, :func:`gpurf.golden.regless.capacity_manager.
  region_words`) of the compiler pass's region at the warp's next pc, rotated to the slot's
  banks. A slot with no warp, or whose warp has finished, is answered with an empty region
  (no entries, no lines): the warp becomes ACTIVE and stays so, eligible but with nothing to
  issue, until a new warp is placed in the slot; the scheduler then issues a ``last``
  instruction for the slot (no destination) in a cycle its own warps do not issue, which
  drains the empty region and puts the slot on the warp stack for its warp's first region.
  **Interpretation:** the capacity manager retires a warp for good on a ``done`` header;
  the SM reuses slots for the warps of later blocks, so ``done`` is never sent. A warp is
  placed in the cycle of the first hook call that finds it live (the SM places a block's
  warps at the start of a cycle and asks ``ready`` in it): the shard's cycles before that
  are stepped without it, so neither its region nor that drain comes before the warp.
- **scheduler**: the ``issue`` port is driven when the instruction is dispatched, once
  its reads and releases were taken, not in the cycle the SM issues it: the capacity
  manager frees a draining region's lines at the region's last issue, and in the SM an
  instruction reads its operands after it issues (driven at the SM's issue, lines still in
  use were counted free and a later region's reserve found none). ``last`` marks the
  region's last dispatch (regions counted as the fast model counts them); the destination's
  bank is the first word's (the capacity manager counts one outstanding write per
  instruction), and a write waits until its instruction's ``issue`` was taken (a
  ``written`` before it would be lost). The SM's own issue is still gated by ``eligible``.
- **register units**: every operand read the SM's collector makes goes to a ``read`` port
  in its cycle, answered next cycle (the value is compared with the one the SM was given);
  at dispatch the sources' last-use flags become ``release`` requests and each destination
  word a ``reserve`` (``last_use`` from the destination's flag); the result goes to a
  ``write`` port the cycle before the SM's writeback completes (so the SM reads it at
  completion), ``written`` reports the first word. Requests of one register keep their
  order (a release never overtakes its read, a write its reserve); a request whose port or
  bank is busy waits and is offered again next cycle. **Deviation:** the OSU's write port
  carries whole lines, so a write in fewer than 32 lanes is merged with the line's value
  held in the OSU. A read the SM makes while the value's write still waits for its port is
  answered from that write (``read_bypass`` counts them) and read from the OSU behind it.
  Registers a region touched without a last-use flag leave it before the region's last
  ``issue``: on their pending write's ``last_use``, else by a release (kept, not erased).
  A request that waits :data:`STUCK` cycles stops the run (:class:`ReglessError`), and so
  does an SM that issues nothing for :data:`~gpurf.sim.sm.regless.STALL` cycles.
- **barrier unit**: the ``at_barrier`` input has a slot's bit set while its warp waits at
  a barrier and through the cycle it is released
  (:func:`~gpurf.sim.sm.regless.barrier_holds`); 0 with ``nohold``.
- **L1**: the shard's L1 port is always ready; each request takes a cycle of the SM's timing
  L1 (:class:`~gpurf.sim.sm.timing.TimingSM`'s ``l1``, shared with the data accesses) and a
  read is answered, in order, after the L1 hit or miss latency. Register lines, at the
  fast model's addresses, are kept where the fast model keeps them
  (:meth:`~gpurf.sim.sm.regless.ReglessSM.l1_lookup`: Table 1's 48 KB of their own, or the
  SM's L1 with ``sharedl1``; before session 17 always the SM's L1, whatever the
  configuration). The values are kept here (register lines by ``{warp, reg}``,
  compressed lines by number).

The shard's own decisions (when a region is taken, when the warp is ACTIVE, where each
preload is served, which line is evicted) are the golden model's. What the fast model
decides differently is in ``docs/regless.md`` ("Fast model vs golden shard";
:mod:`gpurf.sim.sm.regless_compare` prints both). Test-size kernels take 1.4-35 s of CPU
time (saxpy to kmeans; docs/regless.md).
"""

from collections import Counter, deque
from dataclasses import dataclass, field

import numpy as np
from amaranth.lib import wiring

from gpurf.golden.regless.capacity_manager import region_words
from gpurf.golden.regless.shard import Shard
from gpurf.hw.regless.configs import ShardConfig
from gpurf.hw.regless.layouts import L1Op, WarpState

from .regless import (
    BANKS,
    REGISTER_BASE,
    ReglessConfig,
    ReglessError,
    ReglessSM,
    barrier_holds,
    run_fields,
    run_on,
    shard_params,
)
from .values import LANES

__all__ = ["Decision", "ReglessExactSM", "ShardPorts", "run_regless_exact", "shard_params"]

DEFAULT = ReglessConfig()
"""The paper's design point: 512 entries per SM, compressor and metadata on."""
STUCK = 100_000
"""Cycles a request may wait for its port before the run stops as stuck (srad and imgvf
wait over 5,000: their register lines queue behind the data on the one L1 port)."""


@dataclass
class Decision:
    """A region's turn on its shard: ``warp`` (block id, warp index), the region's first
    pc ``start``, the cycle its capacity was taken (``activated``: the CM took the
    descriptor's header; the fast model's activation) and the first cycle the warp may
    issue (``staged``)."""

    warp: tuple
    start: int
    activated: int
    staged: int | None


@dataclass(eq=False)
class _Step:
    """A request of the register units waiting for its port: ``kind`` read / release /
    reserve / write of register ``reg`` of slot ``slot``, offered from cycle ``due``."""

    kind: str
    slot: int
    reg: int
    due: int
    flag: int = 0
    """``erase`` of a release, ``last_use`` of a reserve or write."""
    reserve: "_Step | None" = None
    """A write's reserve (its ``line`` once taken)."""
    line: object = None
    data: list | None = None
    written: bool = False
    """A write that reports ``written`` (the instruction's first destination word)."""
    expect: list | None = None
    """A read: the lanes the SM was given."""
    extra: dict = field(default_factory=dict)


class ShardPorts:
    """One sub-core's golden shard and its surroundings (module docstring): the metadata
    store, the scheduler's issue port, the register units and the L1 port.

    ``model`` is the object stepped (the shard, or a trace :class:`~gpurf.golden.trace.
    Recorder` around it); ``shard`` the golden model itself (for the OSU's values).
    """

    def __init__(self, owner: "ReglessExactSM", index: int, params: dict, model, shard):
        self.owner, self.index = owner, index
        self.config = ShardConfig(**params)
        self.ports = self.config.codecs
        self.inputs_names = _input_names(self.config)
        self.model, self.shard = model, shard
        self.time = 0
        """The next cycle to step."""
        self.steps: list[_Step] = []
        self.fake_issues: deque = deque()
        """Slots whose empty region must be drained (a warp was placed there)."""
        self.written: deque = deque()
        self.words: deque = deque()
        self.streaming = False
        self.empty: set[int] = set()
        """Slots holding an empty region (ACTIVE with nothing to issue)."""
        self.reads: list = []
        """``(port, step)`` of the reads taken last cycle (answered this cycle)."""
        self.l1_answers: deque = deque()
        self.l1_values: dict = {}
        self.log: list = []
        """Decisions: ``(cycle, event, slot, detail)``."""
        self.counts = Counter()
        self._last_state = [WarpState.INACTIVE] * self.config.warps

    # --- stepping ------------------------------------------------------------------
    def run_to(self, cycle: int) -> None:
        """Step the shard through every cycle before ``cycle``."""
        while self.time < cycle:
            self._step(self.time)
            self.time += 1

    def _step(self, now: int) -> None:
        ins = {name: 0 for name in self.inputs_names}
        self._l1_inputs(ins, now)
        self._region_word(ins)
        self.fake = False
        presented = self._present(ins, now)
        self._fake_issue(ins)
        ins["at_barrier"] = self.owner.at_barrier(self.index, now)
        outputs = self.model.step(ins)
        if outputs["protocol_error"]:
            raise ReglessError(f"shard {self.index}, cycle {now}: the OSU flagged a protocol "
                               f"error ({self.shard.line_trace()})")
        self._check_reads(outputs, now)
        self._l1_observe(ins, outputs, now)
        if ins["region__valid"] and outputs["region__ready"]:
            self._word_taken(now)
        self._taken(presented, outputs, now)
        self._log_states(now)
        if self.steps and self.steps[0].due < now - STUCK:
            step = self.steps[0]
            raise ReglessError(f"shard {self.index}, cycle {now}: a {step.kind} of slot "
                               f"{step.slot} R{step.reg} has waited since cycle {step.due} "
                               f"(RegLess stuck: {self.shard.line_trace()})")

    # --- the metadata store ----------------------------------------------------------
    def _region_word(self, ins) -> None:
        if not self.streaming:
            want = self.shard.cm.wants()
            self.words = deque(self._descriptor(want) if want is not None else ())
        if self.words:
            ins["region__valid"] = 1
            ins["region__payload"] = self.words[0]

    def _descriptor(self, slot: int) -> list[int]:
        region = self.owner.next_region(self.index, slot)
        if region is None:
            return region_words(self.config.capacity_manager,
                                {"warp": slot, "bank_usage": [0] * BANKS, "n_entries": 0,
                                 "entries": []})
        descriptor = region.descriptor(slot)
        return region_words(self.config.capacity_manager, descriptor)

    def _word_taken(self, now: int) -> None:
        word = self.ports["region__payload"].unpack(self.words.popleft())
        if word.kind == 0:  # a header
            empty = word.n_entries == 0 and not any(word.bank_usage) and \
                self.owner.next_region(self.index, word.warp) is None
            if empty:
                self.empty.add(word.warp)
            else:
                self.owner.region_taken(self.index, word.warp, now)
            self.log.append((now, "region", word.warp, "empty" if empty else "taken"))
        self.streaming = bool(self.words)

    # --- the scheduler -----------------------------------------------------------------
    def _fake_issue(self, ins) -> None:
        """Drain an empty region whose slot has a warp again (module docstring), in a
        cycle no instruction issues."""
        if ins["issue__valid"] or not self.fake_issues:
            return
        slot = self.fake_issues[0]
        if self.shard.cm.state[slot] == WarpState.ACTIVE:
            self.fake_issues.popleft()
            self.empty.discard(slot)
            ins["issue__valid"] = 1
            ins["issue__payload"] = self.ports["issue__payload"].pack(
                {"warp": slot, "has_dst": 0, "dst_bank": 0, "last": 1})
            self.fake = True

    def eligible(self, slot: int) -> bool:
        """Whether the capacity manager holds ``slot`` ACTIVE at the start of cycle
        :attr:`time`."""
        return bool((self.shard.cm.eligible() >> slot) & 1) and slot not in self.empty

    # --- the register units -------------------------------------------------------------
    def _present(self, ins, now: int) -> list:
        """Offer the waiting requests (oldest first, one per register, per-register order
        kept) on free ports; ``[(step, port name)]``."""
        used, blocked, presented = Counter(), set(), []
        waiting = set()
        """Slots with a request other than a write not taken (their issue waits)."""
        osu = self.config.osu
        for step in self.steps:
            if step.kind == "issue":
                if step.slot not in waiting and step.due <= now and not used["issue"]:
                    used["issue"] += 1
                    ins["issue__valid"] = 1
                    ins["issue__payload"] = self.ports["issue__payload"].pack(
                        {k: step.extra[k] for k in ("warp", "has_dst", "dst_bank", "last")})
                    presented.append((step, None))
                waiting.add(step.slot)
                continue
            key = (step.slot, step.reg)
            if step.kind != "write":
                waiting.add(step.slot)
            if key in blocked:
                continue
            blocked.add(key)
            if step.due > now or (step.kind == "write" and (
                    step.data is None or step.reserve.line is None
                    or not step.extra["issue"].line)):
                continue
            port = used[step.kind]
            if port == osu.port_count(step.kind):
                continue
            used[step.kind] += 1
            name = f"{step.kind}__{port}"
            ins[f"{name}__valid"] = 1
            ins[f"{name}__payload"] = self.ports[f"{name}__payload"].pack(self._fields(step))
            presented.append((step, name))
        if self.written:
            slot, bank = self.written[0]
            ins["written__valid"] = 1
            ins["written__payload"] = self.ports["written__payload"].pack(
                {"warp": slot, "bank": bank})
        return presented

    @staticmethod
    def _fields(step: _Step) -> dict:
        if step.kind == "write":
            return {"line": step.reserve.line, "data": step.data, "last_use": step.flag}
        fields = {"warp": step.slot, "reg": step.reg}
        if step.kind == "release":
            fields["erase"] = step.flag
        elif step.kind == "reserve":
            fields["last_use"] = step.flag
        return fields

    def _taken(self, presented, outputs, now: int) -> None:
        if self.written and outputs is not None:
            self.written.popleft()
        taken = set()
        for step, name in presented:
            if name is None:
                taken.add(id(step))
                step.line = True
                self.counts["issues"] += 1
                if step.extra["last"]:
                    self.log.append((now, "last_issue", step.slot, None))
                continue
            if not outputs[f"{name}__ready"]:
                self.counts[f"{step.kind}_waits"] += 1
                continue
            taken.add(id(step))
            self.counts[f"{step.kind}s"] += 1
            if step.kind == "read":
                self.reads.append((name.replace("read", "read_resp", 1), step, now + 1))
            elif step.kind == "reserve":
                resp = name.replace("reserve", "reserve_resp", 1) + "__payload"
                step.line = self.ports[resp].unpack(outputs[resp]).line
            elif step.kind == "write" and step.written:
                self.written.append((step.slot, (step.slot + step.reg) & (BANKS - 1)))
        self.steps = [step for step in self.steps if id(step) not in taken]

    def _check_reads(self, outputs, now: int) -> None:
        """The reads taken last cycle are answered now: the OSU's value must be the one
        the SM was given."""
        due = [entry for entry in self.reads if entry[2] == now]
        self.reads = [entry for entry in self.reads if entry[2] != now]
        for resp, step, _ in due:
            if not outputs[f"{resp}__valid"]:
                raise ReglessError(f"shard {self.index}, cycle {now}: no answer on {resp}")
            got = self.ports[f"{resp}__payload"].unpack(outputs[f"{resp}__payload"])
            got = [int(v) for v in got]
            if step.expect is not None and got != step.expect:
                raise ReglessError(f"shard {self.index}, cycle {now}: the OSU answered slot "
                                   f"{step.slot} R{step.reg} with a value other than the "
                                   "one the SM was given")

    def value(self, slot: int, reg: int) -> list | None:
        """The lanes of ``(slot, reg)`` the OSU holds now (after a write still waiting for
        its port), ``None`` if it holds no line for it."""
        for step in reversed(self.steps):
            if step.kind == "write" and (step.slot, step.reg) == (slot, reg) \
                    and step.data is not None:
                return step.data
        bank = self.shard.osu.banks[(slot + reg) & (BANKS - 1)]
        index = bank.find(slot, reg)
        if index is None or not bank.usable(slot, reg):
            return None
        data = bank.data[index]
        return [0] * LANES if data is None else [int(v) for v in data]

    # --- L1 --------------------------------------------------------------------------
    def _l1_inputs(self, ins, now: int) -> None:
        ins["l1_request__ready"] = 1
        if self.l1_answers and self.l1_answers[0][0] <= now:
            ins["l1_response__valid"] = 1
            ins["l1_response__payload"] = self.l1_answers[0][1]

    def _l1_observe(self, ins, outputs, now: int) -> None:
        if ins["l1_response__valid"] and outputs["l1_response__ready"]:
            self.l1_answers.popleft()
        if not outputs["l1_request__valid"]:
            return
        request = self.ports["l1_request__payload"].unpack(outputs["l1_request__payload"])
        key = ("c", int(request.addr)) if request.compressed else ("r", int(request.addr))
        line = self.owner.l1_line(self.index, key)
        sm = self.owner.sm
        served = sm.l1.serve(now)
        self.counts[f"l1_{L1Op(request.op).name.lower()}"] += 1
        if request.op == L1Op.READ.value:
            hit = self.owner.l1_lookup(line)
            self.counts["l1_read_hits" if hit else "l1_read_misses"] += 1
            start = max([served + (sm.hit_after if hit else sm.miss_after)]
                        + [t for t, _ in self.l1_answers])
            self.l1_answers.append((start, self.l1_values.get(key, 0)))
            self.log.append((now, "l1_read", None, key))
        elif request.op == L1Op.WRITE.value:
            self.l1_values[key] = self.ports["l1_response__payload"].pack(request.data)
            self.owner.l1_write(line)
            self.log.append((now, "l1_write", None, key))
        else:
            self.l1_values.pop(key, None)

    def _log_states(self, now: int) -> None:
        states = self.shard.cm.state
        for slot, state in enumerate(states):
            if state != self._last_state[slot]:
                self.log.append((now + 1, state.name.lower(), slot, None))
                if state == WarpState.ACTIVE:
                    self.owner.staged(self.index, slot, now + 1)
        self._last_state = list(states)

    # --- from the SM ---------------------------------------------------------------------
    def add(self, step: _Step) -> _Step:
        self.steps.append(step)
        return step

    def add_read(self, step: _Step) -> None:
        """A read, before the requests its own instruction's dispatch made of the register
        (the SM reads operands beyond the collector's in the cycle it dispatches, after
        :meth:`ReglessExactSM.dispatched` ran)."""
        for index, other in enumerate(self.steps):
            if other.slot == step.slot and other.kind != "read" \
                    and other.extra.get("dispatch") == step.due:
                self.steps.insert(index, step)
                return
        self.steps.append(step)


def _input_names(config: ShardConfig) -> list[str]:
    """The shard's input ports by Verilog name (an array member's ports with its index)."""
    inputs = {"__".join(map(str, path)) for path, member in
              config.signature().members.flatten()
              if not member.is_signature and member.flow == wiring.In}
    return [name for name in config.codecs
            if "__".join(part for part in name.split("__") if not part.isdigit()) in inputs]


class ReglessExactSM(ReglessSM):
    """RegLess with one port-exact golden shard per sub-core (module docstring); pass it as
    both ``values=`` and ``power=`` (:func:`run_regless_exact` does).

    ``wrap(qualname, params, model, instance) -> model`` (optional) records each shard's
    ports (:meth:`gpurf.sim.sm.record.TraceFolder.wrap`).
    """

    def __init__(self, program, config: ReglessConfig = DEFAULT, *, subcores: int = 4,
                 wrap=None):
        if config.admit not in (0, config.capacity):
            raise ValueError("the golden shard's capacity manager counts every OSU line: "
                             f"admit{config.admit} is the fast model's experiment only")
        super().__init__(program, config, subcores=subcores)
        self.decisions: list[Decision] = []
        """Per region entered, in order: the warp (launch, block, warp), region, activation
        and staged cycles."""
        self.wrap = wrap
        self.subcores = subcores

    def __call__(self, sm) -> "ReglessExactSM":
        self.finish()
        super().__call__(sm)
        params = shard_params(self.program, self.config, sm.config.subcores, sm.config.slots)
        self.params = params
        self.ports = []
        for index in range(sm.config.subcores):
            shard = Shard(**params)
            shard.reset()
            model = shard
            if self.wrap is not None:
                model = self.wrap("regless.shard", params, shard,
                                  f"launch{self.counts['launches']}.shard{index}")
            self.ports.append(ShardPorts(self, index, params, model, shard))
        self.slot_warps: dict = {}
        """``(sub-core, slot)`` -> the warp state placed there last."""
        return self

    def finish(self) -> None:
        """Step every shard of the launch to the last cycle any of them reached (a shard's
        trace then covers the whole launch)."""
        ports = getattr(self, "ports", [])
        end = max((p.time for p in ports), default=0)
        for p in ports:
            p.run_to(end)

    # -- the power hook ---------------------------------------------------------------
    def ready(self, sub, slots: list[int], now: int) -> list[int]:
        self._watch(now)
        self._catch_up(sub, now)
        if self._issuing_metadata(sub, slots, now):
            return []
        ports = self.ports[sub.index]
        out = []
        for slot in slots:
            warp = sub.slots[slot]
            state = self.warps[(warp.block.id, warp.index)]
            if state.left_to_issue and ports.eligible(slot):
                out.append(slot)
            else:
                self.counts["region_stall_checks"] += 1
                warp.wake = max(warp.wake, now + 1)
        return out

    def stalled(self) -> str:
        """The warps of the launch still running and how many wait at a barrier (the
        capacity managers' state is the golden shards')."""
        running = [state.warp for state in self.warps.values()
                   if state.warp.pos < len(state.warp.pcs)]
        return (f"{len(running)} warps running, "
                f"{sum(warp.at_bar for warp in running)} of them at a barrier")

    def _region_issued(self, state, now: int) -> None:
        """The metadata store may answer for the slot's next region (:meth:`next_region`)."""
        state.region = None

    def dispatched(self, sub, warp, pc: int, now: int, done: int) -> int:
        """Releases of the sources' last uses, reserves of the destinations; the writes
        follow from :meth:`write`."""
        self._catch_up(sub, now)
        state = self.warps[(warp.block.id, warp.index)]
        ports, slot = self.ports[sub.index], warp.slot
        sources, dests = (sorted(flags) for flags in self.flags[pc])
        # sorted: the pass's flags come in the order of a set of register names, which
        # changes with the process's string hash seed (and the port each release takes)
        touched = state.touched
        for reg, erase in sources:
            ports.add(_Step("release", slot, reg, now, flag=int(erase),
                                extra={"dispatch": now}))
            touched.discard(reg)
        last = {reg for reg, _ in dests}
        writes = self.sm.info.writes[pc]
        new_writes = []
        for k, reg in enumerate(writes):
            reserve = ports.add(_Step("reserve", slot, reg, now, flag=int(reg in last),
                                      extra={"dispatch": now}))
            write = ports.add(_Step("write", slot, reg, max(now, done - 1), flag=int(reg in last),
                                    reserve=reserve, written=k == 0))
            state.writes.setdefault(reg, deque()).append(write)
            new_writes.append(write)
            if reg in last:
                touched.discard(reg)
            else:
                touched.add(reg)
        for reg in self.sm.info.reads[pc]:
            if reg not in {r for r, _ in sources}:
                touched.add(reg)
        state.left_to_dispatch -= 1
        last = not state.left_to_dispatch and not state.left_to_issue
        if last:
            self._release_unflagged(ports, state, slot, now)
        issue = ports.add(_Step("issue", slot, -1, now, extra={
            "warp": slot, "has_dst": int(bool(writes)),
            "dst_bank": (slot + writes[0]) & (BANKS - 1) if writes else 0, "last": int(last),
            "dispatch": now}))
        for write in new_writes:
            write.extra["issue"] = issue
        return done

    def _release_unflagged(self, ports: ShardPorts, state, slot: int, now: int) -> None:
        """Registers the region touched without a last-use flag leave it as with an evict
        flag: on their pending write (its ``last_use``), else by a release."""
        for reg in sorted(state.touched):
            self.counts["unflagged_lines"] += 1
            pending = state.writes.get(reg)
            if pending:
                pending[-1].flag = 1
                if pending[-1].reserve.line is None:
                    pending[-1].reserve.flag = 1
            else:
                ports.add(_Step("release", slot, reg, now, flag=0, extra={"dispatch": now}))
        state.touched.clear()

    # -- RegisterStorage --------------------------------------------------------------
    def write(self, warp, reg, values, lanes, cycle, pc):
        state = self.warps[warp.block, warp.warp]
        pending = state.writes.get(reg)
        if not pending:
            raise ReglessError(f"{self.program.kernel.file}: {warp}: a write of R{reg} "
                               "that no dispatch reserved")
        step = pending.popleft()
        ports = self.ports[warp.subcore]
        old = ports.value(warp.slot, reg)
        base = np.zeros(LANES, np.uint32) if old is None else np.asarray(old, np.uint32)
        step.data = [int(v) for v in np.where(lanes, values, base)]

    def read(self, warp, reg, cycle, lanes):
        ports = self.ports[warp.subcore]
        ports.run_to(cycle)
        value = ports.value(warp.slot, reg)
        if any(step.kind == "write" and (step.slot, step.reg) == (warp.slot, reg)
               for step in ports.steps):
            self.counts["read_bypass"] += 1
        if value is None:
            raise ReglessError(f"{self.program.kernel.file}: {warp}, cycle {cycle}: read of "
                               f"R{reg}, which is not in use in the OSU (lost by RegLess)")
        ports.add_read(_Step("read", warp.slot, reg, cycle, expect=list(value)))
        return np.asarray(value, np.uint32)

    # -- the capacity manager's side ---------------------------------------------------
    def _catch_up(self, sub, now: int) -> None:
        """Land the SM's writes due by ``now``, step the shard through the cycles before
        ``now``, then meet the warps placed since the last call.

        The SM places a block's warps at the start of a cycle and calls a hook
        (:meth:`ready`, :meth:`dispatched`) in it; a warp first seen in ``now`` is taken as
        placed in ``now``, so the shard's cycles before it are stepped without it: neither
        its region nor the drain of the empty region its slot held (the scheduler's
        ``last`` issue) may happen before the warp is there."""
        self.sm.values.read(sub, {}, now)
        ports = self.ports[sub.index]
        ports.run_to(now)
        for warp in sub.live:
            key = (warp.block.id, warp.index)
            if key not in self.warps:
                state = self.warps[key] = self._new_state(warp)
                self._placed(ports, warp.slot, state)

    def _new_state(self, warp):
        from .regless import _WarpState

        state = _WarpState(warp)
        state.touched, state.writes = set(), {}
        return state

    def _placed(self, ports: ShardPorts, slot: int, state) -> None:
        self.slot_warps[(ports.index, slot)] = state
        if slot in ports.empty:
            ports.fake_issues.append(slot)

    def at_barrier(self, sub_index: int, now: int) -> int:
        """The shard's ``at_barrier`` input in cycle ``now``: the slots whose warp a
        barrier holds (:func:`~gpurf.sim.sm.regless.barrier_holds`), with
        :attr:`~gpurf.sim.sm.regless.ReglessConfig.hold_barriers`; else none."""
        if not self.config.hold_barriers:
            return 0
        kind = self.sm.info.kind
        return sum(1 << slot for (index, slot), state in self.slot_warps.items()
                   if index == sub_index and barrier_holds(state.warp, kind, now))

    def next_region(self, sub_index: int, slot: int):
        """The region the warp in ``slot`` runs next (``None``: no warp, or finished)."""
        state = self.slot_warps.get((sub_index, slot))
        if state is None or state.region is not None or not self._runs_in(state, slot):
            return None
        self._check_start(state)
        return self.region_at[state.warp.pcs[state.warp.pos]]

    def region_taken(self, sub_index: int, slot: int, now: int) -> None:
        """The capacity manager took the header of the warp in ``slot``'s next region."""
        state = self.slot_warps[(sub_index, slot)]
        warp = state.warp
        region = state.region = self.region_at[warp.pcs[warp.pos]]
        length = min(region.instructions, len(warp.pcs) - warp.pos)
        state.left_to_issue = state.left_to_dispatch = state.length = length
        self.counts["activations"] += 1
        preloads = sum(kind == "preload" for _, kind in region.descriptor()["entries"])
        self.counts["preloads"] += preloads
        state.decision = Decision((self.counts["launches"], *state.key), region.start, now,
                                  None)
        self.decisions.append(state.decision)

    def staged(self, sub_index: int, slot: int, now: int) -> None:
        """The capacity manager holds ``slot`` ACTIVE from cycle ``now``."""
        state = self.slot_warps.get((sub_index, slot))
        decision = getattr(state, "decision", None)
        if decision is not None and decision.staged is None:
            decision.staged = now

    def l1_line(self, sub_index: int, key) -> int:
        """The SM L1 line of a register line (``("r", addr)``) or compressed line."""
        kind, addr = key
        shards = len(self.ports)
        if kind == "c":
            return REGISTER_BASE + (1 << 36) + sub_index + addr * shards
        ref = self.ports[sub_index].ports["read__0__payload"].unpack(addr)
        return self._line_address(sub_index, int(ref.warp), int(ref.reg))

    def summary(self) -> dict:
        counts = dict(self.counts)
        shard_counts = Counter()
        for ports in getattr(self, "ports", ()):
            shard_counts.update(ports.counts)
            shard_counts.update({f"transfer_{k}": v
                                 for k, v in ports.shard.transfer.counts.items()})
        counts.update(shard_counts)
        return counts


def run_regless_exact(kernel: str, size: str = "test", config: ReglessConfig = DEFAULT,
                      *, sm=None, record=None, fast: bool = True) -> dict:
    """Run workload ``kernel`` on RegLess with the golden shards (gtx980 preset, or ``sm``),
    every operand read checked; what ``gpurf sm run KERNEL --timing --mechanism
    regless:exact`` prints.

    ``record`` (a folder): each shard's ports are written to ``launch<n>.shard<i>.trace`` there
    (:class:`gpurf.sim.sm.record.TraceFolder`; ``gpurf replay`` drives them through the
    shard's Verilog). With ``fast``, the fast model runs the same kernel too
    (``fast_cycles``). Returns the shards' counters, ``cycles``, ``passed`` (outputs equal
    numpy), ``traces`` (paths) and the decision logs under ``log`` (per shard).
    """
    from .config import load_config
    from .record import TraceFolder, sm_header
    from .run import load_workload

    sm = sm or load_config(preset="gtx980")
    _, program, _ = load_workload(kernel)
    folder = None
    if record is not None:
        folder = TraceFolder(record, source={"kind": "kernel", "kernel": kernel, "size": size,
                                             "mechanism": "regless:exact"},
                             sm=sm_header(sm))
    regless = ReglessExactSM(program, config, subcores=sm.subcores,
                             wrap=None if folder is None else folder.wrap)
    try:
        run = run_on(regless, kernel, size, sm)
    except BaseException:
        if folder is not None:
            folder.abandon()
        raise
    regless.finish()
    out = regless.summary()
    out.update(run_fields(kernel, size, config, run),
               shard_cycles=[ports.time for ports in regless.ports],
               traces=[str(path) for path in folder.close()] if folder is not None else [])
    out["log"] = [ports.log for ports in regless.ports]
    out["decisions"] = regless.decisions
    counts = regless.summary()
    served = {"compressor": counts.get("transfer_preload_compressed", 0),
              "l1": counts.get("transfer_preload_l1", 0)}
    served["osu"] = counts.get("preloads", 0) - sum(served.values())
    out["preloads_served"] = served
    out["evictions"] = (counts.get("transfer_evict_compressed", 0)
                        + counts.get("transfer_evict_l1", 0))
    if fast:
        from .regless import run_regless

        out["fast_cycles"] = run_regless(kernel, size, config, sm=sm, baseline=False)["cycles"]
    return out
