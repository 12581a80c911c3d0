"""Golden model of ``compression.value_extractor``: slice placement as the spec states it."""

from amaranth.lib import data

from gpurf.hw.compression.layouts import (
    SLICE_BITS,
    SLICES,
    THREAD_BITS,
    indirection_entry_layout,
    slice_layout,
)
from gpurf.hw.compression.value_extractor import ValueExtractorConfig

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


def unpack_entry(bits: int) -> Entry:
    """The fields of a packed 32-bit indirection entry."""
    view = indirection_entry_layout().from_bits(bits)
    return {name: int(view[name]) for name in ("r0", "m0", "r1", "m1")}


def pack_entry(entry: Entry) -> int:
    """The packed 32-bit form of an indirection entry."""
    return indirection_entry_layout().const(dict(entry)).as_value().value


def _set_bits(mask: int) -> list[int]:
    return [s for s in range(SLICES) if mask >> s & 1]


def data_positions(entry: Entry) -> list[tuple[int, int]]:
    """``(part, slice)`` of data slice 0, 1, ...: the set bits of ``m0`` in increasing
    slice index (part 0, register ``r0``), then those of ``m1`` (part 1, ``r1``)."""
    return ([(0, s) for s in _set_bits(entry["m0"])]
            + [(1, s) for s in _set_bits(entry["m1"])])


def check_entry(entry: Entry) -> None:
    """Raise ``ValueError`` unless ``entry`` follows the input protocol: ``m0`` not zero,
    at most 8 data slices, and the masks do not overlap when ``r0 == r1`` (the rule of
    the value truncator's golden model, so both sides accept the same entries)."""
    width = len(data_positions(entry))
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


def extract_part(register: int, entry: Entry, part: int, signed: bool) -> int:
    """One TVE: the data slices of ``part`` that ``register`` holds, each moved to its
    data-slice index, other slices zero; an unsplit signed operand sign-extended."""
    slices = slice_layout().from_bits(register)
    value = 0
    for index, (where, s) in enumerate(data_positions(entry)):
        if where == part:
            value |= int(slices[s]) << (SLICE_BITS * index)
    if signed and part == 0 and entry["m1"] == 0:
        value = sign_extend(value, len(data_positions(entry)))
    return value


class ValueExtractor:
    """Port-level model: ``step(inputs)`` returns the outputs for those inputs."""

    def __init__(self, **params):
        self.config = ValueExtractorConfig(**params)
        self._last = None

    def reset(self):
        self._last = None

    def step(self, inputs):
        config = self.config
        entry = unpack_entry(inputs["entry"])
        check_entry(entry)
        registers = data.ArrayLayout(THREAD_BITS, config.lanes).from_bits(inputs["word"])
        values = [extract_part(int(registers[lane]), entry, inputs["part"],
                               bool(inputs["is_signed"])) for lane in range(config.lanes)]
        self._last = (entry, inputs["part"], inputs["is_signed"])
        return {"value": config.register_layout.const(values).as_value().value}

    def line_trace(self):
        if self._last is None:
            return "value_extractor: -"
        entry, part, signed = self._last
        fields = " ".join(f"{k}={v:#04x}" for k, v in entry.items())
        return f"value_extractor: {fields} part={part} signed={signed}"
