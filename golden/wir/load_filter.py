"""Golden model of ``wir.load_filter``, written from the paper's Section VI-A: per warp the set
of memory spaces it stored to since its block's last barrier, per block its barrier count."""

from gpurf.hw.wir.layouts import LoadKind
from gpurf.hw.wir.load_filter import LoadFilterConfig

__all__ = ["LoadFilter", "load_answer"]


def load_answer(kind: int, stored: set[str], tb: int, count: int, *, saturated: int,
                null_tbid: int) -> dict:
    """``{reuse, tbid, barrier}`` for an instruction of ``kind`` whose warp stored to the
    spaces ``stored`` and whose block ``tb`` has passed ``count`` barriers."""
    if kind == LoadKind.SHARED.value:
        return {"reuse": int("shared" not in stored and count != saturated), "tbid": tb,
                "barrier": count}
    if kind == LoadKind.GLOBAL.value:
        return {"reuse": int("global" not in stored and count != saturated),
                "tbid": null_tbid, "barrier": count}
    return {"reuse": 1, "tbid": null_tbid, "barrier": 0}


class LoadFilter:
    """Port-level model: ``step(inputs)`` returns this cycle's answer, then takes the edge
    (barrier and launch clear their warps' flags and set the counter — launch wins — and a
    store then marks its warp)."""

    def __init__(self, **params):
        self.config = LoadFilterConfig(**params)
        self.reset()

    def reset(self):
        self.stored: list[set[str]] = [set() for _ in range(self.config.warps)]
        self.counts = [0] * self.config.blocks
        self._trace = ""

    def _block_event(self, bits: int) -> tuple[int, list[int]]:
        view = self.config.block_layout.from_bits(bits)
        warps = int(view.warps)
        return int(view.tb), [w for w in range(self.config.warps) if (warps >> w) & 1]

    def step(self, inputs: dict) -> dict:
        config = self.config
        query = config.query_layout.from_bits(inputs["query"])
        tb = int(query.tb)
        answer = load_answer(query.kind.value, self.stored[int(query.warp)], tb,
                             self.counts[tb], saturated=config.saturated,
                             null_tbid=config.null_tbid)
        self._trace = f"answer={answer} counts={self.counts} stored={self.stored}"
        if inputs["barrier__valid"]:
            block, warps = self._block_event(inputs["barrier__payload"])
            self.counts[block] = min(self.counts[block] + 1, config.saturated)
            for w in warps:
                self.stored[w].clear()
        if inputs["launch__valid"]:
            block, warps = self._block_event(inputs["launch__payload"])
            self.counts[block] = 0
            for w in warps:
                self.stored[w].clear()
        if inputs["store__valid"]:
            store = config.store_layout.from_bits(inputs["store__payload"])
            for space in ("shared", "global"):
                if store[space]:
                    self.stored[int(store.warp)].add(space)
        return {"answer": config.answer_layout.const(answer).as_value().value}

    def line_trace(self) -> str:
        return f"load_filter: {self._trace}"
