"""Mechanisms outside the source tree: folders named in ``GPURF_PATH`` extend the packages.

``GPURF_PATH`` lists folders (separated by ``os.pathsep``) laid out like gpurf's own tree: a
mechanism ``m`` there is ``hw/m/`` (its components and ``BLOCKS``), ``golden/m/``, ``tb/m/``
and optionally ``synth/m.py``. Each of ``gpurf.hw``, ``gpurf.golden``, ``gpurf.tb`` and
``gpurf.synth`` adds the matching subfolder of every listed folder to its ``__path__``, so the
registry's discovery finds the mechanism and every command, flow and test sees it as it sees
the shipped ones. A listed folder that does not exist is an error, not a silent skip: the
registry raises it (:func:`missing_roots`) when it is first asked for a block, so the command
line reports it as one line.
"""

import os
from pathlib import Path

__all__ = ["VARIABLE", "extended_path", "missing_roots"]

VARIABLE = "GPURF_PATH"


def _roots() -> list[str]:
    return [root for root in os.environ.get(VARIABLE, "").split(os.pathsep) if root]


def missing_roots() -> list[str]:
    """The folders named in ``GPURF_PATH`` that do not exist."""
    return [root for root in _roots() if not Path(root).is_dir()]


def extended_path(path: list[str], folder: str) -> list[str]:
    """``path`` (a package's ``__path__``) followed by ``<root>/<folder>`` for every root of
    ``GPURF_PATH`` that has such a subfolder."""
    extra = [Path(root) / folder for root in _roots()]
    return [*path, *(str(candidate.resolve()) for candidate in extra if candidate.is_dir())]
