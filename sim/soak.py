"""Soak: long random runs of every stateful block, recorded and replayed on the RTL.

A soak of a block runs its random stimulus (the first stimulus of its bench) on the golden
model alone in segments of at most :data:`SEGMENT_CYCLES` cycles, each with the next seed,
records every segment as a trace (:func:`gpurf.sim.replay.record`) and replays it on the
block's Verilog (:func:`gpurf.sim.replay.replay`), which compares every output under its
mask every cycle. A clean segment's trace is deleted (a 10^6-cycle soak would otherwise
leave hundreds of megabytes); the first divergent one is kept and ends the block's soak.
A stimulus may add a few setup cycles, and one that ends sooner (the shard's finite list of
regions) makes a shorter segment: the soak goes on until it has replayed the cycles asked.

A block is stateful when its Verilog has a clock port. Blocks soak at their first test
configuration (the small one the suite cosimulates; the defaults where a block has none) or,
with ``config="default"``, at their defaults.
"""

import secrets
from dataclasses import dataclass
from pathlib import Path

from gpurf.hw.registry import Block, all_blocks

from .replay import ReplayResult, has_port, record, replay
from .verilog import verilog_text

__all__ = ["CONFIGS", "SEGMENT_CYCLES", "SoakResult", "fresh_seed", "soak_block",
           "soak_params", "stateful_blocks"]

SEGMENT_CYCLES = 200_000
"""Cycles recorded into one trace; longer soaks are several segments with fresh seeds."""
CONFIGS = ("test", "default")


@dataclass(frozen=True)
class SoakResult:
    """One block's soak.

    Attributes
    ----------
    seeds : tuple of int
        The seed of each segment, in order (the first is the soak's seed).
    cycles : int
        Cycles replayed, up to and including a divergence.
    record_seconds, replay_seconds, build_seconds : float
        Golden recording, replay inside the simulator (build excluded), and replay builds.
    failure : ReplayResult or None
        The first divergent segment's replay (its trace is kept).
    """

    block: str
    params: dict
    seeds: tuple[int, ...]
    cycles: int
    record_seconds: float
    replay_seconds: float
    build_seconds: float
    failure: ReplayResult | None = None

    @property
    def passed(self) -> bool:
        return self.failure is None

    def as_dict(self) -> dict:
        return {"block": self.block, "params": self.params, "seeds": list(self.seeds),
                "cycles": self.cycles, "record_seconds": round(self.record_seconds, 3),
                "replay_seconds": round(self.replay_seconds, 3),
                "build_seconds": round(self.build_seconds, 3), "passed": self.passed,
                "divergence": self.failure.summary() if self.failure else None}


def fresh_seed() -> int:
    """A new random seed (printed by the soak so a failure can be rerun)."""
    return secrets.randbelow(2**31 - 1) + 1


def soak_params(block: Block, config: str = "test") -> dict:
    """The parameters ``block`` soaks at (see the module docstring)."""
    if config not in CONFIGS:
        raise ValueError(f"config must be one of {', '.join(CONFIGS)}, not {config!r}")
    overrides = block.test_params[0] if config == "test" and block.test_params else {}
    return block.resolve(overrides)


def stateful_blocks(config: str = "test") -> list[Block]:
    """Every registered block whose Verilog at its soak parameters has a clock."""
    return [b for b in all_blocks() if has_port(verilog_text(b, soak_params(b, config)), "clk")]


def soak_block(block: Block, params: dict, *, cycles: int, seed: int, folder: Path,
               sim: str = "verilator", root: Path | None = None) -> SoakResult:
    """Soak ``block`` at ``params`` for ``cycles`` cycles from ``seed``; traces go to
    ``folder`` (only a divergent one stays)."""
    if cycles < 1:
        raise ValueError(f"cycles must be at least 1, not {cycles}")
    seeds, total, times = [], 0, {"record": 0.0, "replay": 0.0, "build": 0.0}
    while total < cycles:
        seeds.append(seed + len(seeds))
        recording = record(block, params, seed=seeds[-1],
                           cycles=min(SEGMENT_CYCLES, cycles - total), folder=folder, root=root)
        times["record"] += recording.seconds
        result = replay(recording.path, sim=sim, root=root)
        times["replay"] += result.seconds
        times["build"] += result.build_seconds
        total += result.cycles
        if not result.passed:
            return SoakResult(block.qualname, params, tuple(seeds), total, times["record"],
                              times["replay"], times["build"], result)
        recording.path.unlink()
    return SoakResult(block.qualname, params, tuple(seeds), total, times["record"],
                      times["replay"], times["build"])

