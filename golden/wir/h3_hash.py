"""Golden model of ``wir.h3_hash``: the spec's definition, output bit ``j`` = XOR of the
input bits ``i`` with ``Q[i][j] = 1`` (``Q`` from :func:`gpurf.hw.wir.configs.h3_matrix`)."""

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import H3HashConfig

__all__ = ["H3Hash", "h3"]


def h3(value: int, masks) -> int:
    """The H3 hash of ``value``: bit ``j`` is the parity of ``value & masks[j]``."""
    return sum(((value & mask).bit_count() & 1) << j for j, mask in enumerate(masks))


class H3Hash(PortModel, config=H3HashConfig):
    """Port-level model: combinational, ``hash`` follows ``value`` in the same cycle."""

    @property
    def masks(self) -> tuple[int, ...]:
        return self.config.masks

    def reset(self):
        self._last = None

    def step(self, inputs):
        value = self.ports["value"].unpack(inputs["value"])
        self._last = (value, h3(value, self.masks))
        return {"hash": self.ports["hash"].pack(self._last[1])}

    def line_trace(self):
        if self._last is None:
            return "h3_hash: -"
        value, hashed = self._last
        return f"h3_hash: value={value:#x} hash={hashed:#x}"
