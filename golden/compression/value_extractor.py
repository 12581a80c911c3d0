"""Golden model of ``compression.value_extractor``: slice placement as the spec states it."""

from collections.abc import Callable
from functools import cache, lru_cache

from gpurf.golden.model import PortModel
from gpurf.hw.compression.configs import ValueExtractorConfig
from gpurf.hw.compression.layouts import (
    SLICE_BITS,
    SLICES,
    THREAD_BITS,
    indirection_entry_layout,
    slice_layout,
)
from gpurf.hw.ports import codec

__all__ = [
    "Entry",
    "ValueExtractor",
    "check_entry",
    "data_positions",
    "extract_part",
    "pack_entry",
    "sign_extend",
    "unpack_entry",
]

Entry = dict
"""An indirection entry as a mapping with ``r0``, ``m0``, ``r1``, ``m1``."""

_ENTRY = codec(indirection_entry_layout())
_SLICES = codec(slice_layout())


def unpack_entry(bits: int) -> Entry:
    """The fields of a packed 32-bit indirection entry."""
    return entry_fields(_ENTRY.unpack(bits))


def entry_fields(entry) -> Entry:
    """An entry port value (the named tuple of its codec) as an :data:`Entry`."""
    return {"r0": entry.r0, "m0": entry.m0, "r1": entry.r1, "m1": entry.m1}


def pack_entry(entry: Entry) -> int:
    """The packed 32-bit form of an indirection entry."""
    return _ENTRY.pack(entry)


def data_positions(entry: Entry) -> list[tuple[int, int]]:
    """``(part, slice)`` of data slice 0, 1, ...: the set bits of ``m0`` in increasing
    slice index (part 0, register ``r0``), then those of ``m1`` (part 1, ``r1``)."""
    return list(_positions(entry["m0"], entry["m1"]))


@cache
def _positions(m0: int, m1: int) -> tuple[tuple[int, int], ...]:
    return tuple((part, s) for part, mask in enumerate((m0, m1)) for s in range(SLICES)
                 if mask >> s & 1)


def check_entry(entry: Entry) -> None:
    """Raise ``ValueError`` unless ``entry`` follows the input protocol: ``m0`` not zero,
    at most 8 data slices, and the masks do not overlap when ``r0 == r1`` (the rule of
    the value truncator's golden model, so both sides accept the same entries)."""
    width = entry["m0"].bit_count() + entry["m1"].bit_count()
    if entry["m0"] == 0:
        raise ValueError(f"entry {entry}: m0 is zero (an operand has at least one slice)")
    if width > SLICES:
        raise ValueError(f"entry {entry}: {width} data slices, more than {SLICES}")
    if entry["r0"] == entry["r1"] and entry["m0"] & entry["m1"]:
        raise ValueError(f"entry {entry}: the masks overlap in one register")


def sign_extend(value: int, slices: int) -> int:
    """``value``'s low ``4 * slices`` bits, sign-extended to 32 bits."""
    bits = SLICE_BITS * slices
    low = value & ((1 << bits) - 1)
    if bits and low >> (bits - 1) & 1:
        low |= ((1 << THREAD_BITS) - 1) ^ ((1 << bits) - 1)
    return low


def part_extractor(entry: Entry, part: int, signed: bool) -> Callable[[int], int]:
    """One TVE with its select lines set: a function from a thread register to the data
    slices of ``part`` it holds, each moved to its data-slice index, other slices zero; an
    unsplit signed operand sign-extended. (The placement is computed once per masks, part
    and signedness, then applied to every lane.)"""
    return _extractor(entry["m0"], entry["m1"], part, bool(signed))


@lru_cache(maxsize=4096)
def _extractor(m0: int, m1: int, part: int, signed: bool) -> Callable[[int], int]:
    positions = _positions(m0, m1)
    moves = [(index, s) for index, (where, s) in enumerate(positions) if where == part]
    extend = signed and part == 0 and m1 == 0
    width = len(positions)
    unpack, pack = _SLICES.unpack, _SLICES.pack

    def extract(register: int) -> int:
        slices = unpack(register)
        placed = [0] * SLICES
        for index, s in moves:
            placed[index] = slices[s]
        value = pack(placed)
        return sign_extend(value, width) if extend else value

    return extract


def extract_part(register: int, entry: Entry, part: int, signed: bool) -> int:
    """One TVE: the data slices of ``part`` that ``register`` holds, each moved to its
    data-slice index, other slices zero; an unsplit signed operand sign-extended."""
    return part_extractor(entry, part, signed)(register)


class ValueExtractor(PortModel, config=ValueExtractorConfig):
    """Port-level model: ``step(inputs)`` returns the outputs for those inputs."""

    def reset(self):
        self._last = None

    def step(self, inputs):
        entry = entry_fields(self.ports["entry"].unpack(inputs["entry"]))
        check_entry(entry)
        part, signed = inputs["part"], inputs["is_signed"]
        extract = part_extractor(entry, part, bool(signed))
        values = [extract(register) for register in self.ports["word"].unpack(inputs["word"])]
        self._last = (entry, part, signed)
        return {"value": self.ports["value"].pack(values)}

    def line_trace(self):
        if self._last is None:
            return "value_extractor: -"
        entry, part, signed = self._last
        fields = " ".join(f"{k}={v:#04x}" for k, v in entry.items())
        return f"value_extractor: {fields} part={part} signed={signed}"
