"""Golden model of ``compression.write_path``: the destination table's model, then the value
truncator's writes as :func:`.paths.register_writes` composes them."""

from gpurf.golden.model import PortModel
from gpurf.hw.compression.configs import WritePathConfig
from gpurf.hw.ports import codec

from .indirection_table import IndirectionTable
from .paths import register_writes
from .value_extractor import unpack_entry
from .value_truncator import check_entry

__all__ = ["WritePath"]


class WritePath(PortModel, config=WritePathConfig):
    """Port-level model: ``step(inputs)`` returns the outputs of the cycle, then clocks.

    The table (its own golden model) carries each writeback's ``float`` flag and packed
    data as the lookup's tag; the result it shows in a cycle is truncated and registered,
    shown on ``rf_write`` the cycle after.
    """

    def reset(self):
        if not hasattr(self, "table"):
            self.table = IndirectionTable(**self.config.table_params)
            self._register = codec(self.config.register_layout)
        self.table.reset()
        self.writes = 0

    def step(self, inputs):
        table = self.table
        lookups = [{"reg": w.reg, "tag": w.float | self._register.pack(w.data) << 1}
                   for w in self.ports["write"].unpack(inputs["write"])]
        shown = list(table.shown)
        got = table.step({
            "lookup_valid": inputs["write_valid"],
            "lookup": table.ports["lookup"].pack(lookups),
            "load__valid": inputs["load__valid"],
            "load__payload": inputs["load__payload"],
        })
        outputs = {"write_ready": got["lookup_ready"], "load__ready": 1,
                   "rf_write": self.writes}
        self.writes = self.ports["rf_write"].pack(
            [[] if s is None else self._truncate(*s) for s in shown])
        return outputs

    def _truncate(self, entry_bits: int, tag: int) -> list[dict]:
        """The truncator's two writes of a lookup result: the entry, and the tag holding
        the ``float`` flag and the data."""
        entry = unpack_entry(entry_bits)
        fmt = check_entry(entry, is_float=bool(tag & 1))
        return register_writes(self._register.unpack(tag >> 1), entry, fmt)

    def line_trace(self):
        return f"write_path: {self.table.line_trace()}"
