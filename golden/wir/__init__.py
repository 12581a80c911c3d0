"""Golden models of the WIR blocks."""
