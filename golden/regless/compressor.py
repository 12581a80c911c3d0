"""Golden model of ``regless.compressor``, from the paper's Section 5.3 and the spec.

The patterns are plain functions (:func:`match_pattern`, :func:`expand`). The port model
runs each request as a Python generator of cycles: one cycle of bit-vector check or pattern
match, one of tag match, then the L1 refill if the line is missing, then the access.
"""

from gpurf.hw.regless.configs import CompressorConfig
from gpurf.hw.regless.layouts import CompressorOp, PatternState

__all__ = ["PATTERNS", "Compressor", "expand", "match_pattern"]

PATTERNS = (
    (PatternState.CONSTANT, 0, False),
    (PatternState.STRIDE1, 1, False),
    (PatternState.STRIDE4, 4, False),
    (PatternState.HALF_STRIDE1, 1, True),
    (PatternState.HALF_STRIDE4, 4, True),
)
"""The patterns in priority order: state, lane stride, one base per half-warp."""


def _pattern_lanes(b0, b1, lanes, data_width, stride, halves):
    half = lanes // 2
    mask = (1 << data_width) - 1
    out = []
    for i in range(lanes):
        if halves and i >= half:
            out.append((b1 + stride * (i - half)) & mask)
        else:
            out.append((b0 + stride * i) & mask)
    return out


def match_pattern(values: list[int], data_width: int) -> tuple[PatternState, int, int]:
    """The first pattern ``values`` (one int per lane) matches, with its bases ``b0, b1``
    (``b1`` = 0 for full-warp patterns); ``(NONE, 0, 0)`` when none matches."""
    lanes = len(values)
    for state, stride, halves in PATTERNS:
        b0, b1 = values[0], values[lanes // 2] if halves else 0
        if _pattern_lanes(b0, b1, lanes, data_width, stride, halves) == list(values):
            return state, b0, b1
    return PatternState.NONE, 0, 0


def expand(state: int, b0: int, b1: int, lanes: int, data_width: int) -> list[int]:
    """The lanes a compressed register stands for (all zero for ``NONE`` and codes 6, 7)."""
    code = state.value if isinstance(state, PatternState) else state
    for pattern, stride, halves in PATTERNS:
        if pattern.value == code:
            return _pattern_lanes(b0, b1, lanes, data_width, stride, halves)
    return [0] * lanes


class _Line:
    """One cached compressed line: its number, raw bits and whether it changed."""

    def __init__(self, number, bits):
        self.number, self.bits, self.dirty = number, bits, False


class Compressor:
    """Port-level model: ``compressed`` is the set of compressed register indices,
    ``store`` the cached lines (``None`` = empty) and ``pointer`` the FIFO pointer."""

    def __init__(self, **params):
        self.config = CompressorConfig(**params)
        self.reset()

    def reset(self):
        self.compressed: set[int] = set()
        self.store: list[_Line | None] = [None] * self.config.lines
        self.pointer = 0
        self.job = None
        self.shown = self._idle()

    def _idle(self):
        return {"request__ready": 1, "response__valid": 0, "response__payload": None,
                "l1_request__valid": 0, "l1_request__payload": None, "l1_response__ready": 0}

    def _busy(self, **ports):
        return {**self._idle(), "request__ready": 0, **ports}

    def step(self, inputs: dict) -> dict:
        out = self.shown
        if self.job is None:
            if inputs["request__valid"]:
                request = self.config.request_layout.from_bits(inputs["request__payload"])
                self.job = self._run(request.op, request.warp, request.reg,
                                     [request.value[i] for i in range(self.config.lanes)])
                self.shown = next(self.job)
            return out
        try:
            self.shown = self.job.send(inputs)
        except StopIteration:
            self.job, self.shown = None, self._idle()
        return out

    # --- one request -----------------------------------------------------------------

    def _run(self, op, warp, reg, lanes):
        config = self.config
        g = config.index(warp, reg)
        number, slot = divmod(g, config.slots)
        pattern = match_pattern(lanes, config.data_width)
        if op == CompressorOp.PRELOAD and g in self.compressed:
            yield self._busy()
            cached = yield from self._find(number)
            bases = self._line(cached).base[slot]
            value = expand(self._line(cached).state[slot], bases.b0, bases.b1,
                           config.lanes, config.data_width)
            yield from self._respond(1, value)
        elif op == CompressorOp.EVICT and pattern[0] != PatternState.NONE:
            yield self._busy()
            cached = yield from self._find(number)
            yield from self._respond(1, [0] * config.lanes)
            self._place(cached, slot, pattern)
            self.compressed.add(g)
        else:
            evicted = op == CompressorOp.EVICT
            yield from self._respond(0, lanes if evicted else [0] * config.lanes)
            self.compressed.discard(g)

    def _respond(self, compressed, lanes):
        """Show the response until it is taken (the cycle of the handshake included)."""
        config = self.config
        payload = config.response_layout.const(
            {"compressed": compressed, "value": lanes}).as_value().value
        while True:
            inputs = yield self._busy(response__valid=1, response__payload=payload)
            if inputs["response__ready"]:
                return

    def _find(self, number):
        """After the check cycle: a tag-match cycle, and on a miss the L1 refill and a
        second tag-match cycle. Returns the cached line."""
        yield self._busy()
        for cached in self.store:
            if cached is not None and cached.number == number:
                return cached
        victim = self.store[self.pointer]
        if victim is not None and victim.dirty:
            yield from self._l1(1, victim.number, victim.bits)
        yield from self._l1(0, number, 0)
        while True:
            inputs = yield self._busy(l1_response__ready=1)
            if inputs["l1_response__valid"]:
                break
        fetched = _Line(number, inputs["l1_response__payload"])
        self.store[self.pointer] = fetched
        self.pointer = (self.pointer + 1) % self.config.lines
        yield self._busy()
        return fetched

    def _l1(self, write, number, bits):
        config = self.config
        payload = config.l1_request_layout.const(
            {"write": write, "line": number,
             "data": config.value_layout.from_bits(bits)}).as_value().value
        while True:
            inputs = yield self._busy(l1_request__valid=1, l1_request__payload=payload)
            if inputs["l1_request__ready"]:
                return

    def _line(self, cached):
        return self.config.line_layout.from_bits(cached.bits)

    def _place(self, cached, slot, pattern):
        """Write the slot's state and bases into the cached line, which becomes dirty."""
        config = self.config
        layout = config.line_layout
        view = layout.from_bits(cached.bits)
        fields = {"base": [{"b0": view.base[s].b0, "b1": view.base[s].b1}
                           for s in range(config.slots)],
                  "state": [view.state[s] for s in range(config.slots)]}
        if "unused" in layout.members:
            fields["unused"] = view.unused
        state, b0, b1 = pattern
        fields["base"][slot] = {"b0": b0, "b1": b1}
        fields["state"][slot] = state
        cached.bits = layout.const(fields).as_value().value
        cached.dirty = True

    def line_trace(self) -> str:
        lines = " ".join("-" if c is None else f"L{c.number}{'*' if c.dirty else ''}"
                         for c in self.store)
        return (f"compressor: ptr={self.pointer} busy={self.job is not None} "
                f"compressed={sorted(self.compressed)[:8]} {lines}")
