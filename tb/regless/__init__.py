"""Benches and formal harnesses of the RegLess blocks."""
