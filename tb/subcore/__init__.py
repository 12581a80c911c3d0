"""Benches of the sub-core partitioning blocks."""
