"""RegLess in the golden SM with the port-exact golden shard (``gpurf.sim.sm.regless_exact``),
its shard traces, and the fast model compared with it (``gpurf.sim.sm.regless_compare``).

Kernels at test size; each run takes a few seconds (the shard is stepped every cycle)."""

import json
from types import SimpleNamespace

import numpy as np
import pytest

from gpurf.golden.regless import shard as golden_shard
from gpurf.golden.trace import Trace
from gpurf.hw.regless.layouts import CompressorOp
from gpurf.sim.sm import regless, regless_ports, regless_transfer
from gpurf.sim.sm.regless import ReglessConfig, ReglessError, ReglessSM
from gpurf.sim.sm.regless_compare import compare, first_divergence
from gpurf.sim.sm.regless_exact import Decision, ReglessExactSM, run_regless_exact
from gpurf.sim.sm.run import load_workload
from gpurf.sim.sm.values import ValueMismatchError

SLOW = pytest.mark.soak
"""Kernels whose runs take over 5 s of CPU time (gaussian: 15 launches; bfs: 40,201 cycles,
about 30 s of CPU time for both models)."""


@pytest.mark.parametrize("kernel", ["saxpy", pytest.param("pathfinder", marks=SLOW),
                                    pytest.param("gaussian", marks=SLOW)])
def test_kernel_runs_on_golden_shards(kernel):
    """Outputs equal numpy, every operand read answered by a golden shard's OSU (and the
    read port's answer equal to it), each shard stepped every cycle of the run."""
    result = run_regless_exact(kernel, fast=False)
    assert result["passed"]
    assert result["reads"] > 0 and result["issues"] > 0
    assert result["shard_cycles"] == [max(result["shard_cycles"])] * 4
    if result["launches"] == 1:
        assert result["cycles"] - 20 <= result["shard_cycles"][0] <= result["cycles"]
    assert all(d.staged is not None and d.staged > d.activated for d in result["decisions"])


def test_corrupted_preload_is_caught(monkeypatch):
    """A transfer unit that corrupts one lane of each value the compressor answers a preload
    with (a broken shard) delivers a wrong register: the run stops."""
    answer = golden_shard.Transfer._answer

    def corrupt(self, job, response):
        compressed, value = response
        if compressed and job.op == golden_shard._PRELOAD:
            value = [value[0] ^ 1, *value[1:]]
        answer(self, job, (compressed, value))

    monkeypatch.setattr(golden_shard.Transfer, "_answer", corrupt)
    with pytest.raises((ValueMismatchError, ReglessError)):
        run_regless_exact("scan", fast=False)


def test_a_deadlock_of_the_golden_shards_stops_the_run(monkeypatch):
    """Golden capacity managers that never push a drained warp back on the stack leave the
    SM with nothing to issue: the watchdog stops the exact model's run too."""
    from gpurf.golden.regless import capacity_manager

    monkeypatch.setattr(regless, "STALL", 2_000)
    monkeypatch.setattr(capacity_manager.CapacityManager, "_drained",
                        lambda self, at_barrier: None)
    with pytest.raises(ReglessError, match=r"deadlocked: \d+ warps running, 0 of them at "
                       "a barrier"):
        run_regless_exact("saxpy", fast=False)


def test_shard_ports_are_recorded(tmp_path):
    """``record=``: one trace per shard, of ``regless.shard`` at its defaults, holding every
    cycle the shard was stepped."""
    result = run_regless_exact("saxpy", record=tmp_path, fast=False)
    assert result["passed"]
    assert [p.rsplit("/", 1)[1] for p in result["traces"]] == [
        f"launch1.shard{i}.trace" for i in range(4)]
    for path, cycles in zip(result["traces"], result["shard_cycles"], strict=True):
        trace = Trace(path)
        assert trace.header["block"] == "regless.shard"
        assert trace.header["params"]["regs"] == 64
        assert trace.header["cycles"] == cycles


def test_first_divergence_finds_the_earliest_difference():
    warp = (1, (0, 0, 0), 0)
    other = (1, (1, 0, 0), 0)
    same = [Decision(warp, 0, 0, 1), Decision(warp, 5, 9, 10)]
    assert first_divergence(same, list(same)) is None
    late = [Decision(warp, 0, 0, 1), Decision(warp, 5, 9, 12), Decision(other, 0, 4, 5)]
    early = [Decision(warp, 0, 0, 1), Decision(warp, 5, 9, 10), Decision(other, 0, 3, 5)]
    found = first_divergence(early, late)
    assert (found["cycle"], found["warp"], found["region"]) == (3, other, 0)
    missing = first_divergence(same, same[:1])
    assert (missing["region"], missing["exact"]) == (1, None)


AGREEMENT = {
    # kernel: (regions, fast cycles, exact cycles, decisions the same (of regions), first
    # divergence: None, or (cycle, warp, fast (activated, staged), exact (activated, staged)))
    "saxpy": (380, 1081, 1081, 380, None),
    "pathfinder": (574, 5278, 5278, 574, None),
    "gaussian": (1320, 9544, 9544, 1320, None),
    "bfs": (3575, 40201, 40201, 3575, None),
    "histogram": (1088, 2984, 2984, 1088, None),
    "backprop_forward": (4864, 7530, 7530, 4864, None),
    "scan": (870, 2603, 2603, 870, None),
    "ffma_imad": (416, 2793, 2793, 416, None),
    "srad": (672, 26686, 26686, 672, None),
}
"""What ``python -m gpurf.sim.sm.regless_compare`` printed for these kernels (docs/regless.md,
"Fast model vs golden shard")."""

AGREEMENT_256 = {
    "saxpy": (380, 1191, 1191, 380, None),
    "pathfinder": (574, 5278, 5278, 574, None),
    "histogram": (1088, 3641, 3641, 1088, None),
    "scan": (870, 2741, 2741, 870, None),
    "ffma_imad": (416, 4908, 4908, 416, None),
}
"""The same with ``--capacity 256`` (8 OSU lines per bank: bank queues fill, register lines
spill to L1; docs/regless.md, "Session 17: other capacities")."""

AGREEMENT_NOHOLD = {
    ("histogram", 512): (1088, 2915, 2915, 1088, None),
    ("pathfinder", 512): (574, 5243, 5243, 574, None),
    ("scan", 512): (870, 2571, 2571, 870, None),
    ("backprop_forward", 512): (4864, 7438, 7438, 4864, None),
    ("histogram", 256): (1088, 3416, 3416, 1088, None),
    ("scan", 256): (870, 2692, 2692, 870, None),
}
"""The kernels with barriers with ``--nohold`` (a warp at a barrier may take its next
region: the capacity managers of sessions 11-22, whose agreement these figures were until
session 23; docs/regless.md "Deadlock at a barrier")."""

AGREEMENTS = {512: AGREEMENT, 256: AGREEMENT_256}


def _agrees_as_documented(result, kernel, capacity=512):
    regions, fast_cycles, exact_cycles, same, divergence = AGREEMENTS[capacity][kernel]
    assert result["passed"] == {"fast": True, "exact": True}
    assert result["regions"] == {"fast": regions, "exact": regions}
    assert result["cycles"] == {"fast": fast_cycles, "exact": exact_cycles}
    assert result["same_decisions"] == same
    found = result["first_divergence"]
    if divergence is None:
        assert found is None, found
        return
    cycle, warp, fast, exact = divergence
    assert found["cycle"] == cycle and found["warp"] == warp
    assert (found["fast"]["activated"], found["fast"]["staged"]) == fast
    assert (found["exact"]["activated"], found["exact"]["staged"]) == exact


@pytest.mark.parametrize(("kernel", "capacity"), [
    ("saxpy", 512), ("pathfinder", 512), pytest.param("gaussian", 512, marks=SLOW),
    pytest.param("bfs", 512, marks=SLOW), ("histogram", 512),
    pytest.param("backprop_forward", 512, marks=SLOW), pytest.param("scan", 512, marks=SLOW),
    pytest.param("ffma_imad", 512, marks=SLOW), pytest.param("srad", 512, marks=SLOW),
    ("saxpy", 256), pytest.param("pathfinder", 256, marks=SLOW), ("histogram", 256),
    pytest.param("scan", 256, marks=SLOW), ("ffma_imad", 256)])
def test_fast_model_makes_the_golden_shards_decisions_cycle_by_cycle(kernel, capacity):
    """The fast model (the golden capacity manager's rules, the golden shard's request ports
    and OSU lines cycle by cycle: ``sim/sm/regless_ports.py``; its transfer unit and
    compressor: ``sim/sm/regless_transfer.py``) makes every decision the golden shard
    makes, in the same cycle: the same regions, activated and staged in the same cycles,
    preloads served alike, the same evictions and invalidations to L1, the same end cycle;
    where no register leaves the OSU (saxpy ... bfs) and where the OSU misses (histogram,
    backprop_forward, scan, ffma_imad; the SM's shards hold 8 L1 requests,
    ``l1_reads_in_flight``); and srad, whose register lines overflow the 48 KB register L1
    and whose descriptor entries fill their banks' queues (session 17); at the paper's 512
    OSU entries per SM and at 256 (8 lines per bank: a bank's queue fills and the region
    port waits; saxpy spills registers to L1, ffma_imad misses there)."""
    result = compare(kernel, config=_config(capacity), exact=_exact(kernel, capacity))
    _agrees_as_documented(result, kernel, capacity)
    for name in ("preloads_served", "evictions", "invalidations_to_l1"):
        assert result[name]["fast"] == result[name]["exact"], name
    if kernel in ("saxpy", "pathfinder", "gaussian", "bfs") and capacity == 512:
        assert result["invalidations_to_l1"] == {"fast": 0, "exact": 0}


@pytest.mark.parametrize(("kernel", "capacity"), [
    ("histogram", 512), ("pathfinder", 512), pytest.param("scan", 512, marks=SLOW),
    pytest.param("backprop_forward", 512, marks=SLOW), ("histogram", 256),
    pytest.param("scan", 256, marks=SLOW)])
def test_nohold_fast_model_makes_the_golden_shards_decisions(kernel, capacity):
    """With ``nohold`` the SM leaves the golden capacity managers' ``at_barrier`` input at
    0 and the fast model pushes waiting warps too: every decision in the same cycle, on
    kernels with barriers (the default holds them: ``AGREEMENT``)."""
    config = ReglessConfig(capacity=capacity, hold_barriers=False)
    result = compare(kernel, config=config)
    regions, fast_cycles, exact_cycles, same, divergence = AGREEMENT_NOHOLD[kernel, capacity]
    assert result["passed"] == {"fast": True, "exact": True}
    assert result["regions"] == {"fast": regions, "exact": regions}
    assert result["cycles"] == {"fast": fast_cycles, "exact": exact_cycles}
    assert result["same_decisions"] == same and result["first_divergence"] is divergence


_EXACT: dict = {}


def _config(capacity: int) -> ReglessConfig:
    return ReglessConfig(capacity=capacity)


def _exact(kernel: str, capacity: int = 512) -> dict:
    """The golden shards' run of ``kernel`` at ``capacity`` OSU entries per SM (once per
    test session)."""
    if (kernel, capacity) not in _EXACT:
        _EXACT[kernel, capacity] = run_regless_exact(kernel, "test", _config(capacity),
                                                     fast=False)
    return _EXACT[kernel, capacity]


def _reversed_stack(monkeypatch):
    """The session-10 launch order: the warp placed last on top."""
    init = regless._Shard.__init__

    def reverse(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.stack.reverse()

    monkeypatch.setattr(regless._Shard, "__init__", reverse)


def _no_bank_conflicts(monkeypatch):
    """Every request granted a port is taken (no write-before-read data port, no tag port
    order within a bank)."""

    def banks(self, grants, now):
        for bank, queue in enumerate(self.queues):
            while queue and queue[0][0] <= now and self._entry(bank, queue, bank, False,
                                                               now):
                pass
        taken = [request for kind in grants.values() for request in kind.values()]
        for request in taken:
            if request.kind in ("reserve", "release"):
                getattr(self, f"_{request.kind}")(request.bank, request, now)
            elif request.kind == "write":
                self._write(request.bank, request)
        return taken

    monkeypatch.setattr(regless_ports.ShardPortTiming, "_banks", banks)


def _fetch_free(monkeypatch):
    """Invalidations do not wait for their bank's fetch register."""
    monkeypatch.setattr(regless_ports.ShardPortTiming, "_banks", _banks_without_fetch)


def _banks_without_fetch(self, grants, now):
    self.fetch = [None] * self.banks
    taken = _BANKS(self, grants, now)
    self.fetch = [None] * self.banks
    return taken


_BANKS = regless_ports.ShardPortTiming._banks


def _oldest_first(monkeypatch):
    """Session 12's OSU line choice: the clean line released first, else the dirty one."""
    order = {}

    def release(self, bank, request, now):
        order[request.slot, request.reg] = now
        _RELEASE(self, bank, request, now)

    def choice(lines):
        for place, kind in (("free", "take"), ("clean", "take"), ("dirty", "evict")):
            found = [k for k, line in enumerate(lines) if line.place == place]
            if found:
                return kind, min(found, key=lambda k: order.get(lines[k].tag, 0))
        return None

    monkeypatch.setattr(regless_ports.ShardPortTiming, "_release", release)
    monkeypatch.setattr(regless_ports, "allocation_choice", choice)


def _evict_at_once(monkeypatch):
    """Session 12's eviction: a dirty line is written back and given to the reserve or
    preload in the same cycle."""
    def allocate(self, bank, slot, reg, owner, now):
        choice = GOLDEN_CHOICE(self.lines[bank])
        if choice is not None and choice[0] == "evict":
            line = self.lines[bank][choice[1]]
            line.place, line.written = "clean", False
            self.owner.written_back(self.shard, line.owner, now, data=line.data)
        return _ALLOCATE(self, bank, slot, reg, owner, now)

    monkeypatch.setattr(regless_ports.ShardPortTiming, "_allocate", allocate)


def _compressor_at_once(monkeypatch):
    """The compressor answers every request in the cycle it is offered (no bit-vector,
    tag-match or L1 refill cycles), compressing as before."""
    monkeypatch.setattr(regless_transfer.Compressor, "advance", _answer_at_once)


def _answer_at_once(self, request_valid, request, response_ready, *_):
    from gpurf.golden.regless.compressor import Shown

    if self.shown.response is not None and not response_ready:
        return
    self.job = None
    self.shown = Shown(request_ready=1)
    if request_valid:
        self.shown = Shown(request_ready=1, response=(int(request.op == EVICT and bool(
            regless.compressible(np.asarray(request.value, np.uint32)))), [0] * 32))
        self.job = True


def _one_read_in_flight(monkeypatch):
    """The fast model's transfer units hold one L1 request (before ``l1_reads_in_flight``)
    while the golden shards hold the SM's 8."""
    init = regless_transfer.TransferTiming.__init__

    def one(self, params, *args, **kwargs):
        init(self, {**params, "l1_reads_in_flight": 1}, *args, **kwargs)

    monkeypatch.setattr(regless_transfer.TransferTiming, "__init__", one)


def _placed_early(monkeypatch):
    """Session 14's order: a warp first seen in cycle ``now`` is placed before the ports
    step the cycles before ``now`` (its slot's empty region could drain before the warp was
    there)."""
    catch_up = regless.ReglessSM._catch_up

    def early(self, sub, now):
        for warp in sub.live:
            key = (warp.block.id, warp.index)
            if key not in self.warps:
                self.warps[key] = regless._WarpState(warp)
                self._placed(self.shards[sub.index], self.warps[key], now)
        catch_up(self, sub, now)

    monkeypatch.setattr(regless.ReglessSM, "_catch_up", early)


def _unbounded_queues(monkeypatch):
    """Session 16's region port: a descriptor's entries are taken one per cycle whatever
    their bank's queue holds (the golden ``_region_ready`` waits while it holds as many
    entries as the capacity manager has lines per bank)."""
    init = regless._Shard.__init__

    def unbounded(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.lines_per_bank = 1 << 30

    monkeypatch.setattr(regless._Shard, "__init__", unbounded)


def _register_lines_in_data_l1(monkeypatch):
    """Register lines looked up and written in the SM's L1 beside the data, not in their own
    48 KB (the golden shards' driver until session 17)."""
    def lookup(self, line):
        return self.sm.l1.lookup(line, True)

    def write(self, line):
        if self.sm.l1.enabled:
            regless.store_line(self.sm.l1, line)

    monkeypatch.setattr(regless.ReglessSM, "l1_lookup", lookup)
    monkeypatch.setattr(regless.ReglessSM, "l1_write", write)


EVICT = CompressorOp.EVICT.value
_RELEASE = regless_ports.ShardPortTiming._release
_ALLOCATE = regless_ports.ShardPortTiming._allocate
GOLDEN_CHOICE = regless_ports.allocation_choice


@pytest.mark.parametrize(("broken", "kernel", "capacity"), [
    (_reversed_stack, "saxpy", 512), (_no_bank_conflicts, "saxpy", 512),
    (_fetch_free, "saxpy", 512), (_placed_early, "saxpy", 512),
    (_oldest_first, "histogram", 512), (_evict_at_once, "histogram", 512),
    (_compressor_at_once, "histogram", 512), (_one_read_in_flight, "histogram", 512),
    pytest.param(_unbounded_queues, "srad", 512, marks=SLOW),
    (_unbounded_queues, "saxpy", 256), (_register_lines_in_data_l1, "ffma_imad", 256)])
def test_a_broken_fast_model_diverges(monkeypatch, broken, kernel, capacity):
    """A fast model without one of the golden rules diverges from the golden shard (saxpy:
    the stack, the banks' port order, the fetch register, a placed warp's first cycle;
    histogram, where the OSU misses:
    the line choice, the eviction's wait, the compressor's cycles; srad, whose banks'
    queues fill: their room; at 256 OSU entries per SM, where the default tier's 512 cases
    exercise neither: saxpy, the queues' room; ffma_imad, the register lines' own L1), and
    the agreement test above fails on it (or its run stops: a register lost)."""
    exact = _exact(kernel, capacity)
    broken(monkeypatch)
    try:
        result = compare(kernel, config=_config(capacity), exact=exact)
    except ReglessError:
        return  # the eviction at once also loses a register: the value check stops it
    assert result["first_divergence"] is not None
    with pytest.raises(AssertionError):
        _agrees_as_documented(result, kernel, capacity)


@SLOW
def test_a_fast_model_compressing_by_its_own_values_miscounts_srad(monkeypatch):
    """A fast model that matches the compressor's patterns on its own values, not on the
    data the OSU offered (before session 17), makes srad's decisions but not its preload
    sources: the agreement test's counts catch it (1,491 against 1,527 from the
    compressor)."""
    written_back = ReglessSM.written_back

    def own(self, shard, key, cycle, *, data):
        line = self.lines.get(key)
        written_back(self, shard, key, cycle, data=None if line is None else line.values)

    monkeypatch.setattr(ReglessSM, "written_back", own)
    result = compare("srad", exact=_exact("srad"))
    assert result["first_divergence"] is None
    served = result["preloads_served"]
    assert served["fast"]["compressor"] < served["exact"]["compressor"]


def _stub_sm():
    """What a launch of either RegLess model reads of its SM before any warp runs: the
    gtx980 shape (4 sub-cores of 16 slots), no value check, instruction kinds (all ALU)."""
    return SimpleNamespace(config=SimpleNamespace(slots=16, subcores=4, l1_ways=4),
                           values=SimpleNamespace(read=lambda *args: None),
                           info=SimpleNamespace(kind=[0] * 8))


def _drain_log(model, sub):
    """A function giving ``(cycle, slot)`` of each empty region drained on ``sub``'s shard
    from now on (the fast model's ``port_cycle``; the golden capacity manager's DRAINING
    states in the driver's log)."""
    if isinstance(model, ReglessExactSM):
        log = model.ports[sub.index].log
        return lambda: [(cycle - 1, slot) for cycle, event, slot, _ in log
                        if event == "draining"]
    drains = []
    port_cycle = model.port_cycle

    def record(shard, cycle, issue, written, fake):
        if fake is not None:
            drains.append((cycle, fake))
        port_cycle(shard, cycle, issue, written, fake)

    model.port_cycle = record
    return lambda: drains


@pytest.mark.parametrize("model", [ReglessSM, ReglessExactSM])
def test_a_slot_drains_its_empty_region_only_once_its_warp_is_placed(model):
    """The SM places a block's warps at the start of a cycle; RegLess sees them at its next
    hook call (``ready``, ``dispatched``), possibly after cycles its shard has not stepped
    yet. Those cycles must be stepped without the new warp: the scheduler's ``last`` issue
    that drains the empty region its slot held is taken in the cycle the warp was seen, not
    in an earlier one (backprop_forward: the fast model drained slot 12 of sub-core 3 at
    cycle 3,821, the golden shards' driver tried at 3,822, the warp was placed at 3,823)."""
    regless_model = model(load_workload("saxpy")[1], subcores=4)(_stub_sm())
    sub = SimpleNamespace(index=0, live=[], slots=[None] * 16)
    drains = _drain_log(regless_model, sub)
    regless_model._catch_up(sub, 40)  # every slot takes an empty region, ACTIVE by cycle 40
    warp = SimpleNamespace(block=SimpleNamespace(id=(1, 0, 0)), index=0, slot=5, sub=sub,
                           pcs=[0], pos=0, at_bar=False, hold=0)
    sub.live.append(warp)
    sub.slots[5] = warp
    regless_model._catch_up(sub, 50)  # placed in cycle 50; the shard stepped up to 40
    regless_model._catch_up(sub, 60)
    assert drains() == [(50, 5)]


def _cli(capsys, *argv):
    from gpurf.sim.cli import main

    with pytest.raises(SystemExit) as done:
        main(["sm", "run", "saxpy", "--timing", *argv])
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_cli_runs_and_records(capsys, tmp_path):
    code, out, _ = _cli(capsys, "--mechanism", "regless:exact", "--json")
    assert code == 0
    result = json.loads(out)
    assert result["passed"] and result["cycles"] == AGREEMENT["saxpy"][2]
    folder = tmp_path / "traces"
    code, out, _ = _cli(capsys, "--mechanism", "regless:exact", "--record", str(folder))
    assert code == 0 and "PASS saxpy" in out
    assert sorted(p.name for p in folder.glob("*.trace")) == [
        f"launch1.shard{i}.trace" for i in range(4)]
    code, out, err = _cli(capsys, "--mechanism", "regless:exact", "--record", str(folder))
    assert code == 2 and "already holds traces" in err and len(err.strip().splitlines()) == 1
    code, out, err = _cli(capsys, "--mechanism", "regless:exact+fast")
    assert code == 2 and "regless:exact+fast" in err and len(err.strip().splitlines()) == 1


@pytest.mark.soak
def test_kernel_shard_trace_replays_on_verilator(tmp_path):
    """A kernel's shard trace replays clean on the shard's Verilog (Verilator; the build
    took about 10 minutes on the loaded machine): histogram, recorded at the SM's default
    of 8 L1 reads in flight per shard (the RTL's L1 ring since session 15), whose preloads
    are served from the OSU, the compressor and L1."""
    from gpurf.sim.replay import replay

    result = run_regless_exact("histogram", config=ReglessConfig(), record=tmp_path,
                               fast=False)
    replayed = replay(tmp_path / "launch1.shard0.trace", sim="verilator")
    assert replayed.passed, replayed.summary()
    assert replayed.cycles == result["shard_cycles"][0]
    assert np.isfinite(replayed.cycles_per_second)


def test_a_descriptor_entry_waits_for_room_in_its_banks_queue():
    """The golden capacity manager takes an entry word on the region port only while the
    entry's bank queue holds fewer entries than it has lines per bank (``_region_ready``),
    and no header until the descriptor's last entry was taken; so does the fast model's
    region port (``ReglessSM._stream``; before session 17 it took every entry one per cycle
    and srad diverged at cycle 10,228)."""
    model = ReglessSM(load_workload("saxpy")[1], ReglessConfig(capacity=256))(_stub_sm())
    shard = model.shards[0]
    queue, other = shard.ports.queues[3], shard.ports.queues[4]
    queue.extend((0, None) for _ in range(shard.lines_per_bank))  # 8 entries: full
    shard.streaming.extend([(3, "a"), (4, "b")])
    shard.header_free = float("inf")
    assert not model._stream(shard, 10)
    queue.popleft()  # the OSU took the head in cycle 10
    assert model._stream(shard, 11) and queue[-1] == (12, "a")
    assert shard.header_free == float("inf")
    assert model._stream(shard, 12) and list(other) == [(13, "b")]
    assert shard.header_free == 13 and not model._stream(shard, 13)


def test_an_evicted_line_is_compressed_by_the_data_the_osu_offered():
    """The golden compressor matches its patterns on the ``writeback`` offer's data (lanes
    the SM never wrote hold what the data store held); the fast model stores the line
    compressed or in L1 by that match, keeping its own values (srad: 36 preloads the golden
    compressor answered were counted as from nowhere)."""
    from gpurf.sim.sm.regless import _Line

    model = ReglessSM(load_workload("saxpy")[1])(_stub_sm())
    shard = model.shards[0]
    ramp = np.arange(32, dtype=np.uint32) * 4 + 3  # STRIDE4
    odd = ramp * ramp  # no pattern
    for reg, values, data, compressed in ((1, odd, None, True), (2, odd, ramp, True),
                                          (3, ramp, odd, False)):
        key = (((0, 0, 0), 0), reg)
        model.lines[key] = _Line(values.copy(), 0)
        model.written_back(shard, key, 5, data=data)
        assert (key in model.packed) == compressed and (key in model.l1) != compressed
        assert np.array_equal((model.packed if compressed else model.l1)[key], values)


@pytest.mark.parametrize("model", [ReglessSM, ReglessExactSM])
@pytest.mark.parametrize("shared", [False, True])
def test_register_lines_live_in_the_configured_l1(model, shared):
    """Both models keep register lines where ``l1_bytes`` says (the golden shards' driver
    used the SM's L1 whatever the configuration until session 17, and srad diverged at
    cycle 780 / 1,221): Table 1's 48 KB of their own (data bypassed), or the SM's L1 beside
    the data (``sharedl1``)."""
    from gpurf.sim.sm.timing import _L1

    sm = _stub_sm()
    sm.l1 = _L1(SimpleNamespace(l1_bytes=65536, l1_ways=4))
    config = ReglessConfig(l1_bytes=0 if shared else regless.REGISTER_L1_BYTES)
    storage = model(load_workload("saxpy")[1], config)(sm)
    line = regless.REGISTER_BASE + 5
    assert not storage.l1_lookup(line + 96)
    storage.l1_write(line)
    assert storage.l1_lookup(line)
    in_sm = any(line in entries for entries in sm.l1.sets)
    assert in_sm == shared and (storage.store is sm.l1) == shared
