"""Golden models of the GReEneR blocks and the leakage-energy model."""
