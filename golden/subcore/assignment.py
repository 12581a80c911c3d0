"""Host-side sub-core assignment policies and the hash table bytes that encode them.

The table (RBA paper, Section IV-B, Fig. 7) has ``depth`` bytes; each fixes the sub-cores
of 4 consecutive warps and the table wraps. It encodes 4 sub-cores (two select lines).
A 2-sub-core policy is encoded with sub-cores 0 and 1 only (select line 1 held at 0),
so a 4-sub-core assigner in hashed mode can run it; a 2-sub-core SM itself has the
round-robin path only. Every policy table built here is exact, not an approximation:
RR repeats every ``N`` warps and SRR every ``N*N``, both dividing ``4 * depth``.
"""

import random

from gpurf.hw.params import check_int, check_int_choice
from gpurf.hw.ports import codec
from gpurf.hw.subcore.configs import DEPTHS, TABLE_SUBCORES, WARPS_PER_ENTRY
from gpurf.hw.subcore.layouts import hash_entry_layout

__all__ = [
    "POLICY_SUBCORES",
    "decode_table",
    "encode_table",
    "rr_subcore",
    "rr_table",
    "shuffle_table",
    "srr_subcore",
    "srr_table",
    "table_subcore",
]

POLICY_SUBCORES = (2, 4)
"""Sub-core counts a policy table can encode exactly."""


def rr_subcore(warp: int, subcores: int) -> int:
    """Round robin: ``W mod N``."""
    return warp % subcores


def srr_subcore(warp: int, subcores: int) -> int:
    """Skewed round robin, equation (1): ``(W + floor(W / N)) mod N``."""
    return (warp + warp // subcores) % subcores


def table_subcore(table, warp: int) -> int:
    """Sub-core of the ``warp``-th warp since launch under ``table`` (the spec's reading).

    ``e = table[(i // 4) % depth]``, ``j = i % 4``, ``sel0 = (e >> (7-j)) & 1``,
    ``sel1 = (e >> (3-j)) & 1``, sub-core ``2*sel1 + sel0``.
    """
    entry = table[(warp // WARPS_PER_ENTRY) % len(table)]
    j = warp % WARPS_PER_ENTRY
    sel0 = (entry >> (7 - j)) & 1
    sel1 = (entry >> (3 - j)) & 1
    return 2 * sel1 + sel0


def decode_table(table, warps: int | None = None) -> list[int]:
    """Sub-cores of warps ``0..warps-1`` since launch (default: one pass, ``4 * depth``)."""
    count = WARPS_PER_ENTRY * len(table) if warps is None else warps
    return [table_subcore(table, warp) for warp in range(count)]


def encode_table(assignment) -> list[int]:
    """The table bytes whose decoding is ``assignment`` (sub-cores 0..3 of consecutive
    warps; the length a multiple of 4)."""
    assignment = list(assignment)
    if len(assignment) % WARPS_PER_ENTRY:
        raise ValueError(f"assignment length must be a multiple of {WARPS_PER_ENTRY}, "
                         f"not {len(assignment)}")
    for subcore in assignment:
        check_int("subcore", subcore, 0, TABLE_SUBCORES - 1)
    pack = codec(hash_entry_layout()).pack
    groups = [assignment[k:k + WARPS_PER_ENTRY]
              for k in range(0, len(assignment), WARPS_PER_ENTRY)]
    return [pack({"sel0": [g[3 - b] & 1 for b in range(WARPS_PER_ENTRY)],
                  "sel1": [g[3 - b] >> 1 for b in range(WARPS_PER_ENTRY)]})
            for g in groups]


def _policy_table(policy, subcores: int, depth: int) -> list[int]:
    check_int_choice("subcores", subcores, POLICY_SUBCORES)
    check_int_choice("depth", depth, DEPTHS)
    return encode_table(policy(warp, subcores) for warp in range(WARPS_PER_ENTRY * depth))


def rr_table(*, subcores: int = 4, depth: int = 4) -> list[int]:
    """Table bytes of round robin over ``subcores`` (2 or 4)."""
    return _policy_table(rr_subcore, subcores, depth)


def srr_table(*, subcores: int = 4, depth: int = 4) -> list[int]:
    """Table bytes of skewed round robin (equation 1) over ``subcores`` (2 or 4)."""
    return _policy_table(srr_subcore, subcores, depth)


def shuffle_table(seed: int, *, depth: int = 4) -> list[int]:
    """Random Shuffle: each entry a random permutation of the 4 sub-cores (seeded)."""
    check_int_choice("depth", depth, DEPTHS)
    rng = random.Random(seed)
    assignment = []
    for _ in range(depth):
        group = list(range(TABLE_SUBCORES))
        rng.shuffle(group)
        assignment += group
    return encode_table(assignment)

