"""A toy sixth mechanism: one counter block, the smallest complete mechanism."""

from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import BlockConfig, ConfiguredComponent, param
from gpurf.hw.registry import Block


class CounterConfig(BlockConfig):
    """The counter's width."""

    width: int = param(4, "Bits of the count.", low=1, high=16)

    def signature(self):
        return wiring.Signature({"enable": In(1), "count": Out(self.width)})


class Counter(ConfiguredComponent, config=CounterConfig):
    """Counts the cycles ``enable`` is high, modulo ``2**width``; ``count`` is registered.

    Attributes
    ----------
    enable : In(1)
    count : Out(width)
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        with m.If(self.enable):
            m.d.sync += self.count.eq(self.count + 1)
        return m


BLOCKS = (Block("toy", "counter", Counter, test_params=({"width": 2},),
                summary="a toy counter (tests/test_new_mechanism.py)"),)
