"""Golden model of ``regless.compressor``, from the paper's Section 5.3 and the spec.

The patterns are plain functions (:func:`match_pattern`, :func:`expand`). The port model
runs each request as a Python generator of cycles: one cycle of bit-vector check or pattern
match, one of tag match, then the L1 refill if the line is missing (none if the line holds no
compressed register: it is allocated empty, see :meth:`Compressor._find`), then the access.
"""

from gpurf.golden.model import PortModel
from gpurf.hw.ports import codec
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

_PRELOAD, _EVICT = CompressorOp.PRELOAD.value, CompressorOp.EVICT.value


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
    """One cached compressed line: its number, its fields (``base``, ``state`` and
    ``unused`` of ``compressed_line_layout``) and whether it changed."""

    def __init__(self, number, fields):
        self.number, self.fields, self.dirty = number, fields, False


class Shown:
    """The compressor's outputs in one cycle (a function of its state): ``request_ready``
    (while idle; :meth:`Compressor.accepts` adds the cycle of a taken response),
    ``response`` (``(compressed, lanes)`` or ``None``), ``l1_request`` (``(write, line,
    data)`` with the line's packed bits, or ``None``) and ``l1_response_ready``."""

    __slots__ = ("l1_request", "l1_response_ready", "request_ready", "response")

    def __init__(self, request_ready=0, response=None, l1_request=None, l1_response_ready=0):
        self.request_ready, self.response = request_ready, response
        self.l1_request, self.l1_response_ready = l1_request, l1_response_ready


_IDLE = Shown(request_ready=1)
_BUSY = Shown()
_WAIT = Shown(l1_response_ready=1)


class Compressor(PortModel, config=CompressorConfig):
    """Port-level model: ``compressed`` is the set of compressed register indices,
    ``store`` the cached lines (``None`` = empty) and ``pointer`` the FIFO pointer.

    :meth:`advance` is the same cycle on unpacked inputs (the shard model drives its
    compressor with it); ``shown`` holds this cycle's outputs (:class:`Shown`)."""

    def reset(self):
        self.compressed: set[int] = set()
        self.store: list[_Line | None] = [None] * self.config.lines
        self.pointer = 0
        self.job = None
        self.shown = _IDLE
        self._line = codec(self.config.line_layout)

    def step(self, inputs: dict) -> dict:
        ports, shown = self.ports, self.shown
        response, l1 = shown.response, shown.l1_request
        accepts = self.accepts(inputs["response__ready"])
        out = {"request__ready": int(accepts),
               "response__valid": int(response is not None),
               "response__payload": None if response is None else ports["response__payload"]
               .pack({"compressed": response[0], "value": response[1]}),
               "l1_request__valid": int(l1 is not None),
               "l1_request__payload": None if l1 is None else ports["l1_request__payload"]
               .pack({"write": l1[0], "line": l1[1], "data": l1[2]}),
               "l1_response__ready": shown.l1_response_ready}
        request = None
        if accepts and inputs["request__valid"]:
            request = ports["request__payload"].unpack(inputs["request__payload"])
        self.advance(inputs["request__valid"], request, inputs["response__ready"],
                     inputs["l1_request__ready"], inputs["l1_response__valid"],
                     inputs["l1_response__payload"])
        return out

    def accepts(self, response_ready) -> bool:
        """``request.ready`` this cycle: idle, or the held request's response is taken."""
        return self.job is None or (self.shown.response is not None and bool(response_ready))

    def advance(self, request_valid, request, response_ready, l1_request_ready,
                l1_response_valid, l1_response) -> None:
        """One cycle: ``request`` (a struct; read only when a request is taken),
        the readies, and the fetched line's packed bits ``l1_response``; then the edge.
        The held request's effects are committed before the next one is taken."""
        if self.job is not None:
            try:
                self.shown = self.job.send((response_ready, l1_request_ready,
                                            l1_response_valid, l1_response))
                return
            except StopIteration:
                self.job, self.shown = None, _IDLE
        if request_valid:
            self.job = self._run(request.op, request.warp, request.reg, request.value)
            self.shown = next(self.job)

    # --- one request -----------------------------------------------------------------

    def _run(self, op, warp, reg, lanes):
        config = self.config
        g = config.index(warp, reg)
        number, slot = divmod(g, config.slots)
        if op == _PRELOAD and g in self.compressed:
            yield _BUSY
            cached = yield from self._find(number)
            base = cached.fields.base[slot]
            value = expand(cached.fields.state[slot], base.b0, base.b1, config.lanes,
                           config.data_width)
            yield from self._respond(1, value)
            return
        pattern = match_pattern(lanes, config.data_width) if op == _EVICT else None
        if pattern is not None and pattern[0] != PatternState.NONE:
            yield _BUSY
            cached = yield from self._find(number)
            yield from self._respond(1, [0] * config.lanes)
            self._place(cached, slot, pattern)
            self.compressed.add(g)
        else:
            yield from self._respond(0, lanes if op == _EVICT else [0] * config.lanes)
            self.compressed.discard(g)

    def _respond(self, compressed, lanes):
        """Show the response until it is taken (the cycle of the handshake included)."""
        shown = Shown(response=(compressed, lanes))
        while True:
            response_ready, _, _, _ = yield shown
            if response_ready:
                return

    def _find(self, number):
        """After the check cycle: a tag-match cycle, and on a miss the victim's write-back
        (if dirty), the line's L1 refill and a second tag-match cycle. Returns the cached line.

        **Interpretation** (paper 5.3, which keeps the bit vector so that the compressor
        "does not need to bring in a line of compressed registers from the L1 only to
        determine whether a register is compressed"; register lines in L1 are write-back,
        no-fetch-on-write): a missing line none of whose registers' bits is set holds
        nothing, so it is allocated with zero fields and no L1 read (only a slot whose bit
        is set is ever expanded). A line with any bit set is fetched."""
        yield _BUSY
        for cached in self.store:
            if cached is not None and cached.number == number:
                return cached
        victim = self.store[self.pointer]
        if victim is not None and victim.dirty:
            yield from self._l1(1, victim.number, self._line.pack(victim.fields))
        bits = (yield from self._refill(number)) if self.holds(number) else 0
        fetched = _Line(number, self._line.unpack(bits))
        self.store[self.pointer] = fetched
        self.pointer = (self.pointer + 1) % self.config.lines
        yield _BUSY
        return fetched

    def holds(self, number) -> bool:
        """Whether compressed line ``number`` holds a compressed register (any of its
        registers' "is compressed" bits set)."""
        first = number * self.config.slots
        return any(g in self.compressed for g in range(first, first + self.config.slots))

    def _refill(self, number):
        """The L1 read of line ``number``: its request, then the wait for its bits."""
        yield from self._l1(0, number, 0)
        while True:
            _, _, valid, bits = yield _WAIT
            if valid:
                return bits

    def _l1(self, write, number, bits):
        shown = Shown(l1_request=(write, number, bits))
        while True:
            _, ready, _, _ = yield shown
            if ready:
                return

    def _place(self, cached, slot, pattern):
        """Write the slot's state and bases into the cached line, which becomes dirty."""
        state, b0, b1 = pattern
        fields = cached.fields
        fields.base[slot] = fields.base[slot]._replace(b0=b0, b1=b1)
        fields.state[slot] = state.value
        cached.dirty = True

    def line_trace(self) -> str:
        lines = " ".join("-" if c is None else f"L{c.number}{'*' if c.dirty else ''}"
                         for c in self.store)
        return (f"compressor: ptr={self.pointer} busy={self.job is not None} "
                f"compressed={sorted(self.compressed)[:8]} {lines}")
