"""Golden models and compiler passes of RegLess (regions, lifetimes, preloads)."""
