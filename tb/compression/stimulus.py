"""Stimulus helpers shared by the compression benches and tests; packing goes through
``hw.compression.layouts`` (via the golden models' pack/unpack functions)."""

from gpurf.hw.compression.layouts import SLICES

__all__ = ["FIG3_ENTRY", "random_entry", "random_mask"]

FIG3_ENTRY = {"r0": 0x05, "m0": 0b1000_0000, "r1": 0x09, "m1": 0b0100_1100}
"""The paper's Fig. 3 example: a 16-bit float with data slice 0 in slice 7 of ``r0`` and
data slices 1, 2, 3 in slices 2, 3, 6 of ``r1`` (register numbers are ours)."""


def random_mask(rng, count: int) -> int:
    """A mask of ``count`` random slices."""
    mask = 0
    for s in rng.sample(range(SLICES), count):
        mask |= 1 << s
    return mask


def random_entry(rng, *, width: int | None = None, split: bool | None = None,
                 registers: int = 256) -> dict:
    """A legal indirection entry of ``width`` slices (1..8, random if ``None``), split over
    two different registers below ``registers`` or not (random if ``None``; a 1-slice
    operand is never split)."""
    width = rng.randint(1, SLICES) if width is None else width
    split = rng.random() < 0.5 if split is None else split
    split = split and width > 1
    r0, r1 = rng.sample(range(registers), 2)
    if not split:
        return {"r0": r0, "m0": random_mask(rng, width), "r1": rng.randrange(registers),
                "m1": 0}
    first = rng.randint(1, width - 1)
    return {"r0": r0, "m0": random_mask(rng, first), "r1": r1,
            "m1": random_mask(rng, width - first)}
