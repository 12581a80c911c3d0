"""The setup every formal harness shares (``tb/<mechanism>/formal_<block>.py``).

A harness proves one block in a small configuration (:mod:`gpurf.sim.formal` runs it). What
the harnesses repeat lives here, in :class:`FormalHarness`:

- the block under proof, ``block`` (the component class by default, a mutant subclass from
  ``tb/<mechanism>/mutants.py`` to show the harness kills it) built from ``SMALL`` (the
  proof configuration) overridden by keyword parameters;
- a reset in the first cycle and none after (``Assume(ResetSignal() == Initial())``);
- free inputs (``AnySeq``): plain signals and views (:meth:`~FormalHarness.free`), whole
  streams (:meth:`~FormalHarness.free_streams`);
- the stream rule on an input, assumed (:meth:`~FormalHarness.assume_held`: an offer not
  taken stays, unchanged), and on an output, asserted (:meth:`~FormalHarness.assert_held`);
- assumptions that hold only while a port is valid (:meth:`~FormalHarness.assume_when`);
- the events the harness claims to exercise (:meth:`~FormalHarness.covers`).

Two guards say "not the reset cycle", and they are not interchangeable under k-induction:
``~ResetSignal()`` (:attr:`FormalHarness.running`) is exact in every step, since the reset
assumption ties the reset to ``Initial()``; :attr:`FormalHarness.after_reset` is a flip-flop
set after the first cycle, free (so possibly low) in the first step of an induction trace.
Each harness keeps the guard its proof was written with.
"""

from typing import ClassVar

from amaranth import Elaboratable, Module, ResetSignal, Signal, Value
from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cover

__all__ = ["FormalHarness", "popcount"]


def popcount(bits):
    """The number of set bits of ``bits``, as a sum of its one-bit slices."""
    return sum(bits[i] for i in range(len(bits)))


class FormalHarness(Elaboratable):
    """A block in a small configuration with its inputs free after a reset.

    Subclasses set ``block`` and ``SMALL`` and write :meth:`check`, which drives the
    block's inputs and states its assumptions, invariants and covers.

    Parameters
    ----------
    block : type, optional
        The component class to prove (default: the class attribute ``block``); a mutant
        subclass makes the proof fail.
    **params
        Block parameters overriding ``SMALL``.

    Attributes
    ----------
    dut : amaranth.lib.wiring.Component
        The block under proof.
    """

    block: ClassVar[type | None] = None
    """The component class proved by default."""
    SMALL: ClassVar[dict] = {}
    """The proof configuration (block parameters)."""
    RESET_FIRST = True
    """Assume a reset in the first cycle and none after; ``False`` for harnesses whose
    reference resets with the block whenever the reset input (free) is high."""

    def __init__(self, *, block=None, **params):
        self.dut = (block or self.block)(**self.configuration(params))

    def configuration(self, params):
        """The block's parameters: ``SMALL`` overridden by ``params``."""
        return {**self.SMALL, **params}

    def elaborate(self, platform):
        m = Module()
        m.submodules.dut = self.dut
        if self.RESET_FIRST:
            m.d.comb += Assume(ResetSignal() == Initial())
        self._module, self._after_reset = m, None
        self.check(m)
        return m

    def check(self, m):
        """Drive the block's inputs; state assumptions, invariants and covers in ``m``."""
        raise NotImplementedError

    @property
    def after_reset(self):
        """A flip-flop set after the first cycle (made on first use, so that a harness of a
        combinational block gets no clock)."""
        if self._after_reset is None:
            self._after_reset = Signal(name="after_reset")
            self._module.d.sync += self._after_reset.eq(1)
        return self._after_reset

    @property
    def running(self):
        """Not the reset cycle: ``~ResetSignal()``, exact under the reset assumption."""
        return ~ResetSignal()

    @staticmethod
    def free(m, *values):
        """Drive each of ``values`` (signals, views, arrays) with ``AnySeq`` of its width."""
        for value in values:
            bits = Value.cast(value)
            m.d.comb += bits.eq(AnySeq(len(bits)))

    @classmethod
    def free_streams(cls, m, *streams):
        """Free ``valid`` and ``payload`` of each input stream (or valid-only port)."""
        for stream in streams:
            cls.free(m, stream.valid, stream.payload)

    @classmethod
    def free_ready(cls, m, *streams):
        """Free ``ready`` of each output stream."""
        cls.free(m, *(stream.ready for stream in streams))

    def assume_held(self, m, valid, ready, payload, *, name="", guard=None):
        """The stream rule on an input, assumed: an offer not taken (``valid & ~ready``)
        is offered again next cycle with the same payload. ``guard`` (default
        :attr:`running`) restricts it; returns the "held from the last cycle" flip-flop."""
        stalled, before = self._last_offer(m, valid, ready, payload, name)
        with m.If(stalled & (self.running if guard is None else guard)):
            m.d.comb += Assume(valid & (Value.cast(payload) == before))
        return stalled

    def assert_held(self, m, valid, ready, payload, *, name="", guard=None):
        """The stream rule on an output, asserted (as :meth:`assume_held`); returns the
        "held from the last cycle" flip-flop."""
        stalled, before = self._last_offer(m, valid, ready, payload, name)
        with m.If(stalled & (self.running if guard is None else guard)):
            m.d.comb += [Assert(valid), Assert(Value.cast(payload) == before)]
        return stalled

    @staticmethod
    def _last_offer(m, valid, ready, payload, name):
        stalled = Signal(name=f"{name}_stalled" if name else None)
        before = Signal(len(Value.cast(payload)), name=f"{name}_before" if name else None)
        m.d.sync += [stalled.eq(valid & ~ready), before.eq(payload)]
        return stalled, before

    @staticmethod
    def assume_when(m, rules):
        """For each ``(condition, rule)``: assume ``rule`` in the cycles ``condition``
        holds (a payload field constrained only while its port is valid)."""
        for condition, rule in rules:
            with m.If(condition):
                m.d.comb += Assume(rule)

    @staticmethod
    def covers(m, events, *, guard=None):
        """A ``Cover`` per ``(condition, event)``, each AND ``guard`` when given; the event
        names the cover (:func:`gpurf.sim.formal.name_covers`)."""
        m.d.comb += [Cover(condition if guard is None else guard & condition, event)
                     for condition, event in events]
