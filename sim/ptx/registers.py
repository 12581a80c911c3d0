"""Registers per thread: gpurf's allocator beside ``ptxas -v``, per kernel.

``python -m gpurf.sim.ptx.registers`` prints the markdown table recorded in docs/registers.md.
Without ``ptxas`` on the ``PATH`` the ptxas column reads ``-``.
"""

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from gpurf.sim.kernels import kernel_dir, kernel_names

from .liveness import liveness
from .parser import load_ptx
from .regalloc import allocate_registers

__all__ = ["RegisterCount", "ptxas_registers", "register_table"]

PTXAS_ARCH = "sm_80"


@dataclass(frozen=True)
class RegisterCount:
    kernel: str
    ours: int
    predicates: int
    ptxas: int | None
    pressure: int
    """Most 32-bit registers live at once in the PTX as written: a lower bound for ours."""

    @property
    def ratio(self) -> float | None:
        return None if not self.ptxas else self.ours / self.ptxas


def ptxas_registers(ptx: Path) -> dict[str, int] | None:
    """``{entry: registers}`` from ``ptxas -v``, or ``None`` without ptxas."""
    if shutil.which("ptxas") is None:
        return None
    done = subprocess.run(["ptxas", "-v", f"-arch={PTXAS_ARCH}", str(ptx), "-o", "/dev/null"],
                          capture_output=True, text=True, check=True)
    counts, entry = {}, None
    for line in done.stderr.splitlines():
        match = re.search(r"Compiling entry function '([^']+)'", line)
        if match:
            entry = match.group(1)
        match = re.search(r"Used (\d+) registers", line)
        if match and entry is not None:
            counts[entry] = int(match.group(1))
    return counts


def register_counts() -> list[RegisterCount]:
    rows = []
    for name in kernel_names():
        ptx = kernel_dir(name) / "kernel.ptx"
        theirs = ptxas_registers(ptx)
        for entry, kernel in load_ptx(ptx).kernels.items():
            live = liveness(kernel)
            alloc = allocate_registers(kernel, live)
            rows.append(RegisterCount(name, alloc.registers, alloc.predicates,
                                      None if theirs is None else theirs.get(entry),
                                      _pressure(kernel, live)))
    return rows


def _pressure(kernel, live) -> int:
    def units(reg):
        width = kernel.regs[reg].width
        return 0 if width == 1 else (2 if width == 64 else 1)
    points = [*live.live_after, *live.live_before]
    return max((sum(units(r) for r in s) for s in points), default=0)


def register_table(rows: list[RegisterCount] | None = None) -> str:
    rows = register_counts() if rows is None else rows
    lines = ["| kernel | ours (32-bit regs) | predicates | ptxas -v | ours / ptxas | "
             "max live in the PTX |", "|---|---|---|---|---|---|"]
    for r in rows:
        ratio = "-" if r.ratio is None else f"{r.ratio:.2f}"
        lines.append(f"| {r.kernel} | {r.ours} | {r.predicates} | "
                     f"{'-' if r.ptxas is None else r.ptxas} | {ratio} | {r.pressure} |")
    return "\n".join(lines)


if __name__ == "__main__":
    print(register_table())
