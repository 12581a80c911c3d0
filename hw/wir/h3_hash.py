"""H3 hash of a warp register value (WIR paper Section VII-E, register allocation stage)."""

import random
from collections.abc import Sequence
from dataclasses import dataclass

from amaranth import Cat, Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int

__all__ = ["H3Hash", "H3HashConfig", "h3_matrix"]


def h3_matrix(width_in: int, width_out: int, seed: int) -> tuple[int, ...]:
    """The H3 matrix ``Q`` as one mask per output bit: bit ``i`` of mask ``j`` is
    ``Q[i][j]``, so output bit ``j`` is the parity of ``value & mask[j]``.

    The one generator of the matrix, used by the RTL and the golden model alike: mask
    ``j`` is the ``j``-th ``getrandbits(width_in)`` of ``random.Random(seed)`` (a fixed,
    pseudo-random 0/1 matrix, stable across runs and Python versions).
    """
    rng = random.Random(seed)
    return tuple(rng.getrandbits(width_in) for _ in range(width_out))


@dataclass(frozen=True)
class H3HashConfig:
    """Validated parameters of the H3 hash and the matrix they select.

    ``matrix`` (optional) replaces the seeded matrix, e.g. to force collisions in tests:
    ``width_out`` masks, each an integer in ``0..2**width_in - 1``.
    """

    width_in: int
    width_out: int
    seed: int
    matrix: Sequence[int] | None = None

    def __post_init__(self):
        check_int("width_in", self.width_in, 1, 4096)
        check_int("width_out", self.width_out, 1, 64)
        check_int("seed", self.seed, 0, 2**32 - 1)
        if self.matrix is not None:
            object.__setattr__(self, "matrix", self._checked_matrix(self.matrix))

    def _checked_matrix(self, matrix) -> tuple[int, ...]:
        if isinstance(matrix, str | bytes) or not isinstance(matrix, Sequence):
            raise TypeError(f"matrix must be None or a sequence of width_out = "
                            f"{self.width_out} integers, not {matrix!r}")
        if len(matrix) != self.width_out:
            raise ValueError(f"matrix must have width_out = {self.width_out} masks, "
                             f"not {len(matrix)}")
        top = (1 << self.width_in) - 1
        return tuple(check_int(f"matrix[{j}]", mask, 0, top) for j, mask in enumerate(matrix))

    @property
    def masks(self) -> tuple[int, ...]:
        """The matrix in use: ``matrix`` if given, else :func:`h3_matrix` of the seed."""
        if self.matrix is not None:
            return self.matrix
        return h3_matrix(self.width_in, self.width_out, self.seed)

    @property
    def widest(self) -> int:
        """Inputs of the widest output bit (the most ones in one mask)."""
        return max(mask.bit_count() for mask in self.masks)

    @property
    def xor_levels(self) -> int:
        """XOR2 levels of a balanced tree over the widest output bit: ``ceil(log2(widest))``."""
        return max(0, (self.widest - 1).bit_length())


class H3Hash(wiring.Component):
    """H3 hash: ``hash[j]`` is the XOR of the ``value`` bits ``i`` with ``Q[i][j] = 1``.

    A pure XOR network, combinational (latency 0): the paper's one-cycle hash generation;
    the pipeline register of the allocation stage's first cycle belongs to the composition.
    Hash input bit ``i`` is warp-register bit ``i`` (lane ``l`` in bits ``[32l+31:32l]``).
    Each output bit is a balanced tree of XOR2 gates over its selected inputs, so the
    XOR2 depth is ``ceil(log2(w))`` for the widest output bit of ``w`` inputs (10 levels for
    the default seed's 1024 x 32 matrix; the paper's estimate is 13 cascaded XOR2). An
    output bit whose mask is zero is constant 0.

    Parameters
    ----------
    width_in : int
        Input bits, 1..4096 (default 1024: a warp register of 32 lanes x 32 bits).
    width_out : int
        Hash bits, 1..64 (default 32).
    seed : int
        Seed of the pseudo-random matrix, 0..2**32-1 (default 0); see :func:`h3_matrix`.
    matrix : sequence of int, optional
        A chosen matrix instead of the seeded one: ``width_out`` masks, mask ``j`` bit ``i``
        = ``Q[i][j]`` (default ``None``: the seeded matrix).

    Attributes
    ----------
    value : In(width_in)
        The value to hash.
    hash : Out(width_out)
        Its H3 hash.
    """

    def __init__(self, *, width_in=1024, width_out=32, seed=0, matrix=None):
        self.config = H3HashConfig(width_in=width_in, width_out=width_out, seed=seed,
                                   matrix=matrix)
        super().__init__({"value": In(width_in), "hash": Out(width_out)})

    def elaborate(self, platform):
        m = Module()
        for j, mask in enumerate(self.config.masks):
            taps = [self.value[i] for i in range(self.config.width_in) if mask >> i & 1]
            m.d.comb += self.hash[j].eq(Cat(taps).xor() if taps else 0)
        return m
