"""Stimulus helpers shared by the sub-core benches; packing goes through ``hw.subcore.layouts``."""

from dataclasses import dataclass

from amaranth import Shape
from amaranth.lib import data

from gpurf.hw.subcore.warp_selector import WarpSelectorConfig

__all__ = ["Geometry", "pack_slots", "random_ages"]


@dataclass(frozen=True)
class Geometry:
    """Widths of a warp-slot vector, derived once from a block's parameters."""

    slots: int
    layout: data.StructLayout

    @classmethod
    def of_selector(cls, params) -> "Geometry":
        config = WarpSelectorConfig(**params)
        return cls(slots=config.slots, layout=config.slot_layout)

    @property
    def score_max(self) -> int:
        return (1 << Shape.cast(self.layout["score"].shape).width) - 1


def pack_slots(geo: Geometry, slots) -> int:
    """The packed ``slot`` port value of a list of per-slot field mappings."""
    array = data.ArrayLayout(geo.layout, geo.slots)
    fields = [{name: int(value) for name, value in slot.items()} for slot in slots]
    return array.const(fields).as_value().value


def random_ages(rng, slots: int) -> list[int]:
    """Ages as the scheduler keeps them: a permutation of ranks, unique per slot."""
    ages = list(range(slots))
    rng.shuffle(ages)
    return ages
