"""Golden model of ``greener.scoreboard_ext``, written from the paper's Section 3.4: per
warp, the multiset of source registers reserved by issued instructions."""

from gpurf.golden.model import PortModel
from gpurf.hw.greener.configs import ScoreboardExtConfig

__all__ = ["ScoreboardExt", "fits", "touches"]


def touches(reserved, registers) -> bool:
    """RAR/WAR: some of ``registers`` (sources or destinations) is reserved."""
    return any(reg in reserved for reg in registers)


def fits(reserved, sources, capacity: int) -> bool:
    """The ``sources`` (one slot each) fit beside ``reserved`` in ``capacity`` slots."""
    return len(reserved) + len(sources) <= capacity


class ScoreboardExt(PortModel, config=ScoreboardExtConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Each warp holds at most ``sources`` reserved registers (a list: a register named twice
    by an instruction counts twice). Checks and ``reserve.ready`` see the reservations at
    the start of the cycle; on the edge every release empties all reservations of its
    register in its warp, then an accepted reserve adds its valid sources.
    """

    def reset(self):
        self.reserved: list[list[int]] = [[] for _ in range(self.config.warps)]
        self._trace = ""

    @staticmethod
    def _operands(valid: int, regs) -> list[int]:
        """The registers of ``regs`` whose bit of the mask ``valid`` is set."""
        return [reg for k, reg in enumerate(regs) if valid >> k & 1]

    def unpack_reserve(self, bits: int) -> tuple[int, list[int]]:
        """``(warp, valid source registers)`` of a reserve payload."""
        reserve = self.ports["reserve__payload"].unpack(bits)
        return reserve.warp, self._operands(reserve.valid, reserve.reg)

    def _check(self, check) -> tuple[int, int]:
        if not check.valid:
            return 0, 0
        sources = self._operands(check.src_valid, check.src)
        dests = self._operands(check.dst_valid, check.dst)
        reserved = self.reserved[check.warp]
        return (int(touches(reserved, sources + dests)),
                int(not fits(reserved, sources, self.config.sources)))

    def step(self, inputs: dict) -> dict:
        config = self.config
        hazard = full = 0
        for c, check in enumerate(self.ports["check"].unpack(inputs["check"])):
            h, f = self._check(check)
            hazard |= h << c
            full |= f << c
        warp, sources = self.unpack_reserve(inputs["reserve__payload"])
        ready = fits(self.reserved[warp], sources, config.sources)
        outputs = {"reserve__ready": int(ready), "hazard": hazard, "full": full}
        self._trace = " ".join(f"w{w}{regs}" for w, regs in enumerate(self.reserved) if regs)
        releases = [(port.warp, port.reg) for port in self.ports["release"].unpack(
            inputs["release"]) if port.valid]
        self._edge(releases, (warp, sources) if inputs["reserve__valid"] and ready else None)
        return outputs

    def fast_step(self, releases, reserve=None) -> None:
        """:meth:`step`'s edge from plain values, for a caller that has checked the
        reservation fits (the golden SM): ``releases`` ``[(warp, reg), ...]``, ``reserve``
        ``(warp, sources)`` or ``None``. No checks, no line trace."""
        if reserve is not None and not fits(self.reserved[reserve[0]], reserve[1],
                                            self.config.sources):
            reserve = None
        self._edge(releases, reserve)

    def _edge(self, releases, reserve) -> None:
        """Every release empties its register's reservations in its warp, then the
        accepted ``reserve`` adds its sources."""
        for warp, reg in releases:
            self.reserved[warp] = [r for r in self.reserved[warp] if r != reg]
        if reserve is not None:
            self.reserved[reserve[0]].extend(reserve[1])

    def line_trace(self) -> str:
        return f"scoreboard_ext: {self._trace}"
