"""Golden model of ``wir.verify_cache``, from the paper's Section VI-C and the spec: a few
register values tagged by physical register, FIFO replacement with one pointer, filled on
a verify-read miss and invalidated by any write to the register."""

from amaranth.lib import data

from gpurf.hw.wir.verify_cache import VerifyCacheConfig

__all__ = ["VerifyCache"]


class VerifyCache:
    """Port-level model. ``lines[e]`` is ``(preg, value)`` or ``None`` (invalid)."""

    def __init__(self, **params):
        self.config = VerifyCacheConfig(**params)
        self.reset()

    def reset(self):
        self.lines: list[tuple[int, int] | None] = [None] * self.config.entries
        self.pointer = 0
        self.answer: tuple[int, int] | None = None

    def find(self, preg: int) -> int | None:
        """The line holding ``preg``, if any."""
        for e, line in enumerate(self.lines):
            if line is not None and line[0] == preg:
                return e
        return None

    def step(self, inputs: dict) -> dict:
        config = self.config
        out = {"result__valid": int(self.answer is not None), "result__payload": None}
        if self.answer is not None:
            hit, value = self.answer
            out["result__payload"] = config.result_layout.const(
                {"hit": hit, "value": config.value_layout.from_bits(value)}).as_value().value
        pregs = data.ArrayLayout(config.preg_bits, config.invalidate_ports).from_bits(
            inputs["invalidate_preg"])
        written = {pregs[p] for p in range(config.invalidate_ports)
                   if inputs["invalidate_valid"] >> p & 1}
        self.answer = None
        if inputs["lookup__valid"]:
            preg = inputs["lookup__payload"]
            line = self.find(preg)
            self.answer = ((1, self.lines[line][1]) if line is not None and preg not in written
                           else (0, 0))
        fill = config.fill_layout.from_bits(inputs["fill__payload"])
        stored = None
        if inputs["fill__valid"] and fill.preg not in written:
            stored = self.find(fill.preg)
            if stored is None:
                stored = self.pointer
                self.pointer = (self.pointer + 1) % config.entries
            self.lines[stored] = (fill.preg, fill.value.as_value().value)
        for e, line in enumerate(self.lines):
            if e != stored and line is not None and line[0] in written:
                self.lines[e] = None
        return out

    def line_trace(self) -> str:
        lines = " ".join("-" if line is None else f"p{line[0]}={line[1]:#x}"
                         for line in self.lines)
        return f"verify_cache: ptr={self.pointer} {lines}"
