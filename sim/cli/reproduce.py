"""``gpurf reproduce MECHANISM``: a paper's results from runs, as tables, JSON and figures."""

__all__ = []
