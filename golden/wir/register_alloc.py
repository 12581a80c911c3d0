"""Golden model of ``wir.register_alloc``, from the paper's Sections V-A, V-D and VII-E:
the golden H3 hash and value signature buffer behind a two-cycle pipeline (hash, table)."""

from collections import deque

from gpurf.hw.wir.layouts import AllocKind
from gpurf.hw.wir.register_alloc import RegisterAllocConfig

from .h3_hash import H3Hash
from .value_signature_buffer import ValueSignatureBuffer

__all__ = ["RegisterAlloc", "request"]


def request(result: dict, hash_value: int, vsb_hit: tuple[int, int] | None,
            saturated: bool) -> dict:
    """The allocation request for ``result`` (its ``divergent`` flag and destination entry
    ``dst``) with hash ``hash_value``, given the VSB's answer ``(hit, preg)`` (``None``:
    not looked up) and whether the hit register's count is saturated (paper V-A, V-D)."""
    dst = result["dst"]
    if result["divergent"] and dst.valid and dst.pin:
        kind, preg = AllocKind.PINNED, int(dst.preg)
    elif vsb_hit is not None and vsb_hit[0] and not saturated:
        kind, preg = AllocKind.VERIFY, vsb_hit[1]
    else:
        kind, preg = AllocKind.ALLOCATE, 0
    return {"kind": kind, "preg": preg, "hash": hash_value,
            "divergent": int(result["divergent"]), "ticket": result["ticket"]}


class RegisterAlloc:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    ``pipe`` holds the results hashed in the last two cycles (``None`` for an empty slot):
    ``pipe[0]`` is in the table cycle, ``pipe[1]`` leaves on ``out`` this cycle.
    """

    def __init__(self, **params):
        self.config = config = RegisterAllocConfig(**params)
        self.hash = H3Hash(width_in=config.hash.width_in, width_out=config.hash_width,
                           seed=config.seed, matrix=config.matrix)
        self.vsb = ValueSignatureBuffer(entries=config.entries, hash_width=config.hash_width,
                                        pregs=config.pregs)
        self.reset()

    def reset(self):
        self.hash.reset()
        self.vsb.reset()
        self.pipe: deque = deque([None, None], maxlen=2)
        self._trace = ""

    def step(self, inputs: dict) -> dict:
        config = self.config
        result = config.result_layout.from_bits(inputs["result__payload"])
        hash_value = self.hash.step({"value": result.value.as_value().value})["hash"]
        table = self.pipe[0]
        looks_up = table is not None and not table["divergent"]
        vsb_out = self.vsb.step({
            "lookup__valid": int(looks_up),
            "lookup__payload": table["hash"] if looks_up else 0,
            **{name: inputs[name] for name in ("install__valid", "install__payload",
                                               "evict__valid", "evict__payload")}})
        leaving = self.pipe[1]
        vsb_hit = None
        if vsb_out["result__valid"]:
            view = config.vsb.result_layout.from_bits(vsb_out["result__payload"])
            vsb_hit = (int(view.hit), int(view.preg))
        out = None
        if leaving is not None:
            out = config.request_layout.const(request(
                leaving, leaving["hash"], vsb_hit, bool(inputs["hit_saturated"]))
            ).as_value().value
        self._trace = f"pipe={list(self.pipe)} vsb={vsb_hit} {self.vsb.line_trace()}"
        self.pipe.appendleft(None if not inputs["result__valid"] else {
            "hash": hash_value, "divergent": int(result.divergent), "dst": result.dst,
            "ticket": int(result.ticket)})
        return {
            "out__valid": int(leaving is not None),
            "out__payload": out,
            "probe": vsb_hit[1] if vsb_hit else 0,
            "evict__ready": vsb_out["evict__ready"],
            "ref_inc": vsb_out["ref_inc"],
            "ref_dec": vsb_out["ref_dec"],
        }

    def line_trace(self) -> str:
        return f"register_alloc: {self._trace}"
