"""RegLess' compiler pass: regions, register lifetimes, preloads and invalidations."""
