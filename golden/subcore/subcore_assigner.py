"""Golden model of ``subcore.subcore_assigner``: round-robin or table-hashed warp placement."""

from collections import deque

from gpurf.golden.model import PortModel
from gpurf.hw.subcore.configs import MODE_HASHED, WARPS_PER_ENTRY, SubcoreAssignerConfig

from .assignment import decode_table, rr_subcore, rr_table

__all__ = ["SubcoreAssigner"]


class SubcoreAssigner(PortModel, config=SubcoreAssignerConfig):
    """Port-level model: ``step(inputs)`` returns the outputs for those inputs, then
    takes the clock edge.

    It counts warps since the last launch (a warp in the launch cycle is warp 0). Round
    robin gives ``W mod N``. Hashed mode reads the table entry of a group of 4 warps when
    the group's first warp arrives and hands out its 4 sub-cores in order (a queue of the
    entry's decoded assignments); a table write takes effect after the cycle it is
    presented in. The table holds the round-robin pattern after reset.
    """

    def reset(self):
        config = self.config
        self.table = rr_table(depth=config.depth) if config.hashed else []
        self.warps = 0
        self.group = deque()
        self._last = None

    def _hashed_choice(self):
        if self.warps % WARPS_PER_ENTRY == 0:
            entry = self.table[(self.warps // WARPS_PER_ENTRY) % self.config.depth]
            self.group = deque(decode_table([entry]))
        return self.group.popleft()

    def step(self, inputs):
        config = self.config
        if inputs["launch"]:
            self.warps = 0
            self.group.clear()
        choice = None
        if inputs["warp"]:
            choice = rr_subcore(self.warps, config.subcores)
            if config.hashed:
                hashed = self._hashed_choice()
                if inputs["mode"] == MODE_HASHED:
                    choice = hashed
            self.warps += 1
        if config.hashed and inputs["table_we"]:
            self.table[inputs["table_index"]] = inputs["table_data"]
        self._last = choice
        return {"subcore_valid": int(inputs["warp"]), "subcore": choice}

    def line_trace(self):
        table = " ".join(f"{byte:02x}" for byte in self.table)
        last = "-" if self._last is None else self._last
        return (f"subcore_assigner: subcore={last} warps_since_launch={self.warps} "
                f"group_left={list(self.group)} table=[{table}]")
