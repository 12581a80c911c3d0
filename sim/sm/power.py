"""Register power states in the golden SM: GReEneR (issue 19) and its baselines, in the loop.

A :class:`RegisterPower` rides on a :class:`~gpurf.sim.sm.timing.TimingSM` (handed to it as
``power=``): the timing model consults it at issue and tells it of every issue and dispatch.
Per sub-core (scheduler) it holds one *power domain*, the golden blocks, stepped once per
cycle (idle stretches fast-forwarded exactly, :meth:`_Domain.idle`) through their fast
paths (``fast_step``: ``step``'s edge from plain values; :class:`_Fast`), or through their
ports when recording traces (:class:`_Packed`); ``check_fast=True`` drives a ported twin
beside the fast paths and raises :class:`FastPathError` where their states part:

- :class:`~gpurf.golden.greener.power_controller.PowerController`: the state of every warp
  register of the sub-core's warp slots (all OFF at reset), wake-ups and the accounting
  counters;
- :class:`~gpurf.golden.greener.correction_table.CorrectionTable` (GReEneR's run-time
  correction, 3.3): the warp's decoded instructions, inserted at decode (when an
  instruction reaches the head of its warp, one insert a cycle) and removed at writeback
  (one a cycle), queried for every register a set-state port sends to SLEEP or OFF;
- :class:`~gpurf.golden.greener.scoreboard_ext.ScoreboardExt` (3.4, Label 2): an issued
  instruction's source registers are reserved until their new state is applied; no later
  instruction of the warp that reads or writes one of them may issue before (RAR/WAR).

Where the paper applies the states (Fig. 5):

- **issue**: a warp may issue only when every register its next instruction names is ON
  and usable; a warp that is otherwise ready (scoreboard, extension) sends its wake-ups
  from the issue stage (``wake_at="issue"``, the paper) or as soon as the instruction is
  decoded, even while the warp waits on its scoreboard (``wake_at="decode"``, the spec's
  option). A wake-up costs ``sleep_wakeup`` (SLEEP) or ``off_wakeup`` (OFF) cycles.
- **read operands** (the instruction leaves the collector): the source registers take
  their state (up to 4 set-state ports a cycle; a register the instruction also writes is
  left to the writeback), and their reservations are released.
- **writeback** (the cycle the result is written): the destination registers take their
  state, up to 4 a cycle per sub-core; an instruction whose destinations wait for a port
  holds its scoreboard entries until they land (the hook returns that cycle).

A register set OFF loses its value; reading it before it is written again stops the run
with :class:`PowerError` (warp, pc, register, cycle). The controller's own protocol check
(a source read while OFF) does the same. Kernel outputs never depend on the power states
(the functional model runs first), so ``outputs equal numpy`` holds under every policy;
what changes is cycles and energy.

Policies (:data:`POLICIES`): ``greener`` (the pass's encoded states + the correction table),
``compiler`` (the states alone, Fig. 9's Comp-OPT), ``runtime`` (every register SLEEP
after its access + the correction table), ``sleep_reg`` (the controller's Sleep-Reg
policy: every accessed register SLEEP), ``oracle`` (the Table 1 rule on the warp's own
dynamic future, + the correction table: a bound on what the static pass leaves). The
always-ON baseline is a run without a :class:`RegisterPower`.
"""

from collections import defaultdict, deque
from dataclasses import dataclass
from itertools import islice

from gpurf.golden.greener.correction_table import CorrectionTable, keep_on
from gpurf.golden.greener.power_controller import Ports, PowerController
from gpurf.golden.greener.scoreboard_ext import ScoreboardExt, fits, touches
from gpurf.hw.greener.layouts import PowerState
from gpurf.sim.passes.greener.power_pass import (
    DEFAULT_THRESHOLD,
    PowerPass,
    power_pass,
    sleep_reg_pass,
)
from gpurf.sim.ptx.regalloc import allocate_registers

from .warp import ExecutionError

__all__ = ["POLICIES", "WAKE_AT", "FastPathError", "InstructionSets", "PowerError",
           "PowerSettings",
           "RegisterPower", "oracle_sets", "static_operands"]

POLICIES = ("greener", "compiler", "runtime", "sleep_reg", "oracle")
WAKE_AT = ("issue", "decode")
ON, SLEEP, OFF = PowerState.ON.value, PowerState.SLEEP.value, PowerState.OFF.value
_ON_STATE, _OFF_STATE = PowerState.ON, PowerState.OFF
PORTS = 4
"""Set-state ports per direction of one domain, and operands a correction entry holds."""
HEAD = 2 * PORTS
ENTRIES = 4
PC_BITS = 16
_TABLE = {"greener", "runtime", "oracle"}


class PowerError(ExecutionError):
    """A register read after its value was dropped (set OFF), or the controller's error."""


@dataclass(frozen=True)
class PowerSettings:
    """What a :class:`RegisterPower` does.

    Parameters
    ----------
    policy : str
        One of :data:`POLICIES`.
    wake_at : str
        ``"issue"`` (paper Fig. 5) or ``"decode"``.
    sleep_wakeup, off_wakeup : int
        Wake-up cycles from SLEEP (1..4) and from OFF (2..8); paper: 1 and 2, Section 5.7
        sweeps X and 2X for X = 2, 3, 4.
    threshold : int
        ``W`` of the compiler pass and of the oracle (default 3, paper Section 4).
    states : PowerPass, optional
        Use these per-instruction states instead of the pass's (tests: a deliberately
        wrong assignment).
    """

    policy: str = "greener"
    wake_at: str = "issue"
    sleep_wakeup: int = 1
    off_wakeup: int = 2
    threshold: int = DEFAULT_THRESHOLD
    states: PowerPass | None = None

    def __post_init__(self):
        if self.policy not in POLICIES:
            raise ValueError(f"policy must be one of {', '.join(POLICIES)}, "
                             f"not {self.policy!r}")
        if self.wake_at not in WAKE_AT:
            raise ValueError(f"wake_at must be one of {', '.join(WAKE_AT)}, "
                             f"not {self.wake_at!r}")


@dataclass(frozen=True)
class InstructionSets:
    """Per pc: ``src`` and ``dst`` ``{register: state code}`` to set, ``reads`` the
    registers it reads, ``regs`` every register it names (sources then destinations)."""

    src: list
    dst: list
    reads: list
    regs: list


def _registers(op) -> list[int]:
    """The physical register-file registers of a pass operand (predicates have no domain)."""
    return [int(key[1:]) for key in op.keys if key.startswith("R")]


def static_operands(states: PowerPass) -> InstructionSets:
    """Each instruction's set-state requests from a pass result: the destination's state
    after writeback, else the highest state of its source operands (the pass's rule,
    :meth:`PowerPass.after`); a register the instruction also writes gets no source set."""
    rank = {OFF: 0, SLEEP: 1, ON: 2}
    src, dst, reads_of, regs = [], [], [], []
    for ops in states.operands:
        reads, writes = {}, {}
        for op in ops:
            for reg in _registers(op):
                if op.role == "dst":
                    writes[reg] = op.state.value
                elif rank[op.state.value] > rank[reads.get(reg, OFF)] or reg not in reads:
                    reads[reg] = op.state.value
        named = list(dict.fromkeys([*reads, *writes]))
        src.append({r: s for r, s in reads.items() if r not in writes})
        dst.append(writes)
        reads_of.append(list(reads))
        regs.append(named)
    return InstructionSets(src, dst, reads_of, regs)


def oracle_sets(pcs, static: InstructionSets, threshold: int) -> list[tuple[dict, dict]]:
    """Per dynamic instruction of one warp: its source and destination set-state requests
    by Table 1 on the warp's own future (ON when the next access comes within
    ``threshold`` instructions, else SLEEP when it reads, else OFF)."""
    following: dict[int, tuple[int, bool]] = {}
    out = [None] * len(pcs)

    def state(reg, index):
        nxt = following.get(reg)
        if nxt is None:
            return OFF
        if nxt[0] - index <= threshold:
            return ON
        return SLEEP if nxt[1] else OFF

    for index in range(len(pcs) - 1, -1, -1):
        pc = pcs[index]
        dst = {r: state(r, index) for r in static.dst[pc]}
        src = {r: state(r, index) for r in static.src[pc]}
        out[index] = (src, dst)
        for r in static.dst[pc]:
            following[r] = (index, False)
        for r in static.reads[pc]:
            following[r] = (index, True)
    return out


_STATIC: dict[tuple, tuple[int, InstructionSets]] = {}
"""Registers and set-state requests per kernel and pass (a reproduction runs a kernel's
launches under many policies and latencies)."""


def _static(kernel, settings: PowerSettings) -> tuple[int, InstructionSets]:
    """The kernel's registers per thread and its instructions' set-state requests under
    ``settings`` (the pass's, or ``settings.states``)."""
    sleep_all = settings.policy in ("runtime", "sleep_reg")
    key = (kernel.file, kernel.name, kernel.instructions, sleep_all, settings.threshold)
    if settings.states is not None:
        return allocate_registers(kernel).registers, static_operands(settings.states)
    if key not in _STATIC:
        if len(_STATIC) >= 64:
            _STATIC.clear()
        states = (sleep_reg_pass(kernel) if sleep_all
                  else power_pass(kernel, settings.threshold))
        _STATIC[key] = allocate_registers(kernel).registers, static_operands(states)
    return _STATIC[key]


class _Packed:
    """Drives the three golden blocks through their ports (``step``, packed values): what
    a recording needs (every cycle's port traffic) and the reference of :class:`_Fast`."""

    def __init__(self, controller, table, ext, record=None):
        self.controller, self.table, self.ext = controller, table, ext
        self.ports = Ports(_params(controller))
        self.step_controller, self.step_ext = controller.step, ext.step
        self.step_table = table.step if table is not None else None
        if record is not None:
            self.step_controller = record("greener.power_controller",
                                          _params(controller), controller).step
            self.step_ext = record("greener.scoreboard_ext", _params(ext), ext).step
            if table is not None:
                self.step_table = record("greener.correction_table", _params(table),
                                         table).step

    def drive_controller(self, srcs, dsts, keep_src: int, keep_dst: int, heads) -> None:
        self.step_controller(self.ports.inputs(
            src=[s[:3] for s in srcs], dst=[d[:3] for d in dsts], keep_src=keep_src,
            keep_dst=keep_dst, heads={w: regs[:HEAD] for w, regs in heads.items()}))

    def drive_table(self, sets, insert, remove) -> int:
        ports = self.table.ports
        queries = [{"valid": 1, "warp": w, "pc": pc, "reg": r} for w, r, _, pc in sets]
        queries += [0] * (2 * PORTS - len(queries))
        inputs = {"query": ports["query"].pack(queries),
                  "insert__valid": int(insert is not None), "insert__payload": 0,
                  "remove__valid": int(remove is not None), "remove__payload": 0}
        if insert is not None:
            warp, pc, regs = insert
            regs = regs[:PORTS]
            inputs["insert__payload"] = ports["insert__payload"].pack(
                {"warp": warp, "pc": pc, "valid": (1 << len(regs)) - 1,
                 "reg": regs + [regs[0]] * (PORTS - len(regs))})
        if remove is not None:
            inputs["remove__payload"] = ports["remove__payload"].pack(
                {"warp": remove[0], "pc": remove[1]})
        return self.step_table(inputs)["keep_on"] & ((1 << len(sets)) - 1)

    def drive_ext(self, srcs, reserve) -> None:
        ports = self.ext.ports
        releases = [{"valid": 1, "warp": w, "reg": r} for w, r, _, _ in srcs]
        releases += [0] * (PORTS - len(releases))
        inputs = {"release": ports["release"].pack(releases), "check": 0,
                  "reserve__valid": 0, "reserve__payload": 0}
        if reserve is not None:
            warp, regs = reserve
            inputs["reserve__valid"] = 1
            inputs["reserve__payload"] = ports["reserve__payload"].pack(
                {"warp": warp, "valid": (1 << len(regs)) - 1,
                 "reg": regs + [0] * (PORTS - len(regs))})
        self.step_ext(inputs)


class _Fast(_Packed):
    """Drives the same blocks through their fast paths (``fast_step``, plain values): the
    same edges as :class:`_Packed` without packing a port (``check_fast`` of
    :class:`RegisterPower` runs both side by side and compares them every cycle)."""

    def drive_controller(self, srcs, dsts, keep_src: int, keep_dst: int, heads) -> None:
        sets = [(w, r, s, keep_src >> k & 1, True) for k, (w, r, s, _) in enumerate(srcs)]
        if dsts:
            sets += [(w, r, s, keep_dst >> k & 1, False) for k, (w, r, s, _) in enumerate(dsts)]
        if heads:
            heads = {w: regs[:HEAD] for w, regs in heads.items()}
        self.controller.fast_step(sets, heads)

    def drive_table(self, sets, insert, remove) -> int:
        if insert is not None:
            insert = insert[0], insert[1], insert[2][:PORTS]
        return self.table.fast_step([(w, pc, r) for w, r, _, pc in sets], insert, remove)

    def drive_ext(self, srcs, reserve) -> None:
        self.ext.fast_step([(w, r) for w, r, _, _ in srcs], reserve)


def _params(model) -> dict:
    """A golden model's parameters (its config's fields)."""
    return {name: getattr(model.config, name) for name in model.config.__dataclass_fields__}


class FastPathError(RuntimeError):
    """``check_fast``: the fast paths' state left the ports' (``step``) state."""


def _blocks_state(drive: _Packed) -> dict:
    """Everything the three blocks hold, for :class:`FastPathError`'s comparison."""
    c, t, e = drive.controller, drive.table, drive.ext
    state = {"states": c.state, "usable_from": c.usable_from, "cycle": c.cycle,
             "cycles": c.cycles, "transitions": c.transitions, "error": c.error,
             "reserved": e.reserved}
    if t is not None:
        state.update(in_flight=t.in_flight, clear_left=t.clear_left)
    return state


class _Domain:
    """One sub-core's golden blocks and the requests waiting for their ports."""

    def __init__(self, slots: int, regs: int, settings: PowerSettings, record=None,
                 check_fast: bool = False):
        params = {"warps": max(2, slots), "regs": max(2, regs), "src_ports": PORTS,
                  "dst_ports": PORTS, "sleep_wakeup": settings.sleep_wakeup,
                  "off_wakeup": settings.off_wakeup,
                  "policy": "sleep_reg" if settings.policy == "sleep_reg" else "greener",
                  "counter_width": 48}
        shape = {"warps": params["warps"], "regs": params["regs"]}
        table = {**shape, "entries": ENTRIES, "entry_regs": PORTS, "pc_bits": PC_BITS,
                 "query_ports": 2 * PORTS}
        ext = {**shape, "sources": PORTS, "dests": PORTS, "check_ports": 1,
               "release_ports": PORTS}

        def blocks():
            return (PowerController(**params),
                    CorrectionTable(**table) if settings.policy in _TABLE else None,
                    ScoreboardExt(**ext))

        self.drive = _Packed(*blocks(), record) if record is not None else _Fast(*blocks())
        self.controller, self.table, self.ext = (self.drive.controller, self.drive.table,
                                                 self.drive.ext)
        self.twin = _Packed(*blocks()) if check_fast else None
        """``check_fast``: the same blocks driven through their ports, compared each cycle."""
        self.exact = record is not None or check_fast
        """Step every block every cycle (recording traces): no idle fast-forward."""
        self.fused = self.twin is None and not self.exact
        """Driven through the fast paths alone: :meth:`fast_step` takes the edges."""
        self.src_queue: deque = deque()
        """Source sets ``(warp, reg, state, pc)`` waiting for a port (FIFO)."""
        self.dst_at: dict[int, list] = defaultdict(list)
        """Cycle -> destination sets ``(warp, reg, state, pc)`` landing then."""
        self.dst_load: dict[int, int] = defaultdict(int)
        self.inserts: deque = deque()
        self.removes: deque = deque()
        self.reserve = None
        self.wakes: dict[int, list] = {}
        self.dropped: set = set()
        """``(slot, reg)`` whose value a set to OFF dropped (not written since)."""

    # -- the cycle's inputs -------------------------------------------------------------
    def landing(self, cycle: int) -> list:
        return self.dst_at.get(cycle, ())

    def book_writeback(self, done: int, sets: list) -> int:
        """The cycle the last of ``sets`` lands, ``PORTS`` a cycle, from ``done`` on."""
        cycle, left = done, list(sets)
        while left:
            room = PORTS - self.dst_load[cycle]
            if room > 0:
                self.dst_at[cycle].extend(left[:room])
                self.dst_load[cycle] += min(room, len(left))
                left = left[room:]
            if left:
                cycle += 1
        return cycle

    def busy(self, cycle: int) -> bool:
        return bool(self.exact or self.src_queue or self.inserts or self.removes or self.reserve
                    or self.wakes or cycle in self.dst_at
                    or (self.table is not None and self.table.clear_left))

    def idle(self, cycles: int) -> None:
        """``cycles`` cycles with every port idle: exactly what as many ``step`` calls with
        idle inputs do (no state changes; register-cycles accrue at the population)."""
        model = self.controller
        for state, count in model.kept.items():
            model.cycles[state] += count * cycles
        model.cycle += cycles

    def step(self, cycle: int) -> tuple[list, list]:
        """Take cycle ``cycle``'s edge on the three blocks (a block with idle inputs skips
        its ``step``: it would change nothing but the controller's counts, which
        :meth:`idle` makes); returns the source and the destination sets applied."""
        srcs = [self.src_queue.popleft() for _ in range(min(PORTS, len(self.src_queue)))]
        dsts = self.dst_at.pop(cycle, [])
        self.dst_load.pop(cycle, None)
        keep = self._keep(srcs + dsts)
        keep_src, keep_dst = keep & ((1 << len(srcs)) - 1), keep >> len(srcs)
        drives = (self.drive,) if self.twin is None else (self.drive, self.twin)
        if srcs or dsts or self.wakes or self.exact:
            for drive in drives:
                drive.drive_controller(srcs, dsts, keep_src, keep_dst, self.wakes)
        else:
            self.idle(1)
        if srcs or self.reserve is not None or self.exact:
            for drive in drives:
                drive.drive_ext(srcs, self.reserve)
            self.reserve = None
        self.wakes = {}
        if self.twin is not None:
            self._compare(cycle)
        return srcs, dsts

    def fast_step(self, cycle: int) -> None:
        """:meth:`step` and :meth:`apply` in one, for a domain driven through the fast
        paths alone (:attr:`fused`: no twin, no recording): the same edges, without the
        intermediate lists (``tests/test_greener_sm_fused.py`` holds the two equal every
        cycle)."""
        queue = self.src_queue
        srcs = [queue.popleft() for _ in range(min(PORTS, len(queue)))] if queue else []
        dsts = self.dst_at.pop(cycle, None)
        if dsts is None:
            dsts = ()
        else:
            self.dst_load.pop(cycle, None)
        table = self.table
        keep = 0
        if table is not None and (srcs or dsts or self.inserts or self.removes
                                  or table.clear_left):
            insert = self.inserts.popleft() if self.inserts else None
            remove = self.removes.popleft() if self.removes else None
            if insert is not None:
                insert = insert[0], insert[1], insert[2][:PORTS]
            queries = [(w, pc, r) for w, r, _, pc in srcs]
            if dsts:
                queries += [(w, pc, r) for w, r, _, pc in dsts]
            keep = table.fast_step(queries, insert, remove)
        controller = self.controller
        wakes = self.wakes
        if srcs or dsts or wakes:
            sets = [(w, r, s, keep >> k & 1, True) for k, (w, r, s, _) in enumerate(srcs)]
            if dsts:
                keep >>= len(srcs)
                sets += [(w, r, s, keep >> k & 1, False)
                         for k, (w, r, s, _) in enumerate(dsts)]
            if wakes:
                wakes = {w: regs[:HEAD] for w, regs in wakes.items()}
                self.wakes = {}
            controller.fast_step(sets, wakes)
        else:
            self.idle(1)
        if srcs or self.reserve is not None:
            self.ext.fast_step([(w, r) for w, r, _, _ in srcs], self.reserve)
            self.reserve = None
        if not (srcs or dsts):
            return
        self._after_edge(srcs, dsts, cycle)

    def apply(self, srcs, dsts, cycle: int) -> None:
        """After :meth:`step`'s edge: track dropped values, free correction entries at
        writeback."""
        self._after_edge(srcs, dsts, cycle)

    def _after_edge(self, srcs, dsts, cycle: int) -> None:
        """Stop at a read of an OFF register; track dropped values; free correction entries
        at writeback (shared by :meth:`apply` and :meth:`fast_step`)."""
        controller = self.controller
        if controller.error is not None:
            warp, reg = controller.error
            raise PowerError(f"sub-core slot {warp}: R{reg} read while OFF (cycle {cycle})")
        dropped, state = self.dropped, controller.state
        for warp, reg, _, _ in dsts:
            dropped.discard((warp, reg))
        for sets in (srcs, dsts):
            for warp, reg, _, _ in sets:
                if state[(warp, reg)] is _OFF_STATE:
                    dropped.add((warp, reg))
        if dsts and self.table is not None:
            self.removes.extend(sorted({(w, pc) for w, _, _, pc in dsts}))

    def _keep(self, sets) -> int:
        """The correction table's answers for ``sets`` (one query port each), stepping the
        table with this cycle's insert and remove."""
        table = self.table
        if table is None or not (sets or self.inserts or self.removes or table.clear_left
                                 or self.exact):
            return 0
        insert = self.inserts.popleft() if self.inserts else None
        remove = self.removes.popleft() if self.removes else None
        keep = self.drive.drive_table(sets, insert, remove)
        if self.twin is not None and self.twin.drive_table(sets, insert, remove) != keep:
            raise FastPathError(f"correction table: keep_on {keep:#x} on the fast path, "
                                   f"not the ports' (cycle {self.controller.cycle})")
        return keep

    def _compare(self, cycle: int) -> None:
        fast, ports = _blocks_state(self.drive), _blocks_state(self.twin)
        for name, value in fast.items():
            if value != ports[name]:
                raise FastPathError(f"cycle {cycle}: {name} differs on the fast path "
                                       f"from step's: {value} != {ports[name]}")


class RegisterPower:
    """Power states of the register file of one :class:`TimingSM` run (module docstring).

    Hand it to the SM (``TimingSM(..., power=power)`` or ``run_kernel(..., power=power)``),
    which calls it with itself; after the run, :meth:`finish` with the run's cycles and read
    :meth:`counters`.
    """

    def __init__(self, settings: PowerSettings = PowerSettings(), *, record=None,
                 check_fast: bool = False):
        self.settings = settings
        self.check_fast = check_fast
        """Drive a second copy of the blocks through their ports (``step``) every cycle and
        raise :class:`FastPathError` where the fast paths' state differs (tests)."""
        self.record = record
        """``record(sub_core)`` -> ``None`` or ``recorder(block, params, model)`` returning
        the model to drive in its place (a :class:`gpurf.golden.trace.Recorder`)."""
        self.domains: list[_Domain] = []
        self.wake_at_decode = settings.wake_at == "decode"
        self.oracle: dict[int, list] = {}
        self.by_instance = settings.policy == "oracle"
        """The sets differ by dynamic instance (the oracle's): :attr:`in_flight` tracks them."""
        self.in_flight: dict[tuple[int, int], deque] = defaultdict(deque)
        self.sm = self.program = self.static = None
        self.regs = 0
        self.wakeup_stalls = 0

    # -- hooks --------------------------------------------------------------------------
    def __call__(self, sm) -> "RegisterPower":
        """Called by the SM at construction: the program's states, one power domain per
        sub-core."""
        if self.sm is not None:
            raise RuntimeError("a RegisterPower rides on one SM run")
        self.sm, self.program = sm, sm.program
        self.regs, self.static = _static(sm.program.kernel, self.settings)
        self.reserves = [list(src)[:PORTS] for src in self.static.src]
        """Per pc: the source registers its issue reserves (the extension's slots)."""
        if len(self.static.src) != len(sm.program.code):
            raise ValueError("the power states cover a different program")
        self.domains = [_Domain(sm.config.slots, self.regs, self.settings,
                                self.record(index) if self.record else None,
                                self.check_fast)
                        for index in range(sm.config.subcores)]
        return self

    def ready(self, sub, slots: list[int], now: int) -> list[int]:
        """The slots of ``slots`` (ready by the scoreboard) whose next instruction may
        issue: no RAR/WAR reservation in its way, every register ON and usable, none of
        them leaving ON this cycle. The others (wake at issue) ask for their wake-ups."""
        self._catch_up(now, sub.index)
        domain = self.domains[sub.index]
        controller, reserved = domain.controller, domain.ext.reserved
        state, since = controller.state, controller.usable_from
        landing = None
        out = []
        for slot in slots:
            warp = sub.slots[slot]
            pc = warp.pcs[warp.pos]
            regs = self.static.regs[pc]
            if reserved[slot] and (touches(reserved[slot], regs) or not fits(
                    reserved[slot], self.reserves[pc], PORTS)):
                continue
            # :meth:`PowerController.unusable`, inline
            asleep = [r for r in regs if state[slot, r] is not _ON_STATE
                      or since.get((slot, r), 0) > now]
            if landing is None:
                landing = self._landing(domain, now)
            if not asleep and not (landing and not landing.isdisjoint(
                    [(slot, r) for r in regs])):
                out.append(slot)
                continue
            self.wakeup_stalls += 1
            warp.wake = max(warp.wake, now + 1)
            domain.wakes[slot] = [r for r in asleep if (slot, r) not in landing]
        return out

    def issued(self, sub, warp, pc: int, now: int) -> None:
        """``warp`` issued ``pc`` in cycle ``now``: reserve its sources, decode its next
        instruction into the correction table."""
        domain = self.domains[sub.index]
        if domain.controller.cycle < now or self.wake_at_decode:
            self._catch_up(now, sub.index)
        sources = self.reserves[pc]
        if sources:
            domain.reserve = (warp.slot, sources)
        index = warp.pos - 1
        if index == 0:
            self._placed(domain, warp)
        if self.by_instance:
            self.in_flight[(id(warp), pc)].append(index)
        self._decode(domain, warp)

    def dispatched(self, sub, warp, pc: int, now: int, done: int) -> int:
        """``pc`` of ``warp`` left the collector in cycle ``now`` (its sources were read)
        and writes back in cycle ``done``: queue its set-state requests. Returns the cycle
        its destinations' states have landed (its scoreboard entries are held till then)."""
        domain = self.domains[sub.index]
        if domain.controller.cycle < now or self.wake_at_decode:
            self._catch_up(now, sub.index)
        slot = warp.slot
        dropped = domain.dropped
        if dropped:
            for reg in self.static.reads[pc]:
                if (slot, reg) in dropped:
                    raise PowerError(self._where(warp, pc, reg, now,
                                                 "read after it was set OFF"))
        if self.by_instance:
            src, dst = self._sets(warp, pc)
        else:
            src, dst = self.static.src[pc], self.static.dst[pc]
        domain.src_queue.extend((slot, r, s, pc) for r, s in src.items())
        if dst:
            return domain.book_writeback(done, [(slot, r, s, pc) for r, s in dst.items()])
        if domain.table is not None:
            domain.removes.append((slot, pc))
        return done

    def finish(self, cycles: int) -> None:
        """Account every domain up to the run's last cycle."""
        self._catch_up(cycles)

    # -- results ------------------------------------------------------------------------
    def counters(self) -> dict[str, int]:
        """The controllers' counters summed over the sub-cores."""
        total: dict[str, int] = defaultdict(int)
        for domain in self.domains:
            for name, value in domain.controller.counters().items():
                total[name] += value
        return dict(total)

    @property
    def warp_registers(self) -> int:
        """Warp registers in the power domains (warp slots x registers per thread)."""
        return sum(d.controller.config.registers for d in self.domains)

    # -- internals ----------------------------------------------------------------------
    def _placed(self, domain: _Domain, warp) -> None:
        """A new warp in its slot: the registers a previous warp dropped are its own now."""
        domain.dropped = {k for k in domain.dropped if k[0] != warp.slot}
        if self.settings.policy == "oracle":
            self.oracle[id(warp)] = oracle_sets(warp.pcs, self.static,
                                                self.settings.threshold)

    def _decode(self, domain: _Domain, warp) -> None:
        if warp.pos < len(warp.pcs):
            pc = warp.pcs[warp.pos]
            if domain.table is not None and self.static.regs[pc]:
                domain.inserts.append((warp.slot, pc, self.static.regs[pc]))

    def _sets(self, warp, pc: int) -> tuple[dict, dict]:
        """The oracle's sets of this dynamic instance of ``pc`` (the oldest in flight)."""
        queue = self.in_flight[(id(warp), pc)]
        index = queue.popleft()
        if not queue:
            del self.in_flight[(id(warp), pc)]
        return self.oracle[id(warp)][index]

    def _landing(self, domain: _Domain, now: int) -> set:
        """Registers whose set lands this cycle and leaves them not ON (the correction
        table's answer as it stands at the start of the cycle)."""
        leaving = set()
        table = domain.table
        for warp, reg, state, pc in [*domain.landing(now), *islice(domain.src_queue, PORTS)]:
            kept = (table is not None and not table.clear_left
                    and keep_on(table.in_flight[warp], pc, reg))
            if self.settings.policy == "sleep_reg" or (state != ON and not kept):
                leaving.add((warp, reg))
        return leaving

    def _catch_up(self, now: int, only: int | None = None) -> None:
        """Take every domain's edges up to (not including) cycle ``now``; with ``only``,
        that domain's alone (waking at issue, a domain's edges depend on its own requests
        alone, and every request reaches it through a hook that catches it up first)."""
        if only is not None and not self.wake_at_decode:
            if self.domains[only].controller.cycle >= now:
                return
            indices = (only,)
        else:
            indices = range(len(self.domains))
        for index in indices:
            domain = self.domains[index]
            cycle = domain.controller.cycle
            while cycle < now:
                if self.wake_at_decode:
                    self._decode_wakes(index, domain, cycle)
                if not domain.busy(cycle):
                    stop = min([now, *(c for c in domain.dst_at if c > cycle),
                                *self._decodes(index, cycle)])
                    domain.idle(stop - cycle)
                    cycle = stop
                    continue
                if domain.fused:
                    domain.fast_step(cycle)
                else:
                    domain.apply(*domain.step(cycle), cycle)
                cycle += 1

    def _decodes(self, index: int, cycle: int) -> list[int]:
        """Wake at decode: the cycles after ``cycle`` a held warp decodes its next
        instruction (an idle stretch ends there)."""
        if not self.wake_at_decode:
            return []
        return [w.hold for w in self.sm.subcores[index].live if cycle < w.hold < float("inf")]

    def _decode_wakes(self, index: int, domain: _Domain, cycle: int) -> None:
        """Wake at decode: every live warp's decoded next instruction asks for its
        registers (a warp held by a branch or barrier has not decoded it yet)."""
        sub = self.sm.subcores[index]
        controller = domain.controller
        for warp in sub.live:
            if warp.hold > cycle or warp.pos >= len(warp.pcs):
                continue
            regs = [r for r in self.static.regs[warp.pcs[warp.pos]]
                    if not controller.usable(warp.slot, r)]
            if regs:
                domain.wakes.setdefault(warp.slot, regs)

    def _where(self, warp, pc: int, reg: int, cycle: int, what: str) -> str:
        block = warp.block.id if warp.block is not None else "?"
        return (f"{self.program.kernel.name}: block {block} warp {warp.index} pc {pc} "
                f"({self.program.code[pc]}): R{reg} {what} (cycle {cycle}, policy "
                f"{self.settings.policy})")
