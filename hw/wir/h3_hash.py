"""H3 hash of a warp register value (WIR paper Section VII-E, register allocation stage)."""

from amaranth import Cat, Module

from gpurf.hw.params import ConfiguredComponent

from .configs import H3HashConfig, h3_matrix

__all__ = ["H3Hash", "H3HashConfig", "h3_matrix"]


class H3Hash(ConfiguredComponent, config=H3HashConfig):
    """H3 hash: ``hash[j]`` is the XOR of the ``value`` bits ``i`` with ``Q[i][j] = 1``.

    A pure XOR network, combinational (latency 0): the paper's one-cycle hash generation;
    the pipeline register of the allocation stage's first cycle belongs to the composition.
    Hash input bit ``i`` is warp-register bit ``i`` (lane ``l`` in bits ``[32l+31:32l]``).
    Each output bit is a balanced tree of XOR2 gates over its selected inputs, so the
    XOR2 depth is ``ceil(log2(w))`` for the widest output bit of ``w`` inputs (10 levels for
    the default seed's 1024 x 32 matrix; the paper's estimate is 13 cascaded XOR2). An
    output bit whose mask is zero is constant 0.

    Attributes
    ----------
    value : In(width_in)
        The value to hash.
    hash : Out(width_out)
        Its H3 hash.
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def elaborate(self, platform):
        m = Module()
        for j, mask in enumerate(self.config.masks):
            taps = [self.value[i] for i in range(self.config.width_in) if mask >> i & 1]
            m.d.comb += self.hash[j].eq(Cat(taps).xor() if taps else 0)
        return m
