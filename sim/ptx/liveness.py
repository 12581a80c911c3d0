"""Register liveness of a kernel, per block and per instruction.

Backward dataflow over the :class:`~gpurf.sim.ptx.cfg.CFG`:
``live_out(B) = union of live_in(S) for S in succs(B)`` and
``live_in(B) = uses(B) | (live_out(B) - kills(B))``, iterated to a fixed point.

A guarded instruction (``@%p mov ...``) writes its destination only in lanes whose guard
holds, so its definition does not kill: the old value stays live through it. Liveness is
per thread (each lane follows its own path through the CFG), which is what a register
allocator needs — the SIMT stack masks writes, so lanes never see each other's values.
"""

from dataclasses import dataclass

from .cfg import CFG, EXIT, build_cfg
from .ir import Instruction, Kernel

__all__ = ["Liveness", "liveness"]


def _uses_defs(ins: Instruction) -> tuple[frozenset, frozenset]:
    """Registers the instruction reads, and those it kills (unguarded definitions)."""
    uses = set(ins.sources)
    kills = set()
    if ins.guard is None:
        kills.update(ins.dests)
    else:
        uses.update(ins.dests)
    return frozenset(uses), frozenset(kills)


@dataclass(frozen=True)
class Liveness:
    """Live registers of a kernel.

    Attributes
    ----------
    cfg : CFG
    live_in, live_out : list of frozenset
        Per block, the registers live at its entry and exit.
    live_before, live_after : list of frozenset
        Per instruction, the registers live just before and just after it.
    """

    cfg: CFG
    live_in: list
    live_out: list
    live_before: list
    live_after: list

    def max_live(self) -> int:
        """The largest number of simultaneously live registers (any width)."""
        return max((len(s) for s in self.live_after), default=0)


def liveness(kernel: Kernel, cfg: CFG | None = None) -> Liveness:
    """Liveness of ``kernel`` (its CFG is built if not given)."""
    cfg = cfg or build_cfg(kernel)
    code = kernel.instructions
    effects = [_uses_defs(ins) for ins in code]
    gen, kill = [], []
    for block in cfg.blocks:
        g, k = set(), set()
        for i in range(block.end - 1, block.start - 1, -1):
            uses, kills = effects[i]
            g -= kills
            g |= uses
            k |= kills
        gen.append(frozenset(g))
        kill.append(frozenset(k - g))
    n = len(cfg.blocks)
    live_in = [frozenset()] * n
    live_out = [frozenset()] * n
    changed = True
    while changed:
        changed = False
        for b in range(n - 1, -1, -1):
            out = frozenset().union(*(live_in[s] for s in cfg.blocks[b].succs if s != EXIT))
            new_in = gen[b] | (out - kill[b])
            if out != live_out[b] or new_in != live_in[b]:
                live_out[b], live_in[b] = out, new_in
                changed = True
    before = [frozenset()] * len(code)
    after = [frozenset()] * len(code)
    for block in cfg.blocks:
        live = set(live_out[block.index])
        for i in range(block.end - 1, block.start - 1, -1):
            after[i] = frozenset(live)
            uses, kills = effects[i]
            live -= kills
            live |= uses
            before[i] = frozenset(live)
    return Liveness(cfg, live_in, live_out, before, after)
