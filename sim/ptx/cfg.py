"""Control-flow graph, dominators and post-dominators of a kernel.

Basic blocks are maximal runs of instructions entered only at the top (a leader is the
first instruction, a label's instruction, or the one after a branch or ``ret``/``exit``) and
left only at the bottom. Block ``i`` covers ``kernel.instructions[start:end]``. The graph has
one virtual node, :data:`EXIT` (= ``-1``), the successor of every block that ends the kernel,
so post-dominators are defined even with several ``ret``.

Dominators use the iterative algorithm of Cooper, Harvey and Kennedy ("A Simple, Fast
Dominance Algorithm", 2001) over reverse postorder; post-dominators are the dominators of the
reversed graph rooted at :data:`EXIT`. The SIMT stack reconverges a divergent branch at the
immediate post-dominator of the branch's block (:meth:`CFG.reconvergence_pc`).
"""

from dataclasses import dataclass, field
from functools import cached_property

from .ir import Kernel

__all__ = ["CFG", "EXIT", "BasicBlock", "build_cfg", "dominator_tree"]

EXIT = -1
"""The virtual exit node."""


@dataclass
class BasicBlock:
    """Instructions ``start:end`` of the kernel, with successor and predecessor blocks."""

    index: int
    start: int
    end: int
    label: str | None = None
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)

    def __repr__(self):
        name = self.label or f"B{self.index}"
        return f"<{name} [{self.start}:{self.end}) -> {self.succs}>"


def dominator_tree(root, succs, preds) -> dict:
    """Immediate dominators ``{node: idom}`` of the nodes reachable from ``root``
    (``idom[root] = root``). ``succs``/``preds`` map a node to its neighbours; the same
    function computes post-dominators when given the reversed graph."""
    order, seen = [], {root}
    stack = [(root, iter(succs(root)))]
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            order.append(node)
            stack.pop()
        elif child not in seen:
            seen.add(child)
            stack.append((child, iter(succs(child))))
    rpo = order[::-1]
    number = {node: i for i, node in enumerate(rpo)}
    idom = {root: root}

    def intersect(a, b):
        while a != b:
            while number[a] > number[b]:
                a = idom[a]
            while number[b] > number[a]:
                b = idom[b]
        return a

    changed = True
    while changed:
        changed = False
        for node in rpo[1:]:
            done = [p for p in preds(node) if p in idom]
            new = done[0]
            for other in done[1:]:
                new = intersect(other, new)
            if idom.get(node) != new:
                idom[node] = new
                changed = True
    return idom


class CFG:
    """The control-flow graph of ``kernel`` (see the module docstring)."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel
        self.blocks = _split(kernel)
        self.block_of = [0] * len(kernel.instructions)
        for block in self.blocks:
            for i in range(block.start, block.end):
                self.block_of[i] = block.index

    def succs(self, node: int) -> list[int]:
        return [] if node == EXIT else self.blocks[node].succs

    def preds(self, node: int) -> list[int]:
        if node == EXIT:
            return [b.index for b in self.blocks if EXIT in b.succs]
        return self.blocks[node].preds

    @cached_property
    def idom(self) -> dict[int, int]:
        """Immediate dominator of every reachable block (the entry maps to itself)."""
        tree = dominator_tree(0, self.succs, self.preds)
        tree.pop(EXIT, None)
        return tree

    @cached_property
    def ipdom(self) -> dict[int, int]:
        """Immediate post-dominator of every block that reaches the exit (:data:`EXIT` for
        blocks only the virtual exit post-dominates; ``ipdom[EXIT] = EXIT``)."""
        return dominator_tree(EXIT, self.preds, self.succs)

    def dominates(self, a: int, b: int) -> bool:
        """Whether block ``a`` dominates block ``b`` (every block dominates itself)."""
        return _chain_contains(self.idom, a, b)

    def post_dominates(self, a: int, b: int) -> bool:
        """Whether ``a`` post-dominates ``b`` (``a`` may be :data:`EXIT`)."""
        return _chain_contains(self.ipdom, a, b)

    def reconvergence_pc(self, instruction: int) -> int:
        """Where lanes that diverge at the branch ``instruction`` meet again: the first
        instruction of its block's immediate post-dominator, or ``len(instructions)``
        when that is the exit."""
        target = self.ipdom.get(self.block_of[instruction], EXIT)
        return len(self.kernel.instructions) if target == EXIT else self.blocks[target].start

    def back_edges(self) -> list[tuple[int, int]]:
        """Edges ``(tail, head)`` whose head dominates the tail (natural loops)."""
        return [(b.index, s) for b in self.blocks for s in b.succs
                if s != EXIT and self.dominates(s, b.index)]


def _chain_contains(tree, a, b) -> bool:
    if b not in tree:
        return False
    while True:
        if a == b:
            return True
        if tree[b] == b:
            return False
        b = tree[b]


def _split(kernel: Kernel) -> list[BasicBlock]:
    code = kernel.instructions
    label_at = {index: name for name, index in kernel.labels.items()}
    leaders = {0, *kernel.labels.values()}
    for i, ins in enumerate(code):
        if ins.is_branch or ins.is_exit:
            leaders.add(i + 1)
    starts = sorted(i for i in leaders if i < len(code))
    blocks = [BasicBlock(n, s, e, label_at.get(s))
              for n, (s, e) in enumerate(zip(starts, [*starts[1:], len(code)], strict=True))]
    first = {b.start: b.index for b in blocks}
    for block in blocks:
        last = code[block.end - 1]
        falls = block.end < len(code)
        succs = []
        if last.is_branch:
            succs.append(first[kernel.labels[last.operands[0].name]])
            if last.guard is not None and falls:
                succs.append(first[block.end])
        elif last.is_exit:
            succs.append(EXIT)
            if last.guard is not None and falls:
                succs.append(first[block.end])
        else:
            succs.append(first[block.end] if falls else EXIT)
        block.succs = list(dict.fromkeys(succs))
    for block in blocks:
        for s in block.succs:
            if s != EXIT:
                blocks[s].preds.append(block.index)
    return blocks


def build_cfg(kernel: Kernel) -> CFG:
    """The :class:`CFG` of ``kernel``."""
    return CFG(kernel)
