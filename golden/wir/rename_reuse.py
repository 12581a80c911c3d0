"""Golden model of ``wir.rename_reuse``, from the paper's Fig. 5 and Sections V-B, V-C,
VI-A, VI-B: the golden rename table, reuse buffer, load filter and pending-retry queue
chained by two pipeline registers (rename stage, reuse stage)."""

from functools import cached_property
from typing import Any, NamedTuple

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import SOURCES, RenameReuseConfig

from .load_filter import LoadFilter
from .pending_retry import PendingRetry
from .rename_table import RenameTable
from .reuse_buffer import ReuseBuffer

__all__ = ["Lookup", "RenameReuse"]


class Lookup(NamedTuple):
    """A reuse-buffer lookup (the fields of ``wir.reuse_buffer``'s ``lookup`` port)."""

    opcode: Any
    operand: list[int]
    tbid: int
    barrier: int
    divergent: int
    bypass: int


class _Issue(NamedTuple):
    """What the rename table reads for an issued instruction."""

    warp: int
    src: list[int]
    dst: int


class _Store(NamedTuple):
    """The load filter's store event of a staged store."""

    warp: int
    shared: int
    global_: int


class RenameReuse(PortModel, config=RenameReuseConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    ``stage`` is the instruction in the reuse stage (issued last cycle, ``None`` if none),
    ``leaving`` the instruction on ``out`` this cycle (decided last cycle). The parts are
    driven through their ``advance`` methods on Python values: only the composition's own
    ports are packed and unpacked; the pending-retry queue holds tickets as dicts.
    """

    @cached_property
    def rename(self) -> RenameTable:
        return RenameTable(**self.config.rename.params())

    @cached_property
    def reuse(self) -> ReuseBuffer:
        return ReuseBuffer(**self.config.reuse.params())

    @cached_property
    def loads(self) -> LoadFilter:
        return LoadFilter(**self.config.loads.params())

    @cached_property
    def retry(self) -> PendingRetry:
        return PendingRetry(**self.config.retry.params())

    def reset(self):
        config = self.config
        for part in (self.rename, self.reuse, self.loads, self.retry):
            part.reset()
        self.stage = None
        self.leaving: dict | None = None
        self._reg_mask = (1 << config.rename.reg_bits) - 1
        self._preg_mask = (1 << config.preg_bits) - 1
        self._no_events = {name: self.ports[name].pack([]) for name in ("query", "inc", "dec")}
        self._last = None
        self.saturated_by = None

    def _fresh_lookup(self, renamed: dict, answer: dict) -> Lookup:
        """The staged instruction's lookup: register operands renamed, load-filter fields."""
        stage = self.stage
        regs = stage.opcode.regs
        sources = renamed["src"]
        unmapped = any(regs >> k & 1 and not sources[k]["valid"] for k in range(SOURCES))
        return Lookup(
            opcode=stage.opcode,
            operand=[sources[k]["preg"] if regs >> k & 1 else stage.operand[k]
                     for k in range(SOURCES)],
            tbid=answer["tbid"], barrier=answer["barrier"], divergent=stage.divergent,
            bypass=int(bool(stage.bypass) or not answer["reuse"] or unmapped))

    @staticmethod
    def _ticket_lookup(ticket: dict) -> Lookup:
        tag = ticket["tag"]
        return Lookup(opcode=tag["opcode"], operand=tag["operand"], tbid=tag["tbid"],
                      barrier=tag["barrier"], divergent=0, bypass=0)

    def _ticket(self, lookup: Lookup, renamed: dict) -> dict:
        """A pending hit's queue entry."""
        mask = self._preg_mask
        return {"warp": self.stage.warp, "dst": self.stage.dst, "dst_entry": renamed["dst"],
                "tag": {"opcode": lookup.opcode, "operand": [v & mask for v in lookup.operand],
                        "tbid": lookup.tbid, "barrier": lookup.barrier}}

    def step(self, inputs: dict) -> dict:
        ports, stage = self.ports, self.stage
        rename = self._rename(inputs)
        renamed = rename["renamed"]
        if (renamed is not None) != (stage is not None):
            raise AssertionError("rename table answer out of step with the stage register")
        answer = self._loads(inputs)
        ticket = self.retry.head
        if stage is not None:
            lookup = self._fresh_lookup(renamed, answer)
        elif ticket is not None and rename["idle"]:
            lookup = self._ticket_lookup(ticket)
        else:
            lookup = None
        fill = ports["fill__payload"].unpack(inputs["fill__payload"]) \
            if inputs["fill__valid"] else None
        result_saturated, operand_saturated = self._saturations(inputs, lookup)
        response, probe, incs, decs = self.reuse.advance(
            lookup, fill, result_saturated=result_saturated,
            operand_saturated=operand_saturated, low_reg=inputs["low_reg"])
        pending = bool(response and response["pending"])
        enq = self._ticket(lookup, renamed) if stage is not None and pending else None
        queued = len(self.retry.queue)
        taken = self.retry.advance(enq, recheck=stage is None and rename["idle"],
                                   still_pending=pending)
        outputs = {
            "issue__ready": int(rename["idle"]),
            "retire__ready": int(rename["idle"]),
            "exit__ready": int(rename["idle"]),
            "ready": int(rename["ready"]),
            "out__valid": int(self.leaving is not None),
            "out__payload": (None if self.leaving is None
                             else ports["out__payload"].pack(self.leaving)),
            "probe": probe,
            "query": self._query(lookup),
            "queued": ports["queued"].pack(queued),
            "inc": self._events("inc", (rename["inc"], *incs)),
            "dec": self._events("dec", (rename["dec"], *decs)),
        }
        self._last = (lookup, response)
        self.leaving = self._leave(lookup, response, renamed, ticket, queued=taken)
        self.stage = (ports["issue__payload"].unpack(inputs["issue__payload"])
                      if inputs["issue__valid"] and rename["idle"] else None)
        return outputs

    def _saturations(self, inputs, lookup) -> tuple:
        """``result_saturated`` and ``operand_saturated``: the inputs', or, when a
        composition set :attr:`saturated_by` (a register -> saturated function: its pool
        answering ``probe`` and ``query`` in the same cycle), that function's answers."""
        saturated = self.saturated_by
        if saturated is None or lookup is None:
            return inputs["result_saturated"], inputs["operand_saturated"]
        probe = self.reuse.probe(lookup)
        regs, mask = lookup.opcode.regs, self._preg_mask
        operands = any(saturated(value & mask) for k, value in enumerate(lookup.operand)
                       if regs >> k & 1)
        return int(probe is not None and saturated(probe)), int(operands)

    def _rename(self, inputs) -> dict:
        """Step the rename tables: this cycle's issue reads its sources and destination."""
        ports = self.ports
        issue = None
        if inputs["issue__valid"]:
            payload = ports["issue__payload"].unpack(inputs["issue__payload"])
            mask = self._reg_mask
            issue = _Issue(payload.warp, [value & mask for value in payload.operand],
                           payload.dst)
        return self.rename.advance(
            issue=issue,
            retire=(ports["retire__payload"].unpack(inputs["retire__payload"])
                    if inputs["retire__valid"] else None),
            exit_warp=(ports["exit__payload"].unpack(inputs["exit__payload"])
                       if inputs["exit__valid"] else None))

    def _loads(self, inputs) -> dict | None:
        """Step the load filter: the staged instruction's query (its answer, ``None``
        without one) and store; the barrier and launch events."""
        ports, stage = self.ports, self.stage
        answer = store = None
        if stage is not None:
            answer = self.loads.answer(stage.warp, stage.tb, stage.kind)
            if stage.store_shared or stage.store_global:
                store = _Store(stage.warp, stage.store_shared, stage.store_global)
        self.loads.advance(
            store=store,
            barrier=(ports["barrier__payload"].unpack(inputs["barrier__payload"])
                     if inputs["barrier__valid"] else None),
            launch=(ports["launch__payload"].unpack(inputs["launch__payload"])
                    if inputs["launch__valid"] else None))
        return answer

    def _leave(self, lookup, response, renamed, ticket, *, queued) -> dict | None:
        """What ``out`` shows next cycle: the staged instruction's answer, or a re-check
        that is no longer pending."""
        if lookup is None:
            return None
        stage = self.stage
        if stage is not None:
            who = {"warp": stage.warp, "dst": stage.dst, "dst_entry": renamed["dst"]}
        elif response["pending"]:
            return None
        else:
            who = {"warp": ticket["warp"], "dst": ticket["dst"],
                   "dst_entry": ticket["dst_entry"]}
        return {**who, "lookup": lookup, "retried": int(stage is None),
                "response": {**response, "pending": int(queued)}}

    def _events(self, port: str, pregs) -> int:
        """The reference events port ``port`` of the registers ``pregs`` (``None``: no
        event)."""
        if not any(preg is not None for preg in pregs):
            return self._no_events[port]
        return self.ports[port].pack([{} if preg is None else {"valid": 1, "preg": preg}
                                      for preg in pregs])

    def _query(self, lookup) -> int:
        """The ``query`` port: the lookup's register operands."""
        if lookup is None:
            return self._no_events["query"]
        regs, mask = lookup.opcode.regs, self._preg_mask
        return self.ports["query"].pack([
            {"valid": 1, "preg": value & mask} if regs >> k & 1 else {}
            for k, value in enumerate(lookup.operand)])

    def line_trace(self) -> str:
        lookup, response = self._last or (None, None)
        return (f"rename_reuse: stage={self.stage} lookup={lookup} response={response} "
                f"queue={len(self.retry.queue)}")

