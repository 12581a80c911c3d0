"""Golden model of ``wir.rename_reuse``, from the paper's Fig. 5 and Sections V-B, V-C,
VI-A, VI-B: the golden rename table, reuse buffer, load filter and pending-retry queue
chained by two pipeline registers (rename stage, reuse stage)."""

from amaranth.lib import data

from gpurf.hw.wir.rename_reuse import SOURCES, RenameReuseConfig
from gpurf.hw.wir.reuse_buffer import DEC_PORTS, INC_PORTS

from .load_filter import LoadFilter
from .pending_retry import PendingRetry
from .rename_table import RenameTable
from .reuse_buffer import ReuseBuffer

__all__ = ["RenameReuse"]


class RenameReuse:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    ``stage`` is the instruction in the reuse stage (issued last cycle, ``None`` if none),
    ``leaving`` the instruction on ``out`` this cycle (decided last cycle).
    """

    def __init__(self, **params):
        self.config = config = RenameReuseConfig(**params)
        self.rename = RenameTable(warps=config.warps, regs=config.regs, pregs=config.pregs,
                                  sources=SOURCES)
        self.reuse = ReuseBuffer(entries=config.entries, opcode_bits=config.opcode_bits,
                                 preg_bits=config.preg_bits, imm_bits=config.imm_bits,
                                 blocks=config.blocks, barrier_bits=config.barrier_bits)
        self.loads = LoadFilter(warps=config.warps, blocks=config.blocks,
                                barrier_bits=config.barrier_bits)
        self.retry = PendingRetry(depth=config.retry_depth, width=config.ticket_layout.size)
        self.reset()

    def reset(self):
        for model in (self.rename, self.reuse, self.loads, self.retry):
            model.reset()
        self.stage: dict | None = None
        self.leaving: int | None = None
        self._trace = ""

    def _rename(self, inputs) -> dict:
        """Step the rename tables: this cycle's issue reads its sources and destination."""
        config = self.config
        issue = config.issue_layout.from_bits(inputs["issue__payload"])
        mask = (1 << config.rename.reg_width) - 1
        payload = config.rename.issue_layout.const({
            "warp": int(issue.warp), "dst": int(issue.dst),
            "src": [int(issue.operand[k]) & mask for k in range(SOURCES)],
        }).as_value().value
        return self.rename.step({
            "issue__valid": inputs["issue__valid"], "issue__payload": payload,
            **{name: inputs[name] for name in ("retire__valid", "retire__payload",
                                               "exit__valid", "exit__payload")}})

    def _loads(self, inputs) -> dict:
        """Step the load filter: the staged instruction's query and store."""
        stage = self.stage or {"warp": 0, "tb": 0, "kind": 0, "store_shared": 0,
                               "store_global": 0}
        layouts = self.config.loads
        query = layouts.query_layout.const(
            {"warp": stage["warp"], "tb": stage["tb"], "kind": stage["kind"]})
        store = layouts.store_layout.const(
            {"warp": stage["warp"], "shared": stage["store_shared"],
             "global": stage["store_global"]})
        stores = self.stage is not None and bool(stage["store_shared"] or stage["store_global"])
        answer = self.loads.step({
            "query": query.as_value().value, "store__valid": int(stores),
            "store__payload": store.as_value().value,
            **{name: inputs[name] for name in ("barrier__valid", "barrier__payload",
                                               "launch__valid", "launch__payload")}})["answer"]
        view = layouts.answer_layout.from_bits(answer)
        return {"reuse": int(view.reuse), "tbid": int(view.tbid), "barrier": int(view.barrier)}

    def _fresh_lookup(self, renamed: dict, answer: dict) -> dict:
        """The staged instruction's lookup: register operands renamed, load-filter fields."""
        stage = self.stage
        regs = stage["opcode"]["regs"]
        is_reg = [bool(regs >> k & 1) for k in range(SOURCES)]
        unmapped = any(is_reg[k] and not renamed["src"][k]["valid"] for k in range(SOURCES))
        return {
            "opcode": stage["opcode"],
            "operand": [renamed["src"][k]["preg"] if is_reg[k] else stage["operand"][k]
                        for k in range(SOURCES)],
            "tbid": answer["tbid"], "barrier": answer["barrier"],
            "divergent": stage["divergent"],
            "bypass": int(bool(stage["bypass"]) or not answer["reuse"] or unmapped),
        }

    def _ticket_lookup(self, ticket: dict) -> dict:
        tag = ticket["tag"]
        return {"opcode": tag["opcode"], "operand": tag["operand"], "tbid": tag["tbid"],
                "barrier": tag["barrier"], "divergent": 0, "bypass": 0}

    def step(self, inputs: dict) -> dict:
        config = self.config
        rename_out = self._rename(inputs)
        if bool(rename_out["renamed__valid"]) != (self.stage is not None):
            raise AssertionError("rename table answer out of step with the stage register")
        renamed = (_unpack(config.rename.renamed_layout, rename_out["renamed__payload"])
                   if self.stage is not None else None)
        answer = self._loads(inputs)
        head = self.retry.queue[0] if self.retry.queue else None
        ticket = None if head is None else _unpack(config.ticket_layout, head)
        if self.stage is not None:
            lookup = self._fresh_lookup(renamed, answer)
        elif ticket is not None:
            lookup = self._ticket_lookup(ticket)
        else:
            lookup = None
        reuse_out = self.reuse.step({
            "lookup__valid": int(lookup is not None),
            "lookup__payload": 0 if lookup is None else
            config.reuse.lookup_layout.const(lookup).as_value().value,
            **{name: inputs[name] for name in ("result_saturated", "operand_saturated",
                                               "low_reg", "fill__valid", "fill__payload")}})
        response = (None if lookup is None else
                    _unpack(config.reuse.response_layout, reuse_out["response__payload"]))
        pending = bool(response and response["pending"])
        enq = None
        if self.stage is not None and pending:
            enq = self._ticket(lookup, renamed)
        retry_out = self.retry.step({
            "enq__valid": int(enq is not None), "enq__payload": enq or 0,
            "recheck__ready": int(self.stage is None), "still_pending": int(pending)})
        outputs = {
            "issue__ready": rename_out["issue__ready"],
            "retire__ready": rename_out["retire__ready"],
            "exit__ready": rename_out["exit__ready"],
            "ready": rename_out["ready"],
            "out__valid": int(self.leaving is not None),
            "out__payload": self.leaving,
            "probe": reuse_out["probe"],
            "query": self._query(lookup),
            "queued": retry_out["count"],
            "inc": _concat(config.ref_layout, rename_out["ref_inc"], reuse_out["inc"],
                           INC_PORTS),
            "dec": _concat(config.ref_layout, rename_out["ref_dec"], reuse_out["dec"],
                           DEC_PORTS),
        }
        self._trace = (f"stage={self.stage} lookup={lookup} response={response} "
                       f"queue={len(self.retry.queue)}")
        self.leaving = self._leave(lookup, response, renamed, ticket,
                                   queued=enq is not None and retry_out["enq__ready"])
        self.stage = self._next_stage(inputs, rename_out)
        return outputs

    def _ticket(self, lookup: dict, renamed: dict) -> int:
        """A pending hit's queue entry."""
        config = self.config
        mask = (1 << config.preg_bits) - 1
        tag = {"opcode": lookup["opcode"], "operand": [v & mask for v in lookup["operand"]],
               "tbid": lookup["tbid"], "barrier": lookup["barrier"]}
        return config.ticket_layout.const({
            "warp": self.stage["warp"], "dst": self.stage["dst"],
            "dst_entry": renamed["dst"], "tag": tag}).as_value().value

    def _leave(self, lookup, response, renamed, ticket, *, queued) -> int | None:
        """What ``out`` shows next cycle: the staged instruction's answer, or a re-check
        that is no longer pending."""
        if lookup is None:
            return None
        if self.stage is not None:
            who = {"warp": self.stage["warp"], "dst": self.stage["dst"],
                   "dst_entry": renamed["dst"]}
        elif response["pending"]:
            return None
        else:
            who = {name: ticket[name] for name in ("warp", "dst", "dst_entry")}
        return self.config.out_layout.const({
            **who, "lookup": lookup, "retried": int(self.stage is None),
            "response": {**response, "pending": int(bool(queued))},
        }).as_value().value

    def _next_stage(self, inputs, rename_out) -> dict | None:
        if not (inputs["issue__valid"] and rename_out["issue__ready"]):
            return None
        return _unpack(self.config.issue_layout, inputs["issue__payload"])

    def _query(self, lookup) -> int:
        config = self.config
        mask = (1 << config.preg_bits) - 1
        events = []
        for k in range(SOURCES):
            used = lookup is not None and lookup["opcode"]["regs"] >> k & 1
            events.append({"valid": int(bool(used)),
                           "preg": lookup["operand"][k] & mask if used else 0})
        return data.ArrayLayout(config.ref_layout, SOURCES).const(events).as_value().value

    def line_trace(self) -> str:
        return f"rename_reuse: {self._trace}"


def _unpack(layout, bits: int):
    """A packed value as nested dicts / lists of ints."""
    return _plain(layout.from_bits(bits))


def _plain(view):
    if isinstance(view, data.Const):
        layout = data.Layout.cast(view.shape())
        if isinstance(layout, data.ArrayLayout):
            return [_plain(view[k]) for k in range(layout.length)]
        return {name: _plain(view[name]) for name, _ in layout}
    if hasattr(view, "value"):
        return int(view.value)
    return int(view)


def _concat(ref_layout, first: int, packed: int, count: int) -> int:
    """The reference event ``first`` followed by the ``count`` events of ``packed``."""
    rest = _unpack(data.ArrayLayout(ref_layout, count), packed)
    events = [_unpack(ref_layout, first), *rest]
    return data.ArrayLayout(ref_layout, count + 1).const(events).as_value().value
