"""Formal harness of ``regless.compressor`` in a small configuration.

Requests, ``response.ready``, ``l1_request.ready`` and ``l1_response.valid`` are free
(``AnySeq``) after a reset in the first cycle; L1 is a harness memory of compressed lines
that takes the compressor's write-backs and answers a fetch with the line last written (its
initial content is free: ``AnyConst``). Per register the harness keeps the spec's knowledge:
``known`` (its last eviction was stored compressed and no invalidate or incompressible
eviction came after it) and that evicted ``value``. It asserts:

- a preload returns the value last evicted: ``compressed`` exactly when ``known``, and
  then the evicted value;
- no changed line is dropped without a write-back: for a known register, the slot in the
  cached copy of its line (if cached), else in L1, holds the value's pattern and bases,
  and L1 holds it too whenever the cached copy is clean;
- no two valid lines of the store hold the same line number;
- one request at a time: a request is taken only while none is outstanding or in the
  cycle the outstanding one's response is taken (the next one overlaps only the answer).

Covers: a request taken in the cycle the previous one is answered (``back_to_back``), and
a preload so taken at the answer of a compressed eviction of the same register
(``preload_after_eviction``: its check must see the eviction's bit).
"""

from amaranth import Cat, Signal, Value
from amaranth.asserts import AnyConst, Initial
from amaranth.hdl import Assert

from gpurf.hw.regless.compressor import Compressor, PatternMatch, Phase
from gpurf.hw.regless.layouts import CompressorOp

from ..formal_base import FormalHarness

__all__ = ["SMALL", "CompressorFormal"]

SMALL = {"lanes": 4, "data_width": 4, "warps": 2, "regs": 2, "lines": 2}
"""The proof configuration: 4 lanes x 4 bits (one slot a line), 2 warps x 2 registers
(4 compressed lines), 2 lines of internal store."""


class CompressorFormal(FormalHarness):
    """The compressor with free inputs, an L1 memory and the invariants above
    (``params`` override SMALL; ``block`` a mutant class)."""

    block = Compressor
    SMALL = SMALL

    def check(self, m):
        dut, config = self.dut, self.dut.config
        self.free_streams(m, dut.request)
        self.free_ready(m, dut.response, dut.l1_request)
        self.free(m, dut.l1_response.valid)
        memory = self._l1(m)
        known = Signal(config.registers)
        values = [Signal(config.value_layout, name=f"value_{g}")
                  for g in range(config.registers)]
        self._knowledge(m, known, values)
        self._store(m, memory, known, values)
        self._one_at_a_time(m)

    def _one_at_a_time(self, m):
        """At most one request outstanding; the next is taken only as its answer is."""
        dut = self.dut
        taken = dut.request.valid & dut.request.ready
        answered = dut.response.valid & dut.response.ready
        outstanding = Signal()
        last = Signal(dut.config.request_layout)
        m.d.sync += outstanding.eq(taken | outstanding & ~answered)
        with m.If(taken):
            m.d.sync += last.eq(dut.request.payload)
        m.d.comb += [Assert(~(taken & outstanding & ~answered)),
                     Assert(~(dut.response.valid & ~outstanding))]
        evicted = (last.op == CompressorOp.EVICT) & dut.response.payload.compressed
        same = ((dut.request.payload.warp == last.warp)
                & (dut.request.payload.reg == last.reg)
                & (dut.request.payload.op == CompressorOp.PRELOAD))
        self.covers(m, [(taken & answered, "back_to_back"),
                        (taken & answered & evicted & same, "preload_after_eviction")])

    def _l1(self, m):
        """The L1 copy of every compressed line; a fetch is answered with its line."""
        dut, config = self.dut, self.dut.config
        memory = [Signal(config.line_layout, name=f"l1_{n}")
                  for n in range(config.compressed_lines)]
        request = dut.l1_request
        fetched = Signal(config.line_addr_bits)
        with m.If(Initial()):
            m.d.sync += [line.eq(AnyConst(config.line_bits)) for line in memory]
        with m.Elif(request.valid & request.ready):
            with m.If(request.payload.write):
                for n, line in enumerate(memory):
                    with m.If(request.payload.line == n):
                        m.d.sync += line.eq(Value.cast(request.payload.data))
            with m.Else():
                m.d.sync += fetched.eq(request.payload.line)
        for n, line in enumerate(memory):
            with m.If(fetched == n):
                m.d.comb += dut.l1_response.payload.eq(Value.cast(line))
        return memory

    def _knowledge(self, m, known, values):
        """Track the held request at its handshake; commit its effect at the response."""
        dut, config = self.dut, self.dut.config
        op = Signal(CompressorOp)
        g = Signal(range(config.registers))
        value = Signal(config.value_layout)
        with m.If(dut.request.valid & dut.request.ready):
            payload = dut.request.payload
            m.d.sync += [op.eq(payload.op), g.eq(Cat(payload.warp, payload.reg)),
                         value.eq(payload.value)]
        response = dut.response
        for k in range(config.registers):
            with m.If(response.valid & (g == k)):
                with m.If(op == CompressorOp.PRELOAD):
                    m.d.comb += Assert(response.payload.compressed == known[k])
                    with m.If(known[k]):
                        m.d.comb += Assert(response.payload.value == values[k])
                with m.If(response.ready):
                    with m.If(op == CompressorOp.EVICT):
                        m.d.sync += [known[k].eq(response.payload.compressed),
                                     values[k].eq(value)]
                    with m.Elif(op != CompressorOp.PRELOAD):
                        m.d.sync += known[k].eq(0)

    def _store(self, m, memory, known, values):
        """Every known register's pattern sits in its line: the cached copy if any, else
        L1; a clean cached copy equals L1 in that slot."""
        dut, config = self.dut, self.dut.config
        m.d.comb += [Assert(dut.pointer < config.lines), Assert(dut.way < config.lines),
                     Assert(Value.cast(dut.phase) <= Phase.WAIT.value)]
        cached = []
        for e in range(config.lines):
            read = dut.store.read_port(domain="comb")
            m.d.comb += read.addr.eq(e)
            cached.append(read.data)
            for other in range(e + 1, config.lines):
                with m.If(dut.valid[e] & dut.valid[other]):
                    m.d.comb += Assert(dut.tag[e] != dut.tag[other])
        for g in range(config.registers):
            number, slot = divmod(g, config.slots)
            match = PatternMatch(config)
            m.submodules[f"pattern_{g}"] = match
            m.d.comb += match.value.eq(values[g])
            want = Cat(match.state, match.slot)

            def holds(line, slot=slot, want=want):
                return Cat(line.state[slot], line.base[slot]) == want

            present = Signal(name=f"present_{g}")
            m.d.comb += present.eq(Cat(dut.valid[e] & (dut.tag[e] == number)
                                       for e in range(config.lines)).any())
            with m.If(known[g]):
                for e in range(config.lines):
                    with m.If(dut.valid[e] & (dut.tag[e] == number)):
                        m.d.comb += Assert(holds(cached[e]))
                        with m.If(~dut.dirty[e]):
                            m.d.comb += Assert(holds(memory[number]))
                with m.If(~present):
                    m.d.comb += Assert(holds(memory[number]))
