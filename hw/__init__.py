"""Amaranth components of gpurf, one subpackage per register-file mechanism (more from the
folders of ``GPURF_PATH``: :mod:`gpurf.hw.extensions`)."""

from .extensions import extended_path

__path__ = extended_path(__path__, "hw")
