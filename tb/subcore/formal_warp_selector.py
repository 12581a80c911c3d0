"""Formal harness of ``subcore.warp_selector``: the choice is a ready slot with a minimal key."""

from amaranth import Cat, Elaboratable, Module, Mux
from amaranth.asserts import AnySeq
from amaranth.hdl import Assert, Cover

from gpurf.hw.subcore.warp_selector import WarpSelector

__all__ = ["WarpSelectorFormal"]


class WarpSelectorFormal(Elaboratable):
    """For any slot vector and greedy slot: ``grant_valid`` iff some slot is ready; the
    granted slot is ready; under GTO/``rba_greedy`` a ready greedy slot is granted; otherwise
    no ready slot has a smaller key, nor an equal key at a lower index.
    """

    def __init__(self, *, block=WarpSelector, **params):
        self.dut = block(**params)

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = dut = self.dut
        config = dut.config
        m.d.comb += [
            dut.slot.eq(AnySeq(len(dut.slot.as_value()))),
            dut.greedy.eq(AnySeq(len(dut.greedy))),
            dut.greedy_valid.eq(AnySeq(1)),
        ]
        ready = [dut.slot[i].valid & dut.slot[i].ready for i in range(config.slots)]
        keys = [self._key(dut.slot[i]) for i in range(config.slots)]
        granted = dut.slot[dut.grant]
        granted_key = self._key(granted)
        m.d.comb += Assert(dut.grant_valid == Cat(*ready).any())
        with m.If(dut.grant_valid):
            m.d.comb += Assert(granted.valid & granted.ready)
            greedy_ready = (dut.greedy_valid & dut.slot[dut.greedy].valid
                            & dut.slot[dut.greedy].ready)
            if config.uses_greedy:
                with m.If(greedy_ready):
                    m.d.comb += Assert(dut.grant == dut.greedy)
                minimal = ~greedy_ready
            else:
                minimal = 1
            with m.If(minimal):
                for i in range(config.slots):
                    with m.If(ready[i]):
                        m.d.comb += Assert((granted_key < keys[i])
                                           | ((granted_key == keys[i]) & (dut.grant <= i)))
        # The events: a tie on the full key won by the lower index, a greedy override.
        ties = Cat(ready[i] & ready[j] & (keys[i] == keys[j]) & (dut.grant == i)
                   for i in range(config.slots) for j in range(i + 1, config.slots))
        m.d.comb += Cover(ties.any() & ~dut.greedy_valid, "key_tie")
        if config.policy == "rba":
            # Equal scores, different ages: the age decides.
            first, second = dut.slot[0], dut.slot[1]
            m.d.comb += Cover(ready[0] & ready[1] & (first.score == second.score)
                              & (first.age != second.age) & ~dut.greedy_valid
                              & (dut.grant == Mux(first.age > second.age, 0, 1)), "score_tie")
        if config.uses_greedy:
            m.d.comb += Cover(dut.grant_valid & dut.greedy_valid & (dut.grant == dut.greedy)
                              & (dut.greedy != 0), "greedy_override")
        return m

    def _key(self, slot):
        if self.dut.config.policy == "rba":
            return slot.score.as_unsigned() * (1 << self.dut.config.age_bits) + ~slot.age
        return (~slot.age).as_unsigned()
