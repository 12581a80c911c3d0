"""Golden models of the static data compression register file blocks."""
