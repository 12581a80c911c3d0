# amaranth: UnusedElaboratable=no
"""The older RegLess harnesses (``osu_bank``, ``capacity_manager``): their covers reached,
their hand-made mutants (:mod:`gpurf.tb.regless.line_mutants`) killed, and the capacity
manager's k-induction."""

import pytest

from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.regless.formal_capacity_manager import CapacityManagerFormal
from gpurf.tb.regless.formal_osu_bank import OsuBankFormal
from gpurf.tb.regless.line_mutants import (
    AcksCountedOnce,
    BarrierIgnored,
    OutstandingIgnored,
    WriteNotMarked,
)

pytestmark = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))

CM_PROOF = {"lines": 2, "regs": 2, "max_entries": 2}
"""The capacity manager's BMC 20 configuration (``tests/test_regless_capacity_manager.py``):
2 warps, 2 banks x 1 line, 2 registers, regions of up to 2 entries."""


def test_osu_bank_covers_reached():
    """Cover, depth 8, on ``formal_osu_bank.SMALL``: an eviction, a line chosen for one, a
    clean line reused, a read of an unsaved value, a fill, an unsaved value erased."""
    result = prove(OsuBankFormal(), name="osu_bank_cover", depth=8, mode="cover")
    assert result.passed, (result.unreached, result.log_tail)


def test_osu_bank_kills_mutant():
    """BMC, depth 4 (the k-induction depth of the bank's proof): fails on
    ``WriteNotMarked`` (a write leaves its line unmarked, so its value can be dropped)."""
    result = prove(OsuBankFormal(block=WriteNotMarked), name="osu_bank_mutant", depth=4,
                   mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


@pytest.mark.parametrize("params", [CM_PROOF, {**CM_PROOF, "warps": 3, "max_entries": 3}],
                         ids=["w2", "w3"])
def test_capacity_manager_k_induction(params):
    """k-induction, depth 2, with one line per bank (each queue's entry visible on its
    ``preload`` output, so the harness can tie queued entries to the warps' counts): free-line
    conservation, activation only after every entry was acknowledged, the stack; at 2 warps
    and at 3 warps with regions of up to 3 entries."""
    name = "capacity_manager_kind_" + "_".join(f"{k}{v}" for k, v in params.items())
    result = prove(CapacityManagerFormal(**params), name=name, depth=2, mode="prove")
    assert result.passed, result.log_tail


def test_capacity_manager_covers_reached():
    """Cover, depth 6, at the BMC 20 configuration: a warp activated after its entries were
    acknowledged, a header that does not fit, an entry waiting for queue room, a late write
    of a DRAINING warp, a drained warp, a drained warp held at a barrier, an exited warp."""
    result = prove(CapacityManagerFormal(**CM_PROOF), name="capacity_manager_cover",
                   depth=6, mode="cover")
    assert result.passed, (result.unreached, result.log_tail)


@pytest.mark.parametrize("mutant", [OutstandingIgnored, AcksCountedOnce, BarrierIgnored],
                         ids=lambda mutant: mutant.__name__)
def test_capacity_manager_kills_mutant(mutant):
    """BMC, depth 8, at the BMC 20 configuration: fails on ``OutstandingIgnored`` (the
    last issue frees lines still owed a write), ``AcksCountedOnce`` (two banks'
    acknowledgements of one warp in a cycle count once) and ``BarrierIgnored`` (a drained
    warp pushed while a barrier holds it)."""
    result = prove(CapacityManagerFormal(block=mutant, **CM_PROOF),
                   name=f"capacity_manager_{mutant.__name__}", depth=8, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


@pytest.mark.slow_formal
@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_capacity_manager_pdr_deeper_queues():
    """ABC's PDR (``engine="abc pdr"``) proves the harness's invariants at
    ``formal_capacity_manager.SMALL``: 2 warps, 2 banks x 2 lines (queues two deep, whose
    entries behind the head k-induction cannot see), 4 registers, regions of up to 4
    entries. 441 s wall / 52 s CPU with the native ABC at load 25 (docs/reliability.md).
    Not vacuous: every cover is reached at this configuration within 8 cycles."""
    result = prove(CapacityManagerFormal(), name="capacity_manager_pdr", mode="prove",
                   engine="abc pdr", timeout=3600)
    assert result.passed, result.log_tail
    covers = prove(CapacityManagerFormal(), name="capacity_manager_small_cover", depth=8,
                   mode="cover")
    assert covers.passed, (covers.unreached, covers.log_tail)
