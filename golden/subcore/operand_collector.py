"""Golden model of ``subcore.operand_collector``: an issue register, collector units, per-bank
FIFO request queues and dispatch in allocation order, written from the paper's Fig. 2
description and Accel-Sim's collector cycle (dispatch, then bank reads, then allocation)."""

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
    """Operands not yet granted (kept by the collector as it posts and grants reads)."""
    ready_at: int = 0
    """The cycle the last granted read's data reaches the unit (it may dispatch then)."""
    tag: object = None
    """What the issuer attached to the instruction (``issue[2]``; the port model: none)."""


class OperandCollector(PortModel, config=OperandCollectorConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    A cycle runs in Accel-Sim's order (``opndcoll_rfu_t::step``: dispatch, bank reads,
    allocation), so a collector unit (CU) dispatched in a cycle takes a new instruction in
    the same cycle:

    1. Dispatch offers the earliest allocated CU whose operands are all ready or arrive
       this cycle (their data bypasses the CU's registers), and keeps offering it until
       taken (stream rule); an operand that is not valid dispatches as zero data.
    2. Each bank's arbitration queue is a FIFO of ``(cu, operand)`` requests in posting
       order; the head is granted unless a writeback uses the bank this cycle (``write``:
       the write port has priority over reads); its data arrives ``read_latency`` cycles
       later.
    3. The issue register's instruction goes to the lowest-numbered CU free after this
       cycle's dispatch, posting its valid operands to their banks' queues, lowest index
       first (so a queue head is the oldest CU's lowest operand).
    4. An issue is accepted into the issue register when it is empty after step 3.

    Without bank conflicts a CU therefore turns over every ``1 + read_latency`` cycles, and
    an instruction issued in cycle ``t`` dispatches in ``t + 2 + read_latency``.
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
        self.carries_data = True
        """Keep granted reads in flight to capture their data (a timing model without
        register values turns this off; decisions do not depend on it)."""
        self.held: int | None = None
        """The CU offered on ``dispatch`` and not taken in the previous cycle."""
        self.buffer: tuple[int, dict[int, int]] | None = None
        """The issue register: ``(warp, {operand index: reg})`` waiting for a CU."""
        self.cycle = 0
        self._trace = ""
        self._shared = {}
        """``(warp, id(regs))`` -> ``(regs, operands, posts)`` (:meth:`_shared_operands`)."""

    def unpack_issue(self, bits: int) -> tuple[int, dict[int, int]]:
        """``(warp, {operand index: reg})`` of the valid operands of an issue payload."""
        issue = self.ports["issue__payload"].unpack(bits)
        return issue.warp, {i: operand.reg for i, operand in enumerate(issue.operand)
                            if operand.valid}

    def accepts(self, dispatching: bool) -> bool:
        """``issue.ready``: the issue register is empty after this cycle's allocation
        (``dispatching``: this cycle's offer is taken, freeing its CU first)."""
        return self.buffer is None or dispatching or None in self.units

    def grants(self, writes: int = 0) -> dict[int, tuple[int, int]]:
        """This cycle's grants: per bank with requests and no writeback (bit ``b`` of
        ``writes``), its queue head ``(cu, operand)``."""
        if not self.queued:
            return {}
        return {bank: queue[0] for bank, queue in enumerate(self.queues)
                if queue and not writes >> bank & 1}

    def queue_lengths(self) -> list[int]:
        """Per bank, the requests not yet granted at the start of the cycle."""
        return [len(queue) for queue in self.queues]

    @property
    def idle(self) -> bool:
        """No CU is busy and the issue register is empty (so no request is queued or in
        flight): a cycle changes nothing but the cycle counter."""
        return not self.order and self.buffer is None

    def offer(self) -> int | None:
        """The CU offered on ``dispatch`` this cycle: the one held from the previous cycle,
        else the earliest allocated CU whose operands are all granted and arrived by now."""
        if self.held is not None:
            return self.held
        units, cycle = self.units, self.cycle
        for c in self.order:
            unit = units[c]
            if not unit.waiting and unit.ready_at <= cycle:
                return c
        return None

    def _outputs(self, grants, offer, dispatching) -> dict:
        ports = self.ports
        out = {"issue__ready": int(self.accepts(dispatching)),
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
        self._capture([inputs[data] for data in self._read_data])
        grants, offer = self.grants(inputs["write"]), self.offer()
        dispatching = offer is not None and bool(inputs["dispatch__ready"])
        outputs = self._outputs(grants, offer, dispatching)
        self._trace = self._describe(grants, offer)
        issue = self.unpack_issue(inputs["issue__payload"]) if inputs["issue__valid"] else None
        self.advance(grants, offer, dispatching, issue)
        return outputs

    def advance(self, grants, offer, dispatch_ready: bool, issue) -> bool:
        """Take the clock edge of a cycle whose decisions were ``grants()`` and ``offer()``.

        ``issue`` is ``(warp, {operand index: reg})``, optionally with a third item kept as
        the CU's :attr:`Unit.tag`, or ``None``. Returns whether the
        issue register took it (:meth:`accepts`). This is the whole state update of
        :meth:`step` after its capture, callable without packed ports.
        """
        units = self.units
        if grants:
            self._grant(grants)
        if offer is not None and dispatch_ready:
            units[offer] = None
            self.order.remove(offer)
            self.held = None
        else:
            self.held = offer
        buffer = self.buffer
        if buffer is not None and None in units:
            self._allocate(units.index(None), *buffer)
            self.buffer = buffer = None
        accepted = issue is not None and buffer is None
        if accepted:
            self.buffer = issue
        self.cycle += 1
        return accepted

    def _grant(self, grants) -> None:
        """Pop the granted queue heads; their data is due ``read_latency`` cycles later."""
        due, queues, units = self.cycle + self.config.read_latency, self.queues, self.units
        for bank, (cu, index) in grants.items():
            queues[bank].popleft()
            unit = units[cu]
            unit.waiting -= 1
            unit.ready_at = due
            if self.carries_data:
                self.in_flight.append((due, bank, cu, index))
        self.queued -= len(grants)

    def _capture(self, read_data) -> None:
        """Capture the reads due this cycle (the oldest ones in flight) from the banks'
        data ports."""
        in_flight, units, cycle = self.in_flight, self.units, self.cycle
        while in_flight and in_flight[0][0] == cycle:
            _, bank, cu, index = in_flight.popleft()
            operand = units[cu].operands[index]
            operand.data = read_data[bank]
            operand.ready = True

    def _allocate(self, cu: int, warp: int, regs: dict[int, int], tag=None) -> None:
        """Allocate CU ``cu``: its valid operands join their banks' queues, lowest operand
        index first."""
        if self.carries_data:
            operands, posts = self._operands(warp, regs)
        else:
            operands, posts = self._shared_operands(warp, regs)
        queues = self.queues
        for bank, index in posts:
            queues[bank].append((cu, index))
        self.units[cu] = Unit(warp, operands, len(posts), 0, tag)
        self.queued += len(posts)
        self.order.append(cu)

    def _operands(self, warp: int, regs: dict[int, int]):
        """The operands of an allocation and its queue posts ``(bank, index)``, in order."""
        config = self.config
        banks = _banks(warp, config.banks, config.bank_map)
        operands = {index: Operand(reg, banks[reg]) for index, reg in sorted(regs.items())}
        return operands, tuple((op.bank, index) for index, op in operands.items())

    def _shared_operands(self, warp: int, regs: dict[int, int]):
        """:meth:`_operands`, built once per warp slot and ``regs`` object and shared by
        its allocations (a collector that carries no data never changes an operand; the
        cache holds ``regs``, so its ``id`` is not reused while cached)."""
        key = (warp, id(regs))
        entry = self._shared.get(key)
        if entry is None:
            entry = self._shared[key] = (regs, *self._operands(warp, regs))
        return entry[1], entry[2]

    def _describe(self, grants, offer) -> str:
        units = " ".join(
            "-" if u is None else
            f"cu{c}(w{u.warp} " + ",".join(
                f"{i}:r{op.reg}b{op.bank}{'R' if op.ready else ''}"
                for i, op in u.operands.items()) + ")"
            for c, u in enumerate(self.units))
        queues = " ".join(f"q{b}={list(q)}" for b, q in enumerate(self.queues))
        return (f"cycle {self.cycle}: buffer={self.buffer} {units} order={self.order} "
                f"{queues} grants={grants} offer={offer}")

    def line_trace(self) -> str:
        return f"operand_collector: {self._trace}"
