"""The compiled timing core: ``timing_core.cpp`` built with g++ and driven through ctypes.

:class:`~gpurf.sim.sm.timing.TimingSM` runs its timing loop in compiled code when the SM is the
baseline one (the golden blocks, GTO, RBA or LRR, no values, register power states, reuse or
compression options) and the core can be built; otherwise, or when asked, the Python path
(``_SubCore.fast_cycle`` and the SM's methods) runs, and it stays the reference the compiled
core is tested against (``tests/test_timing_core.py``: every statistic but the seconds equal).

- **Build**: at first use, ``g++ -O2 -shared -fPIC`` into
  ``$GPURF_BUILD/sm-timing-core/timing_core-<digest>.so`` (``GPURF_BUILD`` defaults to
  ``build``, as for the Verilator models), the digest covering the source, the flags and any
  ``-D`` define, under a file lock so parallel test workers build it once. Without g++, or
  when the build fails, :func:`load` returns the reason and the Python path runs.
- **Choice**: ``GPURF_SM_CORE`` (or ``TimingSM(..., core=...)``) is ``auto`` (default: the
  compiled core where it applies), ``python`` (always the Python path) or ``compiled`` (the
  compiled core, else an error saying why not).
- **Data**: the static tables once (:func:`pack_static`), the traces of each cohort of
  blocks as it runs functionally (:meth:`CompiledCore.add_blocks`), the statistics at the end;
  nothing crosses per cycle.
"""

import ctypes
import hashlib
import itertools
import os
import shutil
import subprocess
import tempfile
from functools import cache
from pathlib import Path

import numpy as np
from filelock import FileLock

__all__ = ["CHOICES", "DOES_NOT_FIT", "DONE", "NEED_BLOCKS", "STUCK", "CompiledCore",
           "build_folder", "load", "pack_static", "requested"]

SOURCE = Path(__file__).with_name("timing_core.cpp")
FLAGS = ("-O2", "-shared", "-fPIC", "-std=c++17")
ENV = "GPURF_SM_CORE"
CHOICES = ("auto", "python", "compiled")
DONE, NEED_BLOCKS, DOES_NOT_FIT, STUCK = range(4)
"""What :meth:`CompiledCore.run` returns (``tc_run`` in ``timing_core.cpp``)."""
POLICIES = {"gto": 0, "rba": 1, "lrr": 2}
"""Schedulers the compiled core implements (the C++ ``Policy``)."""
SPACES = {"param": 1, "shared": 2}
"""Memory spaces the L1 model tells apart (others: 0, lines through the L1)."""
FIXED_STATS = 12
"""Statistics ``tc_stats`` writes before the per-sub-core issue counts."""

_i64, _i32, _u64 = (np.ctypeslib.ndpointer(t, flags="C_CONTIGUOUS")
                    for t in (np.int64, np.int32, np.uint64))


def requested(core: str | None = None) -> str:
    """The core asked for: ``core``, else ``$GPURF_SM_CORE``, else ``auto``; one of
    :data:`CHOICES` (``ValueError`` otherwise)."""
    choice = core if core is not None else os.environ.get(ENV, "auto")
    if choice not in CHOICES:
        raise ValueError(f"{ENV if core is None else 'core'} must be one of "
                         f"{', '.join(CHOICES)}, not {choice!r}")
    return choice


def build_folder() -> Path:
    """Where built cores go: ``$GPURF_BUILD/sm-timing-core`` (default ``build/...``)."""
    return Path(os.environ.get("GPURF_BUILD", "build")).resolve() / "sm-timing-core"


@cache
def load(defines: tuple[str, ...] = ()) -> tuple[ctypes.CDLL | None, str]:
    """The built core with ``-D`` ``defines`` and where it is, or ``None`` and why not
    (built first if needed)."""
    compiler = shutil.which("g++")
    if compiler is None:
        return None, "g++ not found"
    flags = (*FLAGS, *(f"-D{d}" for d in defines))
    digest = hashlib.sha256(SOURCE.read_bytes() + repr(flags).encode()).hexdigest()[:16]
    folder = build_folder()
    library = folder / f"timing_core-{digest}.so"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        with FileLock(str(library) + ".lock"):
            if not library.exists():
                _compile(compiler, flags, library)
        lib = ctypes.CDLL(str(library))
    except (OSError, subprocess.SubprocessError) as error:
        return None, f"the build failed ({_first_line(error)})"
    _declare(lib)
    return lib, str(library)


def _compile(compiler: str, flags: tuple, library: Path) -> None:
    """Build ``library`` (written to a temporary file and renamed into place)."""
    with tempfile.NamedTemporaryFile(dir=library.parent, prefix=".timing_core-",
                                     suffix=".so", delete=False) as part:
        pass
    try:
        subprocess.run([compiler, *flags, "-o", part.name, str(SOURCE)], check=True,
                       capture_output=True, text=True, timeout=600)
        os.replace(part.name, library)
    finally:
        Path(part.name).unlink(missing_ok=True)


def _first_line(error: Exception) -> str:
    text = getattr(error, "stderr", None) or str(error)
    return text.strip().splitlines()[0] if text.strip() else type(error).__name__


def _declare(lib: ctypes.CDLL) -> None:
    lib.tc_new.restype = ctypes.c_void_p
    lib.tc_new.argtypes = [_i64, ctypes.c_int64, _i32, ctypes.c_int64]
    lib.tc_free.argtypes = [ctypes.c_void_p]
    lib.tc_add_blocks.argtypes = [ctypes.c_void_p, ctypes.c_int64, _i64, _i32, _i32, _i64,
                                  _i32, _i64, _i32, _i64, _u64]
    lib.tc_run.argtypes = [ctypes.c_void_p]
    for name in ("tc_misfit", "tc_admitted", "tc_now"):
        getattr(lib, name).argtypes = [ctypes.c_void_p]
        getattr(lib, name).restype = ctypes.c_int64
    lib.tc_stats.argtypes = [ctypes.c_void_p, _i64]


def _dense(rows) -> dict[int, int]:
    """Every value in ``rows`` (sequences of ints) numbered densely, in ascending order."""
    return {value: i for i, value in enumerate(sorted({v for row in rows for v in row}))}


def _section(values) -> list[int]:
    values = list(values)
    return [len(values), *values]


def _rows(rows, number=None) -> list[int]:
    """Rows as two sections: their bounds, then their values (renumbered by ``number``)."""
    rows = [[number[v] if number is not None else v for v in row] for row in rows]
    bounds = [0, *itertools.accumulate(len(row) for row in rows)]
    return _section(bounds) + _section(itertools.chain.from_iterable(rows))


def pack_static(*, info, issue_regs, uncollected, overwrites, loads, stages
                ) -> tuple[np.ndarray, int, int]:
    """The static tables of a program as ``timing_core.cpp``'s ``setup`` reads them, and the
    numbers of scoreboard keys and read registers (each numbered densely).

    ``info`` is the program's :class:`~gpurf.sim.sm.timing.StaticInfo`; per instruction,
    ``issue_regs`` holds the collector's ``{operand index: register}``, ``uncollected`` the
    reads beyond them, ``overwrites`` the registers whose pending reads it must not overtake,
    ``loads`` whether it is a load and ``stages`` its added cycles."""
    keys = _dense([*info.needs, *info.dests])
    regs = _dense(info.reads)
    collected = [[x for i in sorted(r) for x in (r[i], regs[r[i]])] for r in issue_regs]
    # A register no instruction reads is never pending a read: it cannot block a write.
    overwritten = [[r for r in row if r in regs] for row in overwrites]
    blob = [*_section(info.unit), *_section(info.kind),
            *_section(SPACES.get(s, 0) for s in info.space), *_section(info.records),
            *_section(loads), *_section(stages), *_rows(info.needs, keys),
            *_rows(info.dests, keys), *_rows(info.reads, regs), *_rows(uncollected, regs),
            *_rows(overwritten, regs), *_rows(collected), *_rows(info.writes)]
    return np.array(blob, np.int32), len(keys), len(regs)


class CompiledCore:
    """One launch's compiled timing loop (``timing_core.cpp``'s ``Core``).

    Parameters
    ----------
    lib : ctypes.CDLL
        From :func:`load`.
    config : numpy.ndarray
        The ``int64`` configuration in the order of the C++ ``Cfg`` (built by
        :meth:`gpurf.sim.sm.timing.TimingSM._core_config`).
    static : numpy.ndarray
        :func:`pack_static`'s tables.
    total : int
        Blocks of the launch.
    """

    def __init__(self, lib, *, config: np.ndarray, static: np.ndarray, total: int):
        self.lib = lib
        self.subcores = int(config[0])
        self.handle = lib.tc_new(config, len(config), static, total)
        if not self.handle:
            raise ValueError(f"the compiled timing core takes another configuration layout "
                             f"than the {len(config)} values given")

    def __del__(self):
        handle, self.handle = getattr(self, "handle", None), None
        if handle:
            self.lib.tc_free(handle)

    def add_blocks(self, cohort, subs) -> None:
        """Queue a cohort of blocks for admission: ``cohort`` as
        :func:`~gpurf.sim.sm.recording.run_cohort` returns it, ``subs`` per warp (launch
        order) its sub-core."""
        traces = [t for _, block_traces in cohort for t in block_traces]
        ids = np.array([block.block_id for block, _ in cohort], np.int64).reshape(-1, 3)
        counts = np.array([len(t) for _, t in cohort], np.int32)
        pc_bounds = np.array([0, *itertools.accumulate(len(t.pcs) for t in traces)], np.int64)
        pcs = np.fromiter(itertools.chain.from_iterable(t.pcs for t in traces), np.int32,
                          int(pc_bounds[-1]))
        records = [r for t in traces for r in t.requests]
        rec_bounds = np.array([0, *itertools.accumulate(len(t.requests) for t in traces)],
                              np.int64)
        counted = [r if isinstance(r, int) else len(r) for r in records]
        line_bounds = np.array([0, *itertools.accumulate(0 if isinstance(r, int) else len(r)
                                                         for r in records)], np.int64)
        lines = np.fromiter(itertools.chain.from_iterable(
            r for r in records if not isinstance(r, int)), np.uint64, int(line_bounds[-1]))
        self.lib.tc_add_blocks(self.handle, len(cohort), np.ascontiguousarray(ids), counts,
                               np.array(subs, np.int32), pc_bounds, pcs, rec_bounds,
                               np.array(counted, np.int32), line_bounds, lines)

    def run(self) -> int:
        """Run until the launch is done or needs more (:data:`DONE`, :data:`NEED_BLOCKS`,
        :data:`DOES_NOT_FIT`, :data:`STUCK`)."""
        return self.lib.tc_run(self.handle)

    @property
    def admitted(self) -> int:
        return self.lib.tc_admitted(self.handle)

    @property
    def misfit(self) -> int:
        """Warps of the block that does not fit an empty SM (:data:`DOES_NOT_FIT`)."""
        return self.lib.tc_misfit(self.handle)

    @property
    def now(self) -> int:
        return self.lib.tc_now(self.handle)

    def stats(self) -> dict:
        """The run's counters: ``cycles``, ``bank_conflicts``, ``register_reads``,
        ``dispatch_stalls``, ``stalls`` (four, in :data:`~gpurf.sim.sm.stats.STALLS`
        order), ``l1`` (requests, hits, misses, port-wait cycles), ``issued`` per sub-core."""
        out = np.zeros(FIXED_STATS + self.subcores, np.int64)
        self.lib.tc_stats(self.handle, out)
        values = [int(v) for v in out]
        return {"cycles": values[0], "bank_conflicts": values[1], "register_reads": values[2],
                "dispatch_stalls": values[3], "stalls": values[4:8], "l1": values[8:12],
                "issued": values[FIXED_STATS:]}
