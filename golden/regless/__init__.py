"""Golden models of the RegLess blocks (its compiler pass: :mod:`gpurf.sim.passes.regless`)."""
