"""Verilator lint of generated Verilog, with the one list of waived warning classes.

Amaranth's generated style produces three warning classes that say nothing about the
design: ``PROCASSINIT`` (a ``reg`` both initialised and assigned in a process — how
Amaranth writes reset values), ``UNUSEDSIGNAL`` (named intermediate wires Amaranth
keeps for debugging, unused port bits) and ``DECLFILENAME`` (the module name is not the
file name). Everything else under ``-Wall`` is a finding.
"""

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .toolchain import tool_env

__all__ = ["WAIVED", "LintResult", "lint"]

WAIVED = ("PROCASSINIT", "UNUSEDSIGNAL", "DECLFILENAME")

_WARNING = re.compile(r"^%(Warning|Error)-?([A-Z0-9_]*)", re.MULTILINE)


@dataclass(frozen=True)
class LintResult:
    plain: list[str]
    wall: list[str]
    output: str

    @property
    def findings(self) -> list[str]:
        """Warnings without ``-Wall``, plus ``-Wall`` warnings outside :data:`WAIVED`."""
        return self.plain + [w for w in self.wall if w not in WAIVED]


def _classes(verilog: Path, *extra: str) -> tuple[list[str], str]:
    run = subprocess.run(["verilator", "--lint-only", *extra, verilog.name],
                         cwd=verilog.parent, env=tool_env(), capture_output=True, text=True,
                         check=False)
    text = run.stdout + run.stderr
    classes = [match.group(2) or match.group(1) for match in _WARNING.finditer(text)]
    if run.returncode != 0 and not classes:
        classes = ["VERILATOR_FAILED"]
    return classes, text


def lint(verilog: Path) -> LintResult:
    """Lint ``verilog`` twice: plain ``--lint-only`` and ``--lint-only -Wall``."""
    plain, text_plain = _classes(verilog)
    wall, text_wall = _classes(verilog, "-Wall", "-Wno-fatal")
    return LintResult(plain=plain, wall=wall, output=text_plain + text_wall)
