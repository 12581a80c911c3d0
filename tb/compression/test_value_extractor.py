"""cocotb bench of ``compression.value_extractor`` against its golden model."""

from gpurf.hw.compression.configs import ValueExtractorConfig
from gpurf.hw.compression.layouts import SLICE_BITS, SLICES, THREAD_BITS
from gpurf.tb.harness import cocotb_tests

from .drivers import FIG3_ENTRY, random_entry

__all__ = ["STIMULI"]


def _read(config, registers, entry, part, signed):
    """One cycle's ports: the warp register ``registers`` (a word per lane) read as ``part``
    of the operand ``entry``."""
    return {"word": config.codecs["word"].pack(registers),
            "entry": config.codecs["entry"].pack(entry), "part": part, "is_signed": signed}


def random_parts(params, rng, cycles):
    """Random legal entries (split and not), both parts, signed and unsigned, random data."""
    config = ValueExtractorConfig(**params)
    for _ in range(cycles):
        registers = [rng.getrandbits(THREAD_BITS) for _ in range(config.lanes)]
        yield _read(config, registers, random_entry(rng), rng.getrandbits(1),
                    rng.getrandbits(1))


def directed_fig3(params, rng, cycles):
    """Fig. 3: data slice 0 in slice 7 of r0, data slices 1-3 in slices 2, 3, 6 of r1.
    Lane ``l`` holds the float 0xDCBA + l (data nibbles A+l.., B, C, D) placed as in the
    figure, under random background slices; both parts, signed and unsigned."""
    config = ValueExtractorConfig(**params)
    lanes = config.lanes
    r0 = [rng.getrandbits(THREAD_BITS) & ~(0xF << 28) | ((0xA + lane) % 16) << 28
          for lane in range(lanes)]
    r1 = [rng.getrandbits(THREAD_BITS) & ~(0xF << 8 | 0xF << 12 | 0xF << 24)
          | 0xB << 8 | 0xC << 12 | 0xD << 24 for _ in range(lanes)]
    for signed in (0, 1):
        yield _read(config, r0, FIG3_ENTRY, 0, signed)
        yield _read(config, r1, FIG3_ENTRY, 1, signed)


def directed_padding(params, rng, cycles):
    """Unsplit operands of every width with the top data bit 0 and 1, signed and not: zero
    or ones above the width; and every split point of a full 8-slice operand."""
    config = ValueExtractorConfig(**params)
    lanes = config.lanes
    for width in range(1, SLICES + 1):
        entry = random_entry(rng, width=width, split=False)
        for top in (0, 1):
            for signed in (0, 1):
                registers = [rng.getrandbits(THREAD_BITS) for _ in range(lanes)]
                top_slice = max(s for s in range(SLICES) if entry["m0"] >> s & 1)
                bit = SLICE_BITS * top_slice + SLICE_BITS - 1
                registers = [r & ~(1 << bit) | top << bit for r in registers]
                yield _read(config, registers, entry, 0, signed)
    for first in range(1, SLICES):
        entry = {"r0": 1, "m0": (1 << first) - 1, "r1": 2, "m1": 0xFF ^ ((1 << first) - 1)}
        for part in (0, 1):
            yield _read(config, [0xFFFF_FFFF] * lanes, entry, part, 1)


STIMULI = (random_parts, directed_fig3, directed_padding)


globals().update(cocotb_tests(STIMULI))
