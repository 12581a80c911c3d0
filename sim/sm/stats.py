"""Statistics of a timing run: cycles, IPC, bank conflicts, per-sub-core issue, stalls.

Definitions:

- ``issued[i]``: warp instructions sub-core ``i``'s scheduler issued; their coefficient of
  variation ``cv`` is the population standard deviation over the mean (the sub-core
  paper's Fig. 17).
- ``bank_conflicts``: request-cycles lost to conflicts: per sub-core, per cycle and bank,
  the requests waiting in the bank's queue beyond the one granted (queue length - 1).
- ``register_reads``: register-file bank reads granted.
- ``stalls``: per sub-core cycle without an issue, its reason: ``no_warp`` (no warp with
  instructions left), ``barrier`` (every such warp waits at a barrier), ``scoreboard``
  (a warp waits for a register write or a branch in flight), ``collector_full`` (a warp
  is ready but every collector unit is busy). Cycles with an issue are not stalls, so
  ``sum(stalls) + sum(issued) == cycles x sub-cores``.
- ``dispatch_stalls``: cycles a collector unit offered an instruction whose unit was busy.
- ``l1_*``: requests, hits and misses of global accesses (shared accesses count as
  requests only) and the cycles requests waited for the L1's single port.
- ``values`` (with values through timing, :mod:`gpurf.sim.sm.values`; else empty):
  ``reads``, ``writes`` and ``results`` checked or handed to the register storage,
  ``dynamic_instructions`` and ``recorded_instructions`` (those with register words) of
  the replayed warps, ``recorded_bytes`` (their recorded values, masks and offsets).
"""

import json
from dataclasses import asdict, dataclass, field

__all__ = ["STALLS", "TimingStats"]

STALLS = ("no_warp", "barrier", "scoreboard", "collector_full")


@dataclass
class TimingStats:
    cycles: int
    issued: list[int]
    bank_conflicts: int
    register_reads: int
    dispatch_stalls: int
    stalls: dict[str, int]
    l1_requests: int
    l1_hits: int
    l1_misses: int
    l1_queue_cycles: int
    seconds: float
    config: dict = field(default_factory=dict)
    values: dict = field(default_factory=dict)

    @property
    def instructions(self) -> int:
        return sum(self.issued)

    @property
    def ipc(self) -> float:
        return self.instructions / max(1, self.cycles)

    @property
    def cv(self) -> float:
        """Coefficient of variation of the per-sub-core issued instructions."""
        n = len(self.issued)
        mean = self.instructions / n
        if not mean:
            return 0.0
        var = sum((x - mean) ** 2 for x in self.issued) / n
        return var ** 0.5 / mean

    def as_dict(self) -> dict:
        return {**asdict(self), "instructions": self.instructions, "ipc": self.ipc,
                "cv": self.cv}

    def to_json(self) -> str:
        return json.dumps(self.as_dict(), indent=1)

    def table(self) -> str:
        """A markdown table of the figures."""
        c = self.config
        rows = [
            ("configuration", f"{c.get('preset')}: {c.get('subcores')} sub-cores, "
                              f"{c.get('banks')} banks, {c.get('cus')} CUs, "
                              f"{c.get('scheduler')}, assign {c.get('assign')}"),
            ("cycles", f"{self.cycles:,}"),
            ("warp instructions", f"{self.instructions:,}"),
            ("IPC", f"{self.ipc:.3f}"),
            ("issued per sub-core", " / ".join(f"{x:,}" for x in self.issued)),
            ("issue coefficient of variation", f"{self.cv:.3f}"),
            ("bank conflicts (request-cycles)", f"{self.bank_conflicts:,}"),
            ("register-file reads", f"{self.register_reads:,}"),
            ("dispatch stalls (unit busy)", f"{self.dispatch_stalls:,}"),
            *((f"stall: {k}", f"{v:,}") for k, v in self.stalls.items()),
            ("L1 requests / hits / misses",
             f"{self.l1_requests:,} / {self.l1_hits:,} / {self.l1_misses:,}"),
            ("L1 port wait (request-cycles)", f"{self.l1_queue_cycles:,}"),
            *self._value_rows(),
        ]
        lines = ["| timing | value |", "|---|---|"]
        lines += [f"| {k} | {v} |" for k, v in rows]
        return "\n".join(lines)

    def _value_rows(self) -> list:
        v = self.values
        if not v:
            return []
        per = v["recorded_bytes"] / max(1, v["dynamic_instructions"])
        return [("values checked: reads / results",
                 f"{v['reads']:,} / {v['results']:,} (all equal)"),
                ("register writes", f"{v['writes']:,}"),
                ("values recorded", f"{v['recorded_bytes']:,} bytes ({per:.0f} per dynamic "
                                    "warp instruction)")]
