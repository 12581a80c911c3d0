"""Golden model of ``regless.banked_rf``: a register file as a dictionary of warp registers,
read with one cycle of latency, a same-cycle write not seen by the read (the old value).

The banks are not modelled: with ``banks`` dividing the registers per warp, the block's
bank / row mapping is a bijection, so every register keeps its own value; a mapping that
folded two registers onto one row would show here as a mismatch.
"""

from gpurf.golden.model import PortModel
from gpurf.hw.regless.configs import BankedRfConfig

__all__ = ["BankedRf"]


class BankedRf(PortModel, config=BankedRfConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge."""

    def __init__(self, **params):
        super().__init__(**params)
        self.values = {(warp, reg): 0 for warp in range(self.config.warps)
                       for reg in range(self.config.regs)}
        """The contents (lists of lanes; 0 at power-up); a reset leaves them (memories are
        not reset)."""

    def reset(self):
        self.response: int | None = None
        """The value a read of the previous cycle returns now (``None``: no read)."""
        self._trace = ""

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        out = {"read__ready": 1, "write__ready": 1,
               "read_resp__valid": int(self.response is not None),
               "read_resp__payload": (None if self.response is None
                                      else ports["read_resp__payload"].pack(self.response))}
        response = None
        trace = []
        if inputs["read__valid"]:
            ref = self._register(ports["read__payload"].unpack(inputs["read__payload"]))
            response = self.values[ref]
            trace.append(f"read w{ref[0]} r{ref[1]}")
        if inputs["write__valid"]:
            write = ports["write__payload"].unpack(inputs["write__payload"])
            ref = self._register(write)
            self.values[ref] = write.data
            trace.append(f"write w{ref[0]} r{ref[1]}")
        self.response = response
        self._trace = ", ".join(trace)
        return out

    def _register(self, request) -> tuple[int, int]:
        """``(warp, reg)`` of a request; one outside the file is a protocol violation
        (the block's answer is undefined), refused here."""
        ref = (request.warp, request.reg)
        if ref not in self.values:
            raise ValueError(f"register (warp {ref[0]}, reg {ref[1]}) is outside the "
                             f"{self.config.warps} x {self.config.regs} register file")
        return ref

    def line_trace(self) -> str:
        return f"banked_rf: {self._trace or 'idle'}"
