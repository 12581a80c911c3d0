"""The golden shard's request ports, cycle by cycle, for the fast RegLess model.

:class:`ShardPortTiming` decides, per SM cycle, which of the register units' requests the
port-exact golden shard takes (:class:`gpurf.sim.sm.regless_exact.ShardPorts` driving
:class:`gpurf.golden.regless.shard.Shard`), without values or packing: the fast model
(:mod:`gpurf.sim.sm.regless`) then makes the golden capacity manager's decisions from the
same ``issue`` and ``written`` cycles and the same preload acknowledgements. The rules, each
the golden model's:

- **Offer** (``ShardPorts._present``): the waiting requests in the order they were made;
  only the first request of each ``(slot, reg)`` is offered; a request not yet due, or a
  write whose reserve or whose instruction's ``issue`` was not taken in an earlier cycle,
  is not offered but still blocks its register. Ports are handed out in that order per kind
  (4 read, 2 reserve, 2 write, 4 release: ``OsuConfig.port_count`` with two instructions).
  The ``issue`` port takes the first instruction whose slot has no earlier request other
  than a write still waiting; an empty region is drained by an issue in a cycle no
  instruction issues (once it is ACTIVE).
- **Grant** (``Osu._grants``): per kind and bank the lowest port asking for the bank.
- **Bank** (``OsuBank.advance`` and ``_tag_port``): the data port takes a write, else a
  read; the tag port a read, else a reserve, else the bank queue's preload or invalidation,
  else a release. An invalidation or a preload miss waits for the bank's fetch register,
  which the transfer unit empties one bank per cycle, the lowest first (``Osu._grant``;
  the transfer unit is taken as ready every cycle: its stalls are the miss path's).
- ``written``: a taken write of an instruction's first destination word is reported from
  the next cycle, one per cycle, in order.
- **Lines** (``OsuBank``'s tag store, session 13): each bank's lines are free, clean,
  dirty or used, tagged ``(slot, reg)``, and change when the ports take a request: a
  reserve or a preload hits its tag (the line is used again) or allocates the first free
  line by index, else the first clean one (dropped: ``allocation_choice``); a write marks
  the line written (dirty with its ``last_use``); a release frees it (``erase``) or puts it
  on the dirty or clean list (written or not); an invalidation changes no line. A reserve
  or a preload miss finding only dirty lines waits: in a cycle the tag port takes nothing
  else the first dirty line is chosen, read out in the next cycle the data port is free (a
  write or a read goes first; reads of the bank wait while the line is held), offered on
  ``writeback`` (the lowest bank first, an offer not taken stays offered) and taken when
  no fetch register is full (the transfer unit takes fetches first); the line is then
  clean and allocated like any other. A reserve or preload hitting the line being evicted
  waits.

- **Transfer unit** (``transfer``, :class:`~gpurf.sim.sm.regless_transfer.TransferTiming`:
  the golden transfer unit, compressor and L1 port): it says when a fetch or a writeback
  is taken and fills a preload miss's line on the data port (after a write and a read;
  the preload is acknowledged then). Without one (``transfer=None``, the directed tests)
  a fetch register is emptied one bank per cycle, a writeback taken when no fetch
  register is full, and no line is filled.
"""

from collections import deque

from gpurf.golden.regless.osu_bank import allocation_choice
from gpurf.hw.regless.configs import OsuConfig

__all__ = ["PORTS", "PortLine", "Request", "ShardPortTiming"]

PORTS = {kind: OsuConfig(instructions=2).port_count(kind)
         for kind in ("read", "reserve", "write", "release")}
"""Ports per request kind of the OSU serving two instructions per cycle."""


class Request:
    """A register unit's request: ``kind`` read / release / reserve / write / issue of
    ``reg`` of warp slot ``slot``, offered from cycle ``due``."""

    __slots__ = ("bank", "data", "dispatch", "due", "flag", "info", "issue", "kind", "owner",
                 "reg", "reserve", "slot", "taken", "written")

    def __init__(self, kind: str, slot: int, reg: int, due: int, bank: int, *,
                 dispatch: int | None = None, flag: int = 0, owner=None):
        self.kind, self.slot, self.reg, self.due, self.bank = kind, slot, reg, due, bank
        self.dispatch = dispatch
        self.flag = flag
        """A release's ``erase``, a write's ``last_use``."""
        self.owner = owner
        """The register's key in the fast model (a line's owner once allocated)."""
        self.data = None
        """A write's lanes as the OSU's write port carries them (:meth:`ShardPortTiming.
        base`)."""
        self.taken = False
        self.reserve = self.issue = None
        self.written = False
        self.info = None
        """An issue's ``(warp state, has_dst, dst_bank, last)``."""


class PortLine:
    """An OSU line as the golden bank keeps it (``osu_bank.Line``): ``place`` free / clean
    / dirty / used, ``tag`` ``(slot, reg)``, ``written`` since allocated, and ``owner``, the
    fast model's key of the register it holds."""

    __slots__ = ("data", "entry", "filling", "owner", "place", "tag", "written")

    def __init__(self):
        self.place, self.tag, self.written, self.owner = "free", None, False, None
        self.filling = False
        """A preload miss's line until the transfer unit fills it."""
        self.entry = None
        """The queue entry of the preload filling it."""
        self.data = None
        """The data store's lanes (kept when the line is allocated again)."""


class ShardPortTiming:
    """One shard's request ports and OSU lines (module docstring). ``owner`` is told of
    each cycle's taken ``issue`` and ``written`` (``port_cycle(shard, cycle, issue,
    written, fake)``), of each bank queue entry the OSU takes (``entry_taken(shard, entry,
    cycle, hit)``) and of each line whose register leaves the OSU (``displaced(shard,
    owner, dirty, cycle)``: dropped if clean, evicted if dirty)."""

    def __init__(self, owner, shard, banks: int, lines: int = 16, transfer=None):
        self.owner, self.shard, self.banks = owner, shard, banks
        self.transfer = transfer
        """The transfer unit, compressor and L1 port
        (:class:`~gpurf.sim.sm.regless_transfer.TransferTiming`); ``None``: a fetch or a
        writeback is taken as soon as offered (a fetch first) and no line is filled."""
        self.steps: list[Request] = []
        self.queues = [deque() for _ in range(banks)]
        """Per bank, ``[cycle offered from, entry]`` of the capacity manager's queue; an
        entry is ``(token, slot, reg, invalidate, owner)``."""
        self.fetch: list = [None] * banks
        """Per bank, the fetch register: an invalidation or a preload miss for the transfer
        unit (``{warp, reg, line, invalidate}``), or ``None``."""
        self.offered_fetch = None
        """The bank whose ``fetch`` offer was not taken last cycle."""
        self.lines = [[PortLine() for _ in range(lines)] for _ in range(banks)]
        self.where: list[dict] = [{} for _ in range(banks)]
        """Per bank, the line of each valid tag ``(slot, reg)`` (a line not free)."""
        self.evict: list = [None] * banks
        """Per bank, the eviction in flight: ``["chosen" or "held", line]``."""
        self.offered = None
        """The bank whose ``writeback`` offer was not taken last cycle."""
        self.written: deque = deque()
        self.fake: deque = deque()
        """``(slot, first cycle ACTIVE)`` of empty regions to drain with an issue."""
        self.time = 0
        """The next cycle to step."""

    def idle(self) -> bool:
        return not (self.steps or self.written or self.fake or any(self.queues)
                    or any(self.fetch) or any(self.evict)
                    or (self.transfer is not None and not self.transfer.idle()))

    # -- requests ----------------------------------------------------------------------
    def add(self, request: Request) -> Request:
        self.steps.append(request)
        return request

    def add_read(self, request: Request) -> None:
        """A read goes before the requests its own instruction's dispatch made in the same
        cycle (``ShardPorts.add_read``)."""
        for index, other in enumerate(self.steps):
            if other.slot == request.slot and other.kind != "read" \
                    and other.dispatch == request.due:
                self.steps.insert(index, request)
                return
        self.steps.append(request)

    def base(self, slot: int, reg: int):
        """The lanes a write of ``(slot, reg)`` in fewer than all lanes is merged with
        (``ShardPorts.value``): a write still waiting for its port, else the line's data
        while it is in use and filled; ``None``: zeros."""
        for request in reversed(self.steps):
            if request.kind == "write" and request.slot == slot and request.reg == reg \
                    and request.data is not None:
                return request.data
        bank = (slot + reg) % self.banks
        index = self.where[bank].get((slot, reg))
        if index is None:
            return None
        line = self.lines[bank][index]
        return line.data if line.place == "used" and not line.filling else None

    # -- one cycle -----------------------------------------------------------------------
    def step(self, now: int) -> None:
        """The requests offered and taken in cycle ``now``, then the clock edge."""
        issue, presented = self._offer(now)
        grants = {kind: {} for kind in PORTS}
        for request in presented:
            grants[request.kind].setdefault(request.bank, request)
        taken = self._banks(grants, now)
        written = None
        if self.written:
            written = self.written.popleft()
        fake = None
        if issue is None and self.fake and self.fake[0][1] <= now:
            fake = self.fake.popleft()[0]
        for request in taken:
            request.taken = True
        for request in presented:
            if request.taken and request.kind == "write" and request.written:
                self.written.append((request.slot, request.bank))
        if issue is not None:
            issue.taken = True
            taken.append(issue)
        if taken:
            self.steps = [request for request in self.steps if not request.taken]
        if issue is not None or written is not None or fake is not None:
            self.owner.port_cycle(self.shard, now, issue, written, fake)
        self.time = now + 1

    def _offer(self, now: int):
        """The ``issue`` taken and the requests offered in ``now``, in port order."""
        used = dict.fromkeys(PORTS, 0)
        blocked, waiting, presented = set(), set(), []
        issue = None
        for request in self.steps:
            kind, slot = request.kind, request.slot
            if kind == "issue":
                if issue is None and slot not in waiting and request.due <= now:
                    issue = request
                waiting.add(slot)
                continue
            if kind != "write":
                waiting.add(slot)
            key = (slot, request.reg)
            if key in blocked:
                continue
            blocked.add(key)
            if request.due > now or (kind == "write" and not (
                    request.reserve.taken and request.issue.taken)):
                continue
            if used[kind] == PORTS[kind]:
                continue
            used[kind] += 1
            presented.append(request)
        return issue, presented

    def _banks(self, grants, now: int) -> list[Request]:
        """Per bank: the data port (write > read > the transfer unit's fill > an eviction's
        read-out) and the tag port (read > reserve > queued preload or invalidation >
        release); the requests taken. A reserve or a preload miss that finds no free or
        clean line is not taken; if only dirty lines are left the first is chosen for
        eviction, read out, offered on ``writeback`` and, once taken, clean
        (``OsuBank.advance``). Then the transfer unit's edge."""
        taken = []
        reads, reserves, writes, releases = (grants[k] for k in ("read", "reserve", "write",
                                                                 "release"))
        queues, fetch, evict = self.queues, self.fetch, self.evict
        grant_fetch, grant_wb = self._grants()
        transfer = self.transfer
        if transfer is not None and grant_fetch is None and grant_wb is None \
                and transfer.idle():
            transfer = None  # nothing offered, nothing in flight: the edge changes nothing
        if transfer is None:
            fetch_ready, wb_ready, fill = True, grant_fetch is None, None
        else:
            shown = transfer.show(grant_fetch is not None)
            fetch_ready, wb_ready = shown["fetch_ready"], shown["writeback_ready"]
            fill = shown["fill"]
        fetch_offer = None if grant_fetch is None else fetch[grant_fetch]
        wb_offer = None if grant_wb is None else self._offer_line(grant_wb)
        self.offered_fetch = None if grant_fetch is None or fetch_ready else grant_fetch
        self.offered = None if grant_wb is None or wb_ready else grant_wb
        granted = grant_fetch if fetch_ready else None
        if granted is not None:
            fetch[granted] = None
        fill_bank = None if fill is None else fill[0][1]
        fill_ready = 0
        for bank in set(reads) | set(reserves) | set(writes) | set(releases) | {
                b for b, queue in enumerate(queues) if queue and queue[0][0] <= now} | {
                b for b, out in enumerate(evict) if out is not None} | (
                set() if fill_bank is None else {fill_bank}):
            write, read, reserve = writes.get(bank), reads.get(bank), reserves.get(bank)
            out = evict[bank]
            read_xfer = read is not None and write is None and (out is None
                                                                or out[0] != "held")
            filled = bank == fill_bank and write is None and not read_xfer
            if bank == fill_bank:
                fill_ready = int(filled)
            took = False
            if read_xfer:
                taken.append(read)
            else:
                took = self._tag_port(bank, reserve, releases.get(bank), granted, filled,
                                      now, taken)
            if out is None:
                if not took:
                    self._choose(bank, reserve, now)
            elif out[0] == "chosen" and write is None and not read_xfer and not filled:
                out[0] = "held"
            if write is not None:
                taken.append(write)
                self._write(bank, write)
            if filled:
                line = self.lines[bank][fill[0][0]]
                if line.filling:
                    line.filling = False
                    line.data = self.owner.line_values(line.owner)
                    self.owner.filled(self.shard, line.entry, now)
        if grant_wb is not None and wb_ready:
            self._written_back(grant_wb, now)
        if transfer is not None:
            transfer.advance(now, fetch_offer, wb_offer, fill_ready)
        return taken

    def _grants(self) -> tuple:
        """The banks whose ``fetch`` and ``writeback`` offers the OSU shows: the one left
        waiting, else the lowest with an offer (``Osu._grant``)."""
        grant_fetch = self.offered_fetch
        if grant_fetch is None:
            grant_fetch = next((b for b, held in enumerate(self.fetch) if held), None)
        grant_wb = self.offered
        if grant_wb is None:
            grant_wb = next((b for b, out in enumerate(self.evict)
                             if out is not None and out[0] == "held"), None)
        return grant_fetch, grant_wb

    def _offer_line(self, bank: int) -> dict:
        """The ``writeback`` offer of the bank's evicted line."""
        index = self.evict[bank][1]
        line = self.lines[bank][index]
        data = line.data
        return {"warp": line.tag[0], "reg": line.tag[1], "line": (index, bank),
                "data": [0] * 32 if data is None else data.tolist()}

    def _written_back(self, bank: int, now: int) -> None:
        line = self.lines[bank][self.evict[bank][1]]
        self.evict[bank] = None
        line.place, line.written = "clean", False
        self.owner.written_back(self.shard, line.owner, now, data=line.data)

    def _choose(self, bank: int, reserve, now: int) -> None:
        """No tag operation this cycle: a reserve or a preload that misses with only dirty
        lines left chooses the first for eviction."""
        where = self.where[bank]
        queue = self.queues[bank]
        head = queue[0][1] if queue and queue[0][0] <= now else None
        if not ((reserve is not None and (reserve.slot, reserve.reg) not in where)
                or (head is not None and not head[3] and (head[1], head[2]) not in where)):
            return
        choice = allocation_choice(self.lines[bank])
        if choice is not None and choice[0] == "evict":
            self.evict[bank] = ["chosen", choice[1]]

    def _tag_port(self, bank, reserve, release, granted, filled, now, taken) -> bool:
        """The bank's tag port without a read: a reserve, else the queue's head, else a
        release (``osu_bank._tag_port``); what it takes goes to ``taken``; whether it took
        one."""
        if reserve is not None and self._reserve(bank, reserve, now):
            taken.append(reserve)
            return True
        queue = self.queues[bank]
        if queue and queue[0][0] <= now and self._entry(bank, queue, granted, filled, now):
            return True
        if release is not None:
            taken.append(release)
            self._release(bank, release, now)
            return True
        return False

    def _reserve(self, bank: int, request: Request, now: int) -> bool:
        """A reserve hits its register's line, else allocates one (``_apply_tag``)."""
        index = self.where[bank].get((request.slot, request.reg))
        if index is None:
            return self._allocate(bank, request.slot, request.reg, request.owner, now)
        if self._busy(bank, index):
            return False
        self._hit(self.lines[bank][index], request.owner, now)
        return True

    def _busy(self, bank: int, index: int) -> bool:
        """The line is being filled or evicted: a reserve or preload hitting it waits."""
        out = self.evict[bank]
        return self.lines[bank][index].filling or (out is not None and out[1] == index)

    def _hit(self, line: PortLine, owner, now: int) -> None:
        """A reserve or preload found its tag: the line is in use again, now ``owner``'s
        (a slot's new warp takes over the last one's line without a write-back)."""
        line.place = "used"
        if line.owner != owner:
            self.owner.displaced(self.shard, line.owner, False, now)
            line.owner = owner

    def _entry(self, bank: int, queue, granted, filled: bool, now: int) -> bool:
        """The queue's head: a hit or an invalidation not while the bank takes a fill; an
        invalidation or a preload miss needs the fetch register (free, or emptied by the
        transfer unit this cycle); a miss also a line, filled later."""
        entry = queue[0][1]
        _, slot, reg, invalidate, owner = entry
        index = None if invalidate else self.where[bank].get((slot, reg))
        if index is not None:
            if self._busy(bank, index) or filled:
                return False
            self._hit(self.lines[bank][index], owner, now)
        else:
            if (self.fetch[bank] and bank != granted) or (invalidate and filled):
                return False
            if not invalidate and not self._allocate(bank, slot, reg, owner, now):
                return False
            line = 0
            if not invalidate:
                line = self.where[bank][(slot, reg)]
                self.lines[bank][line].filling = True
                self.lines[bank][line].entry = entry
            self.fetch[bank] = {"warp": slot, "reg": reg, "line": (line, bank),
                                "invalidate": int(invalidate)}
        queue.popleft()
        self.owner.entry_taken(self.shard, entry, now, index is not None)
        return True

    def _allocate(self, bank: int, slot: int, reg: int, owner, now: int) -> bool:
        """A line for ``(slot, reg)``: the first free, else the first clean (dropped)
        (``allocation_choice``); ``False`` if there is none (a dirty line must be evicted
        first: :meth:`_choose`)."""
        lines, where = self.lines[bank], self.where[bank]
        choice = allocation_choice(lines)
        if choice is None or choice[0] == "evict":
            return False
        index = choice[1]
        line = lines[index]
        if line.place != "free":
            del where[line.tag]
            self.owner.displaced(self.shard, line.owner, False, now)
        line.place, line.tag, line.written, line.owner = "used", (slot, reg), False, owner
        line.filling = False
        where[(slot, reg)] = index
        return True

    def _write(self, bank: int, request: Request) -> None:
        index = self.where[bank].get((request.slot, request.reg))
        if index is not None:
            line = self.lines[bank][index]
            if line.place == "used":
                line.written = True
                line.data = request.data
                if request.flag:
                    line.place = "dirty"

    def _release(self, bank: int, request: Request, now: int) -> None:
        where = self.where[bank]
        index = where.get((request.slot, request.reg))
        if index is None:
            return
        line = self.lines[bank][index]
        if line.place != "used":
            return
        if request.flag:
            line.place, line.written = "free", False
            del where[line.tag]
            self.owner.displaced(self.shard, line.owner, False, now)
        else:
            line.place = "dirty" if line.written else "clean"
