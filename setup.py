"""Packages of gpurf: the top-level folders installed under one namespace, ``gpurf.<folder>``.

Metadata lives in ``pyproject.toml``; only the folder -> package mapping is computed here, so
that a new mechanism's folders (``hw/<m>/``, ``golden/<m>/``, ``tb/<m>/``) are packaged
without being listed anywhere.
"""

from setuptools import find_packages, setup

FOLDERS = ("hw", "golden", "sim", "synth", "tb")

setup(
    packages=[f"gpurf.{package}" for package in find_packages(include=[f"{f}*" for f in FOLDERS])],
    package_dir={f"gpurf.{folder}": folder for folder in FOLDERS},
)
