"""The formal flow itself: covers named by event, reached and unreached ones reported."""

import pytest
from amaranth import Elaboratable, Module, ResetSignal, Signal
from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assume, Cover

from gpurf.sim.formal import missing_solver, prove


class Counter(Elaboratable):
    """A 4-bit counter that counts when told, with covers at 3 and (unreachable) 20."""

    def __init__(self, unreachable=False):
        self.unreachable = unreachable

    def elaborate(self, platform):
        m = Module()
        count = Signal(5)
        m.d.comb += Assume(ResetSignal() == Initial())
        with m.If(AnySeq(1) & (count < 15)):
            m.d.sync += count.eq(count + 1)
        m.d.comb += Cover(count == 3, "three")
        if self.unreachable:
            m.d.comb += Cover(count == 20, "twenty")
        return m


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_cover_reports_reached_and_unreached_events():
    reached = prove(Counter(), name="counter_cover", depth=6, mode="cover")
    assert reached.passed and reached.covers == ("three",) and reached.reached["three"] >= 3
    missed = prove(Counter(unreachable=True), name="counter_cover_miss", depth=6, mode="cover")
    assert not missed.passed and missed.unreached == ("twenty",)


def test_cover_messages_must_be_unique_identifiers():
    class Named(Elaboratable):
        def __init__(self, *names):
            self.names = names

        def elaborate(self, platform):
            m = Module()
            flag = Signal()
            m.d.sync += flag.eq(~flag)
            for name in self.names:
                m.d.comb += Cover(flag, name)
            return m

    for names in (("two words",), ("same", "same")):
        with pytest.raises(ValueError, match="cover"):
            prove(Named(*names), name="named_cover", mode="cover", depth=1)
