"""Golden models of the composed compressed-register paths (paper Fig. 6), one thread:

- :func:`operand_read`: the operand-read path — the source indirection entry, one or two
  thread registers fetched (a split operand: two), each through a thread value extractor
  (:func:`~.value_extractor.extract_part`), the parts ORed in the collector
  (:func:`~.collector_ext.merge_parts`, a split signed operand sign-extended), a narrow
  float widened by the value converter (:func:`~.value_converter.widen`);
- :func:`write_back`: the write-back path — the destination entry, the value truncator
  (:func:`~.value_truncator.truncate`: narrowed, scattered to ``r0``/``r1``) and the
  per-slice write masks (only the operand's slices of each register are written).

They compose the blocks' golden functions (no logic of their own beyond the masks), the
reference a composed RTL path would be cosimulated against; tests/test_compression_paths.py
replays a kernel's register traffic from the golden SM through them.
"""

from collections.abc import Mapping

from gpurf.hw.compression.formats import FloatFormat
from gpurf.hw.compression.layouts import SLICE_BITS, SLICES

from .collector_ext import merge_parts
from .value_converter import widen
from .value_extractor import Entry, check_entry, extract_part
from .value_truncator import truncate

__all__ = ["collect", "operand_read", "register_writes", "slice_bits", "write_back"]


def slice_bits(mask: int) -> int:
    """The 32-bit write mask of slice mask ``mask`` (0xF per selected slice)."""
    return sum(0xF << (SLICE_BITS * s) for s in range(SLICES) if mask >> s & 1)


def operand_read(registers: Mapping[int, int], entry: Entry, signed: bool = False,
                 fmt: FloatFormat | None = None) -> int:
    """The 32-bit operand a thread reads through ``entry`` from its thread registers
    ``registers`` (register -> 32-bit word)."""
    check_entry(entry)
    parts = [[extract_part(registers[entry["r0"]], entry, 0, signed)]]
    if entry["m1"]:
        parts.append([extract_part(registers[entry["r1"]], entry, 1, signed)])
    (value,) = collect(parts, entry, signed, fmt)
    return value


def collect(parts: list[list[int]], entry: Entry, signed: bool,
            fmt: FloatFormat | None) -> list[int]:
    """Per lane, the operand from its extracted parts (one list of lanes per part): the
    collector's OR merge and sign fill, then the value converter for a float of ``fmt``."""
    merged = merge_parts(parts, entry, signed)
    return merged if fmt is None else [widen(value, fmt) for value in merged]


def write_back(operand: int, entry: Entry, fmt: FloatFormat | None = None
               ) -> list[tuple[int, int, int]]:
    """``(register, word, write mask)`` per thread register the write of ``operand``
    (fp32 bits when ``fmt`` is given) through ``entry`` touches."""
    check_entry(entry)
    words = truncate(operand, entry["m0"], entry["m1"], fmt)
    writes = [(entry["r0"], words[0], slice_bits(entry["m0"]))]
    if entry["m1"]:
        writes.append((entry["r1"], words[1], slice_bits(entry["m1"])))
    return writes


def register_writes(lanes: list[int], entry: Entry, fmt: FloatFormat | None) -> list[dict]:
    """The value truncator's two warp-register writes of ``lanes`` (fp32 bits when ``fmt``
    is given) through ``entry``: ``{reg, mask, data}`` to ``r0`` and to ``r1`` (``mask`` the
    slice mask, 0 = no write; data zero outside it)."""
    words = [truncate(lane, entry["m0"], entry["m1"], fmt) for lane in lanes]
    return [{"reg": entry[f"r{p}"], "mask": entry[f"m{p}"], "data": [w[p] for w in words]}
            for p in (0, 1)]
