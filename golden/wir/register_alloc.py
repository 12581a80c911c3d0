"""Golden model of ``wir.register_alloc``, from the paper's Sections V-A, V-D and VII-E:
the golden H3 hash and value signature buffer behind a two-cycle pipeline (hash, table)."""

from collections import deque
from functools import cached_property

from gpurf.golden.model import PortModel
from gpurf.hw.ports import codec
from gpurf.hw.wir.configs import RegisterAllocConfig
from gpurf.hw.wir.layouts import AllocKind

from .h3_hash import h3
from .value_signature_buffer import ValueSignatureBuffer

__all__ = ["RegisterAlloc", "request"]


def request(result, hash_value: int, vsb_hit: tuple[int, int] | None,
            saturated: bool) -> dict:
    """The allocation request for ``result`` (its ``divergent`` flag, destination entry
    ``dst`` and ``ticket``, as a dict) with hash ``hash_value``, given the VSB's answer
    ``(hit, preg)`` (``None``: not looked up) and whether the hit register's count is
    saturated (paper V-A, V-D)."""
    dst = result["dst"]
    if result["divergent"] and dst.valid and dst.pin:
        kind, preg = AllocKind.PINNED, dst.preg
    elif vsb_hit is not None and vsb_hit[0] and not saturated:
        kind, preg = AllocKind.VERIFY, vsb_hit[1]
    else:
        kind, preg = AllocKind.ALLOCATE, 0
    return {"kind": kind, "preg": preg, "hash": hash_value,
            "divergent": result["divergent"], "ticket": result["ticket"]}


class RegisterAlloc(PortModel, config=RegisterAllocConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    ``pipe`` holds the results hashed in the last two cycles (``None`` for an empty slot):
    ``pipe[0]`` is in the table cycle, ``pipe[1]`` leaves on ``out`` this cycle. The VSB
    model is driven through :meth:`ValueSignatureBuffer.advance`, on Python values.
    """

    @cached_property
    def vsb(self) -> ValueSignatureBuffer:
        return ValueSignatureBuffer(**self.config.vsb.params())

    def reset(self):
        config = self.config
        self.vsb.reset()
        self.masks = config.hash.masks
        self.values = codec(config.value_layout)
        """Packs a result's lanes into the hash input."""
        self.pipe: deque = deque([None, None], maxlen=2)
        self._last = None

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        table = self.pipe[0]
        looks_up = table is not None and not table["divergent"]
        vsb = self.vsb.advance(
            table["hash"] if looks_up else None,
            install=(ports["install__payload"].unpack(inputs["install__payload"])
                     if inputs["install__valid"] else None),
            evict=(ports["evict__payload"].unpack(inputs["evict__payload"])
                   if inputs["evict__valid"] else None))
        leaving, vsb_hit = self.pipe[1], vsb["result"]
        out = None
        if leaving is not None:
            out = ports["out__payload"].pack(request(leaving, leaving["hash"], vsb_hit,
                                                     bool(inputs["hit_saturated"])))
        hashed = None
        if inputs["result__valid"]:
            result = ports["result__payload"].unpack(inputs["result__payload"])
            hashed = {"hash": h3(self.values.pack(result.value), self.masks),
                      "divergent": result.divergent, "dst": result.dst,
                      "ticket": result.ticket}
        self._last = (table, leaving, vsb_hit)
        self.pipe.appendleft(hashed)
        return {
            "out__valid": int(leaving is not None),
            "out__payload": out,
            "probe": ports["probe"].pack(vsb_hit[1] if vsb_hit else 0),
            "evict__ready": int(vsb["evict_ready"]),
            "ref_inc": self.vsb.event(vsb["inc"]),
            "ref_dec": self.vsb.event(vsb["dec"]),
        }

    def line_trace(self) -> str:
        table, leaving, vsb_hit = self._last or (None, None, None)
        return (f"register_alloc: table={table} leaving={leaving} vsb={vsb_hit} "
                f"{self.vsb.line_trace()}")
