"""Signatures shared by the blocks of every mechanism."""

from amaranth.lib import wiring
from amaranth.lib.wiring import Out

__all__ = ["valid_only"]


def valid_only(layout) -> wiring.Signature:
    """A valid-only stream (no ``ready``: the receiver always takes it): ``valid`` and
    ``payload``, Verilog ports ``<name>__valid`` and ``<name>__payload``."""
    return wiring.Signature({"valid": Out(1), "payload": Out(layout)})
