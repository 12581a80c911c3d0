"""Golden model of ``wir.reuse_buffer``, written from the paper (V-C, V-D, V-E, VI-B) and the
spec: a list of entries, each ``None`` (invalid) or a dict ``{tag, result, pending}``."""

from amaranth.lib import data

from gpurf.hw.wir.reuse_buffer import ReuseBufferConfig

__all__ = ["ReuseBuffer", "fold_index"]


def fold_index(tag_bits: int, tag_width: int, index_bits: int) -> int:
    """Spec: the entry index is the XOR of the packed tag's ``index_bits``-bit chunks
    (the first chunk holds the least significant bits)."""
    index, mask = 0, (1 << index_bits) - 1
    for shift in range(0, tag_width, index_bits):
        index ^= (tag_bits >> shift) & mask
    return index


class ReuseBuffer:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Lookups and fills see the buffer as it was at the start of the cycle. A divergent or
    bypassed lookup, or one with an operand that does not fit ``preg_bits``, leaves the
    buffer alone. Otherwise: equal tag and filled -> hit (a miss if ``result_saturated``);
    equal tag and pending -> pending hit; else a miss reserves the entry (unless
    ``low_reg``, which evicts it, or ``operand_saturated``). In low-register mode a cycle
    without a lookup evicts entry ``cycle mod entries``. A fill completes the pending entry
    at its index if the tag is the fill's and the lookup did not write that entry.
    """

    def __init__(self, **params):
        self.config = ReuseBufferConfig(**params)
        self.reset()

    def reset(self):
        self.entries: list[dict | None] = [None] * self.config.entries
        self.cycle = 0
        self._trace = ""

    def _tag(self, payload) -> tuple[int, bool]:
        """The packed tag of a lookup and whether every operand value fits the field."""
        config = self.config
        operands = [int(payload.operand[k]) for k in range(3)]
        fits = all(value < (1 << config.preg_bits) for value in operands)
        tag = config.tag_layout.const({
            "opcode": payload.opcode,
            "operand": [value & ((1 << config.preg_bits) - 1) for value in operands],
            "tbid": int(payload.tbid), "barrier": int(payload.barrier),
        }).as_value().value
        return tag, fits

    def _refs(self, tag: int) -> list[int | None]:
        """The register operands a tag references, ``None`` for an immediate slot."""
        view = self.config.tag_layout.from_bits(tag)
        regs = int(view.opcode.regs)
        return [int(view.operand[k]) if (regs >> k) & 1 else None for k in range(3)]

    def _lookup(self, inputs):
        """The lookup's plan from the start-of-cycle state: ``(response, probe, incs,
        written, new)``: the answer (``None`` without a lookup), the probed result register,
        ``inc[0..3]``, the entry index the lookup writes (or ``None``) and what it writes
        there (a reserved entry, or ``None`` for an eviction)."""
        config = self.config
        payload = config.lookup_layout.from_bits(inputs["lookup__payload"])
        tag, fits = self._tag(payload)
        index = fold_index(tag, config.tag_layout.size, config.index_bits)
        incs = [None] * 4
        if not inputs["lookup__valid"]:
            written = self.cycle % config.entries if inputs["low_reg"] else None
            return None, None, incs, written, None
        response = {"hit": 0, "pending": 0, "reserved": 0, "index": index, "result": 0}
        entry = self.entries[index]
        probe = entry["result"] if entry is not None and not entry["pending"] else None
        if payload.divergent or payload.bypass or not fits:
            return response, probe, incs, None, None
        if entry is not None and entry["tag"] == tag:
            if entry["pending"]:
                response["pending"] = 1
                return response, probe, incs, None, None
            if not inputs["result_saturated"]:
                response.update(hit=1, result=entry["result"])
                incs[3] = entry["result"]
                return response, probe, incs, None, None
        if inputs["low_reg"]:
            return response, probe, incs, index, None
        if inputs["operand_saturated"]:
            return response, probe, incs, None, None
        response["reserved"] = 1
        incs[:3] = self._refs(tag)
        return response, probe, incs, index, {"tag": tag, "result": None, "pending": True}

    def _fill(self, inputs, written):
        """The entry index and result register of a fill that completes its entry."""
        if not inputs["fill__valid"]:
            return None
        view = self.config.fill_layout.from_bits(inputs["fill__payload"])
        index, tag = int(view.index), view.tag.as_value().value
        entry = self.entries[index]
        if index == written or entry is None or not entry["pending"] or entry["tag"] != tag:
            return None
        return index, int(view.result)

    def step(self, inputs: dict) -> dict:
        config = self.config
        response, probe, incs, written, new = self._lookup(inputs)
        fill = self._fill(inputs, written)
        decs = [None] * 4
        if written is not None:
            dropped = self.entries[written]
            if dropped is not None:
                decs[:3] = self._refs(dropped["tag"])
                decs[3] = None if dropped["pending"] else dropped["result"]
            self.entries[written] = new
        incs.append(None if fill is None else fill[1])
        if fill is not None:
            self.entries[fill[0]].update(result=fill[1], pending=False)
        self._trace = self._describe(response, incs, decs)
        self.cycle += 1
        return {
            "response__valid": inputs["lookup__valid"],
            "response__payload": (None if response is None else
                                  config.response_layout.const(response).as_value().value),
            "probe": probe,
            "inc": self._events(incs),
            "dec": self._events(decs),
        }

    def _events(self, pregs: list[int | None]) -> int:
        layout = data.ArrayLayout(self.config.ref_layout, len(pregs))
        return layout.const([{"valid": int(p is not None), "preg": p or 0}
                             for p in pregs]).as_value().value

    def _describe(self, response, incs, decs) -> str:
        held = " ".join(f"{i}:{e['tag']:#x}{'P' if e['pending'] else '>' + str(e['result'])}"
                        for i, e in enumerate(self.entries) if e is not None)
        return f"resp={response} inc={incs} dec={decs} entries[{held}]"

    def line_trace(self) -> str:
        return f"reuse_buffer: {self._trace}"
