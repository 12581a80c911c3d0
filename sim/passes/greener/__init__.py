"""GReEneR's compiler pass: a power state per register operand."""
