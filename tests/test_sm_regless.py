"""RegLess in the golden SM (sim/sm/regless.py): kernels run on the fast RegLess model with
every operand read checked, outputs equal numpy; a lossy model is caught; the rules'
directed cases. The whole suite with and without the compressor is the ``soak`` tier
(about 2-3 minutes on the shared machine)."""

import os
import random
from dataclasses import replace

import numpy as np
import pytest

from gpurf.sim.sm.regless import (
    CAPACITIES,
    ReglessConfig,
    ReglessError,
    compressible,
    metadata_instructions,
    run_regless,
)
from gpurf.sim.sm.suite import SUITE
from gpurf.sim.sm.values import ValueMismatchError

SEED = int(os.environ.get("GPURF_SEED", random.randrange(2**31)))


def _check(kernel, config, size="test"):
    out = run_regless(kernel, size, config, baseline=False)
    assert out["passed"], f"{kernel}: outputs differ from numpy"
    assert out["preloads"] == sum(out[f"preloads_{s}"] for s in ("osu", "compressor", "l1",
                                                                   "l2"))
    return out


@pytest.mark.parametrize("compressor", [True, False], ids=["compressor", "no-compressor"])
@pytest.mark.parametrize("kernel", ["saxpy", "backprop_forward"])
def test_kernel_on_regless_values_checked(kernel, compressor):
    _check(kernel, ReglessConfig(compressor=compressor))


def test_small_osu_evicts_and_stays_correct():
    """256 entries per SM make srad evict dirty lines to the compressor and L1 and preload
    them back: every read still sees the functional run's value."""
    out = _check("srad", ReglessConfig(capacity=256))
    assert out["evictions"] > 0 and out["preloads_l1"] + out["preloads_l2"] > 0
    assert out["evictions_compressed"] > 0


def test_without_compressor_nothing_is_compressed():
    out = _check("srad", ReglessConfig(capacity=256, compressor=False))
    assert out["evictions_compressed"] == 0 and out["preloads_compressor"] == 0


def test_lossy_model_is_caught():
    """A model that drops dirty lines at eviction loses registers: the value check (or the
    OSU's read-without-line rule) stops the run."""
    with pytest.raises((ValueMismatchError, ReglessError)):
        run_regless("srad", "test", ReglessConfig(capacity=256, lossy=True), baseline=False)


@pytest.mark.soak
@pytest.mark.parametrize("compressor", [True, False], ids=["compressor", "no-compressor"])
@pytest.mark.parametrize("kernel", SUITE)
def test_suite_on_regless(kernel, compressor):
    _check(kernel, ReglessConfig(compressor=compressor))


# -- directed rules ---------------------------------------------------------------------
class _Region:
    def __init__(self, instructions, entries):
        self.instructions, self.entries = instructions, entries

    def descriptor(self, warp=0):
        return {"n_entries": self.entries}


@pytest.mark.parametrize(("instructions", "entries", "expected"), [
    (4, 2, 1),      # the single-instruction encoding
    (5, 2, 2),      # header + one flag instruction
    (9, 3, 2),
    (10, 3, 3),     # two flag instructions
    (9, 4, 3),      # one more entry instruction
    (9, 7, 4),
])
def test_metadata_instructions(instructions, entries, expected):
    assert metadata_instructions(_Region(instructions, entries)) == expected


def test_patterns_compress():
    rng = np.random.default_rng(SEED)
    print(f"seed {SEED} (GPURF_SEED)")
    lanes = np.arange(32, dtype=np.uint32)
    b0, b1 = (np.uint32(x) for x in rng.integers(0, 2**32, 2, dtype=np.uint64))
    half = lanes % 16
    for values in (np.full(32, b0, np.uint32), b0 + lanes, b0 + 4 * lanes,
                   np.where(lanes < 16, b0 + half, b1 + half),
                   np.where(lanes < 16, b0 + 4 * half, b1 + 4 * half)):
        assert compressible(values.astype(np.uint32))
    noisy = (b0 + lanes).astype(np.uint32)
    noisy[int(rng.integers(1, 32))] ^= np.uint32(1 << int(rng.integers(0, 32)))
    assert not compressible(noisy)


def test_config_parse_and_validate():
    assert ReglessConfig.parse("384+nocomp") == ReglessConfig(capacity=384, compressor=False)
    assert ReglessConfig.parse("nometa").metadata is False
    with pytest.raises(ValueError, match="unknown RegLess option"):
        ReglessConfig.parse("fast")
    with pytest.raises(ValueError):
        ReglessConfig(capacity=500)
    assert 512 in CAPACITIES
    assert ReglessConfig().l1_reads == 8
    assert ReglessConfig.parse("nocomp+reads1") == ReglessConfig(compressor=False, l1_reads=1)
    for bad in ("reads3", "reads"):
        with pytest.raises(ValueError):
            ReglessConfig.parse(bad)


def test_admit_splits_the_cms_lines_from_the_osus():
    """``admit<N>``: the capacity manager's counters and the pass's regions are N entries'
    worth, the OSU keeps the capacity's lines; the golden shard refuses it."""
    from gpurf.sim.sm.regless import ReglessSM
    from gpurf.sim.sm.regless_exact import ReglessExactSM
    from gpurf.sim.sm.run import load_workload

    config = ReglessConfig.parse("512+admit384")
    assert config == ReglessConfig(capacity=512, admit=384)
    for bad in ("384+admit512", "admit100", "admit"):
        with pytest.raises(ValueError):
            ReglessConfig.parse(bad)
    program = load_workload("srad")[1]
    split, small = ReglessSM(program, config), ReglessSM(program, ReglessConfig(capacity=384))
    assert (split.lines_per_bank, split.osu_lines_per_bank) == (12, 16)
    assert [(r.start, r.instructions) for r in split.regions.regions] == \
        [(r.start, r.instructions) for r in small.regions.regions]
    assert ReglessSM(program, ReglessConfig()).lines_per_bank == 16
    with pytest.raises(ValueError, match="admit384"):
        ReglessExactSM(program, config)


def test_admit_run_keeps_the_osus_lines(monkeypatch):
    """A saxpy run with ``512+admit384``: every shard's CM starts with 12 lines per bank and
    its ports with 16, and the outputs and every operand read check."""
    from gpurf.sim.sm import regless
    from gpurf.sim.sm.regless import ReglessSM, run_regless

    seen = []
    real = ReglessSM.__call__

    def call(self, sm):
        out = real(self, sm)
        seen.extend((shard.free[:], len(shard.ports.lines[0])) for shard in self.shards)
        return out

    monkeypatch.setattr(regless.ReglessSM, "__call__", call)
    out = run_regless("saxpy", "test", ReglessConfig.parse("512+admit384"), baseline=False)
    assert out["passed"] and seen
    assert all(free == [12] * 8 and lines == 16 for free, lines in seen)


def test_holdbar_parses():
    assert ReglessConfig.parse("256+nohold") == ReglessConfig(capacity=256,
                                                              hold_barriers=False)
    assert ReglessConfig.parse("nohold+holdbar") == ReglessConfig()
    assert ReglessConfig().hold_barriers is True
    with pytest.raises(TypeError, match="hold_barriers must be True or False"):
        ReglessConfig(hold_barriers=1)
    with pytest.raises(ValueError, match="holdbar"):
        ReglessConfig.parse("holdbars")


def _pushes_at_barriers(monkeypatch, kernel, config):
    """Run ``kernel`` and list the drained warps pushed on a stack while their barrier
    still held them: waiting, or pushed by a decision (the cycle before the push takes
    effect) not after the release cycle."""
    from gpurf.sim.sm import regless
    from gpurf.sim.sm.program import BAR

    early = []
    real = regless.ReglessSM._push

    def push(self, shard, slot, cycle):
        warp = shard.slots[slot].warp
        after_barrier = warp.pos and self.sm.info.kind[warp.pcs[warp.pos - 1]] == BAR
        if warp.at_bar or (after_barrier and cycle - 1 <= warp.hold):
            early.append((warp.block.id, warp.index, cycle))
        real(self, shard, slot, cycle)

    monkeypatch.setattr(regless.ReglessSM, "_push", push)
    out = run_regless(kernel, "test", config, baseline=False)
    assert out["passed"], f"{kernel}: outputs differ from numpy"
    return early


def test_holdbar_pushes_no_warp_its_barrier_holds(monkeypatch):
    """With ``holdbar`` (the default) a warp goes on the stack only after its barrier
    released it; ``nohold``, the rule of sessions 11-22, pushes waiting warps, which the
    same check finds (backprop_forward, 8 warps per block, at 256 entries)."""
    for hold in (True, False):
        early = _pushes_at_barriers(monkeypatch, "backprop_forward",
                                    ReglessConfig(capacity=256, hold_barriers=hold))
        assert bool(early) is not hold, early[:3]


def test_holdbar_changes_nothing_without_barriers():
    """A kernel without barriers (gaussian) makes the same decisions with ``holdbar``:
    every counter and the cycles are equal."""
    config = ReglessConfig(capacity=256, hold_barriers=False)
    assert _check("gaussian", config) == _check("gaussian",
                                                replace(config, hold_barriers=True))


# -- the command line -------------------------------------------------------------------
def _cli(capsys, *argv):
    from gpurf.sim.cli import main

    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_cli_runs_regless(capsys):
    code, out, _ = _cli(capsys, "sm", "run", "saxpy", "--mechanism", "regless:384+nocomp")
    assert code == 0, out
    assert "PASS saxpy (test)" in out and "run time over the register file" in out


@pytest.mark.parametrize("variant", ["500", "fast"])
def test_cli_rejects_a_bad_regless_config(capsys, variant):
    code, _, err = _cli(capsys, "sm", "run", "saxpy", "--mechanism", f"regless:{variant}")
    assert code == 2 and len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_capacity_manager_stuck_is_an_error(monkeypatch):
    """A region that can never fit (more lines than a bank has) stops the run with a
    one-line error instead of spinning."""
    from gpurf.sim.sm import regless

    monkeypatch.setattr(regless.ReglessSM, "_usage", lambda self, state: [17] * 8)
    with pytest.raises(ReglessError, match="capacity manager stuck"):
        run_regless("saxpy", "test", ReglessConfig(), baseline=False)


def test_a_deadlock_stops_the_run(monkeypatch):
    """A broken capacity manager that never takes a drained region's lines back leaves
    every warp waiting with regions still counted active, so the stuck check above never
    fires: the SM issues nothing more and the watchdog stops the run (backprop_forward at
    paper size and 256 entries deadlocked this way at a barrier and ran on for hours)."""
    from gpurf.sim.sm import regless

    monkeypatch.setattr(regless, "STALL", 2_000)
    monkeypatch.setattr(regless.ReglessSM, "_released", lambda self, *args: None)
    with pytest.raises(ReglessError, match=r"no instruction issued since cycle \d+, "
                       r"deadlocked: shard 0: \d+ regions reserved, 0 by warps at a barrier"):
        run_regless("saxpy", "test", ReglessConfig(), baseline=False)


# -- the capacity manager's timing ------------------------------------------------------
def test_wait_counters_add_up():
    """(The lazy CM once decided cycles past the one asked; a release queued meanwhile for
    an earlier cycle was then taken late: 36 cycles per boundary on saxpy.)"""
    from gpurf.sim.sm.regless import WAITS

    out = _check("saxpy", ReglessConfig())
    assert out["boundaries"] > 0
    assert all(out[f"wait_{name}"] >= 0 for name in WAITS)
    assert out["wait_drain_needed"] <= out["wait_drain_alu"] + out["wait_drain_memory"]


def test_drained_slots_go_on_the_stack_one_per_cycle_lowest_first(monkeypatch):
    """The golden capacity manager's ``_drained``: one drained slot per cycle, the lowest,
    on the stack from the next cycle."""
    from gpurf.sim.sm.regless import ReglessSM, _Shard
    from gpurf.sim.sm.run import load_workload

    regless = ReglessSM(load_workload("saxpy")[1])
    shard = _Shard(0, 16)
    shard.drained, shard.time = [(5, 7), (5, 2), (6, 1)], 5
    pushed = []
    monkeypatch.setattr(ReglessSM, "_push",
                        lambda self, shard, slot, cycle: pushed.append((slot, cycle)))
    regless._decide(shard, 9)
    assert pushed == [(2, 6), (1, 7), (7, 8)]


def _draining(usage, writes, last):
    """The releases of a region whose instructions with a destination issued (cycles 0, 1,
    ...) with ``writes`` ``(cycle reported written, bank)``, its last instruction issued in
    cycle ``last``, as the capacity manager's ports report them (``port_cycle``)."""
    from types import SimpleNamespace

    from gpurf.sim.sm.regless import ReglessSM, _Shard, _WarpState
    from gpurf.sim.sm.run import load_workload

    regless = ReglessSM(load_workload("saxpy")[1])
    shard = _Shard(0, 16)
    regless.shards, regless.actions, regless.sequence = [shard], [], iter(range(99))
    warp = SimpleNamespace(slot=3, sub=SimpleNamespace(index=0), block=SimpleNamespace(id=0),
                           index=0)
    state = _WarpState(warp)
    state.usage = usage

    def issue(bank, is_last):
        return SimpleNamespace(slot=3, info=(state, bank is not None, bank or 0, is_last))

    for cycle, (_, bank) in enumerate(writes):
        regless.port_cycle(shard, cycle, issue(bank, False), None, None)
    for cycle, written in sorted([(at, (3, bank)) for at, bank in writes] + [(last, None)]):
        regless.port_cycle(shard, cycle, issue(None, True) if written is None else None,
                           written, None)
    return [(entry[0], *entry[3:]) for entry in sorted(regless.shards[0].releases)]


def test_a_draining_region_keeps_only_its_outstanding_lines():
    """Paper 5.1: while a region drains, "any other registers that were allocated to that
    region can be freed for other warps, but the pending register must stay allocated";
    as the golden capacity manager counts them, one line per outstanding write, in its
    instruction's first word's bank, freed the cycle after its ``written``. At the last
    issue (cycle 100) writes to banks 0 and 2 are outstanding (reported at 120 and 300),
    bank 1's was reported."""
    usage = (2, 1, 1, 0, 0, 0, 0, 1)
    releases = _draining(usage, [(120, 0), (90, 1), (300, 2)], 100)
    assert releases == [(101, (1, 1, 0, 0, 0, 0, 0, 1), False),
                        (121, (1, 0, 0, 0, 0, 0, 0, 0), False),
                        (301, (0, 0, 1, 0, 0, 0, 0, 0), False),
                        (301, (0,) * 8, True)]


def test_a_drained_region_releases_everything_at_once():
    usage = (2, 1, 1, 0, 0, 0, 0, 1)
    assert _draining(usage, [(90, 0)], 100) == [(101, usage, False), (101, (0,) * 8, True)]


def test_breakdown_module(capsys):
    from gpurf.sim.sm.regless_breakdown import COLUMNS, main

    assert main(["saxpy"]) == 0
    header, _, row = capsys.readouterr().out.splitlines()
    assert header.split(" | ")[1:3] == list(COLUMNS)[1:3] and row.startswith("| saxpy | ")
    assert main(["--config", "fast", "saxpy"]) == 2
    assert main(["nosuchkernel"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 2



def test_misspath_module(capsys):
    """saxpy keeps its registers in the OSU: no L1 read, no refill, no read outstanding
    (its invalidations still pass through the compressor)."""
    from gpurf.sim.sm.regless_misspath import COLUMNS, main

    assert main(["saxpy", "--config", "512"]) == 0
    header, _, row = capsys.readouterr().out.splitlines()
    assert header == "| " + " | ".join(COLUMNS) + " |"
    cells = dict(zip(COLUMNS, row.strip("| ").split(" | "), strict=True))
    assert cells["kernel"] == "saxpy" and cells["config"] == "512"
    assert cells["preload reads"] == cells["refills"] == "0"
    assert cells["L1_WAIT (%)"] == cells["compressor on L1 (%)"] == "0.0"
    assert main(["--config", "fast", "saxpy"]) == 2
    assert main(["nosuchkernel"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 2

# -- Table 1: the L1 and the compressor -------------------------------------------------
def test_register_lines_are_lru_sets():
    from gpurf.sim.sm.regless import _RegisterLines

    store = _RegisterLines(128 * 2 * 2, 2)          # 2 sets of 2 ways
    assert [store.lookup(line, True) for line in (0, 2, 0, 4, 0, 2)] == \
        [False, False, True, False, True, False]   # 4 evicts 2 (least recent), not 0
    assert not store.lookup(1, False) and not store.lookup(1, False)


def test_registers_sharing_the_data_l1_stay_correct():
    assert ReglessConfig.parse("256+sharedl1") == ReglessConfig(capacity=256, l1_bytes=0)
    with pytest.raises(ValueError):
        ReglessConfig(l1_bytes=1000)
    out = _check("srad", ReglessConfig(capacity=256, l1_bytes=0))
    assert out["preloads_l1"] + out["preloads_l2"] > 0


def test_an_invalidation_leaves_the_osu_line():
    """As the golden bank (an invalidation only fills its fetch register): the register's
    compressed copy goes, its OSU line stays until the ports give it to another register."""
    from types import SimpleNamespace

    from gpurf.sim.sm.regless import ReglessSM, _Line
    from gpurf.sim.sm.run import load_workload

    regless = ReglessSM(load_workload("saxpy")[1])
    state = SimpleNamespace(key=(0, 0))
    key = (state.key, 4)
    regless.lines = {key: _Line(np.zeros(32, np.uint32), 4)}
    regless.packed, regless.l1 = {key: np.zeros(32, np.uint32)}, {}
    regless._invalidate(state, 4)
    assert list(regless.lines) == [key] and not regless.packed
    assert regless.counts["invalidations"] == 1
