"""Golden model of ``regless.osu``: ``banks`` golden OSU banks (``golden.regless.osu_bank``)
with the paper's bank mapping ``(warp + reg) & (banks - 1)`` (5.2) and the merge of the
banks' fetch and writeback streams (lowest bank first, an offer not taken stays offered)."""

from gpurf.hw.regless.configs import OsuConfig

from .osu_bank import OsuBank

__all__ = ["Osu"]


class Osu:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge."""

    def __init__(self, **params):
        self.config = OsuConfig(**params)
        self.reset()

    def reset(self):
        bank = self.config.bank
        self.banks = [OsuBank(lines=bank.lines, warps=bank.warps, regs=bank.regs,
                              lanes=bank.lanes, data_width=bank.data_width)
                      for _ in range(self.config.banks)]
        self.offered = {"fetch": None, "writeback": None}
        """Per merged stream: the bank whose offer was not taken last cycle."""

    def usable(self, warp: int, reg: int) -> bool:
        return self.banks[self.config.bank_of(warp, reg)].usable(warp, reg)

    def offers(self, name: str) -> bool:
        """Whether ``fetch`` or ``writeback`` (``name``) is offered this cycle (state only)."""
        return self._grant(name) is not None

    def _grant(self, name: str) -> int | None:
        """The bank whose ``name`` offer the OSU shows: the one left waiting, else the
        lowest bank with an offer."""
        if self.offered[name] is not None:
            return self.offered[name]
        pending = [b for b, bank in enumerate(self.banks)
                   if (bank.fetch is not None if name == "fetch"
                       else bank.evict is not None and bank.evict[0] == "held")]
        return pending[0] if pending else None

    def _bank_inputs(self, inputs: dict, grants: dict) -> list[dict]:
        config, bank = self.config, self.config.bank
        per_bank = [{name: 0 for name in ("read__valid", "read__payload", "reserve__valid",
                                          "reserve__payload", "write__valid",
                                          "write__payload", "fill__valid", "fill__payload",
                                          "release__valid", "release__payload")}
                    for _ in self.banks]
        for name in ("read", "reserve", "release"):
            layout = bank.ref_layout if name == "read" else getattr(bank, f"{name}_layout")
            view = layout.from_bits(inputs[f"{name}__payload"])
            target = config.bank_of(int(view.warp), int(view.reg))
            for b in range(config.banks):
                per_bank[b][f"{name}__payload"] = inputs[f"{name}__payload"]
            per_bank[target][f"{name}__valid"] = inputs[f"{name}__valid"]
        for name in ("write", "fill"):
            view = getattr(config, f"{name}_layout").from_bits(inputs[f"{name}__payload"])
            fields = {"line": int(view.line.line), "data": view.data}
            if name == "write":
                fields["last_use"] = int(view.last_use)
            local = getattr(bank, f"{name}_layout").const(fields).as_value().value
            for b in range(config.banks):
                per_bank[b][f"{name}__payload"] = local
            per_bank[int(view.line.bank)][f"{name}__valid"] = inputs[f"{name}__valid"]
        for b in range(config.banks):
            per_bank[b]["preload__valid"] = inputs[f"preload__{b}__valid"]
            per_bank[b]["preload__payload"] = inputs[f"preload__{b}__payload"]
            for name in ("fetch", "writeback"):
                per_bank[b][f"{name}__ready"] = int(bool(inputs[f"{name}__ready"])
                                                    and grants[name] == b)
        return per_bank

    def step(self, inputs: dict) -> dict:
        config = self.config
        grants = {name: self._grant(name) for name in ("fetch", "writeback")}
        per_bank = self._bank_inputs(inputs, grants)
        outs = [bank.step(ins) for bank, ins in zip(self.banks, per_bank, strict=True)]
        out = {"protocol_error": int(any(o["protocol_error"] for o in outs))}
        out.update(self._route_back(inputs, outs))
        for b, o in enumerate(outs):
            out[f"preload__{b}__ready"] = o["preload__ready"]
        acks = [{"valid": o["preloaded__valid"], "warp": o["preloaded__payload"] or 0}
                for o in outs]
        out["preloaded"] = sum(config.ack_layout.const(ack).as_value().value
                               << (b * config.ack_layout.size) for b, ack in enumerate(acks))
        for name in ("fetch", "writeback"):
            out.update(self._merged(name, grants[name], outs, inputs))
        return out

    def _route_back(self, inputs, outs) -> dict:
        """Readies of the routed requests (their bank's) and the banks' responses."""
        out = {}
        for name in ("read", "reserve", "release", "write", "fill"):
            out[f"{name}__ready"] = outs[self._target(name, inputs)][f"{name}__ready"]
        read = [o for o in outs if o["read_resp__valid"]]
        out["read_resp__valid"] = int(bool(read))
        out["read_resp__payload"] = read[0]["read_resp__payload"] if read else None
        reserved = [(b, o) for b, o in enumerate(outs) if o["reserve_resp__valid"]]
        out["reserve_resp__valid"] = int(bool(reserved))
        out["reserve_resp__payload"] = None
        if reserved:
            b, o = reserved[0]
            view = self.config.bank.reserved_layout.from_bits(o["reserve_resp__payload"])
            out["reserve_resp__payload"] = self.config.reserved_layout.const({
                "line": {"line": int(view.line), "bank": b},
                "last_use": int(view.last_use)}).as_value().value
        return out

    def _target(self, name, inputs) -> int:
        """The bank a request is addressed to (by its payload, valid or not)."""
        config = self.config
        if name in ("write", "fill"):
            view = getattr(config, f"{name}_layout").from_bits(inputs[f"{name}__payload"])
            return int(view.line.bank)
        layout = config.bank.ref_layout if name == "read" else getattr(config.bank,
                                                                       f"{name}_layout")
        view = layout.from_bits(inputs[f"{name}__payload"])
        return config.bank_of(int(view.warp), int(view.reg))

    def _merged(self, name, grant, outs, inputs) -> dict:
        config = self.config
        if grant is None:
            self.offered[name] = None
            return {f"{name}__valid": 0, f"{name}__payload": None}
        view = getattr(config.bank, f"{name}_layout").from_bits(outs[grant][f"{name}__payload"])
        fields = {"warp": int(view.warp), "reg": int(view.reg),
                  "line": {"line": int(view.line), "bank": grant}}
        if name == "fetch":
            fields["invalidate"] = int(view.invalidate)
        else:
            fields["data"] = view.data
        self.offered[name] = None if inputs[f"{name}__ready"] else grant
        return {f"{name}__valid": 1,
                f"{name}__payload": getattr(config, f"{name}_layout").const(fields)
                .as_value().value}

    def line_trace(self) -> str:
        return "osu: " + " | ".join(f"b{b} {bank._trace}" for b, bank in enumerate(self.banks))
