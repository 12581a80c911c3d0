# amaranth: UnusedElaboratable=no
"""``wir.register_pool``'s ledger at ``wir.backend``'s pool configuration
(``tb/wir/formal_pool_ledger.py``): the leaders distinct by ABC's ``pdr``, the one-cycle
lemmas and the ledger by induction steps (``prove_step``), and a mutant the ledger kills."""

import pytest
from amaranth.back import rtlil

from gpurf.hw.wir.configs import RegisterPoolConfig
from gpurf.sim.formal import missing_solver, prove, prove_step
from gpurf.tb.wir.formal_backend import BackendFormal
from gpurf.tb.wir.formal_pool_ledger import CONFIG, DISTINCT, LEDGER, LEMMAS, PoolLedgerFormal
from gpurf.tb.wir.mutants import LastIncrementLost

needs_solver = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))

FAST_LEMMAS = (r"stored_0", r"unled_0", r"leads_0", r"leads_24")
"""The lemmas whose steps run in the default suite (the rest: ``slow_formal``)."""


@pytest.fixture(scope="module")
def text():
    return rtlil.convert(PoolLedgerFormal(), name="top", ports=[], emit_src=False)


def test_config_is_the_backends():
    assert BackendFormal().dut.back.pool.config == RegisterPoolConfig(**CONFIG)


@needs_solver
def test_leaders_distinct(text):
    """ABC ``pdr``: the 300 ``distinct_s_t`` (2-9 s, session 21)."""
    result = prove(text, name="wir_pool_ledger_distinct", mode="prove", engine="abc pdr",
                   drop=LEMMAS + LEDGER, timeout=900)
    assert result.passed and len(result.asserted) == 300, result.log_tail


def lemma_steps(text, only, name):
    """The steps of the lemmas ``only`` matches, the leaders' distinctness assumed:
    ``stored_r`` by ABC's ``pdr`` (yices had no verdict in 300 s), the others by
    k-induction (yices)."""
    stored = tuple(p for p in only if p.startswith("stored"))
    rest = tuple(p for p in only if not p.startswith("stored"))
    results = []
    for engine, chosen in (("abc pdr", stored), ("smtbmc yices", rest)):
        if chosen:
            results += prove_step(text, name=f"{name}_{engine.split()[-1]}", targets=LEMMAS,
                                  assume=DISTINCT, only=chosen, engine=engine, timeout=900,
                                  jobs=2)
    return results


@needs_solver
def test_lemma_steps_some(text):
    """Four of the 33 lemma steps (7-23 s each, session 21)."""
    results = lemma_steps(text, FAST_LEMMAS, "wir_pool_lemma")
    assert len(results) == len(FAST_LEMMAS)
    assert all(r.passed for r in results), [r.log_tail for r in results if not r.passed]


@needs_solver
@pytest.mark.slow_formal
def test_lemma_steps_all(text):
    """Every lemma step: ``stored_0..3`` (``pdr``, 15-23 s), ``unled_0..3`` and
    ``leads_0..24`` (7-10 s each; session 21, about 5 minutes in all on one core)."""
    results = lemma_steps(text, LEMMAS, "wir_pool_lemma_all")
    assert len(results) == 4 + 4 + 25
    assert all(r.passed for r in results), [r.log_tail for r in results if not r.passed]


@needs_solver
def test_ledger_follows_from_the_lemmas(text):
    """``ledger_0..3`` with the lemmas and the leaders' distinctness assumed (7-9 s each):
    with :func:`test_leaders_distinct` and :func:`test_lemma_steps_all`, the ledger holds
    always (``prove_step``'s rule: the lemmas' steps assumed only each other)."""
    results = prove_step(text, name="wir_pool_ledger", targets=LEDGER,
                         assume=DISTINCT + LEMMAS, timeout=900, jobs=2)
    assert [r.asserted for r in results] == [(f"ledger_{r}",) for r in range(4)]
    assert all(r.passed for r in results), [r.log_tail for r in results if not r.passed]


@needs_solver
def test_ledger_kills_a_lost_increment():
    """BMC, depth 4: ``mutants.LastIncrementLost`` (the merge never counts the last
    increment port) breaks the ledger and its lemmas."""
    result = prove(PoolLedgerFormal(block=LastIncrementLost), name="wir_pool_ledger_mutant",
                   depth=4, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
