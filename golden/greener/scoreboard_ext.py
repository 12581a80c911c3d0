"""Golden model of ``greener.scoreboard_ext``, written from the paper's Section 3.4: per
warp, the multiset of source registers reserved by issued instructions."""

from amaranth.lib import data

from gpurf.hw.greener.scoreboard_ext import ScoreboardExtConfig

__all__ = ["ScoreboardExt", "fits", "touches"]


def touches(reserved, registers) -> bool:
    """RAR/WAR: some of ``registers`` (sources or destinations) is reserved."""
    return any(reg in reserved for reg in registers)


def fits(reserved, sources, capacity: int) -> bool:
    """The ``sources`` (one slot each) fit beside ``reserved`` in ``capacity`` slots."""
    return len(reserved) + len(sources) <= capacity


class ScoreboardExt:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Each warp holds at most ``sources`` reserved registers (a list: a register named twice
    by an instruction counts twice). Checks and ``reserve.ready`` see the reservations at
    the start of the cycle; on the edge every release empties all reservations of its
    register in its warp, then an accepted reserve adds its valid sources.
    """

    def __init__(self, **params):
        self.config = ScoreboardExtConfig(**params)
        self.reset()

    def reset(self):
        self.reserved: list[list[int]] = [[] for _ in range(self.config.warps)]
        self._trace = ""

    @staticmethod
    def _operands(valid: int, regs, count: int) -> list[int]:
        return [regs[k] for k in range(count) if (valid >> k) & 1]

    def unpack_reserve(self, bits: int) -> tuple[int, list[int]]:
        """``(warp, valid source registers)`` of a reserve payload."""
        view = self.config.reserve_layout.from_bits(bits)
        return view.warp, self._operands(view.valid, view.reg, self.config.sources)

    def _check(self, view) -> tuple[int, int]:
        config = self.config
        if not view.valid:
            return 0, 0
        sources = self._operands(view.src_valid, view.src, config.sources)
        dests = self._operands(view.dst_valid, view.dst, config.dests)
        reserved = self.reserved[view.warp]
        return (int(touches(reserved, sources + dests)),
                int(not fits(reserved, sources, config.sources)))

    def step(self, inputs: dict) -> dict:
        config = self.config
        checks = data.ArrayLayout(config.check_layout, config.check_ports).from_bits(
            inputs["check"])
        hazard = full = 0
        for c in range(config.check_ports):
            h, f = self._check(checks[c])
            hazard |= h << c
            full |= f << c
        warp, sources = self.unpack_reserve(inputs["reserve__payload"])
        ready = fits(self.reserved[warp], sources, config.sources)
        outputs = {"reserve__ready": int(ready), "hazard": hazard, "full": full}
        self._trace = " ".join(f"w{w}{regs}" for w, regs in enumerate(self.reserved) if regs)
        releases = data.ArrayLayout(config.release_layout, config.release_ports).from_bits(
            inputs["release"])
        for p in range(config.release_ports):
            port = releases[p]
            if port.valid:
                self.reserved[port.warp] = [r for r in self.reserved[port.warp]
                                            if r != port.reg]
        if inputs["reserve__valid"] and ready:
            self.reserved[warp].extend(sources)
        return outputs

    def line_trace(self) -> str:
        return f"scoreboard_ext: {self._trace}"
