"""WIR's register-allocation stage composed: H3 hash, then VSB lookup (paper V-A, V-D,
VII-E, Figs. 5, 6)."""

import functools
from dataclasses import dataclass

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.params import check_int
from gpurf.hw.signatures import valid_only

from .h3_hash import H3Hash, H3HashConfig
from .layouts import (
    AllocKind,
    alloc_request_layout,
    alloc_result_layout,
    alloc_stage_layout,
    preg_ref_layout,
)
from .value_signature_buffer import ValueSignatureBuffer, ValueSignatureBufferConfig

__all__ = ["RegisterAlloc", "RegisterAllocConfig"]


@dataclass(frozen=True)
class RegisterAllocConfig:
    """Validated parameters of the stage and its sub-blocks' configs."""

    lanes: int
    data_width: int
    hash_width: int
    seed: int
    matrix: object
    entries: int
    pregs: int
    ticket_bits: int

    def __post_init__(self):
        check_int("lanes", self.lanes, 1, 32)
        check_int("data_width", self.data_width, 1, 32)
        check_int("ticket_bits", self.ticket_bits, 1, 256)
        hash_ = H3HashConfig(width_in=self.lanes * self.data_width, width_out=self.hash_width,
                             seed=self.seed, matrix=self.matrix)
        vsb = ValueSignatureBufferConfig(entries=self.entries, hash_width=self.hash_width,
                                         pregs=self.pregs)
        object.__setattr__(self, "hash", hash_)
        object.__setattr__(self, "vsb", vsb)

    @property
    def preg_bits(self) -> int:
        return self.vsb.preg_bits

    @property
    def result_layout(self):
        return alloc_result_layout(lanes=self.lanes, data_width=self.data_width,
                                   preg_bits=self.preg_bits, ticket_bits=self.ticket_bits)

    @property
    def request_layout(self):
        return alloc_request_layout(hash_width=self.hash_width, preg_bits=self.preg_bits,
                                    ticket_bits=self.ticket_bits)


class RegisterAlloc(wiring.Component):
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

    Parameters
    ----------
    lanes, data_width : int
        The value: ``lanes`` x ``data_width`` bits, 1..32 each (default 32 x 32 = 1024).
    hash_width : int
        Hash bits, 1..64, at least ``log2(entries)`` (default 32).
    seed : int
        Seed of the H3 matrix (default 0).
    matrix : sequence of int, optional
        A chosen H3 matrix (default ``None``: seeded), e.g. to force collisions.
    entries : int
        VSB entries, a power of two 2..4096 (default 256).
    pregs : int
        Physical warp registers, 2..4096 (default 1024).
    ticket_bits : int
        Bits of the opaque ``ticket`` carried along, 1..256 (default 32).

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

    def __init__(self, *, lanes=32, data_width=32, hash_width=32, seed=0, matrix=None,
                 entries=256, pregs=1024, ticket_bits=32):
        self.config = config = RegisterAllocConfig(
            lanes=lanes, data_width=data_width, hash_width=hash_width, seed=seed,
            matrix=matrix, entries=entries, pregs=pregs, ticket_bits=ticket_bits)
        ref = preg_ref_layout(preg_bits=config.preg_bits)
        super().__init__({
            "result": In(valid_only(config.result_layout)),
            "out": Out(valid_only(config.request_layout)),
            "probe": Out(config.preg_bits),
            "hit_saturated": In(1),
            "install": In(valid_only(config.vsb.install_layout)),
            "evict": In(stream.Signature(range(entries))),
            "ref_inc": Out(ref),
            "ref_dec": Out(ref),
        })

    @functools.cached_property
    def h3(self) -> H3Hash:
        """The hash generation unit (first cycle); built on first use, so that a component
        only inspected for its ports leaves no unused sub-block behind."""
        c = self.config
        return H3Hash(width_in=c.hash.width_in, width_out=c.hash_width, seed=c.seed,
                      matrix=c.matrix)

    @functools.cached_property
    def vsb(self) -> ValueSignatureBuffer:
        """The value signature buffer (second cycle)."""
        c = self.config
        return ValueSignatureBuffer(entries=c.entries, hash_width=c.hash_width, pregs=c.pregs)

    def elaborate(self, platform):
        config = self.config
        m = Module()
        m.submodules.hash = h3 = self.h3
        m.submodules.vsb = vsb = self.vsb
        wiring.connect(m, wiring.flipped(self.install), vsb.install)
        wiring.connect(m, wiring.flipped(self.evict), vsb.evict)
        m.d.comb += [self.ref_inc.eq(vsb.ref_inc), self.ref_dec.eq(vsb.ref_dec),
                     h3.value.eq(self.result.payload.value)]
        stage = alloc_stage_layout(hash_width=config.hash_width, preg_bits=config.preg_bits,
                                   ticket_bits=config.ticket_bits)
        hashing = Signal(stage)
        m.d.comb += [hashing.valid.eq(self.result.valid), hashing.hash.eq(h3.hash),
                     hashing.divergent.eq(self.result.payload.divergent),
                     hashing.dst.eq(self.result.payload.dst),
                     hashing.ticket.eq(self.result.payload.ticket)]
        # Both pipeline registers in one shift register: a register fed only by another
        # register would start as X on Icarus (its process never runs before the first edge).
        pipe = Signal(data.ArrayLayout(stage, 2))
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
