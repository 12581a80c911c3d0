"""Configuration of the timing model: presets, a TOML file, ``key=value`` overrides.

:class:`SMConfig` holds every parameter of :mod:`gpurf.sim.sm.timing`, validated at construction
(messages like ``cus must be an integer in 1..8, not 0``, as the blocks give). Presets
(``PRESETS``) follow the papers' baselines (``shared/spec/golden-sm.md``):

- ``v100`` (default; the sub-core paper, Table II): 64 warps, 4 sub-cores, 2 banks and
  2 collector units per sub-core, GTO, 65,536 registers.
- ``gtx980`` (RegLess): 64 warps, 4 schedulers, 65,536 registers, 4 banks per sub-core.
- ``k20x`` (GReEneR, Table 2): 64 warps (2,048 threads), at most 16 thread blocks, 4
  schedulers, LRR, 32 banks (8 per scheduler), 65,536 registers (256 KB).
- ``fermi`` (WIR, static compression): 48 warps, 2 schedulers, 32,768 registers,
  16 banks (8 per scheduler).

**Interpretation.** Kepler and Fermi SMs are not partitioned; the model has only
partitioned SMs, so their schedulers are modelled as sub-cores with the SM's banks split
evenly (a collector unit cannot read another scheduler's banks).

Latencies are dependent-issue latencies as microbenchmarks measure them (Jia et al.,
"Dissecting the NVIDIA Volta GPU architecture via microbenchmarking", 2018: 4 cycles for
FP32/INT32, about 28 for an L1 hit, 19 for shared memory, about 200 beyond L1); they include
the operand collector's minimum ``2 + read_latency`` cycles from issue to dispatch (the issue
register, allocation, the bank read), so a unit adds
``max(1, latency - (2 + read_latency))`` cycles after dispatch. ``*_width`` is the lanes of
a unit in one sub-core: a warp instruction occupies it ``ceil(32 / width)`` cycles.

A TOML file holds ``preset = "name"`` (optional) and any parameters; ``--param`` overrides
come last. Every mistake raises :class:`ConfigError` with a one-line message.
"""

import dataclasses
import tomllib
from dataclasses import dataclass
from pathlib import Path

from gpurf.hw.params import check_bool, check_choice, check_int

__all__ = ["ASSIGNMENTS", "PRESETS", "SCHEDULERS", "ConfigError", "SMConfig", "load_config"]

SCHEDULERS = ("gto", "lrr", "two_level", "rba")
ASSIGNMENTS = ("rr", "srr", "shuffle")
BANK_MAPS = ("swizzle", "modulo")


class ConfigError(ValueError):
    """A bad configuration file, parameter name or value (one line)."""


_INTS = {
    "max_warps": (1, 1024), "max_blocks": (1, 64), "registers": (1024, 1 << 20),
    "shared_bytes": (0, 1 << 20), "subcores": (1, 8), "banks": (1, 8), "cus": (1, 8),
    "operands": (1, 4), "read_latency": (1, 4), "hash_depth": (4, 16),
    "shuffle_seed": (0, 2**31 - 1), "score_latency": (0, 20), "score_width": (1, 8),
    "two_level_active": (1, 64),
    "int_latency": (1, 1000), "int_width": (1, 32), "fp32_latency": (1, 1000),
    "fp32_width": (1, 32), "sfu_latency": (1, 1000), "sfu_width": (1, 32),
    "branch_latency": (1, 1000), "lsu_width": (1, 32), "const_latency": (1, 1000),
    "shared_latency": (1, 1000), "l1_hit_latency": (1, 10000),
    "l1_miss_latency": (1, 10000), "l1_bytes": (0, 1 << 24), "l1_ways": (1, 64),
}


@dataclass(frozen=True)
class SMConfig:
    """Parameters of the timing model (defaults: the V100-like sub-core baseline).

    SM: ``max_warps`` (warp slots, split evenly over ``subcores``), ``max_blocks``,
    ``registers`` (32-bit registers per SM), ``shared_bytes``. Sub-core: ``banks``,
    ``cus``, ``operands`` (32-bit register reads a CU holds: a 64-bit source takes two;
    reads beyond them are not modelled, see :mod:`gpurf.sim.sm.timing`), ``read_latency``
    (a CU turns over every ``1 + read_latency`` cycles without bank conflicts), ``bank_map``
    (``swizzle``: bank = (register + warp slot) % banks; ``modulo``: register % banks).
    Scheduling: ``scheduler`` (gto, lrr, two_level, rba), ``rba_greedy``,
    ``score_latency``, ``score_width``, ``two_level_active`` (active warps per sub-core
    under two_level). Assignment: ``assign`` (rr, srr, shuffle), ``hash_depth``,
    ``shuffle_seed``. Units (per sub-core): ``<unit>_latency`` and ``<unit>_width`` for
    int, fp32, sfu (divisions, remainders, 64-bit floats), ``branch_latency``,
    ``lsu_width``. Memory: ``const_latency`` (``ld.param``), ``shared_latency``,
    ``l1_hit_latency``, ``l1_miss_latency`` (L2 and DRAM as one fixed latency),
    ``l1_bytes``, ``l1_ways`` (LRU, 128-byte lines, one request per cycle, shared by the
    sub-cores).
    """

    preset: str = "v100"
    max_warps: int = 64
    max_blocks: int = 32
    registers: int = 65536
    shared_bytes: int = 98304
    subcores: int = 4
    banks: int = 2
    cus: int = 2
    operands: int = 3
    read_latency: int = 1
    bank_map: str = "swizzle"
    scheduler: str = "gto"
    rba_greedy: bool = False
    score_latency: int = 1
    score_width: int = 5
    two_level_active: int = 4
    assign: str = "rr"
    hash_depth: int = 4
    shuffle_seed: int = 1
    int_latency: int = 4
    int_width: int = 16
    fp32_latency: int = 4
    fp32_width: int = 16
    sfu_latency: int = 20
    sfu_width: int = 4
    branch_latency: int = 4
    lsu_width: int = 32
    const_latency: int = 8
    shared_latency: int = 19
    l1_hit_latency: int = 28
    l1_miss_latency: int = 200
    l1_bytes: int = 65536
    l1_ways: int = 4

    def __post_init__(self):
        check_choice("preset", self.preset, tuple(PRESETS))
        for name, (low, high) in _INTS.items():
            check_int(name, getattr(self, name), low, high)
        check_choice("bank_map", self.bank_map, BANK_MAPS)
        check_choice("scheduler", self.scheduler, SCHEDULERS)
        check_choice("assign", self.assign, ASSIGNMENTS)
        check_bool("rba_greedy", self.rba_greedy)
        if self.hash_depth not in (4, 8, 16):
            raise ValueError(f"hash_depth must be one of 4, 8, 16, not {self.hash_depth}")
        if self.max_warps % self.subcores:
            raise ValueError(f"max_warps ({self.max_warps}) must be a multiple of subcores "
                             f"({self.subcores})")
        if not 2 <= self.slots <= 64:
            raise ValueError(f"max_warps / subcores must be in 2..64, not {self.slots}")
        if self.assign != "rr" and self.subcores != 4:
            raise ValueError(f"assign {self.assign} needs 4 sub-cores (the hash table "
                             f"encodes 4), not {self.subcores}")
        if self.l1_bytes % (128 * self.l1_ways):
            raise ValueError(f"l1_bytes ({self.l1_bytes}) must be a multiple of 128 x l1_ways")

    @property
    def slots(self) -> int:
        """Warp slots of one sub-core scheduler."""
        return self.max_warps // self.subcores

    @property
    def pipeline(self) -> int:
        """Cycles from issue to the earliest dispatch through the operand collector."""
        return 2 + self.read_latency

    def replace(self, **changes) -> "SMConfig":
        return dataclasses.replace(self, **changes)


PRESETS = {
    "v100": {},
    "gtx980": {"banks": 4, "cus": 4},
    "k20x": {"banks": 8, "cus": 4, "l1_bytes": 16384, "max_blocks": 16, "scheduler": "lrr"},
    "fermi": {"max_warps": 48, "subcores": 2, "registers": 32768, "shared_bytes": 49152,
              "banks": 8, "cus": 4, "l1_bytes": 16384, "fp32_width": 16, "int_width": 16},
}
"""Overrides of the defaults per preset (see the module docstring)."""

_FIELDS = {f.name: f for f in dataclasses.fields(SMConfig)}


def _typed(name: str, value):
    """``value`` (a string from ``--param``, or a TOML value) as the type of ``name``."""
    if name not in _FIELDS:
        raise ConfigError(f"unknown parameter {name!r}; known: {', '.join(_FIELDS)}")
    kind = type(_FIELDS[name].default)
    if not isinstance(value, str) or kind is str:
        return value
    if kind is bool:
        if value.lower() not in ("true", "false", "1", "0"):
            raise ConfigError(f"{name} must be true or false, not {value!r}")
        return value.lower() in ("true", "1")
    try:
        return int(value, 0)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, not {value!r}") from None


def _pairs(pairs) -> dict:
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"expected KEY=VALUE, not {pair!r}")
        out[key.strip()] = _typed(key.strip(), value.strip())
    return out


def load_config(file: str | Path | None = None, pairs=(), **overrides) -> SMConfig:
    """The configuration from a preset, a TOML ``file``, ``KEY=VALUE`` ``pairs`` and
    keyword ``overrides`` (later ones win). Raises :class:`ConfigError`."""
    values = {}
    if file is not None:
        path = Path(file)
        try:
            data = tomllib.loads(path.read_text())
        except OSError as error:
            raise ConfigError(f"{path}: {error.strerror}") from None
        except UnicodeDecodeError:
            raise ConfigError(f"{path}: not a UTF-8 TOML file") from None
        except tomllib.TOMLDecodeError as error:
            raise ConfigError(f"{path}: {error}") from None
        for key, value in data.items():
            if isinstance(value, dict | list):
                raise ConfigError(f"{path}: {key} must be a number, string or boolean")
            values[key] = _typed(key, value)
    values.update(_pairs(pairs))
    values.update({k: _typed(k, v) for k, v in overrides.items() if v is not None})
    preset = values.get("preset", "v100")
    if preset not in PRESETS:
        raise ConfigError(f"preset must be one of {', '.join(PRESETS)}, not {preset!r}")
    try:
        return SMConfig(**{**PRESETS[preset], **values})
    except (TypeError, ValueError) as error:
        raise ConfigError(str(error)) from None
