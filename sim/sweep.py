"""``gpurf sweep``: design-space sweeps on Dask (issue 20, item 5)."""
