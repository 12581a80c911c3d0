"""Golden model of ``regless.osu_bank``, written from the paper (5.2, Fig. 10) and the spec:
every line is a record ``{place, tag, written, filling}`` with ``place`` one of ``free``,
``clean``, ``dirty``, ``used``; the data store is a list of values (lists of lanes)."""

from dataclasses import dataclass

from gpurf.golden.model import PortModel
from gpurf.hw.regless.configs import OsuBankConfig

__all__ = ["Line", "OsuBank", "allocation_choice"]

PLACES = ("free", "clean", "dirty", "used")
_STALE = object()


@dataclass(slots=True)
class Line:
    place: str = "free"
    tag: tuple[int, int] | None = None
    written: bool = False
    filling: bool = False


def allocation_choice(lines: list[Line]) -> tuple[str, int] | None:
    """Where an allocation comes from: ``("take", line)`` — the first free line, else the
    first clean one; ``("evict", line)`` — only dirty lines are left, the first must be
    evicted first; ``None`` — every line is in use."""
    clean = dirty = None
    for index, line in enumerate(lines):
        place = line.place
        if place == "free":
            return "take", index
        if place == "clean":
            if clean is None:
                clean = index
        elif place == "dirty" and dirty is None:
            dirty = index
    if clean is not None:
        return "take", clean
    return None if dirty is None else ("evict", dirty)


class OsuBank(PortModel, config=OsuBankConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    :meth:`advance` is the same cycle on unpacked requests (the OSU model drives its banks
    with it); it leaves this cycle's outputs in the attributes ``*_ready``,
    ``reserve_resp``, ``preloaded`` and the state-only ones in :meth:`shown`.
    """

    def reset(self):
        self.lines = [Line() for _ in range(self.config.lines)]
        self.where: dict[tuple[int, int], int] = {}
        """Line of each valid tag (a line not on the free list): the tag store's lookup.
        Valid tags are distinct (a line is allocated only on a miss)."""
        self.data: list[list[int] | None] = [None] * self.config.lines
        """Values of the data store; ``None`` until written (a memory is not reset, so a
        read of a line never written since reset answers an unknown value)."""
        self.evict: tuple[str, int] | None = None
        """``("chosen", line)`` or ``("held", line)``: the bank's one eviction in flight."""
        self.output_register = None
        """The data port's output register (a read's or an eviction's value)."""
        self.read_pending = False
        self.fetch: dict | None = None
        """The fetch register: ``{warp, reg, line, invalidate}``."""
        self.error = 0
        self.reserve_resp: dict | None = None
        self.preloaded: int | None = None
        self.read_ready = self.fill_ready = 0
        self.reserve_ready = self.preload_ready = self.release_ready = 0
        self._op = None
        self._choice = _STALE
        """:func:`allocation_choice` of the lines, kept until a line changes lists."""

    # --- views ---------------------------------------------------------------------

    def find(self, warp: int, reg: int) -> int | None:
        """The line tagged ``(warp, reg)`` (tags of free lines are not valid)."""
        return self.where.get((warp, reg))

    def usable(self, warp: int, reg: int) -> bool:
        """``(warp, reg)`` is in use and filled: a read hits, a release takes effect."""
        index = self.where.get((warp, reg))
        if index is None:
            return False
        line = self.lines[index]
        return line.place == "used" and not line.filling

    def usable_registers(self) -> set[tuple[int, int]]:
        """Every register :meth:`usable` holds."""
        lines = self.lines
        return {tag for tag, index in self.where.items()
                if lines[index].place == "used" and not lines[index].filling}

    def busy(self, index: int) -> bool:
        """A line a reserve or preload must wait for: filling, or chosen for eviction."""
        return self.lines[index].filling or (self.evict is not None
                                             and self.evict[1] == index)

    def writeback(self) -> dict | None:
        """The ``writeback`` offer ``{warp, reg, line, data}`` (state only)."""
        if self.evict is None or self.evict[0] != "held":
            return None
        index = self.evict[1]
        warp, reg = self.lines[index].tag
        return {"warp": warp, "reg": reg, "line": index, "data": self.output_register}

    # --- one cycle -----------------------------------------------------------------

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        pending, read_resp = self.read_pending, self.output_register
        fetch, writeback, error = self.fetch, self.writeback(), self.error
        self.follow(inputs)
        reserved, acked = self.reserve_resp, self.preloaded
        return {
            "read__ready": self.read_ready, "write__ready": 1, "fill__ready": self.fill_ready,
            "reserve__ready": self.reserve_ready, "preload__ready": self.preload_ready,
            "release__ready": self.release_ready,
            "read_resp__valid": int(pending),
            "read_resp__payload": (ports["read_resp__payload"].pack(read_resp)
                                   if pending and read_resp is not None else None),
            "reserve_resp__valid": int(reserved is not None),
            "reserve_resp__payload": (None if reserved is None
                                      else ports["reserve_resp__payload"].pack(reserved)),
            "preloaded__valid": int(acked is not None), "preloaded__payload": acked,
            "fetch__valid": int(fetch is not None),
            "fetch__payload": None if fetch is None else ports["fetch__payload"].pack(fetch),
            "writeback__valid": int(writeback is not None),
            "writeback__payload": (None if writeback is None
                                   else ports["writeback__payload"].pack(writeback)),
            "protocol_error": error,
        }

    def follow(self, inputs: dict) -> None:
        """The cycle of :meth:`step` without forming its outputs (a bench's shadow of the
        block follows its state with it)."""
        ports = self.ports
        write = ports["write__payload"].unpack(inputs["write__payload"])
        fill = ports["fill__payload"].unpack(inputs["fill__payload"])
        self.advance(inputs["read__valid"], ports["read__payload"].unpack(inputs["read__payload"]),
                     inputs["reserve__valid"],
                     ports["reserve__payload"].unpack(inputs["reserve__payload"]),
                     inputs["write__valid"], write.line, write.data, write.last_use,
                     inputs["preload__valid"],
                     ports["preload__payload"].unpack(inputs["preload__payload"]),
                     inputs["fill__valid"], fill.line, fill.data,
                     inputs["release__valid"],
                     ports["release__payload"].unpack(inputs["release__payload"]),
                     inputs["fetch__ready"], inputs["writeback__ready"])

    def advance(self, read_valid, read, reserve_valid, reserve, write_valid, write_line,
                write_data, write_last_use, preload_valid, preload, fill_valid, fill_line,
                fill_data, release_valid, release, fetch_ready, writeback_ready) -> None:
        """One cycle on unpacked requests (``read``, ``reserve``, ``preload``, ``release``:
        structs with ``warp``, ``reg`` and their flag; the write and the fill by field),
        given with their ``valid`` whether valid or not (readies depend on the payloads);
        then the clock edge."""
        lines = self.lines
        held = self.evict is not None and self.evict[0] == "held"
        # data port: write > read > fill > eviction read-out
        read_ok = not write_valid and not held
        read_xfer = bool(read_valid) and read_ok
        fill_ready = not write_valid and not read_xfer
        fill_xfer = bool(fill_valid) and fill_ready
        fill_eff = fill_xfer and fill_line < len(lines) and lines[fill_line].filling
        self.read_ready, self.fill_ready = int(read_ok), int(fill_ready)
        choice = self._choice
        if choice is _STALE:
            choice = self._choice = allocation_choice(lines)
        can_allocate = choice is not None and choice[0] == "take"
        op = self._tag_port(read_xfer, fill_xfer, reserve_valid, reserve, preload_valid,
                            preload, release_valid, release, fetch_ready, choice, can_allocate)
        if fill_eff:
            self.preloaded = lines[fill_line].tag[0]
        elif op is not None and op[0] == "preload" and (op[3] or preload.invalidate):
            self.preloaded = preload.warp
        else:
            self.preloaded = None
        fetch_taken = fetch_ready and self.fetch is not None
        wb_taken = held and writeback_ready
        evict_read = (self.evict is not None and self.evict[0] == "chosen" and not write_valid
                      and not read_xfer and not fill_xfer)
        chosen = None
        if (self.evict is None and op is None and not can_allocate and choice is not None
                and choice[0] == "evict"
                and ((reserve_valid and self.find(reserve.warp, reserve.reg) is None)
                     or (preload_valid and not preload.invalidate
                         and self.find(preload.warp, preload.reg) is None))):
            chosen = choice[1]
        if read_xfer:
            read_line = self.find(read.warp, read.reg)
            if read_line is None:
                self.error, read_line = 1, 0
            elif lines[read_line].place != "used" or lines[read_line].filling:
                self.error = 1
        if evict_read:
            self.output_register = self.data[self.evict[1]]
            self.evict = ("held", self.evict[1])
        elif read_xfer:
            self.output_register = self.data[read_line]
        # the clock edge: writeback transfer, write, fill, then the tag operation
        if fetch_taken:
            self.fetch = None
        if wb_taken:
            line = lines[self.evict[1]]
            line.place, line.written = "clean", False
            self.evict, self._choice = None, _STALE
        if write_valid and write_line < len(lines):
            line = lines[write_line]
            if line.place == "used" and not line.filling:
                line.written = True
                self.data[write_line] = write_data
                if write_last_use:
                    line.place, self._choice = "dirty", _STALE
        if fill_eff:
            lines[fill_line].filling = False
            self.data[fill_line] = fill_data
        if op is not None:
            self._apply_tag(op)
            self._choice = _STALE
        if chosen is not None:
            self.evict = ("chosen", chosen)
        self.read_pending = read_xfer
        self._op = op

    # --- tag port ------------------------------------------------------------------

    def _tag_port(self, read_xfer, fill_xfer, reserve_valid, reserve, preload_valid, preload,
                  release_valid, release, fetch_ready, choice, can_allocate):
        """Readies of reserve, preload and release (the highest-priority one that can
        complete this cycle, after a read), the reserve's answer, and the operation
        taken: ``(op, payload, line, hit)``."""
        self.reserve_ready = self.preload_ready = self.release_ready = 0
        self.reserve_resp = None
        if read_xfer:
            return None
        hit = self.where.get((reserve.warp, reserve.reg))
        ok = (not self.busy(hit)) if hit is not None else can_allocate
        self.reserve_ready = int(ok)
        if ok and reserve_valid:
            line = hit if hit is not None else choice[1]
            self.reserve_resp = {"line": line, "last_use": reserve.last_use}
            return "reserve", reserve, line, hit is not None
        if preload.invalidate:
            hit = None
            ok = (self.fetch is None or fetch_ready) and not fill_xfer
        else:
            hit = self.where.get((preload.warp, preload.reg))
            if hit is not None:
                ok = not self.busy(hit) and not fill_xfer
            else:
                ok = can_allocate and (self.fetch is None or fetch_ready)
        self.preload_ready = int(ok)
        if ok and preload_valid:
            line = hit
            if hit is None and not preload.invalidate:
                line = choice[1]
            return "preload", preload, line, hit is not None
        self.release_ready = 1
        if release_valid:
            line = self.where.get((release.warp, release.reg))
            eligible = (line is not None and self.lines[line].place == "used"
                        and not self.lines[line].filling)
            return "release", release, line, eligible
        return None

    def _apply_tag(self, op):
        """The tag operation (decided on the state at the start of the cycle) after this
        cycle's write and fill."""
        kind, payload, index, hit = op
        if kind == "release":
            if not hit:
                return
            line = self.lines[index]
            if payload.erase:
                line.place, line.written = "free", False
                del self.where[line.tag]
            else:
                line.place = "dirty" if line.written else "clean"
            return
        if kind == "preload" and payload.invalidate:
            self.fetch = {"warp": payload.warp, "reg": payload.reg, "line": 0, "invalidate": 1}
            return
        line = self.lines[index]
        if hit:
            line.place = "used"
            return
        if line.place != "free":
            del self.where[line.tag]
        filling = kind == "preload"
        tag = (payload.warp, payload.reg)
        self.lines[index] = Line(place="used", tag=tag, written=False, filling=filling)
        self.where[tag] = index
        if filling:
            self.fetch = {"warp": payload.warp, "reg": payload.reg, "line": index,
                          "invalidate": 0}

    def line_trace(self) -> str:
        marks = {"free": ".", "clean": "c", "dirty": "d", "used": "U"}
        lines = " ".join(
            f"{i}:{marks[line.place]}{'w' if line.written else ''}{'f' if line.filling else ''}"
            f"{'' if line.tag is None else line.tag}" for i, line in enumerate(self.lines))
        op = None if self._op is None else (self._op[0], self._op[2], self._op[3])
        return (f"osu_bank: op={op} evict={self.evict} fetch={self.fetch} err={self.error} "
                f"[{lines}]")
