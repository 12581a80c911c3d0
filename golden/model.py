"""The protocol every golden model keeps, and the base that gives it typed ports.

The harness (:mod:`gpurf.tb.harness`) drives a model with packed port values by Verilog name
and compares what it returns with the RTL every cycle. A model built on :class:`PortModel`
reads and writes those values through the codecs of its block's port signature
(:attr:`gpurf.hw.params.BlockConfig.codecs`), derived once from the layouts: it never packs bits by
hand and builds no :mod:`amaranth.lib.data` constant per cycle.
"""

from collections.abc import Mapping
from typing import Any, ClassVar, Protocol, runtime_checkable

from gpurf.hw.params import BlockConfig
from gpurf.hw.ports import Codec

__all__ = ["GoldenModel", "PortModel"]


@runtime_checkable
class GoldenModel(Protocol):
    """What the harness calls: ``reset``, then ``step`` once per cycle; ``line_trace`` for a
    failure report."""

    def reset(self) -> None:
        """Back to the state after the RTL's reset."""

    def step(self, inputs: Mapping[str, int]) -> dict[str, int | None]:
        """This cycle's outputs for ``inputs`` (packed, by Verilog port name; ``None`` for an
        output that is not compared this cycle), then the clock edge."""

    def line_trace(self) -> str:
        """One line of state for a mismatch report."""


class PortModel:
    """Base of a block's golden model: ``class X(PortModel, config=XConfig)``.

    ``X(**params)`` builds ``self.config`` (validated as the component validates it),
    ``self.ports`` (a :class:`~gpurf.hw.ports.Codec` per port, by Verilog name) and resets.
    """

    config_class: ClassVar[type[BlockConfig]]

    def __init_subclass__(cls, *, config: type[BlockConfig] | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if config is not None:
            cls.config_class = config

    def __init__(self, **params: Any):
        self.config = self.config_class(**params)
        self.ports: dict[str, Codec] = self.config.codecs
        self.reset()

    def reset(self) -> None:
        raise NotImplementedError

    def step(self, inputs: Mapping[str, int]) -> dict[str, int | None]:
        raise NotImplementedError

    def line_trace(self) -> str:
        return type(self).__name__
