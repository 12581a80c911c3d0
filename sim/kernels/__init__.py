"""The project's workloads: CUDA source, committed PTX and launch description per kernel.

Each folder ``sim/kernels/<name>/`` holds ``kernel.cu``, ``kernel.ptx`` (``nvcc -ptx
-arch=sm_80 kernel.cu``, CUDA 13.0) and ``launch.toml`` (:mod:`gpurf.sim.sm.launch`). A workload
is named by its folder, or ``<folder>/<variant>`` for launch files with variants (the FMA
microbenchmark's ``fma_subcore/balanced`` and ``fma_subcore/unbalanced``).

:mod:`~gpurf.sim.kernels.reference` holds the numpy reference of every workload and
:mod:`~gpurf.sim.kernels.fp` the float arithmetic (a correctly rounded fused multiply-add)
the references share with the SM model, which sits above this package.
"""

from pathlib import Path

__all__ = ["KERNELS_DIR", "kernel_dir", "kernel_names", "one_per_kernel", "workload_names"]

KERNELS_DIR = Path(__file__).resolve().parent


def kernel_names() -> list[str]:
    """Every kernel folder, sorted."""
    return sorted(p.parent.name for p in KERNELS_DIR.glob("*/launch.toml"))


def kernel_dir(name: str) -> Path:
    """The folder of kernel ``name`` (without a variant)."""
    return KERNELS_DIR / name


def workload_names() -> list[str]:
    """Every runnable workload: kernels, and ``kernel/variant`` for each variant."""
    import tomllib

    names = []
    for kernel in kernel_names():
        names.append(kernel)
        try:
            data = tomllib.loads((KERNELS_DIR / kernel / "launch.toml").read_text())
        except (tomllib.TOMLDecodeError, UnicodeDecodeError):
            continue  # listed without variants; running it reports the file's error
        names.extend(f"{kernel}/{v}" for v in data.get("variants", {}))
    return names


def one_per_kernel(workloads=None) -> list[str]:
    """The first of ``workloads`` (default: every workload) for each kernel file: variants
    share their kernel, so static figures are given once per kernel."""
    seen, names = set(), []
    for name in workloads or workload_names():
        folder = name.partition("/")[0]
        if folder not in seen:
            seen.add(folder)
            names.append(name)
    return names
