"""Where RegLess invalidates a register in L1: live ranges, death points and the
post-dominator (paper Section 4.4).

The paper: "To compute when values die, standard dataflow analysis is used to compute live
ranges, with the change that a live range does not end at a soft definition. Next, the
death points of each live range are determined - either a last use or a control flow edge
out of a loop. To cover the case where a register is defined but not used along a control
flow path, the invalidation annotation is placed in the postdominator of all the
definitions and death points of the live range." and (4.3) "Registers known to be dead due
to control flow at the beginning of a region are marked for cache invalidation"; a live
range whose last use is a preload gets an invalidating preload instead.

The rule implemented (:func:`post_dominator_invalidations`), on the pass' warp-level
liveness of physical registers (soft definitions are uses, not kills):

1. **Live range**: a web of definitions joined through the uses they reach (reaching
   definitions; a soft definition is a use of the definitions reaching it, so it joins
   their web; the kernel's entry is a definition of every register).
2. **Death points** of a web: a *last use* (an instruction reading the register, after
   which it is dead), and a *control-flow death*: a region boundary (an edge of the region
   graph: a CFG edge, or the cut between two regions of one block) where the register is
   live at the end of the earlier region with this web's value and dead at the entry of
   the later. The paper names the edge out of a loop; with warp-level liveness the edge
   into a block the other lanes do not need the value on is the same thing.
3. Only a web with a control-flow death gets an invalidation: a web that dies at last uses
   only dies at an invalidating preload (the region preloaded it) or inside the region
   that wrote it (it never reached L1), as in Section 4.3.
4. **Placement**: on the graph of regions (regions never span blocks, so a region entry is
   the only place an annotation is processed), the nearest common post-dominator of: the
   region after each definition and last use (their region's immediate post-dominator:
   the invalidation comes after them) and the region after each control-flow death (the
   later region itself). The invalidation is an entry of that region's descriptor.
5. **Safety**: if the register is still live at that region's entry (another web of the
   same physical register, which the allocator put there), the placement moves up the
   post-dominator tree to the first region where it is dead for every lane. A post-
   dominator that is the kernel's exit places nothing: the warp's registers are released
   when it exits.

"Dead at a region's entry" is the warp-level liveness of the pass (lanes parked by a
divergent branch keep their registers live), the same condition the ``"entry"`` placement
(:func:`entry_invalidations`: at every control-flow death) uses; step 5 makes every
placement satisfy it, so the post-dominator placement is exactly as safe as the entry one,
and the enforcement runs (tests/test_passes_regless.py) check both.
"""

from gpurf.sim.ptx.cfg import EXIT, dominator_tree

__all__ = ["entry_invalidations", "live_ranges", "post_dominator_invalidations",
           "region_graph"]

ENTRY = -1
"""The pseudo-definition at the kernel's entry."""


def region_graph(cfg, spans) -> list[tuple[int, ...]]:
    """Per region (``spans``: ``(block, start, end)`` in pc order), its successor regions
    (:data:`~gpurf.sim.ptx.cfg.EXIT` for the kernel's exit)."""
    first = {start: i for i, (_, start, _) in enumerate(spans)}
    succs = []
    for block, _, end in spans:
        if end < cfg.blocks[block].end:
            succs.append((first[end],))
        else:
            succs.append(tuple(EXIT if s == EXIT else first[cfg.blocks[s].start]
                               for s in cfg.blocks[block].succs))
    return succs


def _predecessors(succs) -> dict[int, list[int]]:
    preds = {EXIT: []}
    for i in range(len(succs)):
        preds.setdefault(i, [])
    for i, targets in enumerate(succs):
        for t in targets:
            preds[t].append(i)
    return preds


def _post_dominator_tree(succs) -> dict[int, int]:
    """Immediate post-dominator of every region that reaches the exit (``EXIT -> EXIT``)."""
    preds = _predecessors(succs)
    return dominator_tree(EXIT, preds.__getitem__,
                          lambda n: () if n == EXIT else succs[n])


def _ancestors(tree, node) -> list:
    chain = [node]
    while tree[node] != node:
        node = tree[node]
        chain.append(node)
    return chain


def _nearest_common(tree, nodes):
    """The nearest common ancestor of ``nodes`` in ``tree`` (``None`` if one is absent)."""
    if any(n not in tree for n in nodes):
        return None
    common = None
    for n in nodes:
        chain = _ancestors(tree, n)
        common = chain if common is None else [c for c in common if c in set(chain)]
    return common[0]


class _Webs:
    """Union-find over definitions ``(pc, register)`` (``pc = ENTRY`` for the entry)."""

    def __init__(self):
        self.parent = {}

    def find(self, d):
        self.parent.setdefault(d, d)
        while self.parent[d] != d:
            self.parent[d] = self.parent[self.parent[d]]
            d = self.parent[d]
        return d

    def union(self, defs):
        roots = [self.find(d) for d in defs]
        if not roots:
            return None
        for r in roots[1:]:
            self.parent[r] = roots[0]
        return roots[0]


def live_ranges(cfg, uses, defs, kills):
    """Reaching definitions and webs. ``uses``/``defs``/``kills`` are per pc the registers
    read (soft definitions included), written, and fully overwritten. Returns
    ``(webs, reaching)``: the union-find of definitions and, per pc, the definitions of each
    register reaching the point before it (``{reg: frozenset of pcs}``)."""
    registers = set().union(*uses, *defs)
    n = len(uses)
    into = [None] * len(cfg.blocks)
    into[0] = {k: frozenset({ENTRY}) for k in registers}
    reaching = [None] * n
    webs = _Webs()
    changed = True
    while changed:
        changed = False
        for block in cfg.blocks:
            if into[block.index] is None:
                continue
            state = dict(into[block.index])
            for pc in range(block.start, block.end):
                reaching[pc] = dict(state)
                for k in uses[pc]:
                    webs.union([(d, k) for d in state.get(k, ())])
                for k in defs[pc]:
                    webs.find((pc, k))
                    kept = frozenset() if k in kills[pc] else state.get(k, frozenset())
                    state[k] = kept | {pc}
            for s in block.succs:
                if s == EXIT:
                    continue
                merged = _merge(into[s], state)
                if merged != into[s]:
                    into[s], changed = merged, True
    for pc, written in enumerate(defs):
        for k in written - kills[pc]:
            webs.union([(pc, k), *((d, k) for d in (reaching[pc] or {}).get(k, ()))])
    return webs, reaching


def _merge(old, new):
    if old is None:
        return dict(new)
    merged = dict(old)
    for k, ds in new.items():
        merged[k] = merged.get(k, frozenset()) | ds
    return merged


def _boundaries(succs):
    """Every region-graph edge ``(earlier region, later region)``."""
    return [(i, t) for i, targets in enumerate(succs) for t in targets if t != EXIT]


def entry_invalidations(spans, succs, before, after) -> list[frozenset]:
    """Per region, the registers live at the end of a predecessor region and dead at its
    entry (the ``"entry"`` placement: every control-flow death)."""
    result = [set() for _ in spans]
    for i, t in _boundaries(succs):
        result[t] |= after[spans[i][2] - 1] - before[spans[t][1]]
    return [frozenset(s) for s in result]


def post_dominator_invalidations(cfg, spans, uses, defs, kills, before, after) -> list[frozenset]:
    """Per region, the registers it invalidates at its entry under the post-dominator rule
    (module docstring). ``before``/``after``: per pc the registers live before / after it."""
    succs = region_graph(cfg, spans)
    ipdom = _post_dominator_tree(succs)
    region_of = {pc: i for i, (_, start, end) in enumerate(spans) for pc in range(start, end)}
    webs, reaching = live_ranges(cfg, uses, defs, kills)
    places, dying = [], []
    for pc, ws in enumerate(defs):
        places.extend(((pc, k), ipdom.get(region_of[pc])) for k in ws)
    places.extend(((ENTRY, k), 0) for k in set().union(*uses, *defs))
    for pc, rs in enumerate(uses):
        for k in rs - after[pc]:
            places.extend(((d, k), ipdom.get(region_of[pc]))
                          for d in (reaching[pc] or {}).get(k, ()))
    for i, t in _boundaries(succs):
        end = spans[i][2] - 1
        for k in after[end] - before[spans[t][1]]:
            out = _reaching_after(reaching[end], end, k, defs, kills) or {ENTRY}
            webs.union([(d, k) for d in out])
            dying.append(((min(out), k), t))
    by_web = {}
    for d, region in places + dying:
        by_web.setdefault(webs.find(d), set()).add(region)
    result = [set() for _ in spans]
    for web in {webs.find(d) for d, _ in dying}:
        k = web[1]
        node = _nearest_common(ipdom, by_web[web])
        while node is not None and node != EXIT and k in before[spans[node][1]]:
            node = ipdom[node]
        if node is not None and node != EXIT:
            result[node].add(k)
    return [frozenset(s) for s in result]


def _reaching_after(state, pc, k, defs, kills):
    """Definitions of ``k`` reaching the point after ``pc`` (``state``: before it)."""
    if k in kills[pc]:
        return {pc}
    found = set((state or {}).get(k, ()))
    if k in defs[pc]:
        found.add(pc)
    return found
