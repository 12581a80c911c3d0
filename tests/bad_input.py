"""The bad inputs issue 21 found ending in a traceback, a hang or silence, each now one line
on stderr and an exit status; ``tests/test_bad_input.py`` checks every one, and
``python -m tests.bad_input`` prints them as the Markdown table of ``docs/reliability.md``.

Each probe is a command line (``{tmp}`` is a scratch folder the probe's ``setup`` fills), the
exit status it must end with and a pattern its one line of stderr must match.
"""

import contextlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpurf.sim.cli import main
from gpurf.sim.kernels import kernel_dir

SAXPY = kernel_dir("saxpy")


def _folder(tmp: Path, launch: Callable[[str], str] = lambda text: text,
            ptx: Callable[[bytes], bytes] = lambda raw: raw, raw: bool = False) -> None:
    """``{tmp}/k``: saxpy as a kernel folder, its launch file and PTX edited (``raw``: the
    launch file's text prefixed by an invalid UTF-8 byte)."""
    folder = tmp / "k"
    folder.mkdir()
    text = launch((SAXPY / "launch.toml").read_text()).encode()
    (folder / "launch.toml").write_bytes(b"\xff" + text if raw else text)
    (folder / "kernel.ptx").write_bytes(ptx((SAXPY / "kernel.ptx").read_bytes()))


def _with_unsupported(tmp: Path) -> None:
    """``{tmp}/k`` with an instruction the front end rejects (a breakpoint) before its
    ``ret``."""
    _folder(tmp, ptx=lambda raw: raw.replace(b"ret;", b"brkpt;\n\tret;"))


def _replace(old: str, new: str) -> Callable[[str], str]:
    return lambda text: text.replace(old, new, 1)


@dataclass(frozen=True)
class Probe:
    """A bad input: the command line, its setup, the exit status and the message."""

    argv: tuple[str, ...]
    message: str
    status: int = 2
    setup: Callable[[Path], None] = field(default=lambda tmp: None)
    env: tuple[tuple[str, str], ...] = ()

    @property
    def command(self) -> str:
        env = [f"{k}={v}" for k, v in self.env]
        return " ".join([*env, "gpurf", shlex.join(self.argv)])


PROBES = [
    Probe(("generate", "subcore.warp_selector", "-o", "/nonexistent/dir/x.v"),
          r"-o /nonexistent/dir/x\.v: No such file or directory"),
    Probe(("generate", "subcore.warp_selector", "-o", ""), r"-o \.: Is a directory"),
    Probe(("generate", "subcore.warp_selector", "-o", "/dev/full"),
          r"-o /dev/full: No space left on device"),
    Probe(("test", "subcore.warp_selector", "--cycles", "5"), r"\S+/file/subcore\.warp_selector/"
          r"p\w+: Not a directory", setup=lambda tmp: (tmp / "file").write_text(""),
          env=(("GPURF_BUILD", "{tmp}/file"),)),
    Probe(("sm", "run", "saxpy", "--config", "{tmp}/bin.toml"),
          r"\S+/bin\.toml: not a UTF-8 TOML file",
          setup=lambda tmp: (tmp / "bin.toml").write_bytes(b"\x00\xff\xfe")),
    Probe(("compile", "saxpy", "--pass", "greener", "--threshold", "2000"),
          r"Invalid value for '--threshold': 2000 is not in the range 1<=x<=1024\."),
    Probe(("energy", "saxpy", "--threshold", "2000"),
          r"Invalid value for '--threshold': 2000 is not in the range 1<=x<=1024\."),
    *(Probe(("cost", name), rf"no cost report for mechanism '{re.escape(name)}'; reports exist "
            r"for: compression, regless, subcore, wir")
      for name in ("flow", "costs", "report", "subcore.x")),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/kernel\.ptx:1: not PTX text \(byte 0 is not UTF-8\)",
          setup=lambda tmp: _folder(tmp, ptx=lambda raw: b"\xff" + raw)),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/kernel\.ptx:\d+: expected an operand in "
          r"'ld\.param\.', found 'end of file'",
          setup=lambda tmp: _folder(tmp, ptx=lambda raw: raw[:len(raw) // 2])),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/launch\.toml:1: not a UTF-8 TOML file",
          setup=lambda tmp: _folder(tmp, raw=True)),
    Probe(("sm", "run", "{tmp}/k"),
          r"\S+/k/launch\.toml:\d+: 'grid' must be an integer >= 1, not 'cdiv\(n, block\)' = -23",
          setup=lambda tmp: _folder(tmp, launch=_replace("n = 3000", "n = -3000"))),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/launch\.toml:\d+: buffer 'x' of shape "
          r"\(100000000000,\) takes 400,000,000,000 bytes; at most 1,073,741,824",
          setup=lambda tmp: _folder(tmp, launch=_replace("n = 3000", "n = 100000000000"))),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/launch\.toml:\d+: range must be \[low, high\] "
          r"with low <= high, not \[10\.0, -10\.0\]",
          setup=lambda tmp: _folder(tmp, launch=_replace("[-10.0, 10.0]", "[10.0, -10.0]"))),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/reference\.py: missing \(the launch file names a "
          r"reference function\)",
          setup=lambda tmp: _folder(tmp, launch=_replace('"saxpy"\nseed', '"np"\nseed'))),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/launch\.toml:\d+: expression of 24,999 characters; "
          r"at most 200 are allowed",
          setup=lambda tmp: _folder(tmp, launch=_replace('"cdiv(n, block)"',
                                                         '"' + "+".join(["n"] * 12500) + '"'))),
    Probe(("compile", "{tmp}/k", "--pass", "greener"),
          r"\S+/k/kernel\.ptx:\d+: unsupported instruction 'brkpt'", setup=_with_unsupported),
    Probe(("energy", "{tmp}/k"),
          r"\S+/k/kernel\.ptx:\d+: unsupported instruction 'brkpt'", setup=_with_unsupported),
    Probe(("sm", "bench", "{tmp}/k"),
          r"\S+/k/kernel\.ptx:\d+: unsupported instruction 'brkpt'", setup=_with_unsupported),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/kernel\.ptx:\d+: \.reg range %r<200000000>: a kernel "
          r"declares between 1 and 65,536 registers of a name",
          setup=lambda tmp: _folder(tmp, ptx=lambda raw: re.sub(
              rb"%r<\d+>", b"%r<200000000>", raw, count=1))),
    Probe(("run", "saxpy", "--cycles", "5", "--seed", "3"),
          r"--cycles applies to the main job, not to a kernel run"),
    Probe(("sm", "run", "{tmp}/k"),
          r"\S+/k/launch\.toml:\d+: 'block' must be an integer >= 1, not 0",
          setup=lambda tmp: _folder(tmp, launch=_replace('block = ["block"', "block = [0"))),
    Probe(("sm", "run", "{tmp}/k"), r"\S+/k/launch\.toml:\d+: 4,096 threads per block; at most "
          r"1,024 are allowed",
          setup=lambda tmp: _folder(tmp, launch=_replace("block = 128", "block = 4096"))),
    Probe(("sm", "run", "{tmp}/k"),
          r"\S+/k/launch\.toml:\d+: 'shape' must be an integer >= 0, not 'n' = 42\.5",
          setup=lambda tmp: _folder(tmp, launch=_replace("n = 3000", "n = 42.5"))),
]
"""Issue 21's probes, in its order (the read-only-folder probe cannot fail here: the suite
may run as root, whom permissions do not stop)."""


def run_probe(probe: Probe, tmp: Path) -> tuple[int, str, str]:
    """Run ``probe``: its exit status, stdout and stderr (in-process; in a child process when
    the probe sets environment variables, which gpurf reads when it starts)."""
    probe.setup(tmp)
    argv = [arg.replace("{tmp}", str(tmp)) for arg in probe.argv]
    if probe.env:
        env = {**os.environ, **{k: v.replace("{tmp}", str(tmp)) for k, v in probe.env}}
        gpurf = Path(sys.executable).parent / "gpurf"
        run = subprocess.run([str(gpurf), *argv], env=env, capture_output=True, text=True,
                             check=False)
        return run.returncode, run.stdout, run.stderr
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(argv)
        except SystemExit as done:
            return done.code, out.getvalue(), err.getvalue()
    return 0, out.getvalue(), err.getvalue()


def markdown_table() -> str:
    """Every probe run, as ``| command | exit | message |``."""
    rows = ["| command | exit | message |", "|---|---|---|"]
    for probe in PROBES:
        tmp = Path(tempfile.mkdtemp(prefix="gpurf-probe-"))
        try:
            status, _, err = run_probe(probe, tmp)
        finally:
            shutil.rmtree(tmp)
        message = err.strip().replace(str(tmp), "{tmp}").replace("|", "\\|")
        command = probe.command.replace("|", "\\|")
        rows.append(f"| `{command}` | {status} | {message} |")
    return "\n".join(rows)


if __name__ == "__main__":
    sys.stdout.write(markdown_table() + "\n")
