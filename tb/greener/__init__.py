"""Benches and formal harnesses of the GReEneR blocks."""
