"""Amaranth components of gpurf, one subpackage per register-file mechanism."""
