"""The papers' compiler passes, on the PTX IR of :mod:`gpurf.sim.ptx`, one subpackage per
mechanism (named as in ``hw``), and what they share: :mod:`~gpurf.sim.passes.dataflow`
(successors, physical register keys, warp-level liveness) and
:mod:`~gpurf.sim.passes.enforcement` (what a pass asks an execution to enforce).

A pass here reads a kernel and returns annotations; it neither loads workloads nor runs
them. The proof by execution (:func:`gpurf.sim.sm.poison.run_enforced`) is in the SM layer
above, and the passes run over the workloads (tables, precision tuning) in
:mod:`gpurf.sim.compile` above that (docs/architecture.md).
"""
