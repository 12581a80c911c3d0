# amaranth: UnusedElaboratable=no
"""``wir.backend``: parameters, the golden model's recount across every part (broken
models caught), every outcome retiring in the random stream, the directed reuse hit, the
no-leak proof with its covers."""

import re
from collections import Counter

import pytest
from amaranth.back import rtlil

from gpurf.golden.wir.backend import Backend as GoldenBackend
from gpurf.golden.wir.backend import LeakError
from gpurf.golden.wir.register_pool import ProtocolError
from gpurf.hw.registry import get_block
from gpurf.hw.wir.backend import Backend
from gpurf.hw.wir.configs import BACKEND_HEADROOM, BACKEND_HITS, BackendConfig
from gpurf.hw.wir.layouts import LoadKind, Outcome
from gpurf.sim.formal import missing_solver, prove, prove_step, select_assertions
from gpurf.tb.harness import run_golden
from gpurf.tb.wir import mutants
from gpurf.tb.wir.formal_backend import COUNTED, DIRECTED, LEDGERS, MOST_INCREMENTS, BackendFormal
from gpurf.tb.wir.formal_backend import SMALL as FORMAL_SMALL
from gpurf.tb.wir.test_backend import directed_reuse_hit, headroom_burst, random_stream

SMALL = get_block("wir.backend").test_params[0]
SMALL_PREGS = FORMAL_SMALL["pregs"]
SMALL_SLOTS = BackendConfig(**FORMAL_SMALL).back.pool.slots


def test_parts_configured_from_the_parameters():
    config = BackendConfig(**SMALL)
    pool = config.back.pool
    assert (config.front.warps, config.front.regs, config.front.pregs) == (2, 2, 16)
    assert (pool.inc_ports, pool.dec_ports, pool.query_ports) == (3 + 8, 4 + 10, 2 + 7)
    assert pool.saturation == pool.max_count - BACKEND_HEADROOM


@pytest.mark.parametrize(("key", "value"), [("pregs", 12), ("count_width", 4), ("warps", 9),
                                            ("reuse_entries", 3)])
def test_bad_parameters_rejected(key, value):
    with pytest.raises(ValueError):
        BackendConfig(**{**SMALL, key: value})


def _outcomes(model, stimulus, seed, cycles):
    seen: Counter = Counter()
    step = model.step

    def observe(inputs):
        outputs = step(inputs)
        if outputs["retired__valid"]:
            payload = model.ports["retired__payload"].unpack(outputs["retired__payload"])
            seen[Outcome(payload.outcome)] += 1
        return outputs

    model.step = observe
    run_golden(model, stimulus, SMALL, seed, cycles)
    return seen


def test_golden_random_stream_every_outcome(seed):
    """3,000 random cycles: every outcome but ``PINNED`` (rare at 2 lanes) retires, with
    the references recounted every cycle across all parts."""
    print(f"seed {seed}")
    model = GoldenBackend(**SMALL)
    seen = _outcomes(model, random_stream, seed, 3000)
    assert set(seen) >= set(Outcome) - {Outcome.PINNED}, seen
    assert model.checks >= 3000


def test_directed_reuse_hit_retires_the_first_register():
    _outcomes(GoldenBackend(**SMALL), directed_reuse_hit, 1, 0)


class _HitKeepsSources(GoldenBackend):
    """A broken model: a reuse hit leaving on ``out`` keeps its source references (they
    leak)."""

    def _out_sources(self, leaving):
        _, handed = super()._out_sources(leaving)
        return (None,) * 3, handed


class _FillForgotten(GoldenBackend):
    """A broken model: the reuse buffer's fill reference is not counted by the pool (a
    reused register could be freed while the buffer names it)."""

    def _events(self, front_out):
        _, decs = super()._events(front_out)
        refs = self.front.ports["inc"].unpack(front_out["inc"])[1:-1]
        return [ref.preg for ref in refs if ref.valid], decs


class _CopyNotWritten(GoldenBackend):
    """A broken model: a reuse hit's retirement is not written into the front's rename
    table (the read copy goes stale)."""

    def _front_inputs(self, inputs, back_out, retired, exit_taken):
        ins = super()._front_inputs(inputs, back_out, retired, exit_taken)
        if retired is not None and Outcome(retired.outcome) == Outcome.REUSED:
            ins["retire__valid"] = 0
        return ins


@pytest.mark.parametrize("broken", [_HitKeepsSources, _FillForgotten, _CopyNotWritten])
def test_recount_catches_broken_model(broken, seed):
    """The per-cycle recount (holders across the reuse buffer, the hit queue, the sources,
    the VSB and the mappings; the rename table against the mappings) stops a model that
    counts or copies wrong."""
    print(f"seed {seed}")
    with pytest.raises((LeakError, ProtocolError)):
        run_golden(broken(**SMALL), random_stream, SMALL, seed, 3000)


def test_release_of_a_register_never_handed_out_is_refused():
    model = GoldenBackend(**SMALL)
    model.reset()
    release = model.ports["release"].pack([{"valid": 1, "preg": 3}])
    with pytest.raises(ProtocolError):
        model.step({**dict.fromkeys(model.ports, 0), "release": release})


def test_harness_names_its_assertions():
    """Every assertion of the harness is named (its ``$check`` cell's ``FORMAT``), the
    strengthening written for k-induction included: per register the guarantees and the
    count of a handed-out register; the copy; the hit queue; the queued tickets, the
    register allocator's stages, the rename stage, ``out`` and the sweep in range; the
    ring's tail; the in-flight flags; the two exit sweeps in lockstep; the queue
    and the front's instructions during a sweep; per register the count's headroom and a
    reserved result in the allocator's stages convergent (session 17); the pool's flow
    (session 19: free registers cover the results in flight, the merge slots that lead,
    the decide stage's verifies); the ledgers of the counting step (session 21)."""
    text = rtlil.convert(BackendFormal(), name="top", ports=[], emit_src=False)
    cells = re.findall(r'parameter \\FORMAT "(\w*)"\n(?:    .*\n)*?    parameter \\FLAVOR "assert"',
                       text)
    rules = ("held_handed", "held_not_queued", "free_once", "count", "count_headroom",
             "alloc_unled", "net_split", *(f"ledger_{group}" for group in LEDGERS))
    per_register = {f"{rule}_{r}" for rule in rules for r in range(SMALL_PREGS)}
    expected = per_register | {
        "allocation_served", "hit_queue_at_most_3", "tail", "copy_0_0", "copy_0_1",
        "copy_valid_0_0", "copy_valid_0_1", "alloc_ticket_0", "alloc_ticket_1",
        "out_in_range", "stage_in_range", "sweep_warp", "flight", "alloc_stage_0",
        "alloc_stage_1", "sweep_lockstep", "sweep_same_row", "no_hit_behind_a_new_result",
        "one_hit_behind_a_decision", "sweep_holds_at_most_3", "reserved_convergent_0",
        "reserved_convergent_1",
        *(f"issued{stage}_{k}" for stage in ("", "_out") for k in range(3)),
        *(f"hit_{field}_{k}" for field in ("warp", "reg") for k in range(BACKEND_HITS)),
        *(f"ticket_{field}_{slot}" for field in ("warp", "dst") for slot in range(2)),
        "free_covers_flight", "divergent_not_verified", "verify_names_its_entry",
        "exclusion_held",
        *(f"pending_{rule}_{s}" for rule in ("handed", "range") for s in range(SMALL_SLOTS))}
    assert set(cells) == expected, set(cells) ^ expected


needs_solver = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))


@needs_solver
def test_formal_no_leak_bmc_8_abc():
    """BMC, depth 8, on ``formal_backend.SMALL`` with ABC's ``bmc3`` (48.9 s at load about
    5; with the session-15 strengthening 54.4 s wall / 28.4 s CPU at load 4-6; smtbmc's
    BMC 3 took 75 s at load 25; frame 8 alone runs past 9 minutes): no leak across every
    part (a handed-out register's count equals its holders), the rename table equals the
    mappings, the hit queue holds at most 3, every allocation served; the strengthening
    written for k-induction (``test_harness_names_its_assertions``, docs/reliability.md)."""
    result = prove(BackendFormal(), name="wir_backend_bmc8_abc", depth=8, mode="bmc",
                   engine="abc bmc3", timeout=3600)
    assert result.passed, result.log_tail


@needs_solver
def test_formal_structure_proved_unbounded_by_pdr():
    """ABC's ``pdr`` proves, unbounded from reset, every assertion of the harness but the
    counting argument's (``COUNTED``, left out so that nothing here assumes them): the
    hit queue and its bounds, the rename table's copy, a held register handed out, every
    stage, queue and ticket in range, the flags in flight, the sweeps in lockstep (43 at
    ``SMALL``). Session 19: 30.4 s of ABC time with the native ``yosys-abc``, 31.7 s wall
    with the yowasp shim on a free core, 56 s beside two other jobs; k-induction at
    depth 2 had no verdict on the same assertions in hours (docs/reliability.md)."""
    result = prove(BackendFormal(), name="wir_backend_structure_pdr", mode="prove",
                   engine="abc pdr", drop=COUNTED, timeout=1800)
    assert result.passed, result.log_tail
    counted = [re.compile(pattern) for pattern in COUNTED]
    assert len(result.asserted) == 43
    assert not [name for name in result.asserted if any(p.fullmatch(name) for p in counted)]


def test_ledgers_split_the_pool_ports():
    """Every pool port belongs to exactly one ledger group (``LEDGERS``)."""
    pool = BackendFormal().dut.back.pool.config
    incs = sorted(port for incs, _ in LEDGERS.values() for port in incs)
    decs = sorted(port for _, decs in LEDGERS.values() for port in decs)
    assert (incs, decs) == (list(range(pool.inc_ports)), list(range(pool.dec_ports)))


def structure(text: str) -> tuple[str, ...]:
    """The harness's assertions outside ``COUNTED`` (escaped names, ``prove``'s patterns):
    what the PDR test above proves, and the counting step assumes."""
    counted = [re.compile(pattern) for pattern in COUNTED]
    _, everything = select_assertions(text)
    return tuple(re.escape(name) for name in dict.fromkeys(everything)
                 if not any(pattern.fullmatch(name) for pattern in counted))


STEP_PASSES = ("allocation_served", "free_covers_flight", "divergent_not_verified",
               "verify_names_its_entry", "exclusion_held", "net_split_0", "ledger_sources_0")
"""``COUNTED`` assertions whose induction step passes in seconds (sessions 20-21)."""

LEDGER_STEPS = (r"ledger_\w+_\d+", r"net_split_\d+", r"alloc_unled_\d+")
COUNT_STEPS = (r"count_\d+",)
LAST_STEPS = (r"count_headroom_\d+", r"free_once_\d+")
STAGES = (
    ("first", (), tuple(p for p in COUNTED if p not in COUNT_STEPS + LAST_STEPS)),
    ("count", LEDGER_STEPS, COUNT_STEPS),
    ("last", LEDGER_STEPS + COUNT_STEPS, LAST_STEPS),
)
"""The counting argument's induction step in three stages: (name, what the stage assumes
besides the structure, the steps it runs). A stage assumes only assertions whose steps an
earlier stage proved without assuming them (``prove_step``'s rule): the ledgers and the
rest first, then ``count_r`` with the ledgers, then the headroom and free-once with
``count_r`` (session 21)."""


def counting_steps(text, stage, only=None):
    """The induction steps of ``stage`` (a name in ``STAGES``), or those of them ``only``
    matches, two at a time; returns their results."""
    name, assumed, steps = next(entry for entry in STAGES if entry[0] == stage)
    return prove_step(text, name=f"wir_backend_step_{name}", targets=COUNTED,
                      assume=structure(text) + assumed, only=only or steps, timeout=3600,
                      jobs=2)


@needs_solver
def test_formal_counting_step_in_parts():
    """The counting argument's induction step (depth 1) one assertion at a time
    (``prove_step``): every ``COUNTED`` assertion held the cycle before, the structure
    assumed. The steps of ``STEP_PASSES`` (3.5-13 s each, sessions 20-21)."""
    text = rtlil.convert(BackendFormal(), name="top", ports=[], emit_src=False)
    results = counting_steps(text, "first", STEP_PASSES)
    assert sorted(r.asserted for r in results) == sorted((name,) for name in STEP_PASSES)
    assert all(r.passed for r in results), [r.log_tail for r in results if not r.passed]


@needs_solver
def test_formal_count_step_with_the_ledgers():
    """``count_0``'s step with the ledgers assumed (70.5 s on a core beside a
    paper-size run, session 21; without them no verdict in 30 minutes, session 20)."""
    text = rtlil.convert(BackendFormal(), name="top", ports=[], emit_src=False)
    results = counting_steps(text, "count", ("count_0",))
    assert [r.asserted for r in results] == [("count_0",)]
    assert results[0].passed, results[0].log_tail


@needs_solver
@pytest.mark.slow_formal
def test_formal_counting_argument_unbounded():
    """Every step of every stage of ``STAGES`` passes: with the structure proved by
    :func:`test_formal_structure_proved_unbounded_by_pdr` and the pool's ledger by
    ``tests/test_wir_pool_ledger.py``, every assertion of the harness holds always
    (k-induction of depth 1 split per assertion, 95 runs; session 21: all pass, 1,390 s
    wall two at a time; docs/reliability.md)."""
    text = rtlil.convert(BackendFormal(), name="top", ports=[], emit_src=False)
    results = [result for stage, _, _ in STAGES for result in counting_steps(text, stage)]
    _, everything = select_assertions(text)
    counted = [re.compile(pattern) for pattern in COUNTED]
    assert sorted(name for r in results for name in r.asserted) == sorted(
        name for name in everything if any(p.fullmatch(name) for p in counted))
    assert all(r.passed for r in results), [r.name for r in results if not r.passed]


@needs_solver
@pytest.mark.slow_formal
def test_formal_covers_reached():
    """Cover mode, depth 12 (26 min on the loaded machine; 65 s with a core to itself,
    session 18): every outcome (``reused`` through the hit queue), two hits queued, a result
    waiting for the hit queue, a fill, an exit sweep, a pending hit queued, sources handed
    out and released."""
    result = prove(BackendFormal(), name="wir_backend_cover", depth=12, mode="cover",
                   timeout=7200)
    assert result.passed and set(result.reached) == set(result.covers), result.log_tail


@needs_solver
@pytest.mark.slow_formal
@pytest.mark.parametrize(("block", "status"), [(Backend, "PASS"),
                                               (mutants.HitSourcesKept, "FAIL")],
                         ids=["Backend", "HitSourcesKept"])
def test_formal_directed_kills_hit_sources_kept(block, status):
    """``HitSourcesKept`` (a reuse hit keeps its in-flight source references) fails the
    no-leak proof at step 13, in the directed environment (``BackendFormal(directed=True)``
    at ``DIRECTED``: one instruction with a register source issued again and again, results
    filling the last reservation, no hold, drop, exit, barrier, launch nor release), with
    ABC's ``bmc3`` at depth 14; the backend must pass the same proof. A hit with a mapped
    register source takes 13 steps (retire a mapping, issue and reserve, execute and fill,
    issue again and hit); in the free environment bmc3 stopped in frame 8. The mutant:
    588 s wall / 111 s CPU at load 19. The backend: steps 0-12 in 1,500 s at load 19, step
    13 alone 1,005 s wall / 715 s CPU at load 5, both passed; session 18, one core free:
    the backend 219 s, the mutant 105 s (docs/reliability.md)."""
    result = prove(BackendFormal(block=block, directed=True, **DIRECTED),
                   name=f"wir_backend_directed_{block.__name__}", depth=14, mode="bmc",
                   engine="abc bmc3", timeout=3600)
    assert result.status == status, result.log_tail
    if status == "FAIL":
        assert result.failed_step == 13, result.failed_step


def _retry_burst(delay, exit_rate):
    """One instruction issued again and again from random warps (so lookups go pending on
    its reservation and queue tickets), its results ``delay`` cycles late, exits offered
    at ``exit_rate``: the pending-retry rechecks hit while the exit sweep holds every
    retirement (session 16, docs/reliability.md)."""
    from gpurf.tb.wir.test_backend import Driver, _drain

    def stream(params, rng, cycles):
        driver = Driver(params, rng)
        codec = driver.config.codecs["issue__payload"]
        execute = driver.execute

        def late(out):
            execute(out)
            driver.executing[-1] = (driver.cycle + delay, driver.executing[-1][1])

        driver.execute = late
        pending = {}
        for _ in range(cycles):
            ins = dict(pending)
            if "issue__valid" not in ins and rng.random() < 0.9:
                warp = rng.randrange(driver.config.warps)
                ins.update(issue__valid=1,
                           issue__payload=codec.pack({**driver.program[0], "warp": warp}))
            ins.update(driver.offer())
            ins.update(driver.release(1.0))
            if "exit__valid" not in ins and rng.random() < exit_rate:
                ins.update(exit__valid=1, exit__payload=rng.randrange(driver.config.warps))
            outputs = yield ins
            pending = driver.observe(ins, outputs)
        yield from _drain(driver)

    return stream


@pytest.mark.parametrize("params", [
    FORMAL_SMALL,
    {**FORMAL_SMALL, "warps": 2, "regs": 8, "pregs": 16, "imm_bits": 4, "retry_depth": 8},
    {**FORMAL_SMALL, "warps": 4, "regs": 16, "pregs": 32, "imm_bits": 5, "retry_depth": 16}],
    ids=["formal_small", "regs8_retry8", "regs16_retry16"])
def test_hit_queue_bounded_under_retry_bursts(params, seed):
    """Bursts of pending-retry hits around exit sweeps, the references recounted every
    cycle: the hit queue never holds more than 3 (``hit_queue_at_most_3``). Before session
    16's fix, rechecks hit through a sweep, which holds every retirement, and the queue
    overflowed its ``BACKEND_HITS`` entries at 8 and 16 registers (seed 7 at 16 registers,
    results 20 cycles late, exits at 10 %, is the directed case; docs/reliability.md)."""
    print(f"seed {seed}")
    runs = [(7, 20, 0.1)] + [(seed + k, (5, 10, 20)[k % 3], (0.02, 0.1, 0.3)[k // 2 % 3])
                             for k in range(6)]
    most = 0
    for run_seed, delay, exit_rate in runs:
        model = GoldenBackend(**params)
        step = model.step

        def observe(inputs, step=step, model=model):
            nonlocal most
            outputs = step(inputs)
            most = max(most, len(model.queue))
            assert len(model.queue) <= 3
            return outputs

        model.step = observe
        run_golden(model, _retry_burst(delay, exit_rate), params, run_seed, 1500)
    print(f"most hits queued: {most}")


def _heavy_holds(hold_limit=80):
    """Issues and executions with the environment holding up to ``hold_limit``
    source references (the random stream holds at most ``pregs / 4``), so registers' counts
    reach the pool's saturation (session 17: the k-induction's second counterexample was a
    count past its 5 bits; docs/reliability.md)."""
    from gpurf.tb.wir.test_backend import Driver, _drain

    def stream(params, rng, cycles):
        driver = Driver(params, rng)
        pending = {}
        for _ in range(cycles):
            ins = dict(pending)
            if "issue__valid" not in ins and rng.random() < 0.7:
                ins.update(driver.program_issue())
            ins.update(driver.offer())
            ins.update(driver.release())
            if ("hold__valid" not in ins and len(driver.held) < hold_limit
                    and rng.random() < 0.6):
                ins.update(driver.hold())
            if driver.held and rng.random() < 0.05:
                ins.update(drop__valid=1, drop__payload=driver.held.pop(
                    rng.randrange(len(driver.held))))
            if "exit__valid" not in ins and rng.random() < 0.004:
                ins.update(exit__valid=1, exit__payload=rng.randrange(driver.config.warps))
            outputs = yield ins
            pending = driver.observe(ins, outputs)
        yield from _drain(driver)

    return stream


def _pool_extremes(model):
    """Record, from every clock edge of ``model``'s pool, the highest count any register
    reaches (``"count"``) and the most increments one register takes in one cycle
    (``"increments"``); returns the dict the edges update."""
    pool = model.back.pool
    extremes = {"count": 0, "increments": 0}
    edge = pool._edge

    def observe(taken, incs, decs):
        edge(taken, incs, decs)
        extremes["count"] = max([extremes["count"], *pool.counts.values()])
        extremes["increments"] = max([extremes["increments"], *Counter(incs).values()])

    pool._edge = observe
    return extremes


def _highest_count(model, seed, cycles=1500):
    """The highest count any register reaches in a heavy-holds run of ``model``."""
    extremes = _pool_extremes(model)
    run_golden(model, _heavy_holds(), FORMAL_SMALL, seed, cycles)
    return extremes["count"]


def test_counts_saturate_without_overflow_under_heavy_holds(seed):
    """Counts reach the pool's saturation (22 of 5 bits at ``formal_backend.SMALL``) and
    never leave ``0..31`` (the golden pool raises), every register recounted each cycle."""
    print(f"seed {seed}")
    saturation = GoldenBackend(**FORMAL_SMALL).back.config.pool.saturation
    highest = max(_highest_count(GoldenBackend(**FORMAL_SMALL), seed + k) for k in range(3))
    print(f"highest count: {highest} (saturation {saturation})")
    assert highest >= saturation


def test_counts_overflow_without_saturation(seed):
    """The same stream on a backend whose pool never reports saturation overflows a count:
    the stream reaches the headroom the saturation protects."""
    print(f"seed {seed}")
    model = GoldenBackend(**FORMAL_SMALL)
    model.back._saturated = lambda preg: False
    pool_step = model.back.pool.step

    def never_saturated(inputs):
        return {**pool_step(inputs), "saturated": 0}

    model.back.pool.step = never_saturated
    with pytest.raises(ProtocolError, match=r"outside 0\.\.31"):
        _highest_count(model, seed, cycles=3000)


def _hot_register(params, rng, cycles):
    """Everything on one logical register (warp 0, ``r0``): instructions whose register
    operands all name it (so a reservation references its register three times, an issue
    three times), holds of it up to 60, results of one value (VSB hits shared into it, their
    fills naming it) mostly to other registers; ``r0`` itself redefined now and then."""
    from gpurf.tb.wir.test_backend import Driver, _drain

    driver = Driver(params, rng)
    config = driver.config
    hold = {"hold__valid": 1, "hold__payload": config.codecs["hold__payload"].pack(
        {"warp": 0, "reg": 0})}
    driver.values = driver.values[:1]
    pending = {}
    for _ in range(cycles):
        ins = dict(pending)
        if "issue__valid" not in ins and rng.random() < 0.8:
            ins.update(driver.issue(
                warp=0, opcode={"op": rng.randrange(2), "regs": rng.choice([7, 7, 3, 1])},
                operand=[0, 0, 0], divergent=0, bypass=0, store_shared=0, store_global=0,
                dst=0 if rng.random() < 0.05 else rng.randrange(1, config.regs)))
        ins.update(driver.offer())
        ins.update(driver.release(0.1))
        if "hold__valid" not in ins and len(driver.held) < 60 and rng.random() < 0.7:
            ins.update(hold)
        if driver.held and rng.random() < 0.08:
            ins.update(drop__valid=1, drop__payload=driver.held.pop(
                rng.randrange(len(driver.held))))
        outputs = yield ins
        pending = driver.observe(ins, outputs)
    yield from _drain(driver)


@pytest.mark.parametrize("params", [FORMAL_SMALL, {}], ids=["formal_small", "defaults"])
def test_hot_register_stays_within_headroom(params, seed):
    """Session 17, the headroom argument (``formal_backend.MOST_INCREMENTS``): with every
    reference on one register, no register takes more than ``MOST_INCREMENTS`` increments
    in a cycle nor counts past ``saturation - 1 + MOST_INCREMENTS`` (30 of 5 bits); the
    golden pool raises on a count outside ``0..31``. Figures printed, per seed."""
    saturation = BackendConfig(**params).back.pool.saturation
    for run in range(3):
        model = GoldenBackend(**params)
        extremes = _pool_extremes(model)
        run_golden(model, _hot_register, params, seed + run, 1500)
        print(f"seed {seed + run}: highest count {extremes['count']} (saturation "
              f"{saturation}), most increments of one register in a cycle "
              f"{extremes['increments']}")
        assert extremes["increments"] <= MOST_INCREMENTS
        assert extremes["count"] < saturation + MOST_INCREMENTS


def test_divergent_reserved_result_is_refused():
    """The environment's protocol the headroom argument needs (and the harness assumes): a
    result that reserved a reuse-buffer entry is convergent. A divergent one would retire
    ``PINNED`` (or ``DUMMY_MOV``) and fill the entry with that register, an increment no
    saturation query gates (session 17's k-induction counterexample); the golden model
    refuses it."""
    from gpurf.tb.wir.test_backend import Driver

    def stream(params, rng, cycles):
        driver = Driver(params, rng)
        issue = driver.issue(warp=0, opcode={"op": 0, "regs": 0}, operand=[1, 2, 3],
                             divergent=0, bypass=0, store_shared=0, store_global=0,
                             kind=LoadKind.OTHER.value)
        ins = {}
        for _ in range(cycles):
            outputs = yield ins
            driver.observe(ins, outputs)
            for _, fields in driver.executing:
                assert fields["reserved"]
                fields["mask"] = 0
            ins = {**driver.offer(),
                   **(issue if outputs["ready"] and not driver.out else {})}

    with pytest.raises(ProtocolError, match="must be convergent"):
        run_golden(GoldenBackend(**FORMAL_SMALL), stream, FORMAL_SMALL, 1, 60)


@pytest.mark.parametrize("hold_too", [False, True])
def test_headroom_burst_reaches_the_bound(hold_too):
    """Session 17, directed: at ``formal_backend.SMALL`` one register at 21 takes the
    ``MOST_INCREMENTS`` (8) increments in one cycle (a share and its fill, a reservation
    and an issue naming it three times each) and counts 29; a hold offered in that cycle is
    refused (the share's clash) and after it (saturated), so 21 + 8 is the most a count
    reaches (the strengthening ``count_headroom_r`` of ``tb/wir/formal_backend.py``)."""
    model = GoldenBackend(**FORMAL_SMALL)
    extremes = _pool_extremes(model)
    run_golden(model, headroom_burst(hold_too=hold_too), FORMAL_SMALL, 1, 200)
    assert extremes == {"count": 29, "increments": MOST_INCREMENTS}


def test_headroom_burst_without_the_clash_exceeds_the_bound():
    """The mutant the bound needs: a pipeline that takes a hold in the cycle of a verify hit
    on the same register (no clash) lets the burst's register take 9 increments and count
    30, past ``count_headroom_r``'s bound (still inside 5 bits: the 9 of ``headroom``)."""
    model = GoldenBackend(**FORMAL_SMALL)
    hold = model.back._hold
    model.back._hold = lambda request, decision: hold(request, None)
    extremes = _pool_extremes(model)
    run_golden(model, headroom_burst(hold_too=True), FORMAL_SMALL, 1, 200)
    assert extremes == {"count": 30, "increments": MOST_INCREMENTS + 1}
