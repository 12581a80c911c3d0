"""Golden model of ``regless.osu_bank``, written from the paper (5.2, Fig. 10) and the spec:
every line is a record ``{place, tag, written, filling}`` with ``place`` one of ``free``,
``clean``, ``dirty``, ``used``; the data store is a list of values."""

from dataclasses import dataclass

from gpurf.hw.regless.configs import OsuBankConfig

__all__ = ["Line", "OsuBank", "allocation_choice"]

PLACES = ("free", "clean", "dirty", "used")


@dataclass
class Line:
    place: str = "free"
    tag: tuple[int, int] | None = None
    written: bool = False
    filling: bool = False


def allocation_choice(lines: list[Line]) -> tuple[str, int] | None:
    """Where an allocation comes from: ``("take", line)`` — the first free line, else the
    first clean one; ``("evict", line)`` — only dirty lines are left, the first must be
    evicted first; ``None`` — every line is in use."""
    for place in ("free", "clean"):
        for index, line in enumerate(lines):
            if line.place == place:
                return "take", index
    for index, line in enumerate(lines):
        if line.place == "dirty":
            return "evict", index
    return None


class OsuBank:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge."""

    def __init__(self, **params):
        self.config = OsuBankConfig(**params)
        self.reset()

    def reset(self):
        self.lines = [Line() for _ in range(self.config.lines)]
        self.data: list[int | None] = [None] * self.config.lines
        """Values of the data store; ``None`` until written (a memory is not reset, so a
        read of a line never written since reset answers an unknown value)."""
        self.evict: tuple[str, int] | None = None
        """``("chosen", line)`` or ``("held", line)``: the bank's one eviction in flight."""
        self.output_register = None
        """The data port's output register (a read's or an eviction's value)."""
        self.read_pending = False
        self.fetch = None
        self.error = 0
        self._trace = ""

    # --- views ---------------------------------------------------------------------

    def find(self, warp: int, reg: int) -> int | None:
        """The line tagged ``(warp, reg)`` (tags of free lines are not valid)."""
        for index, line in enumerate(self.lines):
            if line.place != "free" and line.tag == (warp, reg):
                return index
        return None

    def usable(self, warp: int, reg: int) -> bool:
        """``(warp, reg)`` is in use and filled: a read hits, a release takes effect."""
        index = self.find(warp, reg)
        return (index is not None and self.lines[index].place == "used"
                and not self.lines[index].filling)

    def busy(self, index: int) -> bool:
        """A line a reserve or preload must wait for: filling, or chosen for eviction."""
        return self.lines[index].filling or (self.evict is not None
                                             and self.evict[1] == index)

    def _can_allocate(self) -> bool:
        choice = allocation_choice(self.lines)
        return choice is not None and choice[0] == "take"

    # --- one cycle -----------------------------------------------------------------

    def step(self, inputs: dict) -> dict:
        config = self.config
        out = {"read_resp__valid": int(self.read_pending),
               "read_resp__payload": self.output_register if self.read_pending else None,
               "fetch__valid": int(self.fetch is not None),
               "fetch__payload": None if self.fetch is None else self._pack_fetch(),
               "writeback__valid": 0, "writeback__payload": None,
               "protocol_error": self.error}
        held = self.evict is not None and self.evict[0] == "held"
        if held:
            line = self.lines[self.evict[1]]
            out["writeback__valid"] = 1
            out["writeback__payload"] = config.writeback_layout.const({
                "warp": line.tag[0], "reg": line.tag[1], "line": self.evict[1],
                "data": config.value_layout.from_bits(self.output_register),
            }).as_value().value
        write = config.write_layout.from_bits(inputs["write__payload"])
        write_valid = bool(inputs["write__valid"])
        # data port: write > read > fill > eviction read-out
        read_ok = not write_valid and not held
        read_xfer = bool(inputs["read__valid"]) and read_ok
        fill_ready = not write_valid and not read_xfer
        fill_xfer = bool(inputs["fill__valid"]) and fill_ready
        fill = config.fill_layout.from_bits(inputs["fill__payload"])
        fill_eff = (fill_xfer and int(fill.line) < config.lines
                    and self.lines[int(fill.line)].filling)
        out.update({"read__ready": int(read_ok), "write__ready": 1,
                    "fill__ready": int(fill_ready)})
        tag = self._tag_port(inputs, read_xfer, fill_xfer, out)
        self._acknowledge(tag, fill_eff, int(fill.line), out)
        fetch_taken = bool(inputs["fetch__ready"]) and self.fetch is not None
        wb_taken = held and bool(inputs["writeback__ready"])
        evict_read = (self.evict is not None and self.evict[0] == "chosen" and not write_valid
                      and not read_xfer and not fill_xfer)
        chosen = None
        if self.evict is None and tag is None and self._needs_eviction(inputs):
            choice = allocation_choice(self.lines)
            if choice is not None and choice[0] == "evict":
                chosen = choice[1]
        read_line = self._read(inputs, read_xfer)
        if evict_read:
            self.output_register = self.data[self.evict[1]]
            self.evict = ("held", self.evict[1])
        elif read_xfer:
            self.output_register = self.data[read_line]
        # the clock edge: writeback transfer, write, fill, then the tag operation
        if fetch_taken:
            self.fetch = None
        if wb_taken:
            index = self.evict[1]
            self.lines[index].place, self.lines[index].written = "clean", False
            self.evict = None
        self._write(write_valid, write)
        if fill_eff:
            self.lines[int(fill.line)].filling = False
            self.data[int(fill.line)] = fill.data.as_value().value
        self._apply_tag(tag)
        if chosen is not None:
            self.evict = ("chosen", chosen)
        self.read_pending = read_xfer
        self._trace = self._describe(tag)
        return out

    def _needs_eviction(self, inputs) -> bool:
        """A valid reserve or preload misses and no line is free or clean."""
        if self._can_allocate():
            return False
        config = self.config
        res = config.reserve_layout.from_bits(inputs["reserve__payload"])
        pre = config.preload_layout.from_bits(inputs["preload__payload"])
        return bool((inputs["reserve__valid"] and self.find(int(res.warp), int(res.reg)) is None)
                    or (inputs["preload__valid"] and not pre.invalidate
                        and self.find(int(pre.warp), int(pre.reg)) is None))

    def _read(self, inputs, read_xfer) -> int:
        """A read's line (0 on a miss, which sets the sticky error)."""
        if not read_xfer:
            return 0
        view = self.config.ref_layout.from_bits(inputs["read__payload"])
        index = self.find(int(view.warp), int(view.reg))
        if index is None or self.lines[index].place != "used" or self.lines[index].filling:
            self.error = 1
        return 0 if index is None else index

    def _write(self, valid, write):
        index = int(write.line)
        if not valid or index >= len(self.lines):
            return
        line = self.lines[index]
        if line.place == "used" and not line.filling:
            line.written = True
            self.data[index] = write.data.as_value().value
            if write.last_use:
                line.place = "dirty"

    # --- tag port ------------------------------------------------------------------

    def _tag_port(self, inputs, read_xfer, fill_xfer, out) -> dict | None:
        """Readies of reserve, preload and release (the highest-priority one that can
        complete this cycle, after a read), the reserve's answer, and the operation
        taken: ``{op, payload, line, hit}``."""
        config = self.config
        out.update({"reserve__ready": 0, "preload__ready": 0, "release__ready": 0,
                    "reserve_resp__valid": 0, "reserve_resp__payload": None})
        fetch_free = self.fetch is None or bool(inputs["fetch__ready"])
        res = config.reserve_layout.from_bits(inputs["reserve__payload"])
        pre = config.preload_layout.from_bits(inputs["preload__payload"])
        rel = config.release_layout.from_bits(inputs["release__payload"])
        taken = None
        if not read_xfer:
            hit = self.find(int(res.warp), int(res.reg))
            ok = (not self.busy(hit)) if hit is not None else self._can_allocate()
            out["reserve__ready"] = int(ok)
            if ok and inputs["reserve__valid"]:
                line = hit if hit is not None else allocation_choice(self.lines)[1]
                taken = {"op": "reserve", "payload": res, "line": line, "hit": hit is not None}
                out["reserve_resp__valid"] = 1
                out["reserve_resp__payload"] = config.reserved_layout.const(
                    {"line": line, "last_use": int(res.last_use)}).as_value().value
        if not read_xfer and taken is None:
            hit = None if pre.invalidate else self.find(int(pre.warp), int(pre.reg))
            if pre.invalidate:
                ok = fetch_free and not fill_xfer
            elif hit is not None:
                ok = not self.busy(hit) and not fill_xfer
            else:
                ok = self._can_allocate() and fetch_free
            out["preload__ready"] = int(ok)
            if ok and inputs["preload__valid"]:
                line = hit
                if hit is None and not pre.invalidate:
                    line = allocation_choice(self.lines)[1]
                taken = {"op": "preload", "payload": pre, "line": line, "hit": hit is not None}
        if not read_xfer and taken is None:
            out["release__ready"] = 1
            if inputs["release__valid"]:
                line = self.find(int(rel.warp), int(rel.reg))
                eligible = (line is not None and self.lines[line].place == "used"
                            and not self.lines[line].filling)
                taken = {"op": "release", "payload": rel, "line": line, "hit": eligible}
        return taken

    def _acknowledge(self, tag, fill_eff, fill_line, out):
        """``preloaded``: a fill completing a preload, or a preload hit or invalidation."""
        warp = None
        if fill_eff:
            warp = self.lines[fill_line].tag[0]
        elif tag is not None and tag["op"] == "preload" and (tag["hit"]
                                                              or tag["payload"].invalidate):
            warp = int(tag["payload"].warp)
        out["preloaded__valid"] = int(warp is not None)
        out["preloaded__payload"] = warp

    def _apply_tag(self, tag):
        """The tag operation (decided on the state at the start of the cycle) after this
        cycle's write and fill."""
        if tag is None:
            return
        payload, index = tag["payload"], tag["line"]
        if tag["op"] == "release":
            if not tag["hit"]:
                return
            line = self.lines[index]
            if payload.erase:
                line.place, line.written = "free", False
            else:
                line.place = "dirty" if line.written else "clean"
            return
        if tag["op"] == "preload" and payload.invalidate:
            self.fetch = {"warp": int(payload.warp), "reg": int(payload.reg), "line": 0,
                          "invalidate": 1}
            return
        line = self.lines[index]
        if tag["hit"]:
            line.place = "used"
            return
        filling = tag["op"] == "preload"
        self.lines[index] = Line(place="used", tag=(int(payload.warp), int(payload.reg)),
                                 written=False, filling=filling)
        if filling:
            self.fetch = {"warp": int(payload.warp), "reg": int(payload.reg), "line": index,
                          "invalidate": 0}

    def _pack_fetch(self) -> int:
        return self.config.fetch_layout.const(self.fetch).as_value().value

    def _describe(self, tag) -> str:
        marks = {"free": ".", "clean": "c", "dirty": "d", "used": "U"}
        lines = " ".join(
            f"{i}:{marks[line.place]}{'w' if line.written else ''}{'f' if line.filling else ''}"
            f"{'' if line.tag is None else line.tag}" for i, line in enumerate(self.lines))
        op = None if tag is None else (tag["op"], tag["line"], tag["hit"])
        return f"op={op} evict={self.evict} fetch={self.fetch} err={self.error} [{lines}]"

    def line_trace(self) -> str:
        return f"osu_bank: {self._trace}"

