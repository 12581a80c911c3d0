"""Which lines of the compiled timing core the exactness tests run (docs/sm.md, "The compiled
timing core").

``python docs/examples/timing_core_coverage.py [FOLDER]`` builds ``sim/sm/timing_core.cpp``
with ``-O0 --coverage`` into ``FOLDER`` (default ``build/timing-core-coverage``), runs the
compiled core on what ``tests/test_timing_core.py`` compares with the Python loop (every
workload at size ``test`` under its ``CONFIGS``; reduction, matmul and bfs under its
``VARIANTS``) in a child process (gcov's counts are written when the library unloads), then
``gcov`` (from the g++ install), and prints the share of the source's lines run and each
line never run. Needs ``g++`` and ``gcov``; run from the repository.
"""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

from gpurf.sim.kernels import workload_names
from gpurf.sim.sm import load_config, run_kernel, timing_core
from gpurf.sim.sm.recording import shared_functional_runs

FLAGS = ("-O0", "--coverage", "-shared", "-fPIC", "-std=c++17")


def runs() -> list[tuple[str, dict]]:
    """(workload, configuration) pairs the exactness tests compare at size ``test``."""
    spec = importlib.util.spec_from_file_location("test_timing_core",
                                                  "tests/test_timing_core.py")
    tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tests)
    return ([(name, config) for name in workload_names() for config in tests.CONFIGS]
            + [(name, config) for name in ("reduction", "matmul", "bfs")
               for config in tests.VARIANTS])


def run_compiled(folder: Path) -> None:
    """Every pair of :func:`runs` on the coverage build of the compiled core (the
    functional pass shared per workload)."""
    os.environ["GPURF_BUILD"] = str(folder)
    timing_core.FLAGS = FLAGS
    lib, where = timing_core.load()
    if lib is None:
        sys.exit(f"the compiled core did not build: {where}")
    pairs = runs()
    for name in dict.fromkeys(name for name, _ in pairs):
        with shared_functional_runs():
            for config in (c for n, c in pairs if n == name):
                run = run_kernel(name, "test", timing=load_config(**config),
                                 mechanism=lambda program: (program, {"core": "compiled"}))
                if run.stats["timing_core"] != "compiled" or not run.passed:
                    sys.exit(f"{name} {config}: {run.stats['timing_core']}, "
                             f"outputs equal: {run.passed}")


def never_run(folder: Path) -> tuple[str, list[str]]:
    """gcov's summary line for the source and its lines never run."""
    (data,) = folder.glob("sm-timing-core/*.gcda")
    out = subprocess.run(["gcov", "-o", str(data.parent), str(data)],
                         cwd=folder, capture_output=True, text=True, check=True).stdout
    summary = out.split(f"File '{timing_core.SOURCE}'")[1].splitlines()[1]
    report = (folder / f"{timing_core.SOURCE.name}.gcov").read_text().splitlines()
    return summary, [line for line in report if line.lstrip().startswith("#####")]


def main() -> None:
    if shutil.which("gcov") is None:
        sys.exit("gcov not found: it comes with g++ (Debian/Ubuntu: the gcc package)")
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else "build/timing-core-coverage").resolve()
    for old in folder.glob("sm-timing-core/*.gcda"):
        old.unlink()
    subprocess.run([sys.executable, __file__, "--run", str(folder)], check=True)
    summary, lines = never_run(folder)
    print(summary)
    print("\n".join(lines))


if __name__ == "__main__" and sys.argv[1:2] == ["--run"]:
    run_compiled(Path(sys.argv[2]))
elif __name__ == "__main__":
    main()
