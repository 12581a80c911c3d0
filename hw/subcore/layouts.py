"""Packed structures of the sub-core blocks, shared by hw, golden models and benches.

Field order follows ``StructLayout``: the first field sits in the least significant bits.
"""

from amaranth.lib import data

__all__ = ["warp_slot_layout"]


def warp_slot_layout(*, age_width: int, score_width: int) -> data.StructLayout:
    """One warp slot of a sub-core scheduler as the warp selector sees it.

    ``valid``: a warp occupies the slot; ``ready``: its next instruction may issue;
    ``age``: rank in assignment order, larger = older; ``score``: stored RBA score.
    """
    return data.StructLayout({
        "valid": 1,
        "ready": 1,
        "age": age_width,
        "score": score_width,
    })
