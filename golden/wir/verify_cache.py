"""Golden model of ``wir.verify_cache``, from the paper's Section VI-C and the spec: a few
register values tagged by physical register, FIFO replacement with one pointer, filled on
a verify-read miss and invalidated by any write to the register."""

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import VerifyCacheConfig

__all__ = ["VerifyCache"]


class VerifyCache(PortModel, config=VerifyCacheConfig):
    """Port-level model. ``lines[e]`` is ``(preg, value)`` (``value`` per lane) or ``None``
    (invalid)."""

    def reset(self):
        self.lines: list[tuple[int, list[int]] | None] = [None] * self.config.entries
        self.pointer = 0
        self.answer: tuple[int, list[int] | int] | None = None

    def find(self, preg: int) -> int | None:
        """The line holding ``preg``, if any."""
        for e, line in enumerate(self.lines):
            if line is not None and line[0] == preg:
                return e
        return None

    def step(self, inputs: dict) -> dict:
        config, ports = self.config, self.ports
        out = {"result__valid": int(self.answer is not None), "result__payload": None}
        if not config.lookup_port:
            out = {}
        elif self.answer is not None:
            hit, value = self.answer
            out["result__payload"] = ports["result__payload"].pack({"hit": hit, "value": value})
        written = set()
        valid = ports["invalidate_valid"].unpack(inputs["invalidate_valid"])
        if valid:
            pregs = ports["invalidate_preg"].unpack(inputs["invalidate_preg"])
            written = {pregs[p] for p in range(config.invalidate_ports) if valid >> p & 1}
        self.answer = None
        if config.lookup_port and inputs["lookup__valid"]:
            preg = ports["lookup__payload"].unpack(inputs["lookup__payload"])
            line = self.find(preg)
            self.answer = ((1, self.lines[line][1]) if line is not None and preg not in written
                           else (0, 0))
        fill = None
        if inputs["fill__valid"]:
            payload = ports["fill__payload"].unpack(inputs["fill__payload"])
            fill = (payload.preg, payload.value)
        self.update(fill, written)
        return out

    def update(self, fill: tuple | None, written: set) -> None:
        """The clock edge of the lines: ``fill`` (``(preg, value)`` or ``None``) stored
        unless a write names its register, then the lines of the ``written`` registers
        invalidated (a composition that looks the lines up itself calls this)."""
        stored = None
        if fill is not None and fill[0] not in written:
            stored = self.find(fill[0])
            if stored is None:
                stored = self.pointer
                self.pointer = (self.pointer + 1) % self.config.entries
            self.lines[stored] = fill
        if written:
            for e, line in enumerate(self.lines):
                if e != stored and line is not None and line[0] in written:
                    self.lines[e] = None

    def line_trace(self) -> str:
        lines = " ".join("-" if line is None else f"p{line[0]}={line[1]}"
                         for line in self.lines)
        return f"verify_cache: ptr={self.pointer} {lines}"
