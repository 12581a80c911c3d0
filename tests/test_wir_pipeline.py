# amaranth: UnusedElaboratable=no
"""``wir.pipeline``: parameters, the golden model's reference check (a broken model
caught), the no-leak proof with its covers and the mutants it kills."""

import pytest

from gpurf.golden.wir.pipeline import LeakError
from gpurf.golden.wir.pipeline import Pipeline as GoldenPipeline
from gpurf.golden.wir.register_pool import ProtocolError
from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import PipelineConfig
from gpurf.hw.wir.layouts import Outcome
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.harness import run_golden
from gpurf.tb.wir import mutants
from gpurf.tb.wir.formal_pipeline import PipelineFormal
from gpurf.tb.wir.test_pipeline import random_stream

SMALL = get_block("wir.pipeline").test_params[0]
needs_solver = pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))


def test_parts_configured_from_the_parameters():
    config = PipelineConfig(**SMALL)
    assert (config.alloc.entries, config.alloc.pregs, config.pool.pregs) == (2, 4, 4)
    assert (config.pool.inc_ports, config.pool.dec_ports, config.pool.query_ports) == (3, 4, 2)
    assert config.alloc.ticket_bits == config.ticket_layout.size
    assert (config.cache.entries, config.cache.invalidate_ports, config.cache.lookup_port) == \
        (2, 1, False)
    assert PipelineConfig(**{**SMALL, "verify_cache": 0}).cache is None


@pytest.mark.parametrize(("key", "value"), [("pregs", 6), ("entries", 3), ("hash_width", 0),
                                            ("low_water", 4), ("verify_cache", 1),
                                            ("verify_cache", 65)])
def test_bad_parameters_rejected(key, value):
    with pytest.raises(ValueError):
        PipelineConfig(**{**SMALL, key: value})


class _ReleasesTwice(GoldenPipeline):
    """A broken model: an unmap releases the mapping's register but leaves it mapped."""

    def _remap(self, row, entry):
        released = super()._remap(row, entry)
        if not entry[1] and released is not None:
            self.mapping[row] = (released, 1, entry[2])
        return released


class _CountedTwice(GoldenPipeline):
    """A broken model: a shared register gets a second +1 (the hit's and the mapping's,
    with no release of the hit's: the issue's "counted twice, released once")."""

    def _retire(self, decision):
        inc, dec = super()._retire(decision)
        if inc is not None:
            self.pool.counts[inc] += 1
        return inc, dec


@pytest.mark.parametrize("broken", [_ReleasesTwice, _CountedTwice])
def test_reference_check_catches_broken_model(broken, seed):
    """The per-cycle recount (``check_references``) stops a model that counts wrong."""
    print(f"seed {seed}")
    with pytest.raises((LeakError, ProtocolError)):
        run_golden(broken(**SMALL), random_stream, SMALL, seed, 3000)


def test_golden_random_stream_every_outcome(seed):
    """3,000 random cycles at the small configuration: every outcome retires, the
    references are recounted every cycle."""
    print(f"seed {seed}")
    model = GoldenPipeline(**SMALL)
    seen = set()
    step = model.step

    def observe(inputs):
        outputs = step(inputs)
        if outputs["retired__valid"]:
            payload = model.ports["retired__payload"].unpack(outputs["retired__payload"])
            seen.add(Outcome(payload.outcome))
        return outputs

    model.step = observe
    cycles = run_golden(model, random_stream, SMALL, seed, 3000)
    assert model.checks == cycles
    assert seen == set(Outcome), seen


def _outputs(params, seed, model=GoldenPipeline, cycles=3000):
    """Every output of ``model`` at ``params`` in each cycle of the random stream (seed
    ``seed``)."""
    model = model(**params)
    seen = []
    step = model.step

    def observe(inputs):
        outputs = step(inputs)
        seen.append(dict(outputs))
        return outputs

    model.step = observe
    run_golden(model, random_stream, params, seed, cycles)
    return seen


class _CacheNotInvalidated(GoldenPipeline):
    """A broken model: a register-file write leaves the register's verify-cache line
    valid (the golden twin of ``mutants.CacheNotInvalidated``)."""

    def _cache_edge(self, decision):
        if decision["fill"] is not None:
            self.cache.update(decision["fill"], set())


@pytest.mark.parametrize("model", [GoldenPipeline, _CacheNotInvalidated])
def test_verify_cache_saves_bank_reads_only(model, seed):
    """The same random stream with and without the verify cache: every output but
    ``verify_cached`` equal in every cycle (the cache changes no outcome), and some
    verify-reads answered by the cache; a cache that is not invalidated by writes changes
    an outcome."""
    print(f"seed {seed}")
    params = {**SMALL, "verify_cache": 2}
    banks = _outputs({**params, "verify_cache": 0}, seed)
    cached = _outputs(params, seed, model)
    differ = [cycle for cycle, (a, b) in enumerate(zip(banks, cached, strict=False))
              if {**a, "verify_cached": 0} != {**b, "verify_cached": 0}]
    differ += range(min(len(banks), len(cached)), max(len(banks), len(cached)))
    assert all(out["verify_cached"] == 0 for out in banks)
    hits = sum(out["verify_cached"] for out in cached)
    print(f"{hits} verify-reads answered by the cache, outputs differ in {len(differ)} cycles")
    if model is GoldenPipeline:
        assert not differ and hits
    else:
        assert differ


def test_verify_cache_answers_a_repeated_share():
    """Directed: one value retired into three logical registers in turn. The second
    retirement's verify-read misses the cache and fills it from the banks, the third hits
    it; a write of another value to the register would invalidate the line."""
    model = GoldenPipeline(**{**SMALL, "verify_cache": 2, "warps": 2})
    codec = model.ports["result__payload"]
    answered = []
    for warp, reg in ((0, 0), (0, 1), (1, 0)):
        outputs = model.step({**_idle(model), "result__valid": 1, "result__payload": codec.pack(
            {"warp": warp, "reg": reg, "value": [1, 2], "mask": 3})})
        for _ in range(2):
            outputs = model.step(_idle(model))
        answered.append(outputs["verify_cached"])
        model.step(_idle(model))
    assert answered == [0, 0, 1]
    (preg, _), = [line for line in model.cache.lines if line is not None]
    assert model.mapping[0][0] == preg


def test_same_value_shares_one_register():
    """Directed: a value retired into two logical registers maps both to one register
    with a count of 3 (two mappings and the VSB entry)."""
    model = GoldenPipeline(**SMALL)
    codec = model.ports["result__payload"]
    for reg in (0, 1):
        model.step({**_idle(model), "result__valid": 1, "result__payload": codec.pack(
            {"warp": 0, "reg": reg, "value": [1, 2], "mask": 3})})
        for _ in range(3):
            model.step(_idle(model))
    (first, _, _), (second, _, _) = model.mapping
    assert first == second and model.pool.counts[first] == 3


def _idle(model):
    """Every input port 0."""
    return dict.fromkeys(model.ports, 0)


@needs_solver
def test_formal_no_leak_bmc_20():
    """BMC, depth 20, on ``formal_pipeline.SMALL`` with ABC's ``bmc3`` (smtbmc reached
    step 9 of it in 9 minutes; bmc3 takes about 48 s wall, 14 s CPU, docs/reliability.md):
    every register free exactly once or referenced exactly as its holders count, every
    allocation served, every valid verify-cache line equal to its register's value, under
    the parts' proven invariants."""
    result = prove(PipelineFormal(), name="wir_pipeline_bmc20", depth=20, mode="bmc",
                   engine="abc bmc3")
    assert result.passed, result.log_tail


@needs_solver
def test_formal_covers_reached():
    """Cover mode, depth 10: every outcome (shared, allocated, verify failed, pinned,
    dummy MOV, reused), an install displacing an entry, a sweep eviction, a full pool, a
    low-register miss, a waiting result, a refused hold, an unmap and a share the verify
    cache answered are reached."""
    result = prove(PipelineFormal(), name="wir_pipeline_cover", depth=10, mode="cover")
    assert result.passed and set(result.reached) == set(result.covers), result.log_tail


@needs_solver
def test_formal_kills_stale_verify_cache():
    """BMC, depth 12, ABC's ``bmc3``, fails on a pipeline whose register-file writes do
    not invalidate the verify cache (``mutants.CacheNotInvalidated``): "every valid line
    holds its register's value" fails once a cached register is reallocated and
    rewritten."""
    result = prove(PipelineFormal(block=mutants.CacheNotInvalidated),
                   name="wir_pipeline_CacheNotInvalidated", depth=12, mode="bmc",
                   engine="abc bmc3")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


@needs_solver
@pytest.mark.parametrize("mutant", ["OldMappingKept", "StaleHitTrusted"])
def test_formal_kills_mutant(mutant):
    """BMC, depth 10, fails on each mutant: a retirement keeping the old mapping's
    reference (a leak), a VSB hit trusted although its entry was rewritten in the
    lookup's cycle (a +1 on a register that lost its last reference)."""
    result = prove(PipelineFormal(block=getattr(mutants, mutant)),
                   name=f"wir_pipeline_{mutant}", depth=10, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail



def test_kernel_traffic_recorded_replays_on_the_golden_block(tmp_path):
    """vecadd's register traffic through ``wir.pipeline`` (``run_wir(record_pipeline=)``):
    the trace names the block and RLPV's 8-entry verify cache, and a fresh golden model
    stepped with its inputs gives its outputs (the verify-reads the cache answered
    included) (``gpurf replay`` runs the same file on the RTL: docs/wir.md gives the
    figure)."""
    from gpurf.golden.trace import Trace
    from gpurf.sim.sm.wir import run_wir

    path = tmp_path / "pipeline.trace"
    stats = run_wir("vecadd", "RLPV", baseline=False, record_pipeline=str(path))
    assert stats["passed"] and stats["pipeline_outcomes"].get("ALLOCATED")
    trace = Trace(path)
    trace.check_block("wir.pipeline")
    assert trace.cycles == stats["pipeline_cycles"]
    assert trace.params["verify_cache"] == 8
    model = GoldenPipeline(**trace.params)
    cached = 0
    for cycle, inputs, outputs in trace.rows():
        got = model.step(inputs)
        assert all(got[k] == v for k, v in outputs.items() if v is not None), cycle
        cached += outputs["verify_cached"]
    assert model.checks == trace.cycles
    assert cached == stats["pipeline_verify_cached"]
