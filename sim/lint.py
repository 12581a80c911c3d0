"""Verilator lint of generated Verilog, with the one list of waived warning classes.

Amaranth's generated style produces three warning classes that say nothing about the
design: ``PROCASSINIT`` (a ``reg`` both initialised and assigned in a process — how
Amaranth writes reset values), ``UNUSEDSIGNAL`` on internal signals (the named aliases of
struct fields and intermediate wires Amaranth keeps for debugging) and ``DECLFILENAME`` (the
module name is not the file name). Everything else under ``-Wall`` is a finding, and so is an
``UNUSEDSIGNAL`` on an input port of any module (a dead input) or on a flip-flop (a register
nobody reads), unless :data:`UNUSED_PORTS` waives that port by name, with its reason.
"""

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .toolchain import tool_env

__all__ = ["UNUSED_PORTS", "WAIVED", "LintResult", "lint", "unused_state"]

WAIVED = ("PROCASSINIT", "UNUSEDSIGNAL", "DECLFILENAME")

UNUSED_PORTS = {
    ("subcore_warp_selector", "greedy"):
        "the greedy override's last-issued slot, read only under policy=gto or rba_greedy",
    ("subcore_warp_selector", "greedy_valid"):
        "the greedy override's enable, read only under policy=gto or rba_greedy",
}
"""``(module, input port) -> why`` for input ports a configuration legitimately leaves
unread (the port stays so that every configuration of a block has one signature)."""

_WARNING = re.compile(r"^%(Warning|Error)-?([A-Z0-9_]*)", re.MULTILINE)
_UNUSED = re.compile(r"^%Warning-UNUSEDSIGNAL: [^:]+:(\d+):\d+: [^:]*: '([^']*)'", re.MULTILINE)
_MODULE = re.compile(r"module\s+\\?(\S+)\s*\(")
_INPUT = re.compile(r"input\s+(?:\[[^\]]*\]\s*)?\\?(\S+);")
_NONBLOCKING = re.compile(r"\\?(\S+)\s*<=")


@dataclass(frozen=True)
class LintResult:
    plain: list[str]
    wall: list[str]
    output: str
    unused: list[str]

    @property
    def findings(self) -> list[str]:
        """Warnings without ``-Wall``, ``-Wall`` warnings outside :data:`WAIVED`, and unused
        input ports and flip-flops (``UNUSEDSIGNAL module.signal``)."""
        return self.plain + [w for w in self.wall if w not in WAIVED] + self.unused


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
    unused = unused_state(verilog.read_text(), text_wall)
    return LintResult(plain=plain, wall=wall, output=text_plain + text_wall, unused=unused)


def unused_state(verilog: str, warnings: str) -> list[str]:
    """``UNUSEDSIGNAL module.signal`` for each ``UNUSEDSIGNAL`` warning in ``warnings`` on an
    input port or a flip-flop of its module in ``verilog``, unless :data:`UNUSED_PORTS`
    waives it."""
    modules, state = _state_by_line(verilog)
    found = []
    for match in _UNUSED.finditer(warnings):
        module = modules[int(match.group(1)) - 1]
        signal = match.group(2)
        finding = f"UNUSEDSIGNAL {module}.{signal}"
        if (signal in state.get(module, ()) and (module, signal) not in UNUSED_PORTS
                and finding not in found):
            found.append(finding)
    return found


def _state_by_line(verilog: str) -> tuple[list[str | None], dict[str, set[str]]]:
    """The module of every line of ``verilog``, and per module its input ports and its
    flip-flops (the targets of non-blocking assignments in ``always @(posedge ...)``
    processes, as yosys writes them)."""
    modules, state, module, clocked = [], {}, None, False
    for line in verilog.splitlines():
        text = line.strip()
        if match := _MODULE.match(text):
            module, clocked = match.group(1), False
            state[module] = set()
        modules.append(module)
        if module is None:
            continue
        if match := _INPUT.match(text):
            state[module].add(match.group(1))
        if text.startswith("always @(posedge"):
            clocked = True
            text = text.split(")", 1)[1]
        elif text.startswith(("always", "assign", "reg ", "wire ", "end")) or not text:
            clocked = False
        if clocked and (match := _NONBLOCKING.match(text.strip())):
            state[module].add(match.group(1))
    return modules, state
