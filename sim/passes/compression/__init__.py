"""Static data compression's compiler pass: integer ranges, float formats, slices."""
