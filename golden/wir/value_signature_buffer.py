"""Golden model of ``wir.value_signature_buffer``, from the paper's Section V-A: a
direct-indexed map from result hashes to the physical registers holding those values."""

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import ValueSignatureBufferConfig

__all__ = ["ValueSignatureBuffer"]


class ValueSignatureBuffer(PortModel, config=ValueSignatureBufferConfig):
    """Port-level model. ``entries`` maps an index to ``(hash, preg)`` (absent = invalid).

    A lookup answers one cycle later from the table as it was when it was looked up; an
    install (not divergent) replaces the entry of its index, referencing its register and
    releasing the displaced one; an evict (taken when no install is offered) drops an entry
    and releases its register.
    """

    def reset(self):
        self.entries: dict[int, tuple[int, int]] = {}
        self.answer: tuple[int, int] | None = None
        self._none = self.ports["ref_inc"].pack({})

    def search(self, hash_value: int) -> tuple[int, int]:
        """``(hit, preg)``: the answer a lookup of ``hash_value`` in this cycle gives next
        cycle if no install or evict is taken in this one (:meth:`advance` answers with
        it); no state changes."""
        return self._answer(hash_value)

    def _answer(self, hash_value: int) -> tuple[int, int]:
        stored = self.entries.get(self.config.index(hash_value))
        if stored is not None and stored[0] == hash_value:
            return 1, stored[1]
        return 0, 0

    def event(self, preg: int | None = None) -> int:
        """A packed reference event: ``{valid: 1, preg}``, or all zero for ``None``."""
        if preg is None:
            return self._none
        return self.ports["ref_inc"].pack({"valid": 1, "preg": preg})

    def advance(self, lookup: int | None, install=None, evict: int | None = None) -> dict:
        """This cycle's outputs for the hash ``lookup``, ``install`` (a struct of the
        ``install`` port's fields) and the entry ``evict`` (``None`` for a port that is not
        valid), then the clock edge: the whole behaviour of :meth:`step` on Python values.
        Returns ``result`` (the answer ``(hit, preg)`` to last cycle's lookup, ``None`` if
        there was none), the registers of the reference events ``inc`` and ``dec``
        (``None``: no event) and ``evict_ready``."""
        out = {"result": self.answer, "inc": None, "dec": None,
               "evict_ready": install is None}
        self.answer = None if lookup is None else self._answer(lookup)
        if install is not None:
            if not install.divergent:
                index = self.config.index(install.hash)
                out["dec"] = self._release(index)
                self.entries[index] = (install.hash, install.preg)
                out["inc"] = install.preg
        elif evict is not None:
            out["dec"] = self._release(evict)
            self.entries.pop(evict, None)
        return out

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        out = self.advance(
            ports["lookup__payload"].unpack(inputs["lookup__payload"])
            if inputs["lookup__valid"] else None,
            install=(ports["install__payload"].unpack(inputs["install__payload"])
                     if inputs["install__valid"] else None),
            evict=(ports["evict__payload"].unpack(inputs["evict__payload"])
                   if inputs["evict__valid"] else None))
        result = out["result"]
        return {"result__valid": int(result is not None),
                "result__payload": (None if result is None else ports["result__payload"].pack(
                    {"hit": result[0], "preg": result[1]})),
                "ref_inc": self.event(out["inc"]), "ref_dec": self.event(out["dec"]),
                "evict__ready": int(out["evict_ready"])}

    def _release(self, index: int) -> int | None:
        """The register of the valid entry at ``index`` (its reference is dropped)."""
        displaced = self.entries.get(index)
        return None if displaced is None else displaced[1]

    def line_trace(self) -> str:
        held = " ".join(f"{i}:{h:#x}->p{p}" for i, (h, p) in sorted(self.entries.items()))
        return f"value_signature_buffer: {held}"
