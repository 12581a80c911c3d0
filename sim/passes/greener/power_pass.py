"""GReEneR's compiler analysis (paper Sections 3.1-3.2): a power state per register operand.

Dataflow (backward, per physical register ``R``, on instructions)::

    Dist(IN(S), R)  = 1 if S accesses R, else INC(Dist(OUT(S), R))
    INC(x)          = inf if x is W or inf, else x + 1
    Dist(OUT(S), R) = inf if S is Exit, else max over SS in SUCC(S) of Dist(IN(SS), R)

solved as the least fixed point (every value starts below 1 and only grows; a cycle that
never touches ``R`` saturates to inf). ``SleepOff = (Dist == inf)`` and Table 1 with
``isLive`` gives ``Power(OUT(S), R)``: live & SleepOff -> SLEEP, dead & SleepOff -> OFF,
else ON. ``W`` is the threshold (default 3, paper Section 4; Example 3.1 uses 7).

Encoding (3.2): the destination and the first two source registers of an instruction
carry their computed state; any further operand is SLEEP. Sources are the operands in
order — address bases and the guard predicate included, the guard last (the paper's Fig. 3a
shows no state for addresses or branch guards; here they are operands like any other).
A register named by an encoded and an unencoded operand of the same instruction takes the
destination's state when it is the destination (written last, at writeback), else the
higher of its source states (ON > SLEEP > OFF) — both choices are never less safe.

Interpretations:

- Registers are physical (the paper runs on PTXPlus):
  :func:`gpurf.sim.passes.dataflow.register_keys`; a 64-bit operand covers two registers and
  takes the higher of their two states. Predicates are registers ``P<n>`` with their own
  states (the paper's Fig. 3a gives ``$p2`` one); consumers without a predicate power
  domain ignore them.
- ``isLive`` is warp-level liveness (:func:`gpurf.sim.passes.dataflow.warp_liveness`), not
  the per-thread liveness the paper cites: a warp register is gated for all 32 lanes, and
  lanes parked by divergence still need their values. This only turns some OFF into
  SLEEP; ``Dist`` is the paper's.

Sleep-Reg (the warped-register-file baseline): every accessed register SLEEP after each
access (:func:`sleep_reg_pass`). A run of a workload with the states enforced, counting the
operand-cycles in each state, is :func:`gpurf.sim.compile.operand_cycles`.
"""

import json
from dataclasses import dataclass

import numpy as np

from gpurf.hw.greener.layouts import PowerState
from gpurf.hw.params import check_int
from gpurf.sim.passes.dataflow import EXIT, KernelFlow, kernel_flow
from gpurf.sim.passes.enforcement import Enforcement
from gpurf.sim.ptx.ir import Kernel

__all__ = ["DEFAULT_THRESHOLD", "OperandPower", "PowerPass", "distances", "power_pass",
           "sleep_reg_pass"]

DEFAULT_THRESHOLD = 3
MAX_THRESHOLD = 1024
RANK = {PowerState.OFF: 0, PowerState.SLEEP: 1, PowerState.ON: 2}
ENCODED_SOURCES = 2


@dataclass(frozen=True)
class OperandPower:
    """One register operand of an instruction and the state it sets after the instruction.

    ``role`` is ``"dst"`` or ``"src"``; ``encoded`` whether the state is in the instruction
    (else it is SLEEP by rule); ``computed`` the analysis' ``Power(OUT(S), R)``."""

    register: str
    keys: tuple
    role: str
    computed: PowerState
    encoded: bool

    @property
    def state(self) -> PowerState:
        return self.computed if self.encoded else PowerState.SLEEP


@dataclass(frozen=True)
class PowerPass:
    """Result of :func:`power_pass` on a kernel.

    Attributes
    ----------
    flow : KernelFlow
    threshold : int or None
        ``W`` (``None`` for Sleep-Reg).
    dist_out : numpy.ndarray
        ``(instructions, registers)`` ``Dist(OUT(S), R)``, ``threshold + 1`` for inf.
    registers : tuple of str
        Column order of ``dist_out``.
    operands : list of tuple of OperandPower
        Per pc, the annotated operands (destination first, then sources in order).
    """

    flow: KernelFlow
    threshold: int | None
    dist_out: np.ndarray
    registers: tuple
    operands: list

    def after(self, pc: int) -> dict:
        """Physical register -> :class:`PowerState` it has after instruction ``pc``."""
        states, dest = {}, {}
        for op in self.operands[pc]:
            for key in op.keys:
                if op.role == "dst":
                    dest[key] = op.state
                elif RANK[op.state] > RANK.get(states.get(key), -1):
                    states[key] = op.state
        return {**states, **dest}

    def enforcement(self) -> Enforcement:
        """Poison every register whose state after an instruction is OFF."""
        off = [frozenset(k for k, s in self.after(pc).items() if s is PowerState.OFF)
               for pc in range(len(self.operands))]
        return Enforcement(self.flow.keys, off, "greener" if self.threshold else "sleep_reg")

    def static_counts(self) -> dict:
        """Encoded-or-default operand states over the static instructions."""
        counts = {s.name: 0 for s in PowerState}
        for ops in self.operands:
            for op in ops:
                counts[op.state.name] += 1
        return counts

    def listing(self) -> str:
        """The kernel as PTX with each instruction's operand states appended (Fig. 3a;
        ``*`` marks an operand beyond the encoded two sources, SLEEP by rule), and the
        physical registers as a comment."""
        code = self.flow.kernel.instructions
        label_at = {i: name for name, i in self.flow.kernel.labels.items()}
        lines = []
        for pc, ins in enumerate(code):
            if pc in label_at:
                lines.append(f"{label_at[pc]}:")
            ops = self.operands[pc]
            states = ", ".join(op.state.name + ("" if op.encoded else "*") for op in ops)
            where = " ".join(f"{op.register}={':'.join(op.keys)}" for op in ops
                             if op.keys != (op.register,))
            lines.append(f"  {pc:4d}  {str(ins)[:-1]}{', ' + states if states else ''};"
                         + (f"  // {where}" if where else ""))
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({
            "kernel": self.flow.kernel.name, "threshold": self.threshold,
            "instructions": [{"pc": pc, "text": str(ins), "operands": [
                {"register": op.register, "physical": list(op.keys), "role": op.role,
                 "state": op.state.name, "encoded": op.encoded} for op in self.operands[pc]]}
                for pc, ins in enumerate(self.flow.kernel.instructions)]}, indent=1)


def distances(flow: KernelFlow, threshold: int) -> tuple[tuple, np.ndarray, np.ndarray]:
    """``(registers, Dist(IN), Dist(OUT))``; inf is ``threshold + 1``."""
    registers = tuple(sorted({k for keys in flow.keys.values() for k in keys}))
    column = {k: i for i, k in enumerate(registers)}
    n = len(flow.kernel.instructions)
    access = np.zeros((n, len(registers)), bool)
    for pc in range(n):
        access[pc, [column[k] for k in flow.access_keys(pc)]] = True
    inf = threshold + 1
    dist_in = np.zeros((n, len(registers)), np.int64)
    dist_out = np.zeros_like(dist_in)
    exit_row = np.full(len(registers), inf, np.int64)
    changed = True
    while changed:
        changed = False
        for pc in range(n - 1, -1, -1):
            out = np.max([exit_row if s == EXIT else dist_in[s] for s in flow.succs[pc]],
                         axis=0)
            inc = np.where(out >= threshold, inf, out + 1)
            new = np.where(access[pc], 1, inc)
            if not (np.array_equal(out, dist_out[pc]) and np.array_equal(new, dist_in[pc])):
                dist_out[pc], dist_in[pc] = out, new
                changed = True
    return registers, dist_in, dist_out


def _operands(flow: KernelFlow, pc: int):
    """``(register, role)`` of the register operands, destination first."""
    ins = flow.kernel.instructions[pc]
    return ([(v, "dst") for v in ins.dests if v in flow.keys]
            + [(v, "src") for v in ins.sources if v in flow.keys])


def _annotate(flow: KernelFlow, pc: int, state_of) -> tuple:
    ops, sources = [], 0
    for vreg, role in _operands(flow, pc):
        keys = flow.keys[vreg]
        computed = max((state_of(pc, k) for k in keys), key=RANK.get)
        encoded = role == "dst" or sources < ENCODED_SOURCES
        sources += role == "src"
        ops.append(OperandPower(vreg, keys, role, computed, encoded))
    return tuple(ops)


def power_pass(kernel: Kernel | KernelFlow, threshold: int = DEFAULT_THRESHOLD) -> PowerPass:
    """GReEneR's analysis of ``kernel`` (a :class:`KernelFlow` to choose the registers)."""
    check_int("threshold", threshold, 1, MAX_THRESHOLD)
    flow = kernel if isinstance(kernel, KernelFlow) else kernel_flow(kernel)
    registers, _, dist_out = distances(flow, threshold)
    column = {k: i for i, k in enumerate(registers)}
    live = [flow.live_keys_after(pc) for pc in range(len(flow.kernel.instructions))]

    def state(pc, key):
        if dist_out[pc, column[key]] <= threshold:
            return PowerState.ON
        return PowerState.SLEEP if key in live[pc] else PowerState.OFF

    return PowerPass(flow, threshold, dist_out, registers,
                     [_annotate(flow, pc, state) for pc in range(len(live))])


def sleep_reg_pass(kernel: Kernel | KernelFlow) -> PowerPass:
    """Sleep-Reg: every accessed register SLEEP right after the access."""
    flow = kernel if isinstance(kernel, KernelFlow) else kernel_flow(kernel)
    n = len(flow.kernel.instructions)
    ops = [tuple(OperandPower(v, flow.keys[v], role, PowerState.SLEEP, True)
                 for v, role in _operands(flow, pc)) for pc in range(n)]
    return PowerPass(flow, None, np.zeros((n, 0), np.int64), (), ops)

