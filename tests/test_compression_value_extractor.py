# amaranth: UnusedElaboratable=no
"""``compression.value_extractor``: the paper's Fig. 3 example, padding, the input protocol,
and an exhaustive check of every mask and part on one lane against the golden model."""

import random

import pytest
from amaranth.sim import Simulator

from gpurf.golden.compression.value_extractor import (
    check_entry,
    data_positions,
    extract_part,
    pack_entry,
)
from gpurf.hw.compression.value_extractor import ValueExtractor
from gpurf.hw.registry import get_block
from gpurf.tb.compression.drivers import FIG3_ENTRY


def golden(**params):
    return get_block("compression.value_extractor").golden(params)


def test_fig3_slice_order():
    """Fig. 3: data slice 0 in slice 7 of r0, data slices 1, 2, 3 in slices 2, 3, 6 of r1."""
    assert data_positions(FIG3_ENTRY) == [(0, 7), (1, 2), (1, 3), (1, 6)]
    r0 = 0xA123_4567
    r1 = 0x5D89_CBEF
    part0 = extract_part(r0, FIG3_ENTRY, 0, signed=False)
    part1 = extract_part(r1, FIG3_ENTRY, 1, signed=False)
    assert (part0, part1) == (0x0000_000A, 0x0000_DCB0)
    assert part0 | part1 == 0xDCBA
    assert extract_part(r0, FIG3_ENTRY, 0, signed=True) == part0, "split parts pad with zeros"


def test_padding():
    """Unsplit: zeros above the width, or the top data bit replicated when signed."""
    entry = {"r0": 1, "m0": 0b0101_0000, "r1": 0, "m1": 0}
    word = 0x0800_0000 | 0x0003_0000
    assert extract_part(word, entry, 0, signed=False) == 0x83
    assert extract_part(word, entry, 0, signed=True) == 0xFFFF_FF83
    assert extract_part(0x0700_0000, entry, 0, signed=True) == 0x70
    assert extract_part(0xFFFF_FFFF, {**entry, "m0": 0xFF}, 0, signed=True) == 0xFFFF_FFFF
    assert extract_part(0xFFFF_FFFF, entry, 1, signed=True) == 0, "no r1 part"


@pytest.mark.parametrize(("entry", "message"), [
    ({"r0": 1, "m0": 0, "r1": 2, "m1": 1}, "m0 is zero"),
    ({"r0": 1, "m0": 0x1F, "r1": 2, "m1": 0x0F}, "9 data slices, more than 8"),
    ({"r0": 3, "m0": 0x03, "r1": 3, "m1": 0x06}, "the masks overlap in one register"),
])
def test_protocol(entry, message):
    with pytest.raises(ValueError, match=message):
        check_entry(entry)
    check_entry({"r0": 3, "m0": 0x03, "r1": 3, "m1": 0x0C})


def _cases(rng):
    """Every m0 for part 0 (signed and not, m1 = 0 and a split m1), and for part 1 every
    m1 after every popcount of m0 that leaves room; each with a random word."""
    for m0 in range(1, 256):
        for signed in (0, 1):
            yield {"r0": 1, "m0": m0, "r1": 2, "m1": 0}, 0, signed
            free = 8 - m0.bit_count()
            if free:
                yield {"r0": 1, "m0": m0, "r1": 2, "m1": (1 << free) - 1}, 0, signed
    for ones in range(1, 8):
        for m1 in range(1, 256):
            if ones + m1.bit_count() <= 8:
                yield {"r0": 1, "m0": (1 << ones) - 1, "r1": 2, "m1": m1}, 1, rng.getrandbits(1)


def test_exhaustive_masks_one_lane(seed):
    """Every mask of each part through the RTL (one lane, Amaranth simulator) = golden."""
    rng = random.Random(seed)
    dut = ValueExtractor(lanes=1)
    model = golden(lanes=1)
    cases = [(case, rng.getrandbits(32)) for case in _cases(rng)]
    failures = []

    async def bench(ctx):
        for (entry, part, signed), word in cases:
            ctx.set(dut.word.as_value(), word)
            ctx.set(dut.entry.as_value(), pack_entry(entry))
            ctx.set(dut.part, part)
            ctx.set(dut.is_signed, signed)
            await ctx.delay(1e-9)
            want = model.step({"word": word, "entry": pack_entry(entry), "part": part,
                               "is_signed": signed})["value"]
            got = ctx.get(dut.value.as_value())
            if got != want:
                failures.append((entry, part, signed, hex(word), hex(got), hex(want)))

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    assert len(cases) == 2034
    assert not failures, failures[:5]
