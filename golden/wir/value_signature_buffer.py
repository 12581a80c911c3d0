"""Golden model of ``wir.value_signature_buffer``, from the paper's Section V-A: a
direct-indexed map from result hashes to the physical registers holding those values."""

from gpurf.hw.wir.layouts import preg_ref_layout
from gpurf.hw.wir.value_signature_buffer import ValueSignatureBufferConfig

__all__ = ["ValueSignatureBuffer"]


class ValueSignatureBuffer:
    """Port-level model. ``entries`` maps an index to ``(hash, preg)`` (absent = invalid).

    A lookup answers one cycle later from the table as it was when it was looked up; an
    install (not divergent) replaces the entry of its index, referencing its register and
    releasing the displaced one; an evict (taken when no install is offered) drops an entry
    and releases its register.
    """

    def __init__(self, **params):
        self.config = ValueSignatureBufferConfig(**params)
        self.reset()

    def reset(self):
        self.entries: dict[int, tuple[int, int]] = {}
        self.answer: tuple[int, int] | None = None
        self._trace = ""

    def _answer(self, hash_value: int) -> tuple[int, int]:
        stored = self.entries.get(self.config.index(hash_value))
        if stored is not None and stored[0] == hash_value:
            return 1, stored[1]
        return 0, 0

    def event(self, preg: int | None = None) -> int:
        """A packed reference event: ``{valid: 1, preg}``, or all zero for ``None``."""
        fields = {"valid": 0, "preg": 0} if preg is None else {"valid": 1, "preg": preg}
        return preg_ref_layout(preg_bits=self.config.preg_bits).const(fields).as_value().value

    def step(self, inputs: dict) -> dict:
        config = self.config
        out = {"result__valid": int(self.answer is not None), "result__payload": None,
               "ref_inc": self.event(), "ref_dec": self.event(),
               "evict__ready": int(not inputs["install__valid"])}
        if self.answer is not None:
            hit, preg = self.answer
            out["result__payload"] = config.result_layout.const(
                {"hit": hit, "preg": preg}).as_value().value
        self.answer = (self._answer(inputs["lookup__payload"]) if inputs["lookup__valid"]
                       else None)
        install = config.install_layout.from_bits(inputs["install__payload"])
        if inputs["install__valid"] and not install.divergent:
            index = config.index(install.hash)
            self._release(out, index)
            self.entries[index] = (install.hash, install.preg)
            out["ref_inc"] = self.event(install.preg)
        elif inputs["evict__valid"] and not inputs["install__valid"]:
            self._release(out, inputs["evict__payload"])
            self.entries.pop(inputs["evict__payload"], None)
        self._trace = " ".join(f"{i}:{h:#x}->p{p}" for i, (h, p) in sorted(self.entries.items()))
        return out

    def _release(self, out: dict, index: int) -> None:
        displaced = self.entries.get(index)
        if displaced is not None:
            out["ref_dec"] = self.event(displaced[1])

    def line_trace(self) -> str:
        return f"value_signature_buffer: {self._trace}"
