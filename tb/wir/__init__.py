"""Benches and formal harnesses of the WIR blocks."""
