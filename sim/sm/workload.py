"""Where a workload comes from: a kernel shipped in ``sim/kernels`` or a user's kernel folder.

A workload name (``../shared/spec/cli.md``, ``KERNEL|PATH``) that names an existing folder is a
kernel folder; otherwise it is a shipped kernel, ``kernel`` or ``kernel/variant``. A kernel
folder holds:

- ``launch.toml`` (:mod:`~gpurf.sim.sm.launch`), validated before anything runs;
- ``kernel.ptx``, or ``kernel.cu``, which is compiled with ``nvcc -ptx -arch=sm_80`` when nvcc
  is installed (the PTX is cached by the source's content under ``$GPURF_CACHE/ptx/``);
- the expected outputs: a ``reference.py`` whose function named by the launch file's
  ``reference`` key computes them (the same signature as :mod:`gpurf.sim.kernels.reference`:
  ``f(buffers, scalars) -> {output: array}``), or, without ``reference``, one ``.npy`` file per
  output buffer in ``expected/<size>/`` (``expected/<variant>/<size>/`` for a launch file with
  variants).
"""

import hashlib
import importlib.util
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gpurf.sim.kernels import kernel_dir, kernel_names, reference

from .launch import Launch, LaunchError, LaunchSpec

__all__ = ["UnknownKernelError", "Workload", "find_workload"]


class UnknownKernelError(LookupError):
    """A workload name that is neither a shipped kernel nor a kernel folder."""

    def __str__(self):
        return str(self.args[0])


@dataclass(frozen=True)
class Workload:
    """A workload's folder, its variant (``None``: the launch file's first) and whether gpurf
    ships it."""

    name: str
    folder: Path
    variant: str | None
    shipped: bool

    @property
    def launch_file(self) -> Path:
        return self.folder / "launch.toml"

    def ptx_file(self) -> Path:
        """``kernel.ptx``, or the PTX nvcc makes of ``kernel.cu``."""
        ptx = self.folder / "kernel.ptx"
        if ptx.exists() or self.shipped:
            return ptx
        source = self.folder / "kernel.cu"
        if not source.exists():
            raise LaunchError(f"{self.folder}: no kernel.ptx or kernel.cu in the kernel folder")
        return _compile_cuda(source)

    def expected(self, spec: LaunchSpec, launch: Launch, size: str, inputs: dict) -> dict:
        """The expected output buffers of ``launch``: the reference function's, or the
        folder's ``.npy`` files."""
        if self.shipped or spec.reference is not None:
            function = self._reference_function(spec)
            scalars = {**launch.variables, **{n: v for n, t, v in launch.params if t != "ptr"}}
            return function({k: v.copy() for k, v in inputs.items()}, scalars)
        return {name: self._expected_array(spec, name, size) for name in launch.outputs}

    def _reference_function(self, spec: LaunchSpec):
        return self._function(spec, "reference", spec.reference)

    def input_function(self, spec: LaunchSpec):
        """The function the launch file's ``inputs`` key names (``None`` without one)."""
        return None if spec.inputs is None else self._function(spec, "inputs", spec.inputs)

    def _function(self, spec: LaunchSpec, key: str, name: str | None):
        """Function ``name`` of the reference module (the shipped one, or the folder's
        ``reference.py``), an error at the launch file's ``key`` if there is none."""
        if self.shipped:
            module, where = reference, "gpurf.sim.kernels.reference"
        else:
            module, where = _user_module(self.folder / "reference.py"), "reference.py"
        function = getattr(module, name or "", None)
        if not callable(function):
            raise spec.error((), key, f"no function {name!r} in {where}")
        return function

    def _expected_array(self, spec: LaunchSpec, name: str, size: str) -> np.ndarray:
        folder = self.folder / "expected"
        if len(spec.variants) > 1:
            folder = folder / (self.variant or spec.variants[0])
        path = folder / size / f"{name}.npy"
        if not path.exists():
            raise LaunchError(f"{path}: missing (the expected output {name!r} at size {size}; "
                              f"or give a 'reference' function in reference.py)")
        try:
            return np.load(path, allow_pickle=False)
        except (OSError, ValueError) as error:
            raise LaunchError(f"{path}: not a numpy .npy array ({error})") from None


def find_workload(name: str) -> Workload:
    """The workload ``name`` names: a kernel folder if one exists at that path, else a
    shipped kernel (``kernel`` or ``kernel/variant``)."""
    path = Path(name)
    if path.is_dir():
        if not (path / "launch.toml").exists():
            raise UnknownKernelError(f"{name}: not a kernel folder (no launch.toml)")
        return Workload(name, path.resolve(), None, shipped=False)
    kernel, _, variant = name.partition("/")
    if kernel in kernel_names():
        return Workload(name, kernel_dir(kernel), variant or None, shipped=True)
    if "/" in name or name.startswith("."):
        raise UnknownKernelError(f"{name}: no such kernel folder")
    raise UnknownKernelError(f"unknown kernel {name!r}; known: {', '.join(kernel_names())} "
                             "(or the path of a kernel folder)")


def _user_module(path: Path):
    """The user's ``reference.py``, imported from its file."""
    if not path.exists():
        raise LaunchError(f"{path}: missing (the launch file names a reference function)")
    digest = hashlib.sha1(str(path).encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(f"gpurf_user_reference_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise LaunchError(f"{path}:{error.lineno}: {error.msg}") from None
    except Exception as error:
        raise LaunchError(f"{path}: importing it raised {type(error).__name__}: "
                          f"{error}") from None
    return module


def _compile_cuda(source: Path) -> Path:
    """``nvcc -ptx -arch=sm_80`` of ``source``, cached by its content."""
    text = source.read_bytes()
    cache = Path(os.environ.get("GPURF_CACHE", Path.home() / ".cache" / "gpurf")) / "ptx"
    ptx = cache / f"{hashlib.sha256(text).hexdigest()[:20]}.ptx"
    if ptx.exists():
        return ptx
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise LaunchError(f"{source}: nvcc is not installed; add the kernel's PTX as "
                          f"{source.with_suffix('.ptx').name} (nvcc -ptx -arch=sm_80)")
    cache.mkdir(parents=True, exist_ok=True)
    partial = ptx.with_suffix(f".{os.getpid()}.part")
    run = subprocess.run([nvcc, "-ptx", "-arch=sm_80", str(source), "-o", str(partial)],
                         capture_output=True, text=True, check=False)
    if run.returncode != 0:
        first = (run.stderr.strip().splitlines() or ["failed"])[0]
        raise LaunchError(f"{source}: nvcc failed: {first}")
    partial.replace(ptx)
    return ptx
