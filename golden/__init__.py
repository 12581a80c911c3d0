"""Cycle-exact Python golden models, one subpackage per mechanism, named as in ``hw``.

Only block models and the helpers they share live here (compiler passes:
:mod:`gpurf.sim.passes`); a golden model imports ``hw`` and nothing above it.
"""

from gpurf.hw.extensions import extended_path

__path__ = extended_path(__path__, "golden")
