"""Formal harness of ``subcore.warp_selector``: the choice is a ready slot with a minimal key."""

from amaranth import Cat, Mux
from amaranth.hdl import Assert

from gpurf.hw.subcore.warp_selector import WarpSelector

from ..formal_base import FormalHarness

__all__ = ["WarpSelectorFormal"]


class WarpSelectorFormal(FormalHarness):
    """For any slot vector and greedy slot: ``grant_valid`` iff some slot is ready; the
    granted slot is ready; under GTO/``rba_greedy`` a ready greedy slot is granted; otherwise
    no ready slot has a smaller key, nor an equal key at a lower index.
    """

    block = WarpSelector
    RESET_FIRST = False

    def check(self, m):
        dut = self.dut
        config = dut.config
        self.free(m, dut.slot, dut.greedy, dut.greedy_valid)
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
        events = [(ties.any() & ~dut.greedy_valid, "key_tie")]
        if config.policy == "rba":
            # Equal scores, different ages: the age decides.
            first, second = dut.slot[0], dut.slot[1]
            events.append((ready[0] & ready[1] & (first.score == second.score)
                           & (first.age != second.age) & ~dut.greedy_valid
                           & (dut.grant == Mux(first.age > second.age, 0, 1)), "score_tie"))
        if config.uses_greedy:
            events.append((dut.grant_valid & dut.greedy_valid & (dut.grant == dut.greedy)
                           & (dut.greedy != 0), "greedy_override"))
        self.covers(m, events)

    def _key(self, slot):
        if self.dut.config.policy == "rba":
            return slot.score.as_unsigned() * (1 << self.dut.config.age_bits) + ~slot.age
        return (~slot.age).as_unsigned()
