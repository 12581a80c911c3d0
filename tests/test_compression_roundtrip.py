# amaranth: UnusedElaboratable=no
"""Round trip through the compressed register file: truncate, write with the slice masks,
read, extract, merge — the operand comes back, and no write touches a slice outside its mask.

The truncation is the golden value truncator (``golden.compression.value_truncator``,
public functions :func:`truncate` and :func:`check_entry` only); the write is the register
file's masked write (only the bit lines of the mask's slices are enabled); extraction runs
on the RTL value extractor (one lane, Amaranth simulator) and on its golden model; the two
parts are merged as the extended collector unit does (golden :func:`merge_parts`, whose RTL
is cosimulated in ``tb/compression/test_collector_ext.py``).
"""

import random

from amaranth.sim import Simulator

from gpurf.golden.compression.collector_ext import merge_parts
from gpurf.golden.compression.value_extractor import check_entry as check_extract
from gpurf.golden.compression.value_extractor import extract_part, pack_entry
from gpurf.golden.compression.value_truncator import check_entry, truncate
from gpurf.hw.compression.formats import table3_format
from gpurf.hw.compression.layouts import SLICE_BITS, SLICES
from gpurf.hw.compression.value_extractor import ValueExtractor
from gpurf.tb.compression.drivers import random_mask

PLACEMENTS = 60
"""Random placements per width and kind (split and not)."""

KINDS = ("unsigned", "signed", "float")


def _slice_bits(mask: int) -> int:
    """The register bits of the slices ``mask`` selects."""
    return sum(0xF << (SLICE_BITS * s) for s in range(SLICES) if mask >> s & 1)


def _placement(rng, width: int, split: bool) -> dict:
    """A legal entry of ``width`` slices; split ones sometimes share one register with
    disjoint masks (allowed by the spec: masks may not overlap within one register)."""
    if not split or width == 1:
        return {"r0": rng.randrange(8), "m0": random_mask(rng, width), "r1": 0, "m1": 0}
    first = rng.randint(1, width - 1)
    slices = rng.sample(range(SLICES), width)
    same = rng.random() < 0.3
    m0 = sum(1 << s for s in slices[:first])
    m1 = (sum(1 << s for s in slices[first:]) if same
          else random_mask(rng, width - first))
    r0 = rng.randrange(8)
    r1 = r0 if same else (r0 + rng.randrange(1, 8)) % 8
    return {"r0": r0, "m0": m0, "r1": r1, "m1": m1}


def _operand(rng, kind: str, width: int) -> tuple[int, int, object]:
    """(fp32 bits or integer as written by the execution unit, expected read-back, format)."""
    bits = SLICE_BITS * width
    if kind == "unsigned":
        value = rng.getrandbits(bits)
        return value, value, None
    if kind == "signed":
        value = rng.randrange(-(1 << (bits - 1)), 1 << (bits - 1))
        return value & 0xFFFF_FFFF, value & 0xFFFF_FFFF, None
    fmt = table3_format(width)
    word = rng.getrandbits(32)
    narrowed, _ = truncate(word, (1 << width) - 1, 0, fmt)
    return word, narrowed, fmt


def _cases(rng):
    for width in range(1, SLICES + 1):
        for kind in KINDS:
            if kind == "float" and table3_format(width) is None:
                continue
            for index in range(PLACEMENTS):
                entry = _placement(rng, width, split=index % 2 == 1)
                yield width, kind, entry, *_operand(rng, kind, width)


def _write(registers: dict, entry: dict, parts) -> dict:
    """The register file after the masked writes of ``parts`` to ``r0``/``r1``."""
    after = dict(registers)
    for p in (0, 1):
        reg, mask = entry[f"r{p}"], entry[f"m{p}"]
        if mask:
            enabled = _slice_bits(mask)
            after[reg] = after[reg] & ~enabled | parts[p] & enabled
    return after


def test_truncate_then_extract(seed):
    """Every width of 1..8 slices x {unsigned, signed, float} x 60 random placements (half
    split): the extracted, merged operand is the original integer (sign-extended when
    signed) or the narrowed float; slices outside the masks keep their old contents."""
    rng = random.Random(seed)
    dut = ValueExtractor(lanes=1)
    reads, cases = [], list(_cases(rng))
    for _, kind, entry, operand, _, fmt in cases:
        assert check_entry(entry, is_float=fmt is not None) == fmt
        check_extract(entry)
        registers = {r: rng.getrandbits(32) for r in range(8)}
        parts = truncate(operand, entry["m0"], entry["m1"], fmt)
        after = _write(registers, entry, parts)
        untouched = {r: ~(_slice_bits(entry["m0"]) * (r == entry["r0"])
                          | _slice_bits(entry["m1"]) * (r == entry["r1"])) & 0xFFFF_FFFF
                     for r in registers}
        for r in registers:
            assert after[r] & untouched[r] == registers[r] & untouched[r], (entry, r)
        signed = kind == "signed"
        for part in (0, 1) if entry["m1"] else (0,):
            reads.append((after[entry[f"r{part}"]], entry, part, signed))
    extracted = iter(_extract_rtl(dut, reads))
    for width, kind, entry, operand, expected, _ in cases:
        signed = kind == "signed"
        got = [next(extracted) for _ in ((0, 1) if entry["m1"] else (0,))]
        merged = merge_parts([[g] for g in got], entry, signed)[0]
        assert merged == expected, (width, kind, entry, hex(operand), hex(merged))
    assert len(cases) == SLICES * 2 * PLACEMENTS + 7 * PLACEMENTS


def _extract_rtl(dut, reads):
    """The RTL extractor's output for each read, checked against the golden model."""
    out = []

    async def bench(ctx):
        for word, entry, part, signed in reads:
            ctx.set(dut.word.as_value(), word)
            ctx.set(dut.entry.as_value(), pack_entry(entry))
            ctx.set(dut.part, part)
            ctx.set(dut.is_signed, signed)
            await ctx.delay(1e-9)
            value = ctx.get(dut.value.as_value())
            assert value == extract_part(word, entry, part, signed), (entry, part, hex(word))
            out.append(value)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return out
