"""Golden model of ``wir.backend``: the golden ``wir.rename_reuse`` in front of the golden
``wir.pipeline`` (which holds the pool), with the hit queue, the reservation fields beside
each result and the exit sweep; every register's holders are recounted every cycle."""

from collections import Counter, deque
from functools import cached_property

from gpurf.golden.model import PortModel
from gpurf.hw.wir.configs import SOURCES, BackendConfig
from gpurf.hw.wir.layouts import Outcome

from .pipeline import LeakError, Pipeline
from .register_pool import ProtocolError
from .rename_reuse import RenameReuse

__all__ = ["Backend", "LeakError"]

_DIVERGENT = (Outcome.DUMMY_MOV, Outcome.PINNED)
_NONE = (None,) * SOURCES


def _present(pregs) -> list:
    """The registers of ``pregs`` that are not ``None``."""
    return [preg for preg in pregs if preg is not None]


class Backend(PortModel, config=BackendConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge
    and recounts every register's holders (:meth:`check_references`).

    Each cycle: the pipeline settles first (its decision names the register a reserved
    result fills), then the front steps (its saturation queries answered by the pool as at
    the start of the cycle, through ``saturated_by``), then the pipeline takes its edge with
    the front's reference events. ``queue`` holds the reuse hits waiting to retire as
    ``(warp, reg, preg)``, ``carried`` the reservation fields beside the results in the
    pipeline (``None``: no result), ``sweep`` the exit sweep's ``(warp, reg)``.
    """

    @cached_property
    def front(self) -> RenameReuse:
        return RenameReuse(**self.config.front.params())

    @cached_property
    def back(self) -> Pipeline:
        return Pipeline(**self.config.back.params())

    def reset(self):
        self.front.reset()
        self.back.reset()
        self.front.saturated_by = self.back._saturated
        self.back.reuse_from_holds = False
        self.queue: deque = deque()
        self.carried: deque = deque([None, None], maxlen=2)
        self.sweep: tuple[int, int] | None = None
        self.issued: deque = deque([_NONE, _NONE], maxlen=2)
        """Per source, the register of the in-flight source reference (``None``: none) of
        the instructions issued one and two cycles ago."""
        self.handed: Counter = Counter()
        """Source references handed to the environment on ``sources``, not yet released."""
        config = self.config
        self._reg_mask = (1 << config.back.reg_bits) - 1
        self._preg_mask = (1 << config.preg_bits) - 1
        self.checks = 0
        back = self.back.ports
        self._quiet = {"query": back["query"].pack([])}

    def step(self, inputs: dict) -> dict:
        front = self.front
        rename = front.rename
        idle = rename.clear_left == 0 and rename.sweep is None
        leaving = front.leaving
        arriving = leaving is not None and leaving["response"]["hit"]
        empty = not any(entry is not None for entry in self.carried) and not self.queue
        opened = (not self.queue and not arriving and idle and not inputs["exit__valid"]
                  and self.sweep is None)
        waiting = len(self.queue)
        back_in = self._back_inputs(inputs, opened, idle)
        back_out = self.back.settle(back_in)
        result_taken = bool(back_in["result__valid"] and back_out["result__ready"])
        retired = self._retired(back_out)
        exit_taken = bool(inputs["exit__valid"] and idle and empty)
        sources, saturated = self._issue_sources(inputs)
        front_in = self._front_inputs(inputs, back_out, retired, exit_taken)
        front_in["issue__valid"] = int(bool(inputs["issue__valid"]) and not saturated)
        issue_ready = bool(idle and not saturated)
        issue_taken = bool(inputs["issue__valid"] and issue_ready)
        ending, handed = self._out_sources(leaving)
        released = self._released(inputs)
        front_out = front.step(front_in)
        if retired is not None and not front_out["retire__ready"]:
            raise ProtocolError("a retirement while the rename table was not idle")
        if self.sweep is not None and not back_out["unmap__ready"]:
            raise ProtocolError("the exit sweep's unmap was refused")
        incs, decs = self._events(front_out)
        incs += _present(sources) if issue_taken else []
        decs += _present(ending) + released
        self.back.commit(back_in, (incs, decs))
        self.issued.appendleft(sources if issue_taken else _NONE)
        self.handed.update(_present(handed))
        self._edge(inputs, back_in, back_out, leaving if arriving else None, result_taken,
                   exit_taken)
        self.check_references()
        return {
            "issue__ready": int(issue_ready),
            "sources": self.ports["sources"].pack([{} if preg is None
                                                   else {"valid": 1, "preg": preg}
                                                   for preg in handed]),
            "out__valid": front_out["out__valid"],
            "out__payload": front_out["out__payload"],
            "result__ready": int(opened and back_out["result__ready"]),
            "hold__ready": back_out["hold__ready"],
            "held__valid": back_out["held__valid"],
            "held__payload": back_out["held__payload"],
            "exit__ready": int(idle and empty),
            "retired__valid": back_out["retired__valid"],
            "retired__payload": back_out["retired__payload"],
            "in_use": back_out["in_use"],
            "low_register": back_out["low_register"],
            "verify_cached": back_out["verify_cached"],
            "hits": waiting,
            "ready": front_out["ready"],
        }

    def _issue_sources(self, inputs) -> tuple[list, bool]:
        """Per source, the register of a register source with a valid mapping (else
        ``None``), and whether one of their counts is saturated (the issue waits)."""
        if not inputs["issue__valid"]:
            return _NONE, False
        config, back = self.config, self.back
        issue = self.ports["issue__payload"].unpack(inputs["issue__payload"])
        regs = issue.opcode.regs
        pregs = []
        for k in range(SOURCES):
            preg, valid, _ = back.mapping[issue.warp * config.regs
                                          + (issue.operand[k] & self._reg_mask)]
            pregs.append(preg if regs >> k & 1 and valid else None)
        return pregs, any(back._saturated(preg) for preg in _present(pregs))

    def _held_by(self, leaving) -> list:
        """The source references the instruction on ``out`` holds (none while it is
        queued for a re-check: the ticket holds them)."""
        if leaving is None or leaving["response"]["pending"]:
            return _NONE
        if not leaving["retried"]:
            return self.issued[1]
        lookup = leaving["lookup"]
        regs = lookup.opcode.regs
        return [value & self._preg_mask if regs >> k & 1 else None
                for k, value in enumerate(lookup.operand)]

    def _out_sources(self, leaving) -> tuple[list, list]:
        """The out's source references: ended here (a hit), or handed to the
        environment."""
        held = self._held_by(leaving)
        if leaving is not None and leaving["response"]["hit"]:
            return held, _NONE
        return _NONE, held

    def _released(self, inputs) -> list:
        """The environment's ``release``: each must end a handed reference."""
        released = [ref.preg for ref in self.ports["release"].unpack(inputs["release"])
                    if ref.valid]
        for preg in released:
            if self.handed[preg] <= 0:
                raise ProtocolError(f"release of register {preg}, which was not handed out")
            self.handed[preg] -= 1
        return released

    def _back_inputs(self, inputs, opened, idle) -> dict:
        """The pipeline's inputs: the result (if open), the oldest hit (while the rename
        table is idle), the sources, the sweep's unmap."""
        back, ports = self.back.ports, self.ports
        ins = {"result__valid": int(bool(inputs["result__valid"]) and opened),
               "result__payload": 0, "query": self._quiet["query"]}
        if ins["result__valid"]:
            result = ports["result__payload"].unpack(inputs["result__payload"])
            ins["result__payload"] = back["result__payload"].pack(
                {"warp": result.warp, "reg": result.reg, "value": result.value,
                 "mask": result.mask})
        hit = self.queue[0] if self.queue and idle else None
        ins["reuse__valid"] = int(hit is not None)
        ins["reuse__payload"] = (back["reuse__payload"].pack(
            {"warp": hit[0], "reg": hit[1], "preg": hit[2]}) if hit is not None else 0)
        for port in ("hold", "drop"):
            ins[f"{port}__valid"] = inputs[f"{port}__valid"]
            ins[f"{port}__payload"] = inputs[f"{port}__payload"] or 0
        ins["unmap__valid"] = int(self.sweep is not None)
        ins["unmap__payload"] = (back["unmap__payload"].pack(
            {"warp": self.sweep[0], "reg": self.sweep[1]}) if self.sweep is not None else 0)
        return ins

    def _retired(self, back_out):
        if not back_out["retired__valid"]:
            return None
        return self.back.ports["retired__payload"].unpack(back_out["retired__payload"])

    def _front_inputs(self, inputs, back_out, retired, exit_taken) -> dict:
        """The front's inputs: the issue, block events, the retirement into the rename
        table, the fill of a decided reserved result, the exit."""
        front = self.front.ports
        ins = {name: inputs[name] for name in ("issue__valid", "issue__payload",
                                               "barrier__valid", "barrier__payload",
                                               "launch__valid", "launch__payload")}
        ins.update(result_saturated=0, operand_saturated=0,
                   low_reg=back_out["low_register"], retire__valid=0, retire__payload=0,
                   exit__valid=int(exit_taken), exit__payload=inputs["exit__payload"] or 0,
                   fill__valid=0, fill__payload=0)
        if retired is not None:
            ins["retire__valid"] = 1
            ins["retire__payload"] = front["retire__payload"].pack(
                {"warp": retired.warp, "reg": retired.reg, "preg": retired.preg,
                 "divergent": int(Outcome(retired.outcome) in _DIVERGENT)})
        decided = self.carried[1]
        if decided is not None and decided.reserved:
            if Outcome(retired.outcome) in _DIVERGENT:
                raise ProtocolError("a result that reserved a reuse-buffer entry must be "
                                    "convergent")
            ins["fill__valid"] = 1
            ins["fill__payload"] = front["fill__payload"].pack(
                {"index": decided.index, "tag": decided.tag, "result": retired.preg})
        return ins

    def _events(self, front_out) -> tuple[list, list]:
        """The reuse buffer's reference events (the front's ``inc[1:]``, ``dec[1:]``; the
        rename table's ``[0]`` are a read copy's, not counted)."""
        front = self.front.ports
        return tuple([ref.preg for ref in front[port].unpack(front_out[port])[1:] if ref.valid]
                     for port in ("inc", "dec"))

    def _edge(self, inputs, back_in, back_out, arriving, result_taken, exit_taken):
        """The hit queue, the reservation fields and the sweep."""
        if back_in["reuse__valid"] and back_out["reuse__ready"]:
            self.queue.popleft()
        if arriving is not None:
            self.queue.append((arriving["warp"], arriving["dst"],
                               arriving["response"]["result"]))
        if len(self.queue) > self.config.hits:
            raise ProtocolError("the hit queue overflowed")
        fields = None
        if result_taken:
            result = self.ports["result__payload"].unpack(inputs["result__payload"])
            fields = result
        self.carried.appendleft(fields)
        if self.sweep is not None:
            warp, reg = self.sweep
            self.sweep = (warp, reg + 1) if reg + 1 < self.config.regs else None
        if exit_taken:
            self.sweep = (self.ports["exit__payload"].unpack(inputs["exit__payload"]), 0)

    def holders(self) -> Counter:
        """Per register: the pipeline's holders, the reuse buffer's entries (operands, and
        the result once filled), the hit in ``out`` and the queued hits."""
        counted = self.back.holders()
        for entry in self.front.reuse.entries:
            if entry is not None:
                counted.update(preg for preg in entry.refs if preg is not None)
                if not entry.pending:
                    counted[entry.result] += 1
        leaving = self.front.leaving
        if leaving is not None and leaving["response"]["hit"]:
            counted[leaving["response"]["result"]] += 1
        counted.update(preg for _, _, preg in self.queue)
        counted.update(_present(self.issued[0]) if self.front.stage is not None else [])
        counted.update(_present(self._held_by(leaving)))
        mask = self._preg_mask
        for ticket in self.front.retry.queue:
            tag = ticket["tag"]
            regs = tag["opcode"].regs
            counted.update(value & mask for k, value in enumerate(tag["operand"])
                           if regs >> k & 1)
        counted.update(+self.handed)
        return counted

    def check_references(self) -> None:
        """The pool's counts equal the holders, no register free and held, none leaked;
        the front's rename table equals the pipeline's valid mappings."""
        self.back.check_references(self.holders())
        self._check_copy()
        self.checks += 1

    def _check_copy(self) -> None:
        config, back = self.config, self.back
        for warp, maps in enumerate(self.front.rename.maps):
            for reg in range(config.regs):
                preg, valid, pin = back.mapping[warp * config.regs + reg]
                copy = maps.get(reg)
                if copy != ((preg, pin) if valid else None):
                    raise LeakError(f"rename table w{warp} r{reg} = {copy}, the pipeline's "
                                    f"mapping {(preg, valid, pin)}")

    def line_trace(self) -> str:
        return (f"backend: queue={list(self.queue)} sweep={self.sweep} "
                f"{self.front.line_trace()} {self.back.line_trace()}")
