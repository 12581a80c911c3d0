"""Hand-made mutants of the RegLess blocks, each killed by its block's formal harness
(``tests/test_regless_*.py::test_formal_kills_mutant``)."""

from amaranth import Mux, Signal

from gpurf.hw.regless.banked_rf import BankedRf
from gpurf.hw.regless.osu import Osu

__all__ = ["ConflictIgnored", "WarpsAlias"]


class ConflictIgnored(Osu):
    """Every port of a kind that asks for a bank is granted it, not only the lowest: two
    requests to one bank in a cycle both transfer (their payloads ORed into the bank).
    Killed by "never two ports' requests to one bank in one cycle"."""

    def _route(self, m, name, selects, payloads):
        ports = getattr(self, name)
        grants = [[Signal(name=f"{name}{i}_grant_{b}") for b in range(self.config.banks)]
                  for i in range(len(ports))]
        for b, bank in enumerate(self.banks):
            target = getattr(bank, name)
            taken, payload = 0, 0
            for i, port in enumerate(ports):
                m.d.comb += grants[i][b].eq(port.valid & selects[i][b])
                taken = taken | grants[i][b]
                payload = payload | Mux(grants[i][b], payloads[i].as_value(), 0)
            m.d.comb += [target.valid.eq(taken), target.payload.eq(payload)]
        for i, port in enumerate(ports):
            ready = 0
            for b, bank in enumerate(self.banks):
                ready = ready | (grants[i][b] & getattr(bank, name).ready)
            m.d.comb += port.ready.eq(ready)
        return grants


class WarpsAlias(BankedRf):
    """The row leaves out the warp: register ``r`` of every warp shares one word (a write
    by one warp changes another's register). Killed by "a read answers the last value
    written"."""

    def _place(self, m, name, ref):
        select, _ = super()._place(m, name, ref)
        return select, ref.reg[self.config.bank_bits:]
