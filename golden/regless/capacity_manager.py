"""Golden model of ``regless.capacity_manager``, written from the paper (5.1, Fig. 9) and the
spec: the warp stack is a Python list (index 0 the top), the per-bank queues are deques of
``lines / banks`` entries, the per-warp state, usage, outstanding writes and pending entries
are lists indexed by warp. The rules (and the latencies they give) are those stated in
:class:`gpurf.hw.regless.capacity_manager.CapacityManager`."""

from collections import deque
from typing import NamedTuple

from gpurf.golden.model import PortModel
from gpurf.hw.regless.configs import CapacityManagerConfig
from gpurf.hw.regless.layouts import RegionWord, WarpState

__all__ = ["CapacityManager", "Entry", "done_word", "fits", "region_words"]

_HEADER, _INVALIDATE = RegionWord.HEADER.value, RegionWord.INVALIDATE.value


class Entry(NamedTuple):
    """A queue entry: ``preload(warp, reg)``, or with ``invalidate`` an invalidation (the
    ``osu_preload_layout`` fields)."""

    warp: int
    reg: int
    invalidate: int


def fits(usage: list[int], free: list[int]) -> bool:
    """A region fits when every bank has as many free lines as it needs."""
    return all(need <= have for need, have in zip(usage, free, strict=True))


def region_words(config: CapacityManagerConfig, descriptor: dict) -> list[int]:
    """The descriptor stream of a region, from a ``Region.descriptor(warp)``-style dict
    ``{warp, bank_usage, n_entries, entries: [(reg, "preload" | "invalidate")]}``: the
    header, then one word per entry, packed as the ``region`` port's payload."""
    pack = config.codecs["region__payload"].pack
    words = [pack({"kind": RegionWord.HEADER, "warp": descriptor["warp"],
                   "n_entries": descriptor["n_entries"],
                   "bank_usage": list(descriptor["bank_usage"])})]
    kinds = {"preload": RegionWord.PRELOAD, "invalidate": RegionWord.INVALIDATE}
    for reg, kind in descriptor["entries"]:
        words.append(pack({"kind": kinds[kind], "reg": reg}))
    return words


def done_word(config: CapacityManagerConfig, warp: int) -> int:
    """The header saying ``warp`` has no more regions."""
    return config.codecs["region__payload"].pack({"kind": RegionWord.HEADER, "warp": warp,
                                                 "done": 1})


class CapacityManager(PortModel, config=CapacityManagerConfig):
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge.

    :meth:`advance` is the same cycle on unpacked inputs (the shard model drives its CM with
    it); the state-only outputs are :meth:`heads` (the queue heads offered on ``preload``),
    :meth:`wants` and :meth:`eligible`, and ``region_ready`` is left in an attribute.
    """

    def reset(self):
        config = self.config
        warps = range(config.warps)
        self.state = [WarpState.INACTIVE for _ in warps]
        self.warps_in = {state: set() for state in WarpState}
        """The warps in each state (what the rules iterate over)."""
        self.warps_in[WarpState.INACTIVE].update(warps)
        self._eligible = 0
        self.stack = list(warps)
        """Inactive warps, most recently deactivated first (reset: warp 0 on top)."""
        self.free = [config.lines_per_bank] * config.banks
        self.usage = [[0] * config.banks for _ in warps]
        self.outstanding = [[0] * config.banks for _ in warps]
        self.pending = [0 for _ in warps]
        self.exited: set[int] = set()
        self.queues: list[deque[Entry]] = [deque() for _ in range(config.banks)]
        self.streaming: dict | None = None
        """``{warp, left}`` while entry words of a taken header are due."""
        self.region_ready = 0
        self._last = (False, None)
        self._keys = tuple([f"preload__{b}__{port}" for b in range(config.banks)]
                           for port in ("valid", "payload", "ready"))

    # --- state-only outputs ----------------------------------------------------------

    def wants(self) -> int | None:
        """The warp ``want`` names (the top of the stack), ``None`` while ``want`` is low."""
        return self.stack[0] if self.streaming is None and self.stack else None

    def eligible(self) -> int:
        """The ``eligible`` mask: bit ``w`` for an ACTIVE warp ``w``."""
        return self._eligible

    def heads(self) -> list[Entry | None]:
        """Per bank, the queue entry offered on ``preload`` (``None``: the queue is empty)."""
        return [queue[0] if queue else None for queue in self.queues]

    # --- one cycle -----------------------------------------------------------------

    def step(self, inputs: dict) -> dict:
        ports = self.ports
        want = self.wants()
        out = {"want__valid": int(want is not None),
               "want__payload": (None if want is None
                                 else ports["want__payload"].pack({"warp": want})),
               "eligible": self.eligible(),
               "state": ports["state"].pack(self.state),
               "free": ports["free"].pack(self.free)}
        valids, payloads, readies = self._keys
        for valid, payload, head in zip(valids, payloads, self.heads(), strict=True):
            out[valid] = int(head is not None)
            out[payload] = None if head is None else ports[payload].pack(head)
        self.advance(inputs["region__valid"],
                     ports["region__payload"].unpack(inputs["region__payload"]),
                     [inputs[ready] for ready in readies],
                     [ack.warp if ack.valid else None
                      for ack in ports["preloaded"].unpack(inputs["preloaded"])],
                     inputs["issue__valid"],
                     ports["issue__payload"].unpack(inputs["issue__payload"]),
                     inputs["written__valid"],
                     ports["written__payload"].unpack(inputs["written__payload"]),
                     inputs["at_barrier"])
        out["region__ready"] = self.region_ready
        return out

    def advance(self, region_valid, word, preload_readies, acks, issue_valid, issue,
                written_valid, written, at_barrier) -> None:
        """One cycle on unpacked inputs: the ``region`` word (a struct, valid or not), the
        ``preload`` readies per bank, ``acks`` (per bank the acknowledged warp or
        ``None``), ``issue`` and ``written`` (structs), ``at_barrier`` (a warp mask); then
        the clock edge."""
        ready, entry = self._region_ready(word)
        self.region_ready = int(ready)
        taken = ready and bool(region_valid)
        # the clock edge; every rule reads the state at the start of the cycle
        warps = len(self.state)
        issuing = (bool(issue_valid) and issue.warp < warps
                   and self.state[issue.warp] == WarpState.ACTIVE)
        draining = bool(written_valid) and self.state[written.warp] == WarpState.DRAINING
        pushed = self._drained(at_barrier)
        for queue, go in zip(self.queues, preload_readies, strict=True):
            if queue and go:
                queue.popleft()
        self._acknowledge(acks)
        self._issue_and_writes(issuing, issue, written_valid, written, draining)
        if taken and entry is not None:
            self._enqueue(*entry)
        elif taken:
            self._take_header(word)
        if pushed is not None:
            self._set(pushed, WarpState.INACTIVE)
            self.stack.insert(0, pushed)
        self._last = (taken, pushed)

    def _set(self, warp: int, state: WarpState) -> None:
        """Move ``warp`` to ``state``."""
        self.warps_in[self.state[warp]].discard(warp)
        self.warps_in[state].add(warp)
        self.state[warp] = state
        if state == WarpState.ACTIVE:
            self._eligible |= 1 << warp
        else:
            self._eligible &= ~(1 << warp)

    def _region_ready(self, word) -> tuple[bool, tuple | None]:
        """Whether the word on ``region`` is taken if valid; for an entry word, its
        ``(bank, entry)``."""
        header = word.kind == _HEADER
        if self.streaming is not None:
            warp, reg = self.streaming["warp"], word.reg
            bank = (warp + reg) & (self.config.banks - 1)
            room = len(self.queues[bank]) < self.config.lines_per_bank
            entry = (bank, Entry(warp, reg, int(word.kind == _INVALIDATE)))
            return not header and room, entry
        ok = (header and bool(self.stack) and word.warp == self.stack[0]
              and (bool(word.done) or fits(word.bank_usage, self.free)))
        return ok, None

    def _take_header(self, word):
        warp = self.stack.pop(0)
        if word.done:
            self.exited.add(warp)
            return
        usage = list(word.bank_usage)
        self.free = [have - need for have, need in zip(self.free, usage, strict=True)]
        self.usage[warp] = usage
        self.pending[warp] = word.n_entries
        self._set(warp, WarpState.PRELOADING)
        if word.n_entries:
            self.streaming = {"warp": warp, "left": word.n_entries}

    def _enqueue(self, bank, entry):
        self.queues[bank].append(entry)
        self.streaming["left"] -= 1
        if self.streaming["left"] == 0:
            self.streaming = None

    def _acknowledge(self, acks):
        """The OSU's acknowledgements; a PRELOADING warp with none pending whose entries
        were all taken becomes ACTIVE."""
        for warp in acks:
            if warp is not None:
                self.pending[warp] -= 1
        streaming = None if self.streaming is None else self.streaming["warp"]
        for warp in list(self.warps_in[WarpState.PRELOADING]):
            if self.pending[warp] == 0 and warp != streaming:
                self._set(warp, WarpState.ACTIVE)

    def _issue_and_writes(self, issuing, issue, written_valid, written, draining):
        """An instruction issued by a warp ACTIVE at the start of the cycle (``issuing``)
        and a write of ``written`` (of a warp that was then DRAINING: ``draining``)."""
        warp = issue.warp
        if issuing and issue.has_dst:
            self.outstanding[warp][issue.dst_bank] += 1
        if written_valid:
            w, b = written.warp, written.bank
            if self.outstanding[w][b] > 0:
                self.outstanding[w][b] -= 1
                if draining:
                    self.free[b] += 1
        if issuing and issue.last:
            self._set(warp, WarpState.DRAINING)
            for b in range(self.config.banks):
                self.free[b] += self.usage[warp][b] - self.outstanding[warp][b]

    def _drained(self, at_barrier: int) -> int | None:
        """The DRAINING warp pushed this cycle: the lowest one with no write outstanding
        (at the start of the cycle) and not held at a barrier (bit of ``at_barrier``)."""
        return min((warp for warp in self.warps_in[WarpState.DRAINING]
                    if not any(self.outstanding[warp]) and not at_barrier >> warp & 1),
                   default=None)

    # --- views ---------------------------------------------------------------------

    def held(self, warp: int) -> list[int]:
        """Lines ``warp`` holds per bank: its usage while PRELOADING or ACTIVE, its
        outstanding writes while DRAINING, none while INACTIVE."""
        state = self.state[warp]
        if state in (WarpState.PRELOADING, WarpState.ACTIVE):
            return list(self.usage[warp])
        if state == WarpState.DRAINING:
            return list(self.outstanding[warp])
        return [0] * self.config.banks

    def line_trace(self) -> str:
        marks = {WarpState.INACTIVE: "I", WarpState.PRELOADING: "P", WarpState.ACTIVE: "A",
                 WarpState.DRAINING: "D"}
        warps = " ".join(f"{w}:{marks[s]}{'x' if w in self.exited else ''}"
                         f"p{self.pending[w]}o{self.outstanding[w]}"
                         for w, s in enumerate(self.state))
        taken, pushed = self._last
        return (f"capacity_manager: taken={taken} pushed={pushed} stack={self.stack} "
                f"free={self.free} stream={self.streaming} "
                f"queues={[len(q) for q in self.queues]} [{warps}]")
