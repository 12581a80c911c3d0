"""Golden model of ``wir.reuse_buffer``, written from the paper (V-C, V-D, V-E, VI-B) and the
spec: a list of entries, each ``None`` (invalid) or an :class:`Entry`."""

from dataclasses import dataclass

from gpurf.golden.model import PortModel
from gpurf.hw.ports import codec
from gpurf.hw.wir.configs import ReuseBufferConfig

__all__ = ["Entry", "ReuseBuffer", "fold_index"]


def fold_index(tag_bits: int, tag_width: int, index_bits: int) -> int:
    """Spec: the entry index is the XOR of the packed tag's ``index_bits``-bit chunks
    (the first chunk holds the least significant bits)."""
    index, mask = 0, (1 << index_bits) - 1
    for shift in range(0, tag_width, index_bits):
        index ^= (tag_bits >> shift) & mask
    return index


def _field(offset: int, width: int) -> tuple[int, int]:
    """``(offset, largest value)`` of a field."""
    return offset, (1 << width) - 1


class _TagFields:
    """The tag layout's field offsets and widths: :meth:`pack` packs plain ``int`` fields
    without the generic codec (the SM's lookups; :meth:`ReuseBuffer.tag` falls back to
    the codec for anything else, and tests compare the two)."""

    def __init__(self, layout):
        opcode = layout["opcode"]
        self.op = _field(opcode.offset + opcode.shape["op"].offset, opcode.shape["op"].width)
        self.regs = _field(opcode.offset + opcode.shape["regs"].offset,
                           opcode.shape["regs"].width)
        operand = layout["operand"]
        self.operand = [operand.offset + k * operand.shape.elem_shape
                        for k in range(operand.shape.length)]
        self.operand_mask = (1 << operand.shape.elem_shape) - 1
        self.tbid = _field(layout["tbid"].offset, layout["tbid"].width)
        self.barrier = _field(layout["barrier"].offset, layout["barrier"].width)

    def pack(self, opcode, operand, tbid, barrier) -> int | None:
        """The packed tag, or ``None`` unless every field is an ``int`` in its range (the
        opcode a named tuple ``(op, regs)``, exactly one value per operand field)."""
        if getattr(opcode, "_fields", None) != ("op", "regs") or \
                len(operand) != len(self.operand):
            return None
        op, regs = opcode
        if not (type(op) is type(regs) is type(tbid) is type(barrier) is int
                and all(type(value) is int for value in operand)
                and 0 <= op <= self.op[1] and 0 <= regs <= self.regs[1]
                and 0 <= tbid <= self.tbid[1] and 0 <= barrier <= self.barrier[1]):
            return None
        acc = (op << self.op[0] | regs << self.regs[0] | tbid << self.tbid[0]
               | barrier << self.barrier[0])
        mask = self.operand_mask
        for value, offset in zip(operand, self.operand, strict=True):
            acc |= (value & mask) << offset
        return acc


@dataclass
class Entry:
    """A valid entry: its packed ``tag``, the register operands the tag references
    (``refs``, ``None`` for an immediate), the ``result`` register and ``pending``."""

    tag: int
    refs: list[int | None]
    result: int | None = None
    pending: bool = True


class ReuseBuffer(PortModel, config=ReuseBufferConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    Lookups and fills see the buffer as it was at the start of the cycle. A divergent or
    bypassed lookup, or one with an operand that does not fit ``preg_bits``, leaves the
    buffer alone. Otherwise: equal tag and filled -> hit (a miss if ``result_saturated``);
    equal tag and pending -> pending hit; else a miss reserves the entry (unless
    ``low_reg``, which evicts it, or ``operand_saturated``). In low-register mode a cycle
    without a lookup evicts entry ``cycle mod entries``. A fill completes the pending entry
    at its index if the tag is the fill's and the lookup did not write that entry.

    :meth:`advance` is the same behaviour on Python structures (a composition's parts call
    it without packing their ports).
    """

    def reset(self):
        config = self.config
        self.entries: list[Entry | None] = [None] * config.entries
        self.cycle = 0
        self.tags = codec(config.tag_layout)
        """Packs a tag (``opcode``, ``operand``, ``tbid``, ``barrier``) to the integer the
        entries hold and the index folds."""
        self._mask = (1 << config.preg_bits) - 1
        self._fields = _TagFields(config.tag_layout)
        self._last = None

    def tag(self, lookup) -> tuple[int, bool]:
        """The packed tag of ``lookup`` (operands cut to ``preg_bits``) and whether every
        operand value fits the field."""
        mask = self._mask
        operand = lookup.operand
        fits = all(value <= mask for value in operand)
        tag = self._fields.pack(lookup.opcode, operand, lookup.tbid, lookup.barrier)
        if tag is None:
            tag = self.tags.pack({"opcode": lookup.opcode,
                                  "operand": [value & mask for value in operand],
                                  "tbid": lookup.tbid, "barrier": lookup.barrier})
        return tag, fits

    def locate(self, lookup) -> tuple[int, bool, int]:
        """``(tag, fits, index)``: :meth:`tag`'s answer and the entry the tag indexes."""
        tag, fits = self.tag(lookup)
        return tag, fits, fold_index(tag, self.tags.width, self.config.index_bits)

    def pack_tag(self, tag) -> int:
        """``tag`` (the ``fill`` port's tag: a struct, a mapping or already packed) packed."""
        return tag if type(tag) is int else self.tags.pack(tag)

    def probe(self, lookup) -> int | None:
        """The result register of the filled entry ``lookup`` indexes (``None``: none)."""
        tag, _ = self.tag(lookup)
        entry = self.entries[fold_index(tag, self.tags.width, self.config.index_bits)]
        return entry.result if entry is not None and not entry.pending else None

    def _lookup(self, lookup, result_saturated, operand_saturated, low_reg, located=None):
        """The lookup's plan from the start-of-cycle state: ``(response, probe, incs,
        written, new)``: the answer (``None`` without a lookup), the probed result register,
        ``inc[0..3]``, the entry index the lookup writes (or ``None``) and what it writes
        there (a reserved entry, or ``None`` for an eviction). ``located``: the lookup's
        :meth:`locate` if the caller has it."""
        config = self.config
        incs = [None] * 4
        if lookup is None:
            written = self.cycle % config.entries if low_reg else None
            return None, None, incs, written, None
        tag, fits, index = located or self.locate(lookup)
        response = {"hit": 0, "pending": 0, "reserved": 0, "index": index, "result": 0}
        entry = self.entries[index]
        probe = entry.result if entry is not None and not entry.pending else None
        if lookup.divergent or lookup.bypass or not fits:
            return response, probe, incs, None, None
        if entry is not None and entry.tag == tag:
            if entry.pending:
                response["pending"] = 1
                return response, probe, incs, None, None
            if not result_saturated:
                response.update(hit=1, result=entry.result)
                incs[3] = entry.result
                return response, probe, incs, None, None
        if low_reg:
            return response, probe, incs, index, None
        if operand_saturated:
            return response, probe, incs, None, None
        response["reserved"] = 1
        regs = lookup.opcode.regs
        refs = [value & self._mask if regs >> k & 1 else None
                for k, value in enumerate(lookup.operand)]
        incs[:3] = refs
        return response, probe, incs, index, Entry(tag, refs)

    def _fill(self, fill, written):
        """The entry index and result register of a fill that completes its entry."""
        if fill is None:
            return None
        entry = self.entries[fill.index]
        if (fill.index == written or entry is None or not entry.pending
                or entry.tag != self.pack_tag(fill.tag)):
            return None
        return fill.index, fill.result

    def advance(self, lookup, fill, *, result_saturated=0, operand_saturated=0, low_reg=0,
                located=None):
        """This cycle's ``(response, probe, incs, decs)`` for ``lookup`` (a struct of the
        ``lookup`` port's fields, or ``None``) and ``fill`` (the ``fill`` port's fields, or
        ``None``), then the clock edge: the whole behaviour of :meth:`step` without packed
        ports. ``response`` is a dict of the response's fields (``None`` without a lookup),
        ``probe`` the probed result register (``None``: not compared), ``incs`` (5) and
        ``decs`` (4) the registers of the reference events (``None``: no event). ``located``:
        :meth:`locate` of ``lookup`` in this state, if the caller has it."""
        response, probe, incs, written, new = self._lookup(
            lookup, result_saturated, operand_saturated, low_reg, located)
        filled = self._fill(fill, written)
        decs = [None] * 4
        if written is not None:
            dropped = self.entries[written]
            if dropped is not None:
                decs[:3] = dropped.refs
                decs[3] = None if dropped.pending else dropped.result
            self.entries[written] = new
        incs.append(None if filled is None else filled[1])
        if filled is not None:
            entry = self.entries[filled[0]]
            entry.result, entry.pending = filled[1], False
        self._last = (response, incs, decs)
        self.cycle += 1
        return response, probe, incs, decs

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        lookup = (ports["lookup__payload"].unpack(inputs["lookup__payload"])
                  if inputs["lookup__valid"] else None)
        fill = (ports["fill__payload"].unpack(inputs["fill__payload"])
                if inputs["fill__valid"] else None)
        response, probe, incs, decs = self.advance(
            lookup, fill, result_saturated=inputs["result_saturated"],
            operand_saturated=inputs["operand_saturated"], low_reg=inputs["low_reg"])
        return {
            "response__valid": inputs["lookup__valid"],
            "response__payload": (None if response is None else
                                  ports["response__payload"].pack(response)),
            "probe": probe,
            "inc": self._events("inc", incs),
            "dec": self._events("dec", decs),
        }

    def _events(self, port: str, pregs: list[int | None]) -> int:
        return self.ports[port].pack([{"valid": 1, "preg": p} if p is not None else {}
                                      for p in pregs])

    def line_trace(self) -> str:
        held = " ".join(f"{i}:{e.tag:#x}{'P' if e.pending else '>' + str(e.result)}"
                        for i, e in enumerate(self.entries) if e is not None)
        response, incs, decs = self._last or (None, None, None)
        return f"reuse_buffer: resp={response} inc={incs} dec={decs} entries[{held}]"
