"""RegLess register compressor (paper Section 5.3): five value patterns, the "is compressed"
bit vector, a small fully associative store of compressed lines, and an L1 port."""

import functools

from amaranth import Cat, Const, Module, Mux, Signal, Value
from amaranth.lib import data, enum, memory, wiring
from amaranth.lib.wiring import In, Out

from gpurf.hw.gates import bit, equals, onehot, or_all
from gpurf.hw.params import ConfiguredComponent, index_bits

from .configs import CompressorConfig
from .layouts import CompressorOp, PatternState

__all__ = ["STRIDES", "Compressor", "PatternMatch"]

STRIDES = {
    PatternState.CONSTANT: (0, False),
    PatternState.STRIDE1: (1, False),
    PatternState.STRIDE4: (4, False),
    PatternState.HALF_STRIDE1: (1, True),
    PatternState.HALF_STRIDE4: (4, True),
}
"""Per pattern, in priority order: the lane stride and whether each half-warp has its own
base (lane ``i`` of a half-warp pattern is ``b + stride * (i mod lanes/2)``)."""


class PatternMatch(wiring.Component):
    """Combinational pattern matcher and expander (paper 5.3).

    ``state``/``slot``: the first pattern in :data:`STRIDES` order that ``value`` matches
    (arithmetic modulo ``2**data_width``) and its bases, ``NONE`` and zero bases when none
    matches. ``expanded``: the value that ``expand_state``/``expand_slot`` stand for (zero
    for ``NONE`` and the unused codes 6, 7).

    Attributes
    ----------
    value : In(value_layout)
    state : Out(PatternState)
    slot : Out(slot_layout)
    expand_state : In(3)
    expand_slot : In(slot_layout)
    expanded : Out(value_layout)
    """

    def __init__(self, config: CompressorConfig):
        self.config = config
        super().__init__({
            "value": In(config.value_layout),
            "state": Out(PatternState),
            "slot": Out(config.slot_layout),
            "expand_state": In(3),
            "expand_slot": In(config.slot_layout),
            "expanded": Out(config.value_layout),
        })

    def _lane(self, base0, base1, lane, stride, halves):
        """The lane's value under the pattern, ``data_width`` bits wide."""
        config = self.config
        base, offset = ((base1, lane - config.half) if halves and lane >= config.half
                        else (base0, lane))
        return _add_constant(base, stride * offset)

    def _first(self, lane, halves):
        """Whether ``lane`` starts a run (lane 0, or the second half-warp's first lane)."""
        return lane == 0 or (halves and lane == self.config.half)

    def elaborate(self, platform):
        m = Module()
        config, value = self.config, self.value
        width = config.data_width
        matched, first_hit = Const(0, 1), {}
        for state, (stride, halves) in STRIDES.items():
            hit = Signal(name=f"match_{state.name.lower()}")
            m.d.comb += hit.eq(Cat(
                equals((value[lane] - value[lane - 1])[:width], stride)
                for lane in range(config.lanes) if not self._first(lane, halves)).all())
            first_hit[state] = hit & ~matched
            matched = matched | hit
        m.d.comb += [
            self.state.as_value().eq(_or_bits(first_hit, 3)),
            self.slot.b0.eq(value[0] & matched.replicate(width)),
            self.slot.b1.eq(value[config.half] & (first_hit[PatternState.HALF_STRIDE1]
                                                  | first_hit[PatternState.HALF_STRIDE4])
                            .replicate(width)),
        ]
        slot = self.expand_slot
        for lane in range(config.lanes):
            m.d.comb += self.expanded[lane].eq(or_all([
                self._lane(slot.b0, slot.b1, lane, stride, halves)
                & equals(self.expand_state, state.value).replicate(width)
                for state, (stride, halves) in STRIDES.items()]))
        return m


class Phase(enum.Enum, shape=3):
    """The compressor's sequencer (one request held; the next is taken at its answer)."""

    IDLE = 0
    CHECK = 1
    TAG = 2
    ACCESS = 3
    WRITE_BACK = 4
    FETCH = 5
    WAIT = 6


class Compressor(ConfiguredComponent, config=CompressorConfig):
    """The register compressor of one RegLess shard (paper 5.3, Table 1).

    Storage: ``lines`` compressed lines of one L1 line each in an unmapped memory
    (16 x 1024 bits by default, the paper's 16 lines of 128 bytes), and in flip-flops the
    "is compressed" bit vector (one bit per ``(warp, reg)`` of the shard, 1024 by default),
    per line a valid bit, a dirty bit and the tag (the compressed line number), the FIFO
    pointer, the held request and the sequencer phase.

    Register ``(warp, reg)`` has index ``g = reg * warps + warp`` and lives in compressed
    line ``g // slots``, slot ``g % slots`` (``slots`` = 15 by default, see the layouts:
    two ``data_width`` bases and a 3-bit state per slot). A compressed line holds states and
    bases of every slot; only a slot whose bit-vector bit is set is meaningful.

    Protocol: ``request`` and ``response`` are ready/valid streams, and every request gets
    exactly one response. The compressor holds one request; it takes the next one while
    idle or in the cycle the held one's response is taken (``request.ready`` = idle, or
    ``response.valid & response.ready``), so answers that take one cycle follow each other
    every cycle. The held request's effects (its bit, the slot and the line's dirty bit) are
    written at that same edge, so the next request's check sees them. **Interpretation:**
    the paper's "one read or write per cycle" is the store's port; the sequencer does not
    overlap two requests' tag matches or accesses, which keeps the stated latencies exact.
    Latencies, in clock edges from the request's acceptance edge to the first cycle the
    response is valid (each phase is one cycle):

    - **preload**, bit clear: 1 (bit-vector check) -> ``compressed=0, value=0``.
    - **preload**, bit set, line present: 3 (check, tag match, read + decompress)
      -> ``compressed=1`` and the value.
    - **evict**, no pattern matches: 1 (pattern match) -> ``compressed=0`` and the value
      handed back (the OSU writes it to L1 as a full line); the bit is cleared.
    - **evict**, a pattern matches, line present: 3 (match, tag match, slot write)
      -> ``compressed=1, value=0``; the slot, the line's dirty bit and the register's bit
      are written at the response handshake.
    - **invalidate**: 1 -> ``compressed=0, value=0``; the bit is cleared.
    - a tag miss (line absent) inserts the L1 refill between the tag match and the access:
      the line at the FIFO pointer is the victim; if it is valid and dirty it is written
      back first (``l1_request`` with ``write=1``), then the missing line is fetched
      (``write=0``), waited for on ``l1_response``, installed clean at the pointer (which
      advances), and the tag match is repeated (one more cycle) before the access.
      **Interpretation:** replacement is FIFO over all lines (an invalid line is simply
      taken when the pointer reaches it).
    - a tag miss on an **empty line** (none of its registers' bits set, so only an evict
      matching a pattern, of a register whose bit is clear) is not refilled: after the
      victim's write-back (if dirty) the line is allocated with zero fields at the pointer
      (which advances) at the edge ending the tag match or the write-back, and the tag
      match is repeated before the access. A clean victim: 4 (match, tag match,
      tag match, slot write), with no L1 request.
      **Interpretation:** paper 5.3 keeps the bit vector so that the compressor "does not
      need to bring in a line of compressed registers from the L1 only to determine
      whether a register is compressed", and register lines in L1 are write-back,
      no-fetch-on-write: a line none of whose bits is set holds nothing (only a slot whose
      bit is set is ever expanded), so reading it would fetch don't-cares.

    L1 writes are posted (no response); each fetch gets one ``l1_response``.

    Attributes
    ----------
    request : In(stream.Signature(request_layout))
        ``payload.{op, warp, reg, value}``.
    response : Out(stream.Signature(response_layout))
        ``payload.{compressed, value}``.
    l1_request : Out(stream.Signature(l1_request_layout))
        ``payload.{write, line, data}``.
    l1_response : In(stream.Signature(value_layout))
        The fetched line.
    """

    def __init__(self, **params):
        config = self.configure(params)
        super().__init__(config.signature())
        lines = config.lines
        self.compressed = Signal(config.registers)
        """The "is compressed" bit vector, bit ``g``."""
        self.valid = Signal(lines)
        self.dirty = Signal(lines)
        self.tag = Signal(data.ArrayLayout(config.line_addr_bits, lines))
        self.pointer = Signal(range(lines))
        """The FIFO pointer: the next line to replace."""
        self.held = Signal(config.request_layout)
        """The request in flight."""
        self.phase = Signal(Phase)
        self.compressed_next = Signal(config.registers)
        """``compressed`` as the coming edge writes it."""
        self.deep = Signal()
        """The held request takes the tag match (decided when it was taken)."""
        self.held_match = Signal(PatternState)
        self.held_slot = Signal(config.slot_layout)
        """The held value's pattern and bases (matched when it was taken)."""
        self.way = Signal(range(lines))
        """The line the tag match chose (the hit, else the victim)."""

    @functools.cached_property
    def store(self) -> memory.Memory:
        """The compressed lines (created on first use: elaboration, or a formal harness
        adding its own read port), so that a compressor built only for its ports leaves no
        unused memory behind."""
        return memory.Memory(shape=self.config.line_layout, depth=self.config.lines, init=[])

    def elaborate(self, platform):
        m = Module()
        config, held = self.config, self.held
        m.submodules.store = store = self.store
        m.submodules.match = match = PatternMatch(config)
        g = Signal(range(config.registers))
        m.d.comb += [g.eq(Cat(held.warp, held.reg)),
                     match.value.eq(self.request.payload.value)]
        line, slot = _divide(m, g, config.slots, config.line_addr_bits)
        hits = Signal(config.lines)
        m.d.comb += hits.eq(Cat(self.valid[e] & (self.tag[e] == line)
                                for e in range(config.lines)))
        chosen = Signal(range(config.lines))
        m.d.comb += chosen.eq(Mux(hits.any(), _encode(hits, config.lines), self.pointer))
        read = store.read_port()
        word = read.data
        at = {p: equals(self.phase.as_value(), p.value) for p in Phase}
        m.d.comb += [
            read.addr.eq(Mux(at[Phase.TAG], chosen, self.way)),
            match.expand_state.eq(_pick(list(word.state), slot)),
            match.expand_slot.eq(_pick([base.as_value() for base in word.base], slot)),
        ]
        self._sequence(m, at, match, g, hits, chosen, line, slot, word)
        return m

    def _sequence(self, m, at, match, g, hits, chosen, line, slot, word):
        """The phases. Every output and the memory's write port are continuous
        expressions of the state (no process), so Icarus sees them defined from time 0."""
        config, held, phase = self.config, self.held, self.phase
        evict = equals(held.op.as_value(), CompressorOp.EVICT.value)
        preload = equals(held.op.as_value(), CompressorOp.PRELOAD.value)
        one = onehot(m, g, config.registers, "one")
        deep = self._checked(m, match)
        immediate, access, done = (Signal(name=n) for n in ("immediate", "access", "done"))
        m.d.comb += [
            immediate.eq(at[Phase.CHECK] & ~deep),
            access.eq(at[Phase.ACCESS]),
            done.eq(self.response.ready & (immediate | access)),
            self.request.ready.eq(self._takes_next(at[Phase.IDLE], done)),
            self.response.valid.eq(immediate | access),
            self.response.payload.compressed.eq(access),
            self.response.payload.value.eq(
                Mux(access, Mux(preload, match.expanded.as_value(), 0),
                    Mux(immediate & evict, held.value.as_value(), 0))),
        ]
        victim_dirty = bit(m, self.valid & self.dirty, self.pointer, "victim_dirty")
        allocate = self._allocates(m, at, line, hits, victim_dirty)
        self._l1(m, at, line, word)
        self._write(m, at, match, slot, word, access & ~preload & done, allocate)
        with m.If(at[Phase.CHECK] & deep):
            m.d.sync += phase.eq(Phase.TAG)
        m.d.sync += self.compressed.eq(self.compressed_next)
        with m.If(done):
            m.d.sync += phase.eq(Phase.IDLE)
            with m.If(immediate):
                m.d.comb += self.compressed_next.eq(self.compressed & ~one)
            with m.Elif(~preload):
                m.d.comb += self.compressed_next.eq(self.compressed | one)
                m.d.sync += self.dirty.eq(self.dirty | _onehot(self.way, config.lines))
        with m.If(self.request.valid & self.request.ready):
            m.d.sync += [held.eq(self.request.payload), phase.eq(Phase.CHECK),
                         self.held_match.eq(match.state), self.held_slot.eq(match.slot)]
        with m.If(at[Phase.TAG]):
            m.d.sync += self.way.eq(chosen)
            with m.If(hits.any()):
                m.d.sync += phase.eq(Phase.ACCESS)
            with m.Elif(victim_dirty):
                m.d.sync += phase.eq(Phase.WRITE_BACK)
            with m.Else():
                m.d.sync += phase.eq(Phase.FETCH)
        with m.If(self.l1_request.valid & self.l1_request.ready):
            m.d.sync += phase.eq(Mux(at[Phase.FETCH], Phase.WAIT.value, Phase.FETCH.value))
        with m.If(self.l1_response.valid & self.l1_response.ready | allocate):
            self._install(m, line)

    def _allocates(self, m, at, line, hits, victim_dirty):
        """Whether the missing line is allocated empty at this edge, without an L1 read: it
        holds no compressed register (none of its registers' bits is set; see the
        class's interpretation), and the victim is clean (at the tag match) or its
        write-back is taken."""
        config = self.config
        slots = config.slots
        holding = Signal(config.compressed_lines, name="holding")
        m.d.comb += holding.eq(Cat(self.compressed[n * slots:(n + 1) * slots].any()
                                   for n in range(config.compressed_lines)))
        # A shift of the lines' ORs, not an AND-OR multiplexer (whose OR chain over many
        # lines nests deeper than Amaranth's simulator compiles) nor a shift of the whole
        # vector (a barrel shifter over every register's bit: +44 K logic transistors a shard).
        empty, allocate = Signal(name="empty"), Signal(name="allocate")
        m.d.comb += [
            empty.eq(~(holding >> self._holder(line))[0]),
            allocate.eq(empty & (at[Phase.TAG] & ~hits.any() & ~victim_dirty
                                 | at[Phase.WRITE_BACK] & self.l1_request.ready)),
        ]
        return allocate

    def _checked(self, m, match):
        """``deep`` for the held request (a compressed preload, or an eviction matching a
        pattern), decided at the edge that takes it: from the request's value and from the
        "is compressed" bit as that edge writes it (``compressed_next``), so that the check
        cycle's ``done`` and ``request.ready`` do not wait for the pattern match."""
        request = self.request.payload
        g_in = Signal(range(self.config.registers))
        m.d.comb += [g_in.eq(Cat(request.warp, request.reg)),
                     self.compressed_next.eq(self.compressed)]
        incoming = bit(m, self.compressed_next, g_in, "is_compressed")
        op = request.op.as_value()
        deep_in = Mux(equals(op, CompressorOp.PRELOAD.value), incoming,
                      equals(op, CompressorOp.EVICT.value) & match.state.as_value().any())
        with m.If(self.request.valid & self.request.ready):
            m.d.sync += self.deep.eq(deep_in)
        return self.deep

    def _holder(self, line):
        """The compressed line whose bits decide an allocation: the missing line."""
        return line

    def _takes_next(self, idle, done):
        """``request.ready``: idle, or the held request's response is taken this cycle."""
        return idle | done

    def _l1(self, m, at, line, word):
        """Write-back of the victim, then the fetch of the missing line."""
        config = self.config
        write_back, fetch = at[Phase.WRITE_BACK], at[Phase.FETCH]
        victim_tag = _pick(list(self.tag), self.way)
        m.d.comb += [
            self.l1_request.valid.eq(write_back | fetch),
            self.l1_request.payload.write.eq(write_back),
            self.l1_request.payload.line.eq(
                victim_tag & write_back.replicate(config.line_addr_bits)
                | line & fetch.replicate(config.line_addr_bits)),
            self.l1_request.payload.data.eq(
                word.as_value() & write_back.replicate(config.line_bits)),
            self.l1_response.ready.eq(at[Phase.WAIT]),
        ]

    def _write(self, m, at, match, slot, word, place, allocate):
        """The store's one write port: an evicted value's slot at the response handshake
        (``place``), or a fetched line (zero when ``allocate``) taken at the pointer."""
        config = self.config
        write = self.store.write_port()
        install = self.l1_response.valid & at[Phase.WAIT] | allocate
        placed = Signal(config.line_layout)
        m.d.comb += placed.eq(word)
        for s in range(config.slots):
            here = equals(slot, s)
            m.d.comb += [placed.state[s].eq(Mux(here, self.held_match.as_value(),
                                                word.state[s])),
                         placed.base[s].eq(Mux(here, self.held_slot.as_value(),
                                               word.base[s].as_value()))]
        m.d.comb += [write.en.eq(place | install),
                     write.addr.eq(Mux(install, self.pointer, self.way)),
                     write.data.eq(Mux(install, self.l1_response.payload.as_value()
                                       & at[Phase.WAIT].replicate(config.line_bits),
                                       placed.as_value()))]

    def _install(self, m, line):
        """Take the fetched (or allocated) line at the pointer, clean, and match the tags
        again."""
        config, pointer = self.config, self.pointer
        victim = _onehot(pointer, config.lines)
        m.d.sync += [self.valid.eq(self.valid | victim),
                     self.dirty.eq(self.dirty & ~victim),
                     pointer.eq(Mux(equals(pointer, config.lines - 1), 0, pointer + 1)),
                     self.phase.eq(Phase.TAG)]
        for e in range(config.lines):
            with m.If(equals(pointer, e)):
                m.d.sync += self.tag[e].eq(line)


def _divide(m, value, divisor, quotient_bits):
    """``value // divisor`` and ``value % divisor`` for a constant ``divisor``, as a
    restoring division of one-bit gates (a continuous expression: no process, no narrow
    constant)."""
    width = divisor.bit_length()
    remainder, quotient = Const(0, width), []
    for i in reversed(range(len(value))):
        current = Signal(width + 1, name=f"dividend_{i}")
        m.d.comb += current.eq(Cat(value[i], remainder))
        difference = _add_constant(current, -divisor % (1 << (width + 1)))
        fits = ~difference[width]
        quotient.insert(0, fits)
        remainder = Signal(width, name=f"remainder_{i}")
        m.d.comb += remainder.eq(Mux(fits, difference[:width], current[:width]))
    line = Signal(quotient_bits, name="line")
    slot = Signal(index_bits(divisor), name="slot")
    m.d.comb += [line.eq(Cat(*quotient)[:quotient_bits]), slot.eq(remainder[:len(slot)])]
    return line, slot


def _pick(items, index):
    """``items[index]`` as an AND-OR multiplexer (zero when ``index`` is out of range): an
    expression, where :func:`gpurf.hw.gates.select` makes a case statement of it."""
    width = len(Value.cast(items[0]))
    return or_all([Value.cast(item) & equals(index, k).replicate(width)
                    for k, item in enumerate(items)])


def _or_bits(hits, width):
    """The code (``PatternState`` value) of the one set entry of ``hits``, 0 if none."""
    return Cat(or_all([hit for state, hit in hits.items() if state.value >> j & 1])
               for j in range(width))


def _add_constant(value, constant):
    """``value + constant`` modulo ``2**len(value)`` as a ripple of one-bit gates (an adder
    with a narrower constant is a Verilator WIDTHEXPAND finding). Not
    :func:`gpurf.hw.gates.ripple_add`: with a constant addend each bit is one gate less (an
    XNOR or XOR and an OR or AND carry), and the result is an expression without named
    carries, as the pattern matcher uses it inside every lane's expression."""
    bits, carry = [], Const(0, 1)
    for j in range(len(value)):
        if constant >> j & 1:
            bits.append(~(value[j] ^ carry))
            carry = value[j] | carry
        else:
            bits.append(value[j] ^ carry)
            carry = value[j] & carry
    return Cat(*bits)


def _onehot(index, width):
    """``1 << index`` cut to ``width`` bits, as an expression. Not
    :func:`gpurf.hw.gates.onehot`, whose named signal changes the synthesized shard (at its
    test sets 25,829 and 5,711 cells instead of 25,880 and 5,717, though the compressor's own
    netlist is unchanged)."""
    return (Const(1, width) << index)[:width]


def _encode(hot, width):
    """The index of the set bit of the one-hot ``hot`` (0 when none), as AND-OR gates."""
    bits = index_bits(width)
    return Cat(Cat(hot[e] for e in range(width) if e >> j & 1).any() for j in range(bits))
