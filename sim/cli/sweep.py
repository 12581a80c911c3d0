"""``gpurf sweep SPEC.toml`` and ``gpurf stats DIR``: design-space sweeps on Dask and one CSV
of their records."""

__all__ = []
