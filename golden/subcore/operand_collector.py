"""Golden model of ``subcore.operand_collector``: collector units, per-bank FIFO request
queues and dispatch in allocation order, written from the paper's Fig. 2 description."""

from collections import deque
from dataclasses import dataclass, field
from functools import cache

from gpurf.golden.model import PortModel
from gpurf.hw.subcore.configs import OperandCollectorConfig

__all__ = ["OperandCollector", "bank_of"]


def bank_of(reg: int, warp: int, *, banks: int, bank_map: str) -> int:
    """The register-file bank of register ``reg`` of warp slot ``warp``.

    ``"swizzle"``: ``(reg + warp) % banks``; ``"modulo"``: ``reg % banks``.
    """
    return (reg + warp) % banks if bank_map == "swizzle" else reg % banks


class _Banks(dict):
    """:func:`bank_of` of the registers of one warp slot, by register, computed once."""

    __slots__ = ("bank_map", "banks", "warp")

    def __init__(self, warp: int, banks: int, bank_map: str):
        super().__init__()
        self.warp, self.banks, self.bank_map = warp, banks, bank_map

    def __missing__(self, reg: int) -> int:
        bank = self[reg] = bank_of(reg, self.warp, banks=self.banks, bank_map=self.bank_map)
        return bank


@cache
def _banks(warp: int, banks: int, bank_map: str) -> _Banks:
    return _Banks(warp, banks, bank_map)


@dataclass(slots=True)
class Operand:
    """One source operand entry of a collector unit."""

    reg: int
    bank: int
    ready: bool = False
    data: int = 0


@dataclass(slots=True, eq=False)
class Unit:
    """An allocated collector unit: the instruction's warp and its valid operands by index."""

    warp: int
    operands: dict[int, Operand] = field(default_factory=dict)
    waiting: int = 0
    """Operands not yet ready (kept by the collector as it posts and captures reads)."""

    @property
    def complete(self) -> bool:
        """All operands are ready."""
        return not self.waiting


class OperandCollector(PortModel, config=OperandCollectorConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Each bank's arbitration queue is a FIFO of ``(cu, operand)`` requests in posting order:
    a CU posts all its valid operands, lowest index first, in the cycle it is allocated,
    so the queue head is the oldest CU's lowest operand. The queue head is granted each
    cycle; ``read_latency`` cycles later the bank's data port is captured into the operand.
    An issue goes to the lowest-numbered CU free at the start of the cycle. Dispatch offers
    the earliest allocated CU whose operands are all ready, and keeps offering it until
    taken (stream rule); an operand that is not valid dispatches as zero data.
    """

    def __init__(self, **params):
        super().__init__(**params)
        banks = range(self.config.banks)
        self._read_ports = [(f"read__{b}__valid", f"read__{b}__addr") for b in banks]
        self._read_data = [f"read__{b}__data" for b in banks]

    def reset(self):
        config = self.config
        self.units: list[Unit | None] = [None] * config.cus
        self.order: list[int] = []
        """Busy CUs, earliest allocated first."""
        self.queues = [deque() for _ in range(config.banks)]
        self.queued = 0
        """Requests in all bank queues (the sum of their lengths)."""
        self.in_flight: deque[tuple[int, int, int, int]] = deque()
        """Granted reads: ``(due cycle, bank, cu, operand)``, in grant order (so in due
        order: every read takes ``read_latency`` cycles)."""
        self.held: int | None = None
        """The CU offered on ``dispatch`` and not taken in the previous cycle."""
        self.cycle = 0
        self._trace = ""

    def unpack_issue(self, bits: int) -> tuple[int, dict[int, int]]:
        """``(warp, {operand index: reg})`` of the valid operands of an issue payload."""
        issue = self.ports["issue__payload"].unpack(bits)
        return issue.warp, {i: operand.reg for i, operand in enumerate(issue.operand)
                            if operand.valid}

    def free_unit(self) -> int | None:
        """The CU an issue this cycle would take: the lowest-numbered one free at the start
        of the cycle (``issue__ready`` is ``free_unit() is not None``)."""
        units = self.units
        return units.index(None) if None in units else None

    def grants(self) -> dict[int, tuple[int, int]]:
        """This cycle's grants: per bank with requests, its queue head ``(cu, operand)``."""
        if not self.queued:
            return {}
        return {bank: queue[0] for bank, queue in enumerate(self.queues) if queue}

    def queue_lengths(self) -> list[int]:
        """Per bank, the requests not yet granted at the start of the cycle."""
        return [len(queue) for queue in self.queues]

    @property
    def idle(self) -> bool:
        """No CU is busy (so no request is queued or in flight): a cycle changes nothing but
        the cycle counter, which only timestamps reads in flight."""
        return not self.order

    def offer(self) -> int | None:
        """The CU offered on ``dispatch`` this cycle: the one held from the previous cycle,
        else the earliest allocated CU whose operands are all ready."""
        if self.held is not None:
            return self.held
        units = self.units
        for c in self.order:
            if not units[c].waiting:
                return c
        return None

    def _outputs(self, grants, offer) -> dict:
        ports = self.ports
        out = {"issue__ready": int(None in self.units),
               "queue_len": ports["queue_len"].pack([len(q) for q in self.queues]),
               "dispatch__valid": int(offer is not None),
               "dispatch__payload": None if offer is None else self._dispatch_payload(offer)}
        for bank, (valid, addr) in enumerate(self._read_ports):
            request = grants.get(bank)
            out[valid] = int(request is not None)
            out[addr] = None if request is None else self._address(*request)
        return out

    def _address(self, cu: int, index: int) -> int:
        """A ``read[b].addr`` value (every bank's port has the codec of bank 0's)."""
        unit = self.units[cu]
        return self.ports["read__0__addr"].pack({"warp": unit.warp,
                                                 "reg": unit.operands[index].reg})

    def _dispatch_payload(self, cu: int) -> int:
        unit = self.units[cu]
        operands = unit.operands
        return self.ports["dispatch__payload"].pack({
            "warp": unit.warp,
            "valid": sum(1 << i for i in operands),
            "data": [operands[i].data if i in operands else 0
                     for i in range(self.config.operands)],
        })

    def step(self, inputs: dict) -> dict:
        grants, offer = self.grants(), self.offer()
        outputs = self._outputs(grants, offer)
        self._trace = self._describe(grants, offer)
        issue = self.unpack_issue(inputs["issue__payload"]) if inputs["issue__valid"] else None
        self.advance(grants, offer, bool(inputs["dispatch__ready"]), issue,
                     [inputs[data] for data in self._read_data])
        return outputs

    def advance(self, grants, offer, dispatch_ready: bool, issue, read_data=None) -> int | None:
        """Take the clock edge of a cycle whose decisions were ``grants()`` and ``offer()``.

        ``issue`` is ``(warp, {operand index: reg})`` or ``None``; ``read_data[bank]`` the
        bank's data port this cycle (``None``: zeros, for models that do not carry data).
        Returns the CU the issue was allocated to (``None`` if none was free or no issue).
        This is the whole state update of :meth:`step`, callable without packed ports.
        """
        units = self.units
        free = units.index(None) if None in units else None
        if self.in_flight:
            self._capture(read_data)
        if grants:
            due, queues, in_flight = self.cycle + self.config.read_latency, self.queues, \
                self.in_flight
            for bank, (cu, index) in grants.items():
                queues[bank].popleft()
                in_flight.append((due, bank, cu, index))
            self.queued -= len(grants)
        if offer is not None and dispatch_ready:
            units[offer] = None
            self.order.remove(offer)
            self.held = None
        else:
            self.held = offer
        allocated = None
        if issue is not None and free is not None:
            self._allocate(free, *issue)
            allocated = free
        self.cycle += 1
        return allocated

    def _capture(self, read_data) -> None:
        """Capture the reads due this cycle (the oldest ones in flight)."""
        in_flight, units, cycle = self.in_flight, self.units, self.cycle
        while in_flight and in_flight[0][0] == cycle:
            _, bank, cu, index = in_flight.popleft()
            unit = units[cu]
            operand = unit.operands[index]
            operand.data = 0 if read_data is None else read_data[bank]
            operand.ready = True
            unit.waiting -= 1

    def _allocate(self, cu: int, warp: int, regs: dict[int, int]) -> None:
        """Allocate CU ``cu`` (the lowest-numbered one free at the start of the cycle):
        its valid operands join their banks' queues, lowest operand index first."""
        config, queues = self.config, self.queues
        banks = _banks(warp, config.banks, config.bank_map)
        operands = {}
        for index, reg in sorted(regs.items()):
            bank = banks[reg]
            operands[index] = Operand(reg, bank)
            queues[bank].append((cu, index))
        self.units[cu] = Unit(warp, operands, len(operands))
        self.queued += len(operands)
        self.order.append(cu)

    def _describe(self, grants, offer) -> str:
        units = " ".join(
            "-" if u is None else
            f"cu{c}(w{u.warp} " + ",".join(
                f"{i}:r{op.reg}b{op.bank}{'R' if op.ready else ''}"
                for i, op in u.operands.items()) + ")"
            for c, u in enumerate(self.units))
        queues = " ".join(f"q{b}={list(q)}" for b, q in enumerate(self.queues))
        return (f"cycle {self.cycle}: {units} order={self.order} {queues} grants={grants} "
                f"offer={offer}")

    def line_trace(self) -> str:
        return f"operand_collector: {self._trace}"
