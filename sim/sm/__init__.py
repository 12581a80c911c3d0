"""The functional SM model: warps of 32 numpy lanes, SIMT stack, memories, barriers.

``run_kernel(name, size="test")`` runs a workload of ``sim/kernels`` and returns a
:class:`KernelRun` (outputs, reference outputs, statistics). For step-by-step driving
(a timing model), build :class:`ThreadBlock` objects and call :meth:`Warp.step`.
``run_kernel(name, size, timing=SMConfig())`` runs it on the timing model
(:mod:`gpurf.sim.sm.timing`, configured by :mod:`gpurf.sim.sm.config`).
"""

from .config import SMConfig, load_config
from .program import Program
from .run import KernelRun, UnknownKernelError, run_kernel
from .warp import ExecutionError, Step, ThreadBlock, Warp

__all__ = ["ExecutionError", "KernelRun", "Program", "SMConfig", "Step", "ThreadBlock",
           "UnknownKernelError", "Warp", "load_config", "run_kernel"]
