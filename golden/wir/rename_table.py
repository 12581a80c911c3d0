"""Golden model of ``wir.rename_table``, from the paper's Sections V-B and V-D: per warp a
map from logical registers to ``(preg, pin)``; absent = invalid (all absent at start)."""

from gpurf.hw.wir.layouts import preg_ref_layout
from gpurf.hw.wir.rename_table import RenameTableConfig

__all__ = ["RenameTable"]


class RenameTable:
    """Port-level model.

    ``warps`` cycles of clearing after reset (nothing ready); then an issue answers one cycle
    later from the table as it was when issued; a retire maps ``reg -> preg`` pinned iff
    divergent and references the new register / releases the old one (nothing when they are
    equal); an exit releases the warp's mappings one logical register per cycle over the
    next ``regs`` cycles, during which nothing is ready.
    """

    def __init__(self, **params):
        self.config = RenameTableConfig(**params)
        self.reset()

    def reset(self):
        config = self.config
        self.maps: list[dict[int, tuple[int, int]]] = [{} for _ in range(config.warps)]
        self.clear_left = config.warps
        self.sweep: tuple[int, int] | None = None
        self.answer: dict | None = None
        self._trace = ""

    def entry(self, warp: int, reg: int) -> dict:
        """The entry's fields; an invalid entry reads as all zero (its cleared value)."""
        if reg not in self.maps[warp]:
            return {"preg": 0, "valid": 0, "pin": 0}
        preg, pin = self.maps[warp][reg]
        return {"preg": preg, "valid": 1, "pin": pin}

    def event(self, preg: int | None = None) -> int:
        """A packed reference event: ``{valid: 1, preg}``, or all zero for ``None``."""
        fields = {"valid": 0, "preg": 0} if preg is None else {"valid": 1, "preg": preg}
        return preg_ref_layout(preg_bits=self.config.preg_bits).const(fields).as_value().value

    def step(self, inputs: dict) -> dict:
        config = self.config
        idle = self.clear_left == 0 and self.sweep is None
        out = {"ready": int(self.clear_left == 0), "issue__ready": int(idle),
               "retire__ready": int(idle), "exit__ready": int(idle),
               "renamed__valid": int(self.answer is not None), "renamed__payload": None,
               "ref_inc": self.event(), "ref_dec": self.event()}
        if self.answer is not None:
            out["renamed__payload"] = config.renamed_layout.const(self.answer).as_value().value
        self.answer = None
        self._trace = self._describe()
        if self.clear_left:
            self.clear_left -= 1
            return out
        if self.sweep is not None:
            self._sweep_step(out)
            return out
        if inputs["issue__valid"]:
            issue = config.issue_layout.from_bits(inputs["issue__payload"])
            self.answer = {
                "src": [self.entry(issue.warp, issue.src[k]) for k in range(config.sources)],
                "dst": self.entry(issue.warp, issue.dst)}
        if inputs["retire__valid"]:
            self._retire(out, config.retire_layout.from_bits(inputs["retire__payload"]))
        if inputs["exit__valid"]:
            self.sweep = (inputs["exit__payload"], 0)
        return out

    def _retire(self, out: dict, retire) -> None:
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
        if old is None or old[0] != preg:
            out["ref_inc"] = self.event(preg)
        if old is not None and old[0] != preg:
            out["ref_dec"] = self.event(old[0])

    def _sweep_step(self, out: dict) -> None:
        warp, reg = self.sweep
        old = self.maps[warp].pop(reg, None)
        if old is not None:
            out["ref_dec"] = self.event(old[0])
        self.sweep = (warp, reg + 1) if reg + 1 < self.config.regs else None

    def _describe(self) -> str:
        return " ".join(
            f"w{w}[" + ",".join(f"r{r}:p{p}{'*' if pin else ''}"
                                for r, (p, pin) in sorted(regs.items())) + "]"
            for w, regs in enumerate(self.maps) if regs)

    def line_trace(self) -> str:
        state = "clearing" if self.clear_left else "sweep" if self.sweep else "idle"
        return f"rename_table: {state} {self._trace}"
