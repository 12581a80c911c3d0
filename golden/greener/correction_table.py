"""Golden model of ``greener.correction_table``, written from the paper's Sections 3.3-3.4:
per warp, the list of in-flight decoded instructions ``(pc, registers)``."""

from gpurf.golden.model import PortModel
from gpurf.hw.greener.configs import CorrectionTableConfig

__all__ = ["CorrectionTable", "keep_on"]


def keep_on(in_flight, pc: int, reg: int) -> bool:
    """Paper 3.4: keep ``reg`` ON when another instruction (a different PC) of the warp,
    among ``in_flight`` ``(pc, registers)`` pairs, accesses it."""
    return any(other != pc and reg in regs for other, regs in in_flight)


class CorrectionTable(PortModel, config=CorrectionTableConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    For ``warps`` cycles after reset the table is clearing (not ready, no ``keep_on``).
    Then an insert is stored when its warp has fewer than ``entries`` instructions at the
    start of the cycle, it names at least one register and its PC is not the reserved
    all-ones PC; a remove drops one instance of its PC (if any); queries see the table as
    it was at the start of the cycle. An insert whose registers differ from a stored
    instance of the same warp and PC breaks the protocol (one PC, one static instruction)
    and raises ``ValueError``.
    """

    def reset(self):
        self.in_flight: list[list[tuple[int, frozenset[int]]]] = [
            [] for _ in range(self.config.warps)]
        self.clear_left = self.config.warps
        self._trace = (False, [])

    def unpack_insert(self, bits: int) -> tuple[int, int, frozenset[int]]:
        """``(warp, pc, registers)`` of an insert payload (the fields with ``valid`` set)."""
        insert = self.ports["insert__payload"].unpack(bits)
        regs = frozenset(reg for k, reg in enumerate(insert.reg) if insert.valid >> k & 1)
        return insert.warp, insert.pc, regs

    def _outputs(self, inputs: dict, ready: bool) -> dict:
        bits = 0
        if ready:
            in_flight = self.in_flight
            for port, q in enumerate(self.ports["query"].unpack(inputs["query"])):
                if q.valid and keep_on(in_flight[q.warp], q.pc, q.reg):
                    bits |= 1 << port
        return {"ready": int(ready), "insert__ready": int(ready), "remove__ready": int(ready),
                "keep_on": bits}

    def step(self, inputs: dict) -> dict:
        ready = self.clear_left == 0
        outputs = self._outputs(inputs, ready)
        self._trace = (ready, [list(entries) for entries in self.in_flight])
        inserted = remove = None
        if ready and inputs["insert__valid"]:
            inserted = self.unpack_insert(inputs["insert__payload"])
        if ready and inputs["remove__valid"]:
            payload = self.ports["remove__payload"].unpack(inputs["remove__payload"])
            remove = payload.warp, payload.pc
        self._edge(inserted, remove)
        return outputs

    def fast_step(self, queries, insert=None, remove=None) -> int:
        """:meth:`step` from plain values, for a caller that needs only ``keep_on`` (the
        golden SM): ``queries`` ``[(warp, pc, reg), ...]`` (the valid ones, port 0 on),
        ``insert`` ``(warp, pc, registers)`` (at most ``entry_regs``), ``remove`` ``(warp,
        pc)``; returns ``keep_on``. No line trace."""
        bits = 0
        if self.clear_left == 0:
            in_flight = self.in_flight
            for port, (warp, pc, reg) in enumerate(queries):
                for other, regs in in_flight[warp]:  # :func:`keep_on`, inline
                    if other != pc and reg in regs:
                        bits |= 1 << port
                        break
            if insert is not None:
                insert = insert[0], insert[1], frozenset(insert[2])
        self._edge(insert, remove)
        return bits

    def _edge(self, inserted, remove) -> None:
        """The clock edge: clearing, or the remove and the insert (both seen at the start
        of the cycle)."""
        if self.clear_left:
            self.clear_left -= 1
            return
        if inserted is not None:
            self._check_same_pc(*inserted)
            held = len(self.in_flight[inserted[0]])  # at the start of the cycle
        if remove is not None:
            self._remove(*remove)
        if inserted is not None:
            warp, pc, regs = inserted
            if held < self.config.entries and regs and pc != self.config.empty_pc:
                self.in_flight[warp].append((pc, regs))

    def _check_same_pc(self, warp: int, pc: int, regs: frozenset[int]) -> None:
        for other, stored in self.in_flight[warp]:
            if other == pc and stored != regs:
                raise ValueError(f"warp {warp} pc {pc:#x}: inserted registers {sorted(regs)} "
                                 f"differ from an in-flight instance's {sorted(stored)}")

    def _remove(self, warp: int, pc: int) -> None:
        for index, (other, _) in enumerate(self.in_flight[warp]):
            if other == pc:
                del self.in_flight[warp][index]
                return

    @staticmethod
    def _describe(in_flight) -> str:
        return " ".join(
            f"w{w}[" + ",".join(f"{pc:#x}:{sorted(regs)}" for pc, regs in entries) + "]"
            for w, entries in enumerate(in_flight) if entries)

    def line_trace(self) -> str:
        """The table at the start of the last step (kept raw, formatted only here)."""
        ready, in_flight = self._trace
        return f"correction_table: ready={int(ready)} {self._describe(in_flight)}"
