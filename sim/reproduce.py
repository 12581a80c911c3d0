"""``gpurf reproduce``: the papers' results from runs (issue 20, item 4)."""
