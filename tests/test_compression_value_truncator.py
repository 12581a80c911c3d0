# amaranth: UnusedElaboratable=no
"""``compression.value_truncator``: its ports, the paper's Fig. 3 placement, truncation of a
float and of an integer, writes only inside the masks, and the input protocol (the float
arithmetic against numpy, golden and RTL, is in ``tests/test_compression_float.py``)."""

import random

import pytest

from gpurf.golden.compression.value_truncator import (
    ValueTruncator as GoldenTruncator,
)
from gpurf.golden.compression.value_truncator import (
    check_entry,
    narrow,
    scatter,
    truncate,
)
from gpurf.hw.compression.formats import FP32, TABLE3
from gpurf.hw.compression.value_truncator import ValueTruncator

F16 = TABLE3[16]


def test_ports():
    """The entry, and two writes of ``reg``, ``mask`` and a warp register each."""
    truncator = ValueTruncator(lanes=2)
    assert len(truncator.entry.as_value()) == 32
    assert len(truncator.operand.as_value()) == 64
    assert len(truncator.write.as_value()) == 2 * (8 + 8 + 64)


def test_nan_examples_from_the_spec():
    """Payload top bits kept, the lowest bit set if none is left, never quieted."""
    assert narrow(0x7F800001, F16) == 0x7C01
    assert narrow(0xFFC00000, F16) == 0xFE00
    assert narrow(0x7F801FFF, F16) == 0x7C01


def test_fig3_placement():
    """Paper Fig. 3: data slice 0 in slice 7 of r0, data slices 1, 2, 3 in slices 2, 3, 6
    of r1 (m0 = 1000_0000b, m1 = 0100_1100b)."""
    part0, part1 = scatter(0xABCD, 0b1000_0000, 0b0100_1100)
    assert part0 == 0xD000_0000
    assert part1 == 0x0A00_BC00


def test_truncate_float_and_integer():
    assert truncate(0x3F80_0000, 0b0000_1111, 0) == (0x3F80_0000 & 0xFFFF, 0)
    assert truncate(0x3F80_0000, 0b1111_0000, 0, F16) == (0x3C00_0000, 0)
    assert truncate(0xFFFF_FFF5, 0b0000_0001, 0b1000_0000) == (0x5, 0xF000_0000)


@pytest.mark.parametrize(("m0", "m1"), [(0b1, 0), (0b1010_0101, 0b0101_0000),
                                        (0b1000_0000, 0b0100_1100), (0xFF, 0)])
def test_scatter_writes_only_inside_the_masks(m0, m1, seed):
    rng = random.Random(seed)
    for _ in range(200):
        value = rng.randrange(1 << 32)
        part0, part1 = scatter(value, m0, m1)
        assert part0 & ~_bit_mask(m0) == 0 and part1 & ~_bit_mask(m1) == 0
        assert _gather(part0, m0) | _gather(part1, m1) << (4 * m0.bit_count()) \
            == value % (1 << (4 * (m0.bit_count() + m1.bit_count())))


def _bit_mask(mask: int) -> int:
    return sum(0xF << (4 * s) for s in range(8) if (mask >> s) & 1)


def _gather(register: int, mask: int) -> int:
    """The slices of ``register`` selected by ``mask``, packed from slice 0 upward."""
    nibbles = [(register >> (4 * s)) & 0xF for s in range(8) if (mask >> s) & 1]
    return sum(n << (4 * k) for k, n in enumerate(nibbles))


@pytest.mark.parametrize(("entry", "is_float", "message"), [
    ({"r0": 1, "m0": 0, "r1": 2, "m1": 1}, False,
     r"^indirection entry with m0 = 0: the operand has no slice in r0$"),
    ({"r0": 1, "m0": 0xFF, "r1": 2, "m1": 1}, False,
     r"^masks m0=0xff m1=0x01 give 9 slices, more than 8$"),
    ({"r0": 4, "m0": 0x0F, "r1": 4, "m1": 0x18}, False,
     r"^masks m0=0x0f m1=0x18 overlap in register r4$"),
    ({"r0": 4, "m0": 0x01, "r1": 5, "m1": 0}, True,
     r"^a float of 1 slices has no format \(fp8\(e3m4\), .*fp32\(e8m23\)\)$"),
])
def test_protocol_violations_raise(entry, is_float, message):
    with pytest.raises(ValueError, match=message):
        check_entry(entry, is_float=is_float)
    model = GoldenTruncator(lanes=1, width=0, exponent=0, mantissa=0)
    with pytest.raises(ValueError, match=message):
        model.step({"entry": model.ports["entry"].pack(entry),
                    "is_float": int(is_float), "operand": 0})


def test_disjoint_masks_in_one_register_are_legal():
    entry = {"r0": 4, "m0": 0x0F, "r1": 4, "m1": 0xF0}
    assert check_entry(entry, is_float=True) == FP32
    assert scatter(0x1234_5678, 0x0F, 0xF0) == (0x0000_5678, 0x1234_0000)
