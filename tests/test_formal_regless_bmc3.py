"""BMC 20 with ABC's ``bmc3`` for ``regless.shard`` at its proof configuration
``formal_shard.SMALL`` (2 banks x 2 lines, 2 warps x 4 registers, 4 x 4-bit lanes, 2
compressed lines, two instructions per cycle, two slots in the transfer unit's L1 stage;
smtbmc reached step 14 there with one slot, and BMC 20 only at
``TINY``, 421 s, ``slow_formal``) and ``regless.compressor`` at ``formal_compressor.SMALL``
(smtbmc's BMC 20 took 2,531 s, ``slow_formal``)."""

import pytest

from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.regless import mutants
from gpurf.tb.regless.formal_compressor import CompressorFormal
from gpurf.tb.regless.formal_shard import ShardFormal

needs_solver = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))


@needs_solver
def test_shard_bmc_20_at_small():
    """One L1 user at a time, the L1 stream rule, fetch before writeback, no preload miss
    past its register's eviction, the transfer unit's stages and its L1 ring (2 slots since
    session 15), fills in answer order, for 20 cycles (214.6 s wall at load average 8-11
    with 2 slots; 24.5 s wall, 11.6 s CPU at load about 5 with one, docs/reliability.md)."""
    result = prove(ShardFormal(), name="shard_small_bmc20_abc", depth=20, mode="bmc",
                   engine="abc bmc3")
    assert result.passed, result.log_tail


@needs_solver
@pytest.mark.parametrize(("mutant", "step"), [("WritebacksFirst", 5), ("AnswerOvertakes", 8)])
def test_bmc3_kills_the_shard_mutants_at_smtbmc_steps(mutant, step):
    """bmc3 finds the shard mutants' counterexamples at the steps smtbmc finds them
    (``tests/test_regless_shard.py``): its depth 20 is the same check."""
    result = prove(ShardFormal(block=getattr(mutants, mutant)), name=f"shard_{mutant}_abc",
                   depth=10, mode="bmc", engine="abc bmc3")
    assert result.status == "FAIL" and result.failed_step == step, result.log_tail


@needs_solver
def test_compressor_bmc_20():
    """A preload returns the value last evicted, no changed line dropped without a
    write-back, distinct tags, one request at a time, for 20 cycles (18.0 s wall, 6.0 s CPU
    at load about 5); bmc3 kills ``TakesBeforeAnswer`` at smtbmc's step 2."""
    result = prove(CompressorFormal(), name="compressor_bmc20_abc", depth=20, mode="bmc",
                   engine="abc bmc3")
    assert result.passed, result.log_tail
    mutant = prove(CompressorFormal(block=mutants.TakesBeforeAnswer),
                   name="compressor_mutant_abc", depth=6, mode="bmc", engine="abc bmc3")
    assert mutant.status == "FAIL" and mutant.failed_step == 2, mutant.log_tail
