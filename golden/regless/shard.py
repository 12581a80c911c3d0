"""Golden model of ``regless.shard``: the golden capacity manager, OSU and compressor and a
model of the transfer unit, evaluated in the order their signals flow within a cycle."""

from collections import Counter
from dataclasses import asdict

from gpurf.hw.regless.configs import ShardConfig
from gpurf.hw.regless.layouts import CompressorOp, L1Op, TransferPhase

from .capacity_manager import CapacityManager
from .compressor import Compressor
from .osu import Osu

__all__ = ["Shard", "Transfer"]

_L1_OPS = {CompressorOp.PRELOAD: L1Op.READ, CompressorOp.EVICT: L1Op.WRITE,
           CompressorOp.INVALIDATE: L1Op.INVALIDATE}


class Transfer:
    """The transfer unit of :class:`gpurf.hw.regless.shard.Transfer`: one OSU request at a time,
    through the compressor and then, if the compressor does not hold the value, L1."""

    def __init__(self, config: ShardConfig):
        self.config = config
        self.phase = TransferPhase.IDLE
        self.job = None
        """The request held: ``{op, warp, reg, line, value}``."""
        self.counts = Counter()
        """Requests by how they ended: ``preload_compressed``, ``preload_l1``,
        ``evict_compressed``, ``evict_l1``, ``invalidate`` (paper 6.5's preload sources)."""

    def outputs(self, fetch_valid: int) -> dict:
        """This cycle's outputs (state only, and ``writeback`` waits for ``fetch``)."""
        config, phase, job = self.config, self.phase, self.job
        idle = phase == TransferPhase.IDLE
        out = {"fetch__ready": int(idle), "writeback__ready": int(idle and not fetch_valid),
               "request__valid": int(phase == TransferPhase.COMPRESSOR),
               "response__ready": int(phase == TransferPhase.ANSWER),
               "l1_request__valid": int(phase == TransferPhase.L1),
               "l1_response__ready": int(phase == TransferPhase.L1_WAIT),
               "fill__valid": int(phase == TransferPhase.FILL),
               "request__payload": None, "l1_request__payload": None, "fill__payload": None}
        if phase == TransferPhase.COMPRESSOR:
            out["request__payload"] = config.compressor.request_layout.const(
                {"op": job["op"], "warp": job["warp"], "reg": job["reg"],
                 "value": self._value(job["value"])}).as_value().value
        if phase == TransferPhase.L1:
            ref = config.osu.ref_layout.const({"warp": job["warp"], "reg": job["reg"]})
            data = job["value"] if job["op"] == CompressorOp.EVICT else 0
            out["l1_request__payload"] = config.l1_request_layout.const(
                {"op": _L1_OPS[job["op"]], "compressed": 0, "addr": ref.as_value().value,
                 "data": self._value(data)}).as_value().value
        if phase == TransferPhase.FILL:
            out["fill__payload"] = config.osu.fill_layout.const(
                {"line": config.osu.line_layout.from_bits(job["line"]),
                 "data": self._value(job["value"])}).as_value().value
        return out

    def _value(self, bits: int):
        return self.config.osu.value_layout.from_bits(bits)

    def step(self, inputs: dict, out: dict) -> None:
        """Take the clock edge, given the inputs and the outputs shown this cycle."""
        phase = self.phase
        if phase == TransferPhase.IDLE:
            self._take(inputs)
        elif phase == TransferPhase.COMPRESSOR and inputs["request__ready"]:
            self.phase = TransferPhase.ANSWER
        elif phase == TransferPhase.ANSWER and inputs["response__valid"]:
            self._answer(inputs["response__payload"])
        elif phase == TransferPhase.L1 and inputs["l1_request__ready"]:
            self.phase = (TransferPhase.L1_WAIT if self.job["op"] == CompressorOp.PRELOAD
                          else TransferPhase.IDLE)
        elif phase == TransferPhase.L1_WAIT and inputs["l1_response__valid"]:
            self.job["value"] = inputs["l1_response__payload"]
            self.phase = TransferPhase.FILL
        elif phase == TransferPhase.FILL and inputs["fill__ready"]:
            self.phase = TransferPhase.IDLE

    def _take(self, inputs):
        osu = self.config.osu
        if inputs["fetch__valid"]:
            view = osu.fetch_layout.from_bits(inputs["fetch__payload"])
            op = CompressorOp.INVALIDATE if view.invalidate else CompressorOp.PRELOAD
            value = 0
        elif inputs["writeback__valid"]:
            view = osu.writeback_layout.from_bits(inputs["writeback__payload"])
            op, value = CompressorOp.EVICT, view.data.as_value().value
        else:
            return
        self.job = {"op": op, "warp": int(view.warp), "reg": int(view.reg),
                    "line": view.line.as_value().value, "value": value}
        self.phase = TransferPhase.COMPRESSOR

    def _answer(self, payload):
        response = self.config.compressor.response_layout.from_bits(payload)
        op = self.job["op"]
        where = "compressed" if response.compressed else "l1"
        self.counts[op.name.lower() if op == CompressorOp.INVALIDATE
                    else f"{op.name.lower()}_{where}"] += 1
        if response.compressed and op == CompressorOp.PRELOAD:
            self.job["value"] = response.value.as_value().value
            self.phase = TransferPhase.FILL
        elif response.compressed:
            self.phase = TransferPhase.IDLE
        else:
            if op == CompressorOp.EVICT:
                self.job["value"] = response.value.as_value().value
            self.phase = TransferPhase.L1

    def line_trace(self) -> str:
        job = self.job or {}
        return (f"xfer {self.phase.name}"
                + (f" {job['op'].name} w{job['warp']}r{job['reg']}" if job else ""))


class Shard:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Within a cycle the blocks are evaluated in signal order: the state-only outputs (the
    CM's queue heads, the OSU's merged offers, the compressor's and the transfer unit's
    outputs) first, then the OSU with every input it needs, then the CM (the OSU's
    acknowledgements and readies), the transfer unit and the compressor."""

    def __init__(self, **params):
        self.config = ShardConfig(**params)
        self.reset()

    def reset(self):
        config = self.config
        self.cm = CapacityManager(**asdict(config.capacity_manager))
        self.osu = Osu(**asdict(config.osu))
        self.compressor = Compressor(**asdict(config.compressor))
        self.transfer = Transfer(config)

    def step(self, inputs: dict) -> dict:
        config = self.config
        cm_inputs = self._cm_inputs(inputs)
        cm_shown = self.cm.peek(cm_inputs)
        transfer = self.transfer.outputs(int(self.osu.offers("fetch")))
        compressor = self.compressor.shown
        osu_out = self.osu.step(self._osu_inputs(inputs, cm_shown, transfer))
        for b in range(config.banks):
            cm_inputs[f"preload__{b}__ready"] = osu_out[f"preload__{b}__ready"]
        cm_inputs["preloaded"] = osu_out["preloaded"]
        cm_out = self.cm.step(cm_inputs)
        l1 = self._l1(inputs, compressor, transfer)
        self.transfer.step({**{k: osu_out[k] for k in (
            "fetch__valid", "fetch__payload", "writeback__valid", "writeback__payload",
            "fill__ready")},
            "request__ready": compressor["request__ready"],
            "response__valid": compressor["response__valid"],
            "response__payload": compressor["response__payload"],
            "l1_request__ready": l1["transfer_ready"],
            "l1_response__valid": inputs["l1_response__valid"],
            "l1_response__payload": inputs["l1_response__payload"]}, transfer)
        self.compressor.step({
            "request__valid": transfer["request__valid"],
            "request__payload": transfer["request__payload"] or 0,
            "response__ready": transfer["response__ready"],
            "l1_request__ready": l1["compressor_ready"],
            "l1_response__valid": inputs["l1_response__valid"],
            "l1_response__payload": inputs["l1_response__payload"]})
        return self._outputs(cm_out, osu_out, l1)

    def _cm_inputs(self, inputs):
        config = self.config
        ins = {name: inputs[name] for name in (
            "region__valid", "region__payload", "issue__valid", "issue__payload",
            "written__valid", "written__payload")}
        ins.update({f"preload__{b}__ready": 0 for b in range(config.banks)})
        ins["preloaded"] = 0
        return ins

    def _osu_inputs(self, inputs, cm_shown, transfer):
        config = self.config
        ins = {name: inputs[name] for name in (
            "read__valid", "read__payload", "reserve__valid", "reserve__payload",
            "write__valid", "write__payload", "release__valid", "release__payload")}
        for b in range(config.banks):
            ins[f"preload__{b}__valid"] = cm_shown[f"preload__{b}__valid"]
            ins[f"preload__{b}__payload"] = cm_shown[f"preload__{b}__payload"] or 0
        ins.update({"fetch__ready": transfer["fetch__ready"],
                    "writeback__ready": transfer["writeback__ready"],
                    "fill__valid": transfer["fill__valid"],
                    "fill__payload": transfer["fill__payload"] or 0})
        return ins

    def _l1(self, inputs, compressor, transfer) -> dict:
        """The shared L1 port: the compressor's request when it has one, else the transfer
        unit's; a response to whichever waits."""
        config = self.config
        ready = inputs["l1_request__ready"]
        response_ready = int(compressor["l1_response__ready"] or transfer["l1_response__ready"])
        if compressor["l1_request__valid"]:
            request = config.compressor.l1_request_layout.from_bits(
                compressor["l1_request__payload"])
            payload = config.l1_request_layout.const({
                "op": L1Op.WRITE if request.write else L1Op.READ, "compressed": 1,
                "addr": int(request.line), "data": request.data})
            return {"valid": 1, "payload": payload.as_value().value,
                    "compressor_ready": ready, "transfer_ready": 0,
                    "response_ready": response_ready}
        return {"valid": transfer["l1_request__valid"],
                "payload": transfer["l1_request__payload"],
                "compressor_ready": 0, "transfer_ready": ready,
                "response_ready": response_ready}

    def _outputs(self, cm_out, osu_out, l1) -> dict:
        out = {name: cm_out[name] for name in ("want__valid", "want__payload", "region__ready",
                                               "eligible")}
        out.update({name: osu_out[name] for name in (
            "read__ready", "read_resp__valid", "read_resp__payload", "reserve__ready",
            "reserve_resp__valid", "reserve_resp__payload", "write__ready", "release__ready",
            "protocol_error")})
        out.update({"l1_request__valid": l1["valid"], "l1_request__payload": l1["payload"],
                    "l1_response__ready": l1["response_ready"]})
        return out

    def line_trace(self) -> str:
        return " || ".join((self.cm.line_trace(), self.osu.line_trace(),
                            self.compressor.line_trace(), self.transfer.line_trace()))

