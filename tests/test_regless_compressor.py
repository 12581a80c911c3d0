# amaranth: UnusedElaboratable=no
"""RegLess compressor: parameters, the pattern functions and the RTL pattern matcher on
directed values, storage, and the formal proof that a preload returns the value last
evicted and that no changed line is dropped without a write-back."""

import random

import pytest
from amaranth.sim import Simulator

from gpurf.golden.regless.compressor import Compressor as GoldenCompressor
from gpurf.golden.regless.compressor import expand, match_pattern
from gpurf.hw.registry import get_block
from gpurf.hw.regless.compressor import PatternMatch
from gpurf.hw.regless.configs import CompressorConfig
from gpurf.hw.regless.layouts import CompressorOp, PatternState
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.harness import MismatchError, run_golden, simulate_amaranth
from gpurf.tb.regless.formal_compressor import CompressorFormal
from gpurf.tb.regless.mutants import AllocatesNextLine, TakesBeforeAnswer
from gpurf.tb.regless.test_compressor import Bench, directed_values

MASK = (1 << 32) - 1


def test_default_geometry():
    """15 slots of 2 x 4 bytes + 3-bit state per 128-byte line (paper 5.3); 1024 registers
    of 16 warps x 64, so 69 compressed lines; 16 lines of store."""
    config = CompressorConfig(**get_block("regless.compressor").defaults)
    assert (config.slots, config.registers, config.compressed_lines) == (15, 1024, 69)
    assert config.line_layout.size == 1024
    assert config.slots * (64 + 3) == 1005
    assert config.storage_bits == 16 * 1024 + 1024 + 16 * (7 + 2)
    assert (config.index(3, 2), divmod(config.index(3, 2), 15)) == (35, (2, 5))


@pytest.mark.parametrize(("value", "expected"), [
    pytest.param([7] * 32, (PatternState.CONSTANT, 7, 0), id="constant"),
    pytest.param([(5 + i) & MASK for i in range(32)], (PatternState.STRIDE1, 5, 0),
                 id="stride1"),
    pytest.param([(MASK - 3 + i) & MASK for i in range(32)],
                 (PatternState.STRIDE1, MASK - 3, 0), id="stride1-wraps"),
    pytest.param([(9 + 4 * i) & MASK for i in range(32)], (PatternState.STRIDE4, 9, 0),
                 id="stride4"),
    pytest.param([(MASK - 40 + 4 * i) & MASK for i in range(32)],
                 (PatternState.STRIDE4, MASK - 40, 0), id="stride4-wraps"),
    pytest.param([100 + i for i in range(16)] + [3 + i for i in range(16)],
                 (PatternState.HALF_STRIDE1, 100, 3), id="half-stride1"),
    pytest.param([0x8000 + 4 * i for i in range(16)] + [(MASK - 7 + 4 * i) & MASK
                                                       for i in range(16)],
                 (PatternState.HALF_STRIDE4, 0x8000, MASK - 7), id="half-stride4-wraps"),
    pytest.param([1 + i for i in range(32)], (PatternState.STRIDE1, 1, 0),
                 id="stride1-is-also-half-stride1"),
    pytest.param([4 * i for i in range(32)], (PatternState.STRIDE4, 0, 0),
                 id="stride4-is-also-half-stride4"),
    pytest.param([6] * 16 + [7] * 16, (PatternState.NONE, 0, 0), id="two-constant-halves"),
    pytest.param([2 * i for i in range(32)], (PatternState.NONE, 0, 0), id="stride2"),
])
def test_match_pattern(value, expected):
    assert match_pattern(value, 32) == expected
    assert expand(expected[0], expected[1], expected[2], 32, 32) == (
        value if expected[0] != PatternState.NONE else [0] * 32)


@pytest.mark.parametrize("state", [s for s in PatternState if s != PatternState.NONE],
                         ids=lambda s: s.name.lower())
def test_near_miss_in_every_lane(state, seed):
    """One lane off by a random non-zero amount, in each of the 32 positions: no pattern."""
    rng = random.Random(seed)
    base = expand(state, rng.getrandbits(32), rng.getrandbits(32), 32, 32)
    assert match_pattern(base, 32)[0] == state or state in (PatternState.HALF_STRIDE1,
                                                            PatternState.HALF_STRIDE4)
    for lane in range(32):
        value = list(base)
        value[lane] = (value[lane] + rng.randrange(1, 1 << 32)) & MASK
        assert match_pattern(value, 32) == (PatternState.NONE, 0, 0), lane


def _pattern_rtl(config, cases):
    """Run the RTL matcher on every case: ``(state, b0, b1, expanded)`` per case."""
    dut = PatternMatch(config)
    results = []

    async def bench(ctx):
        for value, _ in cases:
            ctx.set(dut.value, config.value_layout.const(value))
            state = ctx.get(dut.state)
            slot = ctx.get(dut.slot)
            ctx.set(dut.expand_state, state.value)
            ctx.set(dut.expand_slot, slot)
            expanded = ctx.get(dut.expanded)
            results.append((state, slot.b0, slot.b1,
                            [expanded[i] for i in range(config.lanes)]))
            await ctx.delay(1e-9)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    return results


@pytest.mark.parametrize("params", [{"data_width": 8}, {"lanes": 4, "data_width": 8}],
                         ids=["32x8", "4x8"])
def test_rtl_matcher_on_directed_values(params, seed):
    """The RTL matcher gives every directed case its expected state (each pattern and its
    half-warp variant, wrap-around, priority, a near miss in every lane) and expands it
    back to the value. 8-bit lanes keep Amaranth's simulator fast (32 x 32 bits takes
    minutes); the default width runs the same cases in the cosimulation's
    ``directed_patterns``."""
    config = CompressorConfig(**{**get_block("regless.compressor").defaults, **params})
    cases = directed_values(config.lanes, config.data_width, random.Random(seed))
    assert len(cases) >= 5 * config.lanes
    for (value, expected), (state, b0, b1, expanded) in zip(
            cases, _pattern_rtl(config, cases), strict=True):
        assert state == expected, value
        assert (state, b0, b1) == match_pattern(value, config.data_width)
        if state != PatternState.NONE:
            assert expanded == value


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("depth", [
    10, pytest.param(20, marks=pytest.mark.slow_formal)])
def test_formal_preload_returns_last_eviction(depth):
    """BMC on ``formal_compressor.SMALL`` (4 lanes x 4 bits, one slot a line, 2 warps x 2
    registers = 4 compressed lines, 2 lines of store): a preload answers ``compressed``
    exactly for a register whose last eviction was stored compressed, with that value;
    every such register's pattern is in its cached line or, when the line is not cached
    (or cached clean), in L1 — so no changed line was dropped unwritten. Depth 10 (an
    eviction with a refill and a write-back, then a preload) in the everyday suite; depth
    20 passed in 807 s on the shared 2-core machine, so it is opt-in (``-m slow_formal``)."""
    result = prove(CompressorFormal(), name=f"compressor_small_bmc{depth}", depth=depth,
                   mode="bmc", timeout=3600)
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_overlap():
    """Cover: a request taken in the cycle the previous one is answered, and a preload of a
    register so taken at the answer of its compressed eviction."""
    result = prove(CompressorFormal(), name="compressor_cover", depth=12, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 4: fails on ``mutants.TakesBeforeAnswer`` (the next request is taken
    while the held one's answer waits)."""
    result = prove(CompressorFormal(block=TakesBeforeAnswer), name="compressor_mutant",
                   depth=4, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


# --- allocation of an empty line without an L1 read -------------------------------------

SMALL_LINES = {"lanes": 8, "data_width": 8, "warps": 2, "regs": 8, "lines": 2}
"""3 slots a line (two 8-bit bases and a state in 64 bits), 16 registers in 6 compressed
lines, 2 lines of store: ``g = reg * 2 + warp`` lives in line ``g // 3``."""

CONSTANT = [7] * 8
STRIDE1 = list(range(3, 11))


def _directed(requests, log):
    """A stimulus issuing ``requests`` one at a time (all readies high, lines after 2
    cycles), logging each taken L1 request ``(write, line)`` and each response
    ``(compressed, lanes)`` into ``log``."""

    def stimulus(params, rng, cycles):
        bench = Bench(params, rng, p_ready=1.0, max_latency=2, p_overlap=0.0)
        ports_of = bench.ports
        run, outputs = bench.run(requests), None
        while True:
            try:
                ports = run.send(outputs)
            except StopIteration:
                return
            outputs = yield ports
            if outputs["l1_request__valid"]:
                l1 = ports_of["l1_request__payload"].unpack(outputs["l1_request__payload"])
                log["l1"].append((l1.write, l1.line))
            if outputs["response__valid"]:
                response = ports_of["response__payload"].unpack(outputs["response__payload"])
                log["responses"].append((response.compressed, list(response.value)))

    return stimulus


def _run_both(requests, *, block=None):
    """Run ``requests`` on the RTL (``block``, default the compressor) in Amaranth's
    simulator against the golden model, port by port every cycle; return the log."""
    log = {"l1": [], "responses": []}
    rtl = block(**SMALL_LINES) if block else get_block("regless.compressor").build(SMALL_LINES)
    simulate_amaranth(rtl, GoldenCompressor(**SMALL_LINES), _directed(requests, log),
                      SMALL_LINES, 0, 200)
    return log


def _evict(warp, reg, value):
    return CompressorOp.EVICT, warp, reg, value


def _preload(warp, reg):
    return CompressorOp.PRELOAD, warp, reg, [0] * 8


# Line 0: w0r0 (g 0), w1r0 (g 1); line 1: w1r1 (g 3); line 2: w0r3 (g 6).
EMPTY_LINES = [_evict(0, 0, CONSTANT), _evict(1, 1, STRIDE1), _evict(0, 3, CONSTANT),
               _preload(1, 1)]
"""Evictions into three empty lines (the third replaces line 0, dirty: written back),
then a preload of the second line's register, cached."""

HELD_LINE = [_evict(0, 0, STRIDE1), _evict(1, 1, CONSTANT), _evict(0, 3, CONSTANT),
             _evict(1, 0, CONSTANT), _preload(0, 0)]
"""Line 0 gets w0r0 and is written back when line 2 replaces it; the eviction of w1r0
(its bit clear, w0r0's set) must fetch line 0, and w0r0 then preloads its value."""


def test_eviction_into_an_empty_line_reads_no_l1():
    """A compressed eviction into an uncached line none of whose registers is compressed
    allocates it without an L1 read (paper 5.3's bit vector; write-back, no-fetch-on-write
    lines): only the victim's write-back reaches L1. RTL and golden agree every cycle."""
    log = _run_both(EMPTY_LINES)
    assert log["l1"] == [(1, 0)]
    assert log["responses"] == [(1, [0] * 8)] * 3 + [(1, STRIDE1)]


def test_eviction_into_a_line_holding_a_register_fetches_it():
    """A line with one compressed register is fetched before the slot is written, so the
    register's value survives: L1 sees line 0 written back, then read."""
    log = _run_both(HELD_LINE)
    assert log["l1"] == [(1, 0), (1, 1), (0, 0)]
    assert log["responses"][-1] == (1, STRIDE1)


class _NeverFetches(GoldenCompressor):
    """Golden mutant: every missing line is allocated empty."""

    def holds(self, number):
        return False


def test_never_fetching_is_caught():
    """The golden mutant allocating every missing line loses w0r0's value."""
    log = {"l1": [], "responses": []}
    run_golden(_NeverFetches(**SMALL_LINES), _directed(HELD_LINE, log), SMALL_LINES, 0, 200)
    assert (0, 0) not in log["l1"]
    assert log["responses"][-1] != (1, STRIDE1)


def test_or_over_the_wrong_line_is_caught():
    """The RTL mutant deciding on the next line's bits differs from the golden model: line
    0 is empty while line 1 holds w1r1, so the mutant fetches line 0."""
    with pytest.raises(MismatchError):
        _run_both([_evict(1, 1, STRIDE1), _evict(0, 0, CONSTANT)], block=AllocatesNextLine)
