"""Cycle-exact Python golden models, one subpackage per mechanism, named as in ``hw``."""

from gpurf.hw.extensions import extended_path

__path__ = extended_path(__path__, "golden")
