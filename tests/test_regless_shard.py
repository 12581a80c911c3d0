# amaranth: UnusedElaboratable=no
"""RegLess shard: parameters, and the end-to-end workload on the golden model at the
defaults (the cocotb benches run it on the RTL: ``tests/test_cosim.py -k shard``)."""

import pytest
from amaranth.sim import Simulator

from gpurf.golden.regless.shard import Shard as GoldenShard
from gpurf.golden.regless.shard import Transfer as GoldenTransfer
from gpurf.hw.ports import codec
from gpurf.hw.registry import get_block
from gpurf.hw.regless.configs import ShardConfig
from gpurf.hw.regless.layouts import L1Op
from gpurf.hw.regless.shard import Shard, Transfer
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.harness import run_golden
from gpurf.tb.regless.formal_shard import TINY, ShardFormal
from gpurf.tb.regless.mutants import (
    AnswerOvertakes,
    AnswerOvertakesTransfer,
    CopyForgotten,
    FillsNewestTransfer,
    FullTakesAnswer,
    FullTakesAnswerTransfer,
    InvalidatesAll,
    WaitsFromSlotZeroTransfer,
    WritebacksFirst,
)
from gpurf.tb.regless.test_shard import all_warps
from gpurf.tb.regless.workload import run_regions

SMALL = {"lines": 8, "banks": 2, "warps": 4, "regs": 8, "lanes": 4, "data_width": 4,
         "compressor_lines": 2, "max_entries": 16}


@pytest.mark.parametrize("build", [Shard, GoldenShard], ids=["hw", "golden"])
def test_parts_check_their_rules(build):
    """The shard's parameters pass the rules of its blocks (here the OSU's)."""
    with pytest.raises(ValueError, match=r"^lines must be a multiple of banks \(8\), not 12$"):
        build(lines=12)


def _run(params, seed, **options):
    stats = {}
    model = GoldenShard(**params)

    def stimulus(params, rng, cycles):
        return run_regions(params, rng, cycles, stats=stats, **options)

    run_golden(model, stimulus, params, seed, 0)
    return stats, model.transfer.counts


def test_end_to_end_at_the_defaults(seed):
    """16 warps x 4 random regions of 6-12 registers + check regions at the paper's shard
    (128 lines, 32 x 32 bits): every read equals the last write, dirty lines are evicted
    (compressed or not) and come back from the compressor and L1."""
    stats, transfers = _run(get_block("regless.shard").defaults, seed, regions=4,
                            size=(6, 12))
    assert stats["reads"] > 100
    for path in ("preload_compressed", "preload_l1", "evict_compressed", "evict_l1"):
        assert transfers[path] > 0, (path, transfers)


def test_small_shard_takes_every_path(seed):
    """A 2 x 4-line OSU with 2 compressed lines: values are recycled from dirty lines,
    compressed, written back by the compressor's FIFO, refilled from L1 and invalidated.

    A random program has no invalidation about once in 200 seeds (1692732589), so the
    workload runs again with the next seeds, at most three runs, until every path was taken.
    """
    paths = ("preload_compressed", "preload_l1", "evict_compressed", "evict_l1", "invalidate")
    for attempt in range(3):
        stats, transfers = _run(SMALL, seed + attempt, warps=4, regions=6)
        assert stats["preload"] > transfers["preload_compressed"] + transfers["preload_l1"], \
            "some preloads hit in the OSU"
        missing = [path for path in paths if not transfers[path]]
        if not missing:
            return
    pytest.fail(f"seeds {seed}..{seed + 2} never took {missing}: {transfers}")


def test_transfer_takes_fetches_before_writebacks():
    """An invalidation acknowledged in a bank's fetch register must reach the compressor
    before the eviction of the register's next value: ``writeback`` waits while ``fetch``
    offers, in the RTL and the golden model."""
    dut = Transfer(ShardConfig(**SMALL))
    golden = GoldenTransfer(ShardConfig(**SMALL))
    seen = []

    async def bench(ctx):
        ctx.set(dut.writeback.valid, 1)
        for fetch in (1, 0):
            ctx.set(dut.fetch.valid, fetch)
            shown = golden.outputs(fetch, 0)
            seen.append((ctx.get(dut.fetch.ready), ctx.get(dut.writeback.ready),
                         shown["fetch_ready"], shown["writeback_ready"]))

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    assert seen == [(1, 0, 1, 0), (1, 1, 1, 1)]


def test_redefined_register_survives_its_invalidation():
    """Seed 2036195225 of test set 1: an invalidation waited in a bank's fetch register
    while the warp redefined the register and its value was evicted compressed; with
    writebacks first, the eviction overtook the invalidation, which then cleared it."""
    params = {**get_block("regless.shard").test_params[0], "l1_reads_in_flight": 1}
    assert run_golden(GoldenShard(**params), all_warps, params, 2036195225, 0) > 0


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_composition_bmc():
    """BMC, depth 8, on ``formal_shard.SMALL``, every input free: one L1 port (never both
    units at once), the L1 stream rule, L1 requests in compressor-answer order, an
    invalidation to L1 exactly when L1 holds a copy, fetches before writebacks and no
    preload miss taken past the eviction of its register, the transfer unit's stages.
    Depth 14 is :func:`test_formal_composition_bmc_14` (slow)."""
    result = prove(ShardFormal(), name="shard_bmc", depth=8, mode="bmc")
    assert result.passed, result.log_tail


@pytest.mark.slow_formal
@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_composition_bmc_14():
    """The same rules as :func:`test_formal_composition_bmc`, BMC depth 14 (a run toward
    depth 20 passed steps 0-14 in under 14 minutes at load average 22-27, and was stopped
    in step 15 after 19 more minutes; each step more costs more)."""
    result = prove(ShardFormal(), name="shard_bmc14", depth=14, mode="bmc", timeout=3600)
    assert result.passed, result.log_tail


@pytest.mark.slow_formal
@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_composition_bmc_20_tiny():
    """The same rules, BMC depth 20 on ``formal_shard.TINY`` (1 line per bank, 2 registers
    per warp, one instruction; every cover is reached there too): passed in 421 s wall at
    load average 25-32 (SMALL stalls in step 15, even with one instruction)."""
    result = prove(ShardFormal(**TINY), name="shard_bmc20_tiny", depth=20, mode="bmc",
                   timeout=7200)
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize(("mutant", "depth"), [(WritebacksFirst, 8), (AnswerOvertakes, 10),
                                               (InvalidatesAll, 8), (CopyForgotten, 11),
                                               (FullTakesAnswer, 12)],
                         ids=["WritebacksFirst", "AnswerOvertakes", "InvalidatesAll",
                              "CopyForgotten", "FullTakesAnswer"])
def test_formal_kills_mutant(mutant, depth):
    """BMC fails on ``mutants.WritebacksFirst`` (the transfer unit takes a writeback while
    a fetch is offered, and prefers it; depth 8), on ``mutants.AnswerOvertakes`` (the
    answer stage takes a response while the L1 stage still holds an earlier request: L1
    requests leave out of compressor-answer order; depth 10, it fails at step 8), on
    ``mutants.InvalidatesAll`` (every invalidation goes to L1, the shard before the
    ``l1_copy`` bit; it fails at step 7) and on ``mutants.CopyForgotten`` (no invalidation
    goes to L1; depth 11, it fails at step 10: an eviction written to L1, then the
    register's invalidation) and on ``mutants.FullTakesAnswer`` (an answer taken while
    both slots of the L1 stage hold a request overwrites the oldest, which never fills;
    depth 12)."""
    result = prove(ShardFormal(block=mutant), name=f"shard_{mutant.__name__}", depth=depth,
                   mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


@pytest.mark.slow_formal
@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """Cover, depth 20 (slow: 84 s at load average 14; 69 s with the L1-copy covers at load
    average 2): an invalidation that skips L1 (step 6) and one that goes to L1 (step 9), a
    read bank conflict, a full
    preload queue, a preload hit, a preload miss, an eviction, the overlaps (back to back
    at the compressor, two and three requests in flight, both units offering to L1), a line
    filled from L1, the compressor on L1, an eviction stored compressed (step 12), a
    compressed preload (step 15)."""
    result = prove(ShardFormal(), name="shard_cover", depth=20, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


def _drive_transfer(cycles, reads=1, rtl=Transfer):
    """Run the RTL (class ``rtl``) and the golden transfer unit of the small shard with
    ``l1_reads_in_flight=reads`` on the same per-cycle inputs (dicts of ``fetch`` ``(warp,
    reg)`` or ``(warp, reg, invalidate)``, ``writeback`` ``(warp, reg)``, both from OSU line
    ``reg`` (an eviction's lanes are 9), ``request_ready``, ``response`` (``compressed``),
    ``l1_ready``, ``l1_response`` (the value of every lane of the line), ``fill_ready``;
    absent = 0 / not valid) and return, per cycle, the outputs ``(fetch_ready, request
    (warp, reg) or None, response_ready, l1 (op, warp, reg) or None, l1_response_ready,
    fill (line, first lane) or None)`` of each."""
    config = ShardConfig(**SMALL, l1_reads_in_flight=reads)
    dut, golden = rtl(config), GoldenTransfer(config)
    lanes, width = config.osu.lanes, config.data_width
    ref = codec(config.osu.ref_layout)
    seen = []

    def golden_cycle(inputs):
        fetch, writeback = inputs.get("fetch"), inputs.get("writeback")
        offer = None if fetch is None else {"warp": fetch[0], "reg": fetch[1],
                                            "line": fetch[1], "invalidate": _invalidates(fetch)}
        dirty = None if writeback is None else {"warp": writeback[0], "reg": writeback[1],
                                                "line": writeback[1], "data": [9] * lanes}
        shown = golden.outputs(int(fetch is not None), inputs.get("request_ready", 0))
        request, l1, fill = shown["request"], shown["l1_request"], shown["fill"]
        out = (shown["fetch_ready"], None if request is None else (request.warp, request.reg),
               shown["response_ready"],
               None if l1 is None else (l1["op"], golden.offering.warp, golden.offering.reg),
               shown["l1_response_ready"], None if fill is None else (fill[0], fill[1][0]))
        response, line = inputs.get("response"), inputs.get("l1_response")
        golden.advance(offer, dirty, inputs.get("fill_ready", 0),
                       inputs.get("request_ready", 0),
                       None if response is None else (response, [0] * lanes),
                       inputs.get("l1_ready", 0), None if line is None else [line] * lanes)
        return out

    def lanes_of(value):
        return sum(value << (lane * width) for lane in range(lanes))

    def drive(ctx, inputs):
        for name in ("fetch", "writeback"):
            offer, stream = inputs.get(name), getattr(dut, name)
            ctx.set(stream.valid, int(offer is not None))
            if offer is not None:
                ctx.set(stream.payload.warp, offer[0])
                ctx.set(stream.payload.reg, offer[1])
                ctx.set(stream.payload.line.as_value(), offer[1])
        if inputs.get("fetch") is not None:
            ctx.set(dut.fetch.payload.invalidate, _invalidates(inputs["fetch"]))
        ctx.set(dut.writeback.payload.data.as_value(), lanes_of(9))
        ctx.set(dut.request.ready, inputs.get("request_ready", 0))
        ctx.set(dut.response.valid, int(inputs.get("response") is not None))
        ctx.set(dut.response.payload.compressed, inputs.get("response") or 0)
        ctx.set(dut.l1_request.ready, inputs.get("l1_ready", 0))
        line = inputs.get("l1_response")
        ctx.set(dut.l1_response.valid, int(line is not None))
        ctx.set(dut.l1_response.payload.as_value(), lanes_of(line or 0))
        ctx.set(dut.fill.ready, inputs.get("fill_ready", 0))

    def shown(ctx):
        request = l1 = fill = None
        if ctx.get(dut.request.valid):
            request = (ctx.get(dut.request.payload.warp), ctx.get(dut.request.payload.reg))
        if ctx.get(dut.l1_request.valid):
            offered = ref.unpack(ctx.get(dut.l1_request.payload.addr) % (1 << ref.width))
            l1 = (ctx.get(dut.l1_request.payload.op), offered.warp, offered.reg)
        if ctx.get(dut.fill.valid):
            fill = (ctx.get(dut.fill.payload.line.as_value()),
                    ctx.get(dut.fill.payload.data.as_value()) % (1 << width))
        return (ctx.get(dut.fetch.ready), request, ctx.get(dut.response.ready), l1,
                ctx.get(dut.l1_response.ready), fill)

    async def bench(ctx):
        for inputs in cycles:
            drive(ctx, inputs)
            seen.append((shown(ctx), golden_cycle(inputs)))
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-6)
    sim.add_testbench(bench)
    sim.run()
    return seen


def _agreed(seen):
    """The RTL's outputs of :func:`_drive_transfer`, after checking that the golden model's
    equal them every cycle."""
    for cycle, (rtl, golden) in enumerate(seen):
        assert rtl == golden, (cycle, rtl, golden)
    return [rtl for rtl, _ in seen]


def _invalidates(fetch) -> int:
    return fetch[2] if len(fetch) > 2 else 0


def test_transfer_overlaps_and_keeps_answer_order():
    """Two preload misses in flight: the second is taken from the OSU in the cycle the
    compressor takes the first (``fetch.ready`` follows ``request.ready``) and asks while
    the first is answered; its answer then waits (``response.ready`` low) until the L1
    stage has handed the first to L1, waited for its line and filled it, so L1 sees the
    requests in the compressor's answer order. RTL and golden agree every cycle."""
    read = L1Op.READ
    cycles = [
        {"fetch": (0, 1), "request_ready": 1},           # ask takes w0r1
        {"fetch": (1, 2), "request_ready": 1},           # compressor takes w0r1, ask w1r2
        {"request_ready": 1, "response": 0},             # w0r1 answered; w1r2 asked
        {"response": 0},                                 # w1r2's answer waits: L1 stage busy
        {"response": 0, "l1_ready": 1},                  # w0r1 handed to L1
        {"response": 0, "l1_response": 1},               # its line
        {"response": 0, "fill_ready": 1},                # filled
        {"response": 0},                                 # w1r2 answered
        {"l1_ready": 1},                                 # w1r2 handed to L1
    ]
    rtl = _agreed(_drive_transfer(cycles))
    assert [fetch_ready for fetch_ready, *_ in rtl[:3]] == [1, 1, 1]
    assert [request for _, request, *_ in rtl[1:3]] == [(0, 1), (1, 2)]
    assert [outputs[2] for outputs in rtl[2:8]] == [1, 0, 0, 0, 0, 1]
    handed = [rtl[cycle][3] for cycle, inputs in enumerate(cycles) if inputs.get("l1_ready")]
    assert handed == [(read, 0, 1), (read, 1, 2)]
    assert [outputs[5] is not None for outputs in rtl[5:8]] == [False, True, False]


def test_transfer_ask_stage_waits_for_the_compressor():
    """While the compressor does not take the ask stage's request, the unit takes nothing
    from the OSU (``fetch.ready`` low) and keeps offering the same request."""
    cycles = [{"fetch": (0, 1), "request_ready": 1}, {"fetch": (1, 2)}, {"fetch": (1, 2)},
              {"fetch": (1, 2), "request_ready": 1}, {}]
    assert [(outputs[0], outputs[1]) for outputs in _agreed(_drive_transfer(cycles))] == [
        (1, None), (0, (0, 1)), (0, (0, 1)), (1, (0, 1)), (0, (1, 2))]


def test_invalidation_goes_to_l1_only_for_an_l1_copy():
    """An eviction the compressor hands back is written to L1, so the register's
    invalidation goes to L1 after it; a second invalidation of the register (L1 holds no
    copy any more) is done at its answer, and so is the invalidation of a register never
    evicted. RTL and golden agree every cycle."""
    cycles = [
        {"writeback": (0, 1)},                              # ask takes the eviction
        {"request_ready": 1, "fetch": (0, 1, 1)},           # compressor takes it; ask: inval.
        {"request_ready": 1, "response": 0},                # handed back: L1 stage, copy
        {"response": 0},                                    # the invalidation's answer waits
        {"response": 0, "l1_ready": 1},                     # eviction written to L1
        {"response": 0},                                    # invalidation answered: to L1
        {"l1_ready": 1, "fetch": (0, 1, 1)},                # L1 invalidation; ask: again
        {"request_ready": 1},
        {"response": 0, "fetch": (1, 3, 1)},                # no copy: done; ask: w1r3
        {"l1_ready": 1, "request_ready": 1},
        {"response": 0},                                    # never evicted: done
        {"l1_ready": 1},
    ]
    offered = [(cycle, outputs[3]) for cycle, outputs in enumerate(_agreed(_drive_transfer(
        cycles))) if outputs[3] is not None]
    assert offered == [(3, (L1Op.WRITE, 0, 1)), (4, (L1Op.WRITE, 0, 1)),
                      (6, (L1Op.INVALIDATE, 0, 1))]


def test_workload_invalidates_in_l1_only_registers_it_holds():
    """Seed 2 of the small shard's workload: of its 8 invalidations, the 1 of a register
    whose last eviction was written to L1 goes to L1 and the others skip it, and every read
    still equals the last write (a register invalidated without reaching L1 is dead: the
    workload never reads it before writing it again). (Seed 7, 2 of 9 until the compressor
    allocated empty lines without an L1 read, now sends none: the timing moved.)"""
    stats, transfers = _run(SMALL, 2, warps=4, regions=6)
    assert stats["reads"] > 0
    assert (transfers["invalidate"], transfers["invalidate_l1"]) == (8, 1)


# -- the L1 stage with several requests (``l1_reads_in_flight``) ---------------------------
def _stage(cycles, reads, rtl=Transfer):
    """Per cycle ``(response_ready, l1, l1_response_ready, fill)`` of the RTL transfer unit
    (class ``rtl``) with ``l1_reads_in_flight=reads`` on ``cycles`` (see
    :func:`_drive_transfer`), after checking that the golden model agrees every cycle
    (skipped for a mutant ``rtl``)."""
    seen = _drive_transfer(cycles, reads, rtl)
    rtl_outputs = _agreed(seen) if rtl is Transfer else [outputs for outputs, _ in seen]
    return [outputs[2:] for outputs in rtl_outputs]


THREE_MISSES = [
    {"fetch": (0, 1), "request_ready": 1},               # 0 ask takes w0r1
    {"fetch": (1, 2), "request_ready": 1},               # 1 compressor takes w0r1; ask w1r2
    {"fetch": (2, 3), "request_ready": 1, "response": 0},  # 2 w0r1 answered; w1r2 asked
    {"response": 0, "l1_ready": 1},                      # 3 w0r1 to L1; w1r2's answer waits
    {"request_ready": 1, "response": 0},                 # 4 w1r2 answered; w2r3 asked
    {"response": 0, "l1_ready": 1},                      # 5 w1r2 to L1
    {"response": 0},                                     # 6 w2r3 answered
    {"l1_ready": 1, "l1_response": 5},                   # 7 w2r3 to L1; w0r1's line (5)
    {"l1_response": 6, "fill_ready": 1},                 # 8 w0r1 filled; w1r2's line (6)
    {"fill_ready": 1, "l1_response": 7},                 # 9 w1r2 filled; w2r3's line (7)
    {"fill_ready": 1},                                   # 10 w2r3 filled
    {},
]


def _check_three_misses(rtl=Transfer):
    seen = _stage(THREE_MISSES, 3, rtl)
    read = L1Op.READ
    assert [l1 for _, l1, _, _ in seen if l1] == [(read, 0, 1), (read, 1, 2), (read, 2, 3)]
    assert [waiting for _, _, waiting, _ in seen[4:10]] == [1] * 6
    assert [fill for *_, fill in seen if fill] == [(1, 5), (2, 6), (3, 7)], "fill"
    assert [fill is not None for *_, fill in seen[8:12]] == [True, True, True, False]


def test_l1_stage_keeps_reads_in_flight_and_fills_in_order():
    """With ``l1_reads_in_flight=3`` three preload misses' L1 reads are outstanding at once
    (each handed to L1 before the line of the first came back), the lines go to the reads
    in L1's (answer) order and the OSU is filled in that order. With 1, the second read
    waits for the first's fill (the stage as before the parameter). RTL and golden agree
    every cycle."""
    _check_three_misses()
    one = _stage(THREE_MISSES, 1)
    assert [l1 for _, l1, _, _ in one if l1] == [(L1Op.READ, 0, 1)]
    assert [ready for ready, *_ in one[2:8]] == [1, 0, 0, 0, 0, 0]


def test_l1_stage_fills_out_of_order_are_caught(monkeypatch):
    """A broken stage that gives a line to the newest waiting read fills the wrong lines:
    the RTL mutant :class:`~gpurf.tb.regless.mutants.FillsNewestTransfer` fails the
    directed test's checks, and so does a golden model broken the same way (it disagrees
    with the RTL)."""
    with pytest.raises(AssertionError, match="fill"):
        _check_three_misses(FillsNewestTransfer)
    monkeypatch.setattr(GoldenTransfer, "waiting", property(lambda self: next(
        (job for job in reversed(self.stage) if job.phase.name == "L1_WAIT"), None)))
    with pytest.raises(AssertionError):
        _check_three_misses()


FULL_STAGE = [
    {"fetch": (0, 1), "request_ready": 1},               # 0 ask takes w0r1
    {"fetch": (1, 2), "request_ready": 1},               # 1 compressor takes w0r1; ask w1r2
    {"fetch": (2, 3), "request_ready": 1, "response": 0},  # 2 w0r1 answered; w1r2 asked
    {"response": 0, "l1_ready": 1},                      # 3 w0r1 to L1 (w1r2 waits: offer)
    {"request_ready": 1, "response": 0},                 # 4 w1r2 answered: stage full
    {"response": 0, "l1_ready": 1},                      # 5 w1r2 to L1
    {"response": 0},                                     # 6 w2r3 refused: stage full
    {"response": 0, "l1_response": 5},                   # 7 w0r1's line; still full
    {"response": 0, "fill_ready": 1},                    # 8 w0r1 filled
    {"response": 0},                                     # 9 w2r3 answered into slot 0
    {"l1_ready": 1},                                     # 10 w2r3 to L1 (slot 0, ring wraps)
    {"l1_response": 6},                                  # 11 w1r2's line (slot 1, the head)
    {"fill_ready": 1},                                   # 12 w1r2 filled
    {"l1_response": 7},                                  # 13 w2r3's line
    {"fill_ready": 1},                                   # 14 w2r3 filled
    {},
]


def _check_full_stage(rtl=Transfer):
    seen = _stage(FULL_STAGE, 2, rtl)
    assert [ready for ready, *_ in seen[2:10]] == [1, 0, 1, 0, 0, 0, 0, 1], "answer"
    assert [fill for *_, fill in seen if fill] == [(1, 5), (2, 6), (3, 7)], "fill"


def test_l1_stage_refuses_an_answer_while_full():
    """With ``l1_reads_in_flight=2`` two reads outstanding fill the stage: the third
    request's answer is refused while nothing offers to L1 (cycles 6-8) until the head is
    filled; it then takes the freed slot 0 while the head is slot 1 (the ring wraps), and
    the lines still go to the reads in order. A mutant taking an answer into a full stage
    (:class:`~gpurf.tb.regless.mutants.FullTakesAnswerTransfer`) and one giving each line
    to the lowest-numbered waiting slot (``WaitsFromSlotZeroTransfer``) are caught."""
    _check_full_stage()
    with pytest.raises(AssertionError, match="answer"):
        _check_full_stage(FullTakesAnswerTransfer)
    with pytest.raises(AssertionError, match="fill"):
        _check_full_stage(WaitsFromSlotZeroTransfer)


WRITE_BEHIND_READ = [
    {"fetch": (0, 1), "request_ready": 1},               # 0 ask takes w0r1
    {"writeback": (1, 2), "request_ready": 1},           # 1 compressor takes w0r1; ask: evict
    {"request_ready": 1, "response": 0},                 # 2 w0r1 answered; eviction asked
    {"response": 0, "l1_ready": 1},                      # 3 w0r1's read to L1
    {"response": 0},                                     # 4 eviction handed back: stage
    {"l1_ready": 1},                                     # 5 written to L1 while w0r1 waits
    {"l1_response": 5},                                  # 6 w0r1's line
    {"fill_ready": 1},                                   # 7 filled
    {},
]


def test_l1_stage_posts_a_write_behind_a_waiting_read():
    """With ``l1_reads_in_flight=2`` an eviction handed back after a preload miss is
    written to L1 while the read waits for its line, and leaves the stage at once (the
    stage then holds the read alone); the read is filled with its line. RTL and golden
    agree every cycle."""
    seen = _stage(WRITE_BEHIND_READ, 2)
    assert [(cycle, l1) for cycle, (_, l1, _, _) in enumerate(seen) if l1] == [
        (3, (L1Op.READ, 0, 1)), (5, (L1Op.WRITE, 1, 2))]
    assert [waiting for _, _, waiting, _ in seen[3:8]] == [0, 1, 1, 1, 0]
    assert [ready for ready, *_ in seen[2:5]] == [1, 0, 1]
    assert [fill for *_, fill in seen if fill] == [(1, 5)]


EVICT_THEN_PRELOAD = [
    {"writeback": (0, 1)},                                # 0 ask takes the eviction
    {"request_ready": 1, "fetch": (0, 1)},                # 1 compressor takes it; ask: preload
    {"request_ready": 1, "response": 0},                  # 2 handed back: L1 stage
    {"response": 0},                                      # 3 the preload's answer waits
    {"response": 0, "l1_ready": 1},                       # 4 eviction written to L1
    {"response": 0},                                      # 5 preload answered
    {"l1_ready": 1},                                      # 6 its read
    {"l1_response": 4}, {"fill_ready": 1}, {},
]


def _check_evict_then_preload(rtl=Transfer):
    seen = _stage(EVICT_THEN_PRELOAD, 4, rtl)
    assert [l1 for _, l1, _, _ in seen if l1] == [(L1Op.WRITE, 0, 1), (L1Op.WRITE, 0, 1),
                                                  (L1Op.READ, 0, 1)]
    assert [ready for ready, *_ in seen[2:6]] == [1, 0, 0, 1]


def test_l1_stage_keeps_a_preload_behind_its_registers_eviction():
    """With room for 4 requests, the preload of a register whose eviction was handed back
    still waits for the eviction's L1 write (answer order): L1 sees the write first. RTL
    and golden agree every cycle."""
    _check_evict_then_preload()


def test_a_read_passing_its_registers_eviction_is_caught(monkeypatch):
    """A broken stage whose answer does not wait for the L1 offer (and offers the newest)
    sends the preload's read to L1 before the eviction's write: the RTL mutant
    :class:`~gpurf.tb.regless.mutants.AnswerOvertakesTransfer`, and a golden model broken
    the same way."""
    with pytest.raises(AssertionError):
        _check_evict_then_preload(AnswerOvertakesTransfer)
    monkeypatch.setattr(GoldenTransfer, "response_ready", property(lambda self: int(
        self.answering is not None and len(self.stage) < self.config.l1_reads_in_flight)))
    with pytest.raises(AssertionError):
        _check_evict_then_preload()


def test_end_to_end_with_reads_in_flight(seed, monkeypatch):
    """The paper's shard with ``l1_reads_in_flight=4`` on the random workload: every read
    equals the last write, and preload misses' reads were outstanding together."""
    most = [0]
    stage = GoldenTransfer._l1_stage

    def counting(self, *args):
        most[0] = max(most[0], sum(job.phase.name == "L1_WAIT" for job in self.stage))
        stage(self, *args)

    monkeypatch.setattr(GoldenTransfer, "_l1_stage", counting)
    params = {**get_block("regless.shard").defaults, "l1_reads_in_flight": 4}
    stats, transfers = _run(params, seed, regions=4, size=(6, 12))
    assert stats["reads"] > 100 and transfers["preload_l1"] > 0
    assert most[0] >= 2, most


def test_reads_in_flight_range():
    """``l1_reads_in_flight`` is 1-32."""
    for reads in (0, 33):
        with pytest.raises(ValueError, match="l1_reads_in_flight"):
            ShardConfig(**SMALL, l1_reads_in_flight=reads)
    assert len(Transfer(ShardConfig(**SMALL, l1_reads_in_flight=32)).jobs) == 32


def test_l1_reads_counts_reads_outstanding(tmp_path):
    """``python -m gpurf.tb.regless.l1_reads`` on a hand-written trace of the small shard:
    three reads taken in cycles 0-2 (a fourth offered in cycle 3, not taken), a write in
    cycle 4, their responses taken in cycles 4, 5 and 7 (one not taken in cycle 6): at most
    3 outstanding, and cycles 1-4 end with two or more."""
    from gpurf.golden.trace import TraceWriter, layout_of
    from gpurf.tb.regless.l1_reads import outstanding_reads

    layout = layout_of(Shard(**SMALL))
    pack = codec(ShardConfig(**SMALL).l1_request_layout).pack
    zeros = {column.name: 0 for column in layout.outputs}
    path = tmp_path / "reads.trace"
    # (request offered: op, taken; response: valid, ready)
    cycles = [(L1Op.READ, 1, 0, 0), (L1Op.READ, 1, 0, 0), (L1Op.READ, 1, 0, 0),
              (L1Op.READ, 0, 0, 0), (L1Op.WRITE, 1, 1, 1), (None, 0, 1, 1), (None, 0, 1, 0),
              (None, 0, 1, 1), (None, 0, 0, 0)]
    with TraceWriter(path, layout, {"block": "regless.shard", "params": SMALL}) as writer:
        for op, taken, valid, ready in cycles:
            outputs = {**zeros, "l1_request__valid": int(op is not None),
                       "l1_request__payload": pack({"op": op or L1Op.READ, "compressed": 0,
                                                    "addr": 0, "data": 0}),
                       "l1_response__ready": ready}
            writer.append({"l1_request__ready": taken, "l1_response__valid": valid}, outputs)
    assert outstanding_reads(path) == {"cycles": 9, "reads": 3, "most": 3, "several": 4}


def test_l1_reads_refuses_an_unreadable_trace_in_one_line(tmp_path, capsys):
    """``python -m gpurf.tb.regless.l1_reads`` on a missing file: its one-line error on
    stderr, exit status 2, no traceback."""
    from gpurf.tb.regless.l1_reads import main

    assert main([str(tmp_path / "missing.trace")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "missing.trace: cannot read" in err
