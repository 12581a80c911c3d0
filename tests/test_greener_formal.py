"""SymbiYosys proofs of the GReEneR blocks' invariants (small configurations, named per test)."""

import pytest

from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.greener.formal_correction_table import CorrectionTableFormal
from gpurf.tb.greener.formal_power_controller import PowerControllerFormal
from gpurf.tb.greener.formal_scoreboard_ext import ScoreboardExtFormal

pytestmark = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))


@pytest.mark.parametrize("params", [
    {},
    {"warps": 3, "entries": 3, "entry_regs": 2, "regs": 3, "pc_bits": 2},
], ids=["small", "w3-e3"])
def test_correction_table_keeps_on_exactly_for_other_in_flight_pcs(params):
    """k-induction, depth 8 (the base case covers reset, the clear window and a few
    cycles). ``small`` (``formal_correction_table.SMALL``): 2 warps x 2 entries x 2
    registers per entry, 4 registers, 2-bit PCs, 2 query ports; ``w3-e3``: 3 warps x 3
    entries x 2 registers per entry, 3 registers, 2-bit PCs. Every query answers keep_on
    iff another in-flight PC of the warp uses the register; inserted entries stay until
    removed; a full warp drops inserts; not ready for exactly ``warps`` cycles."""
    name = "correction_table_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(CorrectionTableFormal(**params), name=name, depth=8, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.parametrize("params", [
    {},
    {"warps": 3, "regs": 3, "sources": 3, "dests": 1, "check_ports": 1, "release_ports": 2},
], ids=["small", "w3-s3"])
def test_scoreboard_ext_reservations_until_release(params):
    """k-induction, depth 8. ``small`` (``formal_scoreboard_ext.SMALL``): 2 warps x 2
    slots, 4 registers, 2 destinations, 2 check and 2 release ports; ``w3-s3``: 3 warps x
    3 slots, 3 registers, 1 destination, 1 check and 2 release ports. A reserved register
    is reported until released, a released one is not, full/ready follow the free slots,
    no slot is lost."""
    name = "scoreboard_ext_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(ScoreboardExtFormal(**params), name=name, depth=8, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.parametrize("params", [
    {"regs": 2},
    {"regs": 2, "policy": "sleep_reg"},
], ids=["greener", "sleep_reg"])
def test_power_controller_ready_wakeup_and_population(params):
    """k-induction, depth 6, on ``formal_power_controller.SMALL`` with 2 registers per warp:
    2 warps x 2 registers, 1 source + 1 destination port, SLEEP->ON 2 and OFF->ON 3
    cycles, every input free. A warp is ready exactly when every register its head names
    is ON with its wake-up over (so never with a non-ON operand); a wake-up ends exactly
    ``latency`` cycles after it starts unless a set moves the register out of ON; the
    populations sum to ``warps x regs`` and equal the state counts."""
    name = "power_controller_" + "_".join(f"{k}{v}" for k, v in params.items())
    result = prove(PowerControllerFormal(**params), name=name, depth=6, mode="prove")
    assert result.passed, result.log_tail
