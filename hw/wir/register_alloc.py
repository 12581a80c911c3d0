"""WIR's register-allocation stage composed: H3 hash, then VSB lookup (paper V-A, V-D,
VII-E, Figs. 5, 6)."""

import functools

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, wiring

from gpurf.hw.params import ConfiguredComponent

from .configs import RegisterAllocConfig
from .h3_hash import H3Hash
from .layouts import AllocKind
from .value_signature_buffer import ValueSignatureBuffer

__all__ = ["RegisterAlloc", "RegisterAllocConfig"]


class RegisterAlloc(ConfiguredComponent, config=RegisterAllocConfig):
    """The register-allocation stage of WIR, two cycles (paper VII-E: hash generation,
    then table access). Sub-blocks: ``wir.h3_hash`` (``hash``) and
    ``wir.value_signature_buffer`` (``vsb``).

    **Pipeline** (a result entering in cycle ``t`` leaves on ``out`` in cycle ``t + 2``:
    2 added cycles):

    - Cycle ``t``, hash: the H3 hash of ``result.payload.value`` (a pure XOR network) is
      registered with the rest of the result (the stage register).
    - Cycle ``t + 1``, table: a convergent result looks the VSB up with the registered
      hash (a synchronous memory read; its read register ends the stage); a divergent
      result does not look up (paper V-D).
    - Cycle ``t + 2``: ``out`` shows the request, combinationally from the VSB's read
      register (one 32-bit tag compare): ``VERIFY`` the hit's register ``preg`` (a
      verify-read, to the verify cache and the banks); ``ALLOCATE`` a new register (a VSB
      miss, a hit whose register count is saturated — ``hit_saturated``, the pool's answer
      for ``probe`` — or a divergent result whose destination is not pinned); ``PINNED``:
      a divergent result whose destination entry (``dst``, read at rename) is valid and
      pinned is written in place to ``dst.preg``.

    **Installs are the consumer's** (the register pool is outside): after allocating the
    new register for a convergent ``ALLOCATE`` (or after a verify-read mismatch, a hash
    collision) it installs ``{hash, new}`` through ``install``; ``evict`` is the
    low-register mode's. Both go straight to the VSB, whose reference events come out on
    ``ref_inc`` / ``ref_dec`` (latency 0). A divergent result is never installed (the VSB
    ignores a ``divergent`` install).

    Attributes
    ----------
    result : In(valid_only(result_layout))
        ``value``, ``divergent``, ``dst`` (rename entry), ``ticket``.
    out : Out(valid_only(request_layout))
        ``kind``, ``preg``, ``hash``, ``divergent``, ``ticket``.
    probe : Out(preg_bits)
        The VSB hit's register (0 on a miss), for the pool's saturation query.
    hit_saturated : In(1)
        The count of ``probe`` is saturated: the hit is treated as a miss.
    install : In(valid_only(vsb install_layout))
        ``hash``, ``preg``, ``divergent``.
    evict : In(stream.Signature(range(entries)))
        A VSB entry to invalidate.
    ref_inc, ref_dec : Out(preg_ref_layout)
        The VSB's reference events.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        self.pipe = Signal(data.ArrayLayout(config.stage_layout, 2))
        """The two pipeline registers (hashed, looked up), oldest last (a formal harness
        states their contents)."""

    @functools.cached_property
    def h3(self) -> H3Hash:
        """The hash generation unit (first cycle); built on first use, so that a component
        only inspected for its ports leaves no unused sub-block behind."""
        return H3Hash(**self.config.hash.params())

    @functools.cached_property
    def vsb(self) -> ValueSignatureBuffer:
        """The value signature buffer (second cycle)."""
        return ValueSignatureBuffer(**self.config.vsb.params())

    def elaborate(self, platform):
        config = self.config
        m = Module()
        m.submodules.hash = h3 = self.h3
        m.submodules.vsb = vsb = self.vsb
        wiring.connect(m, wiring.flipped(self.install), vsb.install)
        wiring.connect(m, wiring.flipped(self.evict), vsb.evict)
        m.d.comb += [self.ref_inc.eq(vsb.ref_inc), self.ref_dec.eq(vsb.ref_dec),
                     h3.value.eq(self.result.payload.value)]
        stage = config.stage_layout
        hashing = Signal(stage)
        m.d.comb += [hashing.valid.eq(self.result.valid), hashing.hash.eq(h3.hash),
                     hashing.divergent.eq(self.result.payload.divergent),
                     hashing.dst.eq(self.result.payload.dst),
                     hashing.ticket.eq(self.result.payload.ticket)]
        # Both pipeline registers in one shift register: a register fed only by another
        # register would start as X on Icarus (its process never runs before the first edge).
        pipe = self.pipe
        m.d.sync += pipe.eq(Cat(hashing.as_value(), pipe[0].as_value()))
        hashed, looked = pipe[0], pipe[1]
        m.d.comb += [vsb.lookup.valid.eq(hashed.valid & ~hashed.divergent),
                     vsb.lookup.payload.eq(hashed.hash)]
        self._request(m, looked, vsb.result)
        return m

    def _request(self, m, looked, answer):
        """``out`` from the VSB's answer and the carried fields."""
        hit, pinned = Signal(), Signal()
        m.d.comb += [
            self.probe.eq(Mux(answer.valid, answer.payload.preg, 0)),
            hit.eq(answer.valid & answer.payload.hit & ~self.hit_saturated),
            pinned.eq(looked.divergent & looked.dst.valid & looked.dst.pin),
            self.out.valid.eq(looked.valid),
        ]
        kind = Mux(pinned, AllocKind.PINNED, Mux(hit, AllocKind.VERIFY, AllocKind.ALLOCATE))
        preg = Mux(pinned, looked.dst.preg, Mux(hit, answer.payload.preg, 0))
        m.d.comb += self.out.payload.eq(_whole(self.config.request_layout, {
            "kind": kind, "preg": preg, "hash": looked.hash, "divergent": looked.divergent,
            "ticket": looked.ticket}))


def _whole(layout: data.StructLayout, fields: dict):
    """The struct ``layout`` built from ``fields`` as one value (fields in layout order).

    One assignment of the whole payload becomes a continuous ``assign`` in the Verilog;
    field-by-field assignments become processes that Icarus never runs when their inputs
    are registers that keep their initial value (the output would stay X).
    """
    parts = []
    for name, field in layout:
        value = Value.cast(fields[name])
        assert len(value) <= field.width, (name, len(value), field.width)
        parts.append(value.as_unsigned() | Const(0, field.width))
    return Cat(*parts)
