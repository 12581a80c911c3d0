"""Golden models of the sub-core partitioning blocks."""
