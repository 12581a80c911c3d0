"""Golden model of ``regless.capacity_manager``, written from the paper (5.1, Fig. 9) and the
spec: the warp stack is a Python list (index 0 the top), the per-bank queues are deques of
``lines / banks`` entries, the per-warp state, usage, outstanding writes and pending entries
are dictionaries. The rules (and the latencies they give) are those stated in
:class:`gpurf.hw.regless.capacity_manager.CapacityManager`."""

import copy
from collections import deque

from gpurf.hw.regless.configs import CapacityManagerConfig
from gpurf.hw.regless.layouts import RegionWord, WarpState

__all__ = ["CapacityManager", "done_word", "fits", "region_words"]


def fits(usage: list[int], free: list[int]) -> bool:
    """A region fits when every bank has as many free lines as it needs."""
    return all(need <= have for need, have in zip(usage, free, strict=True))


def region_words(config: CapacityManagerConfig, descriptor: dict) -> list[int]:
    """The descriptor stream of a region, from a ``Region.descriptor(warp)``-style dict
    ``{warp, bank_usage, n_entries, entries: [(reg, "preload" | "invalidate")]}``: the
    header, then one word per entry, packed with the layout."""
    layout = config.region_layout
    words = [layout.const({"kind": RegionWord.HEADER, "warp": descriptor["warp"],
                           "n_entries": descriptor["n_entries"],
                           "bank_usage": list(descriptor["bank_usage"])}).as_value().value]
    kinds = {"preload": RegionWord.PRELOAD, "invalidate": RegionWord.INVALIDATE}
    for reg, kind in descriptor["entries"]:
        words.append(layout.const({"kind": kinds[kind], "reg": reg}).as_value().value)
    return words


def done_word(config: CapacityManagerConfig, warp: int) -> int:
    """The header saying ``warp`` has no more regions."""
    return config.region_layout.const({"kind": RegionWord.HEADER, "warp": warp,
                                       "done": 1}).as_value().value


class CapacityManager:
    """Port-level model: ``step(inputs)`` returns this cycle's outputs, then takes the edge."""

    def __init__(self, **params):
        self.config = CapacityManagerConfig(**params)
        self.reset()

    def reset(self):
        config = self.config
        warps = range(config.warps)
        self.state = {w: WarpState.INACTIVE for w in warps}
        self.stack = list(warps)
        """Inactive warps, most recently deactivated first (reset: warp 0 on top)."""
        self.free = [config.lines_per_bank] * config.banks
        self.usage = {w: [0] * config.banks for w in warps}
        self.outstanding = {w: [0] * config.banks for w in warps}
        self.pending = {w: 0 for w in warps}
        self.exited: set[int] = set()
        self.queues = [deque() for _ in range(config.banks)]
        self.streaming: dict | None = None
        """``{warp, left}`` while entry words of a taken header are due."""
        self._trace = ""

    # --- one cycle -----------------------------------------------------------------

    def peek(self, inputs: dict) -> dict:
        """The outputs ``step(inputs)`` would return, without taking the edge (for a
        composition that needs them before it knows the rest of this cycle's inputs)."""
        return copy.deepcopy(self).step(inputs)

    def step(self, inputs: dict) -> dict:
        config = self.config
        word = config.region_layout.from_bits(inputs["region__payload"])
        want = self.streaming is None and bool(self.stack)
        out = {"want__valid": int(want), "want__payload": self.stack[0] if want else None,
               "eligible": sum(1 << w for w, s in self.state.items()
                               if s == WarpState.ACTIVE),
               "state": config.state_layout.const(
                   [self.state[w] for w in range(config.warps)]).as_value().value,
               "free": config.counts_layout.const(self.free).as_value().value}
        for b, queue in enumerate(self.queues):
            out[f"preload__{b}__valid"] = int(bool(queue))
            out[f"preload__{b}__payload"] = (config.preload_layout.const(queue[0])
                                             .as_value().value if queue else None)
        ready, entry = self._region_ready(word, want)
        out["region__ready"] = int(ready)
        taken = ready and bool(inputs["region__valid"])
        # the clock edge; every rule reads the state at the start of the cycle
        start = dict(self.state)
        pushed = self._drained()
        for b, queue in enumerate(self.queues):
            if queue and inputs[f"preload__{b}__ready"]:
                queue.popleft()
        self._acknowledge(inputs)
        self._issue_and_writes(inputs, start)
        if taken and entry is not None:
            self._enqueue(*entry)
        elif taken:
            self._take_header(word)
        if pushed is not None:
            self.state[pushed] = WarpState.INACTIVE
            self.stack.insert(0, pushed)
        self._trace = self._describe(taken, pushed)
        return out

    def _region_ready(self, word, want) -> tuple[bool, tuple | None]:
        """Whether the word on ``region`` is taken if valid; for an entry word, its
        ``(bank, entry)``."""
        header = word.kind == RegionWord.HEADER
        if self.streaming is not None:
            warp, reg = self.streaming["warp"], int(word.reg)
            bank = self.config.bank_of(warp, reg)
            invalidate = word.kind == RegionWord.INVALIDATE
            room = len(self.queues[bank]) < self.config.lines_per_bank
            entry = (bank, {"warp": warp, "reg": reg, "invalidate": int(invalidate)})
            return not header and room, entry
        usage = [int(word.bank_usage[b]) for b in range(self.config.banks)]
        ok = (want and header and int(word.warp) == self.stack[0]
              and (bool(word.done) or fits(usage, self.free)))
        return ok, None

    def _take_header(self, word):
        warp = self.stack.pop(0)
        if word.done:
            self.exited.add(warp)
            return
        usage = [int(word.bank_usage[b]) for b in range(self.config.banks)]
        self.free = [have - need for have, need in zip(self.free, usage, strict=True)]
        self.usage[warp] = usage
        self.pending[warp] = int(word.n_entries)
        self.state[warp] = WarpState.PRELOADING
        if word.n_entries:
            self.streaming = {"warp": warp, "left": int(word.n_entries)}

    def _enqueue(self, bank, entry):
        self.queues[bank].append(entry)
        self.streaming["left"] -= 1
        if self.streaming["left"] == 0:
            self.streaming = None

    def _acknowledge(self, inputs):
        """The OSU's acknowledgements; a PRELOADING warp with none pending whose entries
        were all taken becomes ACTIVE."""
        acks = self.config.acks_layout.from_bits(inputs["preloaded"])
        for b in range(self.config.banks):
            if acks[b].valid:
                self.pending[int(acks[b].warp)] -= 1
        streaming = None if self.streaming is None else self.streaming["warp"]
        for warp, state in self.state.items():
            if state == WarpState.PRELOADING and self.pending[warp] == 0 and warp != streaming:
                self.state[warp] = WarpState.ACTIVE

    def _issue_and_writes(self, inputs, start):
        config = self.config
        issue = config.issue_layout.from_bits(inputs["issue__payload"])
        written = config.written_layout.from_bits(inputs["written__payload"])
        warp = int(issue.warp)
        issuing = bool(inputs["issue__valid"]) and start.get(warp) == WarpState.ACTIVE
        if issuing and issue.has_dst:
            self.outstanding[warp][int(issue.dst_bank)] += 1
        if inputs["written__valid"]:
            w, b = int(written.warp), int(written.bank)
            if self.outstanding[w][b] > 0:
                self.outstanding[w][b] -= 1
                if start[w] == WarpState.DRAINING:
                    self.free[b] += 1
        if issuing and issue.last:
            self.state[warp] = WarpState.DRAINING
            for b in range(config.banks):
                self.free[b] += self.usage[warp][b] - self.outstanding[warp][b]

    def _drained(self) -> int | None:
        """The DRAINING warp pushed this cycle: the lowest one with no write outstanding
        (at the start of the cycle)."""
        for warp, state in sorted(self.state.items()):
            if state == WarpState.DRAINING and not any(self.outstanding[warp]):
                return warp
        return None

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

    def _describe(self, taken, pushed) -> str:
        marks = {WarpState.INACTIVE: "I", WarpState.PRELOADING: "P", WarpState.ACTIVE: "A",
                 WarpState.DRAINING: "D"}
        warps = " ".join(f"{w}:{marks[s]}{'x' if w in self.exited else ''}"
                         f"p{self.pending[w]}o{self.outstanding[w]}"
                         for w, s in self.state.items())
        return (f"taken={taken} pushed={pushed} stack={self.stack} free={self.free} "
                f"stream={self.streaming} queues={[len(q) for q in self.queues]} [{warps}]")

    def line_trace(self) -> str:
        return f"capacity_manager: {self._trace}"
