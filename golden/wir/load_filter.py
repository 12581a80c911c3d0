"""Golden model of ``wir.load_filter``, written from the paper's Section VI-A: per warp the set
of memory spaces it stored to since its block's last barrier, per block its barrier count."""

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import LoadFilterConfig
from gpurf.hw.wir.layouts import LoadKind

__all__ = ["LoadFilter", "load_answer"]

_SHARED, _GLOBAL = LoadKind.SHARED.value, LoadKind.GLOBAL.value


def load_answer(kind: int, stored: set[str], tb: int, count: int, *, saturated: int,
                null_tbid: int) -> dict:
    """``{reuse, tbid, barrier}`` for an instruction of ``kind`` whose warp stored to the
    spaces ``stored`` and whose block ``tb`` has passed ``count`` barriers."""
    if kind == _SHARED:
        return {"reuse": int("shared" not in stored and count != saturated), "tbid": tb,
                "barrier": count}
    if kind == _GLOBAL:
        return {"reuse": int("global" not in stored and count != saturated),
                "tbid": null_tbid, "barrier": count}
    return {"reuse": 1, "tbid": null_tbid, "barrier": 0}


class LoadFilter(PortModel, config=LoadFilterConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's answer, then takes the edge
    (barrier and launch clear their warps' flags and set the counter — launch wins — and a
    store then marks its warp).

    :meth:`answer` and :meth:`advance` are the same behaviour on Python values (a
    composition's parts call them without packing their ports)."""

    def reset(self):
        self.stored: list[set[str]] = [set() for _ in range(self.config.warps)]
        self.counts = [0] * self.config.blocks
        self._last: dict | None = None

    def answer(self, warp: int, tb: int, kind: int) -> dict:
        """The answer to a query (state as at the start of the cycle)."""
        config = self.config
        return load_answer(kind, self.stored[warp], tb, self.counts[tb],
                           saturated=config.saturated, null_tbid=config.null_tbid)

    def advance(self, *, store=None, barrier=None, launch=None) -> None:
        """The clock edge: ``barrier`` and ``launch`` (structs of ``tb`` and the ``warps``
        bit mask) and then ``store`` (``warp``, ``shared``, ``global_``); ``None`` for an
        event that is not valid."""
        if barrier is not None:
            self.counts[barrier.tb] = min(self.counts[barrier.tb] + 1, self.config.saturated)
            self._clear(barrier.warps)
        if launch is not None:
            self.counts[launch.tb] = 0
            self._clear(launch.warps)
        if store is not None:
            if store.shared:
                self.stored[store.warp].add("shared")
            if store.global_:
                self.stored[store.warp].add("global")

    def _clear(self, warps: int) -> None:
        """Clear the store flags of the warps set in the bit mask ``warps``."""
        for w, stored in enumerate(self.stored):
            if warps >> w & 1:
                stored.clear()

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        query = ports["query"].unpack(inputs["query"])
        answer = self.answer(query.warp, query.tb, query.kind)
        self._last = answer
        self.advance(
            store=(ports["store__payload"].unpack(inputs["store__payload"])
                   if inputs["store__valid"] else None),
            barrier=(ports["barrier__payload"].unpack(inputs["barrier__payload"])
                     if inputs["barrier__valid"] else None),
            launch=(ports["launch__payload"].unpack(inputs["launch__payload"])
                    if inputs["launch__valid"] else None))
        return {"answer": ports["answer"].pack(answer)}

    def line_trace(self) -> str:
        return (f"load_filter: answer={self._last} counts={self.counts} "
                f"stored={self.stored}")
