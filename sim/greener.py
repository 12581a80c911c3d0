"""Leakage energy of GReEneR vs Sleep-Reg vs always-ON on a real kernel's register stream.

The stream: a workload from ``sim/kernels`` runs on the functional SM model; every warp's
dynamic instruction stream is recorded with its physical registers (our allocator,
:mod:`gpurf.sim.ptx.regalloc`; predicates are not in the register file and are left out; a 64-bit
value names both of its registers). The warps of the first thread blocks, up to the
controller's 64 warp slots, are replayed through a small in-order pipeline around the golden
:class:`gpurf.golden.greener.power_controller.PowerController`:

- per warp, the next instruction sits at the head of its instruction buffer (the controller
  wakes its registers and reports "operands ready");
- one instruction issues per cycle (the oldest-issued ready warp first, loose round robin),
  if no older in-flight instruction of the warp writes one of its registers (scoreboard);
- it reads its sources the cycle after issue (``src_set``) and writes its destinations
  ``writeback_latency`` cycles after issue (``dst_set``, one instruction per cycle, in
  order of readiness);
- ``keep_on`` is the correction table's answer: another in-flight or decoded instruction of
  the warp (a different one) names the register (paper 3.3).

Power states per operand (GReEneR), two sources:

- ``"compiler"`` (default): the states the GReEneR compiler pass
  (:mod:`gpurf.sim.passes.greener.power_pass`: ``Dist``, liveness, Table 1, threshold ``W``; two
  sources and one destination encoded, further operands SLEEP) put in each instruction;
- ``"oracle"``: the Table 1 rule on the warp's own dynamic future — ON when the register's
  next access comes within ``threshold`` instructions (a source its own instruction writes
  is accessed again at distance 0), else SLEEP when that next access reads it, else OFF —
  the best a compiler could do on this path.

Sleep-Reg: the controller's
``policy="sleep_reg"`` (every accessed register to SLEEP). Always-ON: the same stream with
every state ON; its leakage is every register ON for its whole run (the paper's Baseline).
"""

from collections import deque
from dataclasses import dataclass, field

from gpurf.golden.greener.energy import always_on_energy, leakage_energy_range
from gpurf.golden.greener.power_controller import Ports, PowerController
from gpurf.hw.greener.layouts import PowerState
from gpurf.sim.passes.greener.power_pass import power_pass
from gpurf.sim.ptx.regalloc import allocate_registers
from gpurf.sim.sm.run import load_workload, run_kernel

__all__ = ["PolicyRun", "WarpInstruction", "compare_policies", "energy_table",
           "kernel_stream", "oracle_states", "replay"]

ON, SLEEP, OFF = PowerState.ON.value, PowerState.SLEEP.value, PowerState.OFF.value
MAX_WARPS = 64


@dataclass
class WarpInstruction:
    """One dynamic warp instruction: physical source and destination registers, and the
    power-state code of each (filled by :func:`oracle_states`)."""

    srcs: list
    dsts: list
    src_states: list = field(default_factory=list)
    dst_states: list = field(default_factory=list)


def _physical(allocation, vreg) -> list[int]:
    if allocation.units[vreg] == 0:
        return []
    first = allocation.physical[vreg]
    return list(range(first, first + allocation.units[vreg]))


def kernel_stream(name: str, size: str = "test", *, warps: int = MAX_WARPS,
                  threshold: int | None = None) -> tuple[list[list[WarpInstruction]], int]:
    """Per warp (first blocks, at most ``warps``) its dynamic stream, and the registers per
    thread the kernel was allocated. With ``threshold``, every operand carries the state
    the GReEneR compiler pass (:func:`gpurf.sim.passes.greener.power_pass.power_pass`, ``W =
    threshold``) encoded in its instruction; without, the states are left empty (see
    :func:`oracle_states`)."""
    if isinstance(warps, bool) or not isinstance(warps, int) or not 1 <= warps <= MAX_WARPS:
        raise ValueError(f"warps must be an integer in 1..{MAX_WARPS}, not {warps!r}")
    _, program, _ = load_workload(name)
    allocation = allocate_registers(program.kernel)
    power = power_pass(program.kernel, threshold) if threshold is not None else None
    streams: dict[tuple[int, int], list] = {}
    block = [-1]

    def blocks(items):
        for index, item in enumerate(items):
            block[0] = index
            yield item

    def record(step, _warp):
        if power is not None:
            instr = _annotated(power.operands[step.pc])
        else:
            instr = WarpInstruction(
                [r for v in step.sources if v in allocation.units
                 for r in _physical(allocation, v)],
                [r for v in step.dests if v in allocation.units
                 for r in _physical(allocation, v)])
        streams.setdefault((block[0], step.warp), []).append(instr)

    run = run_kernel(name, size, progress=blocks, on_step=record)
    if not run.passed:
        raise RuntimeError(f"{name} ({size}) does not match its numpy reference")
    return [streams[key] for key in sorted(streams)][:warps], allocation.registers


def _annotated(operands) -> WarpInstruction:
    """A warp instruction from the pass's operands: physical ``R<n>`` registers (predicates
    are not in the register file) with their encoded-or-SLEEP states."""
    instr = WarpInstruction([], [])
    for op in operands:
        regs, states = (instr.dsts, instr.dst_states) if op.role == "dst" else (
            instr.srcs, instr.src_states)
        for key in op.keys:
            if key.startswith("R"):
                regs.append(int(key[1:]))
                states.append(op.state.value)
    return instr


def oracle_states(stream: list[WarpInstruction], threshold: int) -> None:
    """Fill the states of one warp's stream by the Table 1 rule on its own future."""
    next_access: dict[int, tuple[int, bool]] = {}
    for index in range(len(stream) - 1, -1, -1):
        instr = stream[index]
        instr.dst_states = [_state(next_access.get(r), index, threshold) for r in instr.dsts]
        after_write = dict(next_access)
        for r in instr.dsts:
            after_write[r] = (index, False)
        instr.src_states = [_state(after_write.get(r), index, threshold) for r in instr.srcs]
        for r in instr.srcs:
            next_access[r] = (index, True)
        for r in instr.dsts:
            if r not in instr.srcs:
                next_access[r] = (index, False)
        instr.src_states = _encode(instr.src_states, 2)
        instr.dst_states = _encode(instr.dst_states, 1)


def _state(following, index, threshold) -> int:
    if following is None:
        return OFF
    at, is_read = following
    if at - index <= threshold:
        return ON
    return SLEEP if is_read else OFF


def _encode(states, encoded):
    return states[:encoded] + [SLEEP] * (len(states) - encoded)


@dataclass
class PolicyRun:
    """One replay: cycles, the controller's counters and the instructions it retired."""

    policy: str
    cycles: int
    counters: dict
    instructions: int


class _Pipeline:
    """The in-order replay around the golden controller (see the module docstring)."""

    def __init__(self, streams, regs, policy, *, writeback_latency, all_on):
        params = {"warps": max(2, len(streams)), "regs": max(2, regs), "src_ports": 4,
                  "dst_ports": 4, "sleep_wakeup": 1, "off_wakeup": 2, "policy": policy,
                  "counter_width": 32}
        self.ports, self.model = Ports(params), PowerController(**params)
        self.pending = [deque(s) for s in streams]
        self.all_on, self.latency = all_on, writeback_latency
        self.heads, self.reading, self.writing = {}, None, []
        self.last_issue = dict.fromkeys(range(len(streams)), -1)

    def _head_states(self, instr):
        if self.all_on:
            return [ON] * len(instr.srcs), [ON] * len(instr.dsts)
        return instr.src_states, instr.dst_states

    def _keep(self, warp, instr, regs):
        others = [i for w, i in self.writing if w == warp and i is not instr]
        if warp in self.heads:
            others.append(self.heads[warp])
        return sum(1 << k for k, r in enumerate(regs)
                   if any(r in o.srcs or r in o.dsts for o in others))

    def _sets(self, cycle):
        src, dst, keep_src, keep_dst = [], [], 0, 0
        if self.reading is not None:
            warp, instr = self.reading
            states, _ = self._head_states(instr)
            src = [(warp, r, s) for r, s in zip(instr.srcs, states, strict=True)]
            keep_src = self._keep(warp, instr, instr.srcs)
            self.reading = None
        due = [(w, i) for w, i in self.writing if i.due <= cycle]
        if due:
            warp, instr = due[0]
            self.writing.remove(due[0])
            _, states = self._head_states(instr)
            dst = [(warp, r, s) for r, s in zip(instr.dsts, states, strict=True)]
            keep_dst = self._keep(warp, instr, instr.dsts)
        return self.ports.inputs(src=src, dst=dst, keep_src=keep_src, keep_dst=keep_dst,
                                 heads={w: [*i.srcs[:4], *i.dsts[:4]]
                                        for w, i in self.heads.items()})

    def _hazard(self, warp, instr):
        regs = set(instr.srcs) | set(instr.dsts)
        return any(w == warp and regs & set(i.dsts) for w, i in self.writing)

    def run(self) -> int:
        cycle, retired = 0, 0
        while any(self.pending) or self.heads or self.writing or self.reading:
            for warp, queue in enumerate(self.pending):
                if warp not in self.heads and queue:
                    self.heads[warp] = queue.popleft()
            out = self.model.step(self._sets(cycle))
            ready = [w for w in self.heads if out["ready"] >> w & 1
                     and not self._hazard(w, self.heads[w])]
            if ready:
                warp = min(ready, key=lambda w: self.last_issue[w])
                instr = self.heads.pop(warp)
                instr.due = cycle + self.latency
                self.reading = (warp, instr)
                self.writing.append((warp, instr))
                self.last_issue[warp] = cycle
                retired += 1
            if self.model.error is not None:
                raise RuntimeError(f"register {self.model.error} read while OFF")
            cycle += 1
        return cycle, retired


def _copy(streams):
    return [[WarpInstruction(i.srcs, i.dsts, i.src_states, i.dst_states) for i in s]
            for s in streams]


def replay(streams, regs, policy, *, writeback_latency=4, all_on=False) -> PolicyRun:
    pipeline = _Pipeline(_copy(streams), regs, policy, writeback_latency=writeback_latency,
                         all_on=all_on)
    cycles, retired = pipeline.run()
    name = "always_on" if all_on else policy
    return PolicyRun(name, cycles, pipeline.model.counters(), retired)


def compare_policies(name: str = "hotspot", size: str = "test", *, threshold: int = 3,
                     writeback_latency: int = 4, warps: int = MAX_WARPS,
                     states: str = "compiler") -> dict:
    """Replay the kernel's stream under always-ON, GReEneR and Sleep-Reg; return cycles,
    counters and the leakage energy over the spec's leakage ranges. ``states``:
    ``"compiler"`` (the GReEneR pass's encoded states) or ``"oracle"`` (Table 1 on each
    warp's own dynamic future, :func:`oracle_states`). (With ``warps=1`` the controller
    still has its minimum of 2 warps; the idle one stays OFF throughout.)"""
    if states not in ("compiler", "oracle"):
        raise ValueError(f"states must be one of compiler, oracle, not {states!r}")
    compiled = threshold if states == "compiler" else None
    streams, regs = kernel_stream(name, size, warps=warps, threshold=compiled)
    if states == "oracle":
        for stream in streams:
            oracle_states(stream, threshold)
    runs = [replay(streams, regs, "greener", writeback_latency=writeback_latency, all_on=True),
            replay(streams, regs, "greener", writeback_latency=writeback_latency),
            replay(streams, regs, "sleep_reg", writeback_latency=writeback_latency)]
    base = runs[0]
    registers = len(streams) * regs
    reference = always_on_energy(base.counters, register_cycles=registers * base.cycles)
    rows = {}
    for run in runs:
        best, worst = leakage_energy_range(run.counters)
        rows[run.policy] = {"cycles": run.cycles, "instructions": run.instructions,
                            "counters": run.counters,
                            "leakage_best": best.leakage, "leakage_worst": worst.leakage,
                            "transition_joules": best.transition}
    rows["always_on"].update(leakage_best=reference, leakage_worst=reference,
                             transition_joules=0.0)
    return {"kernel": name, "size": size, "warps": len(streams), "regs": regs,
            "threshold": threshold, "states": states, "runs": rows}


def energy_table(result: dict) -> str:
    """Markdown: per policy cycles, leakage (ON register-cycles) at both ends of the leakage
    ranges, its reduction against always-ON, and the transition energy."""
    runs = result["runs"]
    base = runs["always_on"]["leakage_best"]
    lines = [f"Kernel {result['kernel']} ({result['size']}), {result['warps']} warps x "
             f"{result['regs']} registers, W = {result['threshold']}, {result['states']} "
             "states; leakage in ON "
             "register-cycles at (SLEEP, OFF) = (0.1, 0) and (0.5, 0.05) of ON.", "",
             "| policy | cycles | leakage (best) | leakage (worst) | reduction | "
             "transitions (nJ) |", "|---|---|---|---|---|---|"]
    for policy, run in runs.items():
        low, high = (1 - run[k] / base for k in ("leakage_worst", "leakage_best"))
        lines.append(f"| {policy} | {run['cycles']:,} | {run['leakage_best']:,.0f} | "
                     f"{run['leakage_worst']:,.0f} | {100 * low:.1f}-{100 * high:.1f} % | "
                     f"{run['transition_joules'] * 1e9:,.1f} |")
    return "\n".join(lines)
