"""Golden model of ``wir.rename_table``, from the paper's Sections V-B and V-D: per warp a
map from logical registers to ``(preg, pin)``; absent = invalid (all absent at start)."""

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import RenameTableConfig

__all__ = ["RenameTable"]


class RenameTable(PortModel, config=RenameTableConfig):
    """Port-level model.

    ``warps`` cycles of clearing after reset (nothing ready); then an issue answers one cycle
    later from the table as it was when issued; a retire maps ``reg -> preg`` pinned iff
    divergent and references the new register / releases the old one (nothing when they are
    equal); an exit releases the warp's mappings one logical register per cycle over the
    next ``regs`` cycles, during which nothing is ready.
    """

    def reset(self):
        config = self.config
        self.maps: list[dict[int, tuple[int, int]]] = [{} for _ in range(config.warps)]
        self.clear_left = config.warps
        self.sweep: tuple[int, int] | None = None
        self.answer: dict | None = None
        self._none = self.ports["ref_inc"].pack({})

    def entry(self, warp: int, reg: int) -> dict:
        """The entry's fields; an invalid entry reads as all zero (its cleared value)."""
        if reg not in self.maps[warp]:
            return {"preg": 0, "valid": 0, "pin": 0}
        preg, pin = self.maps[warp][reg]
        return {"preg": preg, "valid": 1, "pin": pin}

    def event(self, preg: int | None = None) -> int:
        """A packed reference event: ``{valid: 1, preg}``, or all zero for ``None``."""
        if preg is None:
            return self._none
        return self.ports["ref_inc"].pack({"valid": 1, "preg": preg})

    def advance(self, issue=None, retire=None, exit_warp=None) -> dict:
        """This cycle's outputs for ``issue`` (a struct of the ``issue`` port's fields),
        ``retire`` (the ``retire`` port's fields) and ``exit_warp`` (``None`` for a stream
        that is not valid), then the clock edge: the whole behaviour of :meth:`step` on
        Python values. Returns ``ready``, ``idle`` (every stream ready), ``renamed`` (the
        answer's fields, ``None`` when not valid) and the registers of the reference events
        ``inc`` and ``dec`` (``None``: no event)."""
        idle = self.clear_left == 0 and self.sweep is None
        out = {"ready": self.clear_left == 0, "idle": idle, "renamed": self.answer,
               "inc": None, "dec": None}
        self.answer = None
        if self.clear_left:
            self.clear_left -= 1
        elif self.sweep is not None:
            out["dec"] = self._sweep_step()
        else:
            if issue is not None:
                self.answer = {"src": [self.entry(issue.warp, reg) for reg in issue.src],
                               "dst": self.entry(issue.warp, issue.dst)}
            if retire is not None:
                out["inc"], out["dec"] = self._retire(retire)
            if exit_warp is not None:
                self.sweep = (exit_warp, 0)
        return out

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        out = self.advance(
            issue=(ports["issue__payload"].unpack(inputs["issue__payload"])
                   if inputs["issue__valid"] else None),
            retire=(ports["retire__payload"].unpack(inputs["retire__payload"])
                    if inputs["retire__valid"] else None),
            exit_warp=(ports["exit__payload"].unpack(inputs["exit__payload"])
                       if inputs["exit__valid"] else None))
        idle, renamed = int(out["idle"]), out["renamed"]
        return {"ready": int(out["ready"]), "issue__ready": idle, "retire__ready": idle,
                "exit__ready": idle, "renamed__valid": int(renamed is not None),
                "renamed__payload": (None if renamed is None
                                     else ports["renamed__payload"].pack(renamed)),
                "ref_inc": self.event(out["inc"]), "ref_dec": self.event(out["dec"])}

    def _retire(self, retire) -> tuple[int | None, int | None]:
        """Map ``retire``'s register; the registers that gain and lose a reference."""
        warp, reg, preg = retire.warp, retire.reg, retire.preg
        old = self.maps[warp].get(reg)
        if retire.divergent and old is not None:
            if old[1] and old[0] != preg:
                raise ValueError(f"warp {warp} r{reg}: divergent write to a pinned register "
                                 f"must keep p{old[0]}, not p{preg}")
            if not old[1] and old[0] == preg:
                raise ValueError(f"warp {warp} r{reg}: first divergent write needs a new "
                                 f"register, not the current p{preg}")
        self.maps[warp][reg] = (preg, retire.divergent)
        if old is None:
            return preg, None
        if old[0] != preg:
            return preg, old[0]
        return None, None

    def _sweep_step(self) -> int | None:
        """Release the sweep's next mapping; its register, if it was valid."""
        warp, reg = self.sweep
        old = self.maps[warp].pop(reg, None)
        self.sweep = (warp, reg + 1) if reg + 1 < self.config.regs else None
        return None if old is None else old[0]

    def _describe(self) -> str:
        return " ".join(
            f"w{w}[" + ",".join(f"r{r}:p{p}{'*' if pin else ''}"
                                for r, (p, pin) in sorted(regs.items())) + "]"
            for w, regs in enumerate(self.maps) if regs)

    def line_trace(self) -> str:
        state = "clearing" if self.clear_left else "sweep" if self.sweep else "idle"
        return f"rename_table: {state} {self._describe()}"
