# amaranth: UnusedElaboratable=no
"""RegLess compressor: parameters, the pattern functions and the RTL pattern matcher on
directed values, storage, and the formal proof that a preload returns the value last
evicted and that no changed line is dropped without a write-back."""

import random

import pytest
from amaranth.sim import Simulator

from gpurf.golden.regless.compressor import expand, match_pattern
from gpurf.hw.registry import get_block
from gpurf.hw.regless.compressor import PatternMatch
from gpurf.hw.regless.configs import CompressorConfig
from gpurf.hw.regless.layouts import PatternState
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.regless.formal_compressor import CompressorFormal
from gpurf.tb.regless.mutants import TakesBeforeAnswer
from gpurf.tb.regless.test_compressor import directed_values

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
