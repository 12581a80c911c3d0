"""Warp selection comparator network of a sub-core scheduler (RBA paper, Fig. 6 items 4-5)."""

from amaranth import Cat, Module, Mux, Signal

from gpurf.hw.params import ConfiguredComponent

from .configs import POLICIES, WarpSelectorConfig

__all__ = ["POLICIES", "WarpSelector", "WarpSelectorConfig"]


class WarpSelector(ConfiguredComponent, config=WarpSelectorConfig):
    """Select the warp slot to issue from, through a balanced tree of compare-select cells.

    The key of a slot is ``{score, ~age}`` under RBA (score in the upper bits) and ``~age``
    under GTO; the smallest key among ready slots (``valid & ready``) wins, and on equal keys
    the lower slot index wins. Under GTO (and under RBA with ``rba_greedy``) the ``greedy``
    slot, when valid and ready, is selected before the tree's choice. The network is
    combinational (latency 0) and has ``ceil(log2(slots))`` compare-select stages.

    Attributes
    ----------
    slot : In(ArrayLayout(warp_slot_layout, slots))
        Per slot: valid, ready, age, score.
    greedy : In(range(slots))
        The slot that issued last.
    greedy_valid : In(1)
        ``greedy`` names a slot.
    grant_valid : Out(1)
        Some slot is valid and ready.
    grant : Out(range(slots))
        The selected slot (0 when ``grant_valid`` is low).
    """

    def __init__(self, **params):
        super().__init__(self.configure(params).signature())

    def _key(self, slot):
        """``{score, ~age}`` (score in the upper bits) under RBA, ``~age`` under GTO."""
        if self.config.policy == "rba":
            return Cat(~slot.age, slot.score)
        return ~slot.age

    def elaborate(self, platform):
        m = Module()
        leaves = self._leaves(m)
        level, stage = leaves, 0
        while len(level) > 1:
            level = [self._compare_select(m, stage, i, *level[i:i + 2])
                     for i in range(0, len(level), 2)]
            stage += 1
        any_ready, _, winner = level[0]
        m.d.comb += self.grant_valid.eq(any_ready)
        if self.config.uses_greedy:
            greedy_ready = self._greedy_ready(m, leaves)
            m.d.comb += self.grant.eq(Mux(greedy_ready, self.greedy, winner))
        else:
            m.d.comb += self.grant.eq(winner)
        return m

    def _leaves(self, m):
        """Per slot: (ready, key, index), the inputs of the tree's first stage."""
        config = self.config
        leaves = []
        for index in range(config.slots):
            slot = self.slot[index]
            ready = Signal(name=f"present_{index}")
            key = Signal(config.key_bits, name=f"key_{index}")
            m.d.comb += [ready.eq(slot.valid & slot.ready), key.eq(self._key(slot))]
            leaves.append((ready, key, index))
        return leaves

    def _greedy_ready(self, m, leaves):
        """The greedy slot is named and ready (a case statement: no dynamic indexing)."""
        greedy_ready = Signal()
        with m.Switch(self.greedy):
            for ready, _, index in leaves:
                with m.Case(index):
                    m.d.comb += greedy_ready.eq(self.greedy_valid & ready)
            with m.Default():
                m.d.comb += greedy_ready.eq(0)
        return greedy_ready

    def _compare_select(self, m, stage, position, left, right=None):
        """One cell: the left (lower-index) input wins unless only the right is smaller."""
        if right is None:
            return left
        l_present, l_key, l_index = left
        r_present, r_key, r_index = right
        suffix = f"s{stage}_{position // 2}"
        present = Signal(name=f"present_{suffix}")
        key = Signal.like(l_key, name=f"key_{suffix}")
        index = Signal(range(self.config.slots), name=f"index_{suffix}")
        take_right = Signal(name=f"take_right_{suffix}")
        m.d.comb += [
            take_right.eq(r_present & (~l_present | (r_key < l_key))),
            present.eq(l_present | r_present),
            key.eq(Mux(take_right, r_key, l_key)),
            index.eq(Mux(take_right, r_index, l_index)),
        ]
        return present, key, index
