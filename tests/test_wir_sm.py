"""WIR in the golden SM (sim/sm/wir.py): kernels run under every configuration with every
register access checked; false reuse, false sharing and reference leaks are caught.

Randomized choices (H3 matrix seeds, the kernel and configuration) take the session seed
(``--seed`` / ``GPURF_SEED``) and print it.
"""

import random

import numpy as np
import pytest

from gpurf.golden.wir.register_pool import ProtocolError
from gpurf.sim.reproduce.wir import suite
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.run import load_workload, run_kernel
from gpurf.sim.sm.values import ValueMismatchError
from gpurf.sim.sm.wir import (
    CONFIGS,
    Eligible,
    WirConfig,
    WirStorage,
    eligibility,
    energy,
    run_wir,
    wir_sm_config,
)

FAST_KERNELS = ("vecadd", "reduction", "fma_subcore")
ALL_KERNELS = tuple(suite())


def _run(kernel, config: WirConfig, storage_class=WirStorage, size="test"):
    _, program, _ = load_workload(kernel)
    storage = storage_class(program, config)
    sm = wir_sm_config(load_config(preset="fermi"), config)
    run = run_kernel(kernel, size, timing=sm, values=storage)
    return run, storage


@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("kernel", FAST_KERNELS)
def test_kernels_run_with_reuse_and_equal_numpy(kernel, name):
    run, storage = _run(kernel, CONFIGS[name])
    assert run.passed, run.mismatches()
    storage.check_references()
    stats = storage.summary()
    assert stats["results"] > 0 and stats["issued"] == run.stats["warp_instructions"]


@pytest.mark.paper_size
@pytest.mark.parametrize("name", list(CONFIGS))
@pytest.mark.parametrize("kernel", ALL_KERNELS)
def test_every_kernel_under_every_configuration(kernel, name):
    run, storage = _run(kernel, CONFIGS[name])
    assert run.passed, run.mismatches()
    storage.check_references()


def test_random_hash_matrices_keep_results(seed):
    rng = random.Random(seed)
    kernel, name = rng.choice(FAST_KERNELS), rng.choice(list(CONFIGS))
    matrix_seed = rng.randrange(2**31)
    print(f"seed {seed}: {kernel} under {name} with H3 seed {matrix_seed}")
    run, storage = _run(kernel, WirConfig(**{**CONFIGS[name].__dict__, "seed": matrix_seed}))
    assert run.passed
    storage.check_references()


class _TrustingStorage(WirStorage):
    """Broken: a constant hash and no verify-read, so every result shares one register."""

    def signature(self, values):
        return 0

    def verify(self, preg, values):
        return True


class _TaglessStorage(WirStorage):
    """Broken: the reuse buffer's tag loses the operands, so instructions of one opcode
    reuse each other's results."""

    def lookup_fields(self, key, rule, mapping, pc):
        fields = super().lookup_fields(key, rule, mapping, pc)
        return None if fields is None else [0, 0, 0]


class _LeakyStorage(WirStorage):
    """Broken: a retire forgets to release the old mapping's register."""

    def _retire(self, key, reg, preg, *, pinned):
        mapping = self.rename.setdefault(key, {})
        mapping.pop(reg, None)
        super()._retire(key, reg, preg, pinned=pinned)


def test_false_sharing_is_caught():
    """Caught where the shared register is next read, or where a reuse hit delivers it."""
    with pytest.raises(ValueMismatchError, match=r"lane\(s\) differ"):
        _run("vecadd", CONFIGS["R"], _TrustingStorage)


def test_false_reuse_is_caught_at_its_result():
    with pytest.raises(ValueMismatchError, match="result in"):
        _run("reduction", CONFIGS["R"], _TaglessStorage)


def test_leaked_reference_is_caught():
    _, storage = _run("vecadd", CONFIGS["R"], _LeakyStorage)
    with pytest.raises(ProtocolError, match=r"leaked|differ"):
        storage.check_references()


def test_verify_catches_hash_collisions():
    """A constant hash makes every VSB lookup hit; the verify-read refuses the wrong
    ones, so results stay right and failures are counted."""

    class Colliding(WirStorage):
        def signature(self, values):
            return 0

    run, storage = _run("vecadd", CONFIGS["RLPV"], Colliding)
    assert run.passed
    storage.check_references()
    assert storage.summary()["verify_failures"] > 0


def test_divergent_writes_pin_and_copy_the_other_lanes():
    run, storage = _run("divergent", CONFIGS["R"])
    assert run.passed
    storage.check_references()
    assert storage.summary()["dummy_movs"] > 0


def test_capped_policy_stays_under_its_cap():
    class Watched(WirStorage):
        peak_over = 0

        def allocate(self):
            preg = super().allocate()
            Watched.peak_over = max(Watched.peak_over, self.in_use() - self._cap())
            return preg

    small = WirConfig(**{**CONFIGS["RLPVc"].__dict__, "pregs": 1024})
    run, storage = _run("matmul", small, Watched)
    assert run.passed
    storage.check_references()
    assert Watched.peak_over <= 0


def test_low_register_mode_evicts_and_keeps_results():
    """Low-register mode from the start (``low_water`` near the pool): misses evict the
    VSB and reuse-buffer entries they would have written."""
    tiny = WirConfig(**{**CONFIGS["RLPV"].__dict__, "low_water": 1000})
    run, storage = _run("reduction", tiny)
    assert run.passed
    storage.check_references()
    assert storage.summary()["evictions"] > 0


def test_reuse_hits_skip_collector_and_units():
    _, storage = _run("matmul", CONFIGS["RLPV"])
    stats = storage.summary()
    assert stats["reused"] > 0
    assert stats["reads"] < stats["base_rf_reads"]


def test_pending_retry_only_with_its_queue():
    _, without = _run("matmul", CONFIGS["RL"])
    _, with_queue = _run("matmul", CONFIGS["RLP"])
    assert without.summary()["retry_hits"] == 0
    assert with_queue.summary()["retry_hits"] > 0


def test_load_reuse_needs_the_l_configurations():
    _, storage = _run("vecadd", CONFIGS["RPV"])
    program = storage.program
    loads = [pc for pc, ins in enumerate(program.code)
             if ins.base == "ld" and ins.space in ("global", "shared")]
    assert loads and all(isinstance(storage.eligible[pc], Eligible) for pc in loads)
    assert storage.summary()["bypassed"] >= len(loads)


@pytest.mark.parametrize("text, why", [
    ("mov.u32 %r1, %tid.x;", "special"),
    ("@%p1 add.s32 %r1, %r2, 1;", "guarded"),
    ("selp.b32 %r1, %r2, %r3, %p1;", "predicate"),
    ("st.global.u32 [%rd1], %r2;", "side effect"),
    ("add.s64 %rd2, %rd1, 4;", "32-bit destination"),
])
def test_uneligible_instructions_bypass(text, why):
    program = _program_of(text)
    rule = eligibility(program)[-3]
    assert isinstance(rule, str) and why in rule, rule


def test_eligible_fields_and_codes():
    program = _program_of("add.s32 %r1, %r2, 7;")
    rule = eligibility(program)[-3]
    assert isinstance(rule, Eligible)
    assert [kind for kind, _ in rule.fields] == ["word", "imm"]
    assert rule.opcode.regs == 0b01


def test_energy_saves_what_reuse_skips():
    stats = run_wir("matmul", "RLPV", baseline=False)
    e = stats["energy"]
    assert e["added_pj"] > 0
    assert e["wir_rf_pj"] < e["baseline_rf_pj"]
    quiet = dict(stats, hits=0, retry_hits=0)
    assert energy(quiet, CONFIGS["RLPV"])["added_pj"] == e["added_pj"]


def test_run_wir_reports_speedup_and_passes():
    stats = run_wir("vecadd", "RLPV")
    assert stats["passed"]
    assert stats["speedup"] == stats["baseline_cycles"] / stats["cycles"]
    assert 0 <= stats["reuse_rate"] <= 1


def test_unknown_configuration():
    with pytest.raises(KeyError, match="known: R, RL"):
        run_wir("vecadd", "X")


_PTX = """
.version 8.0
.target sm_80
.address_size 64
.visible .entry k(.param .u64 k_param_0)
{{
    .shared .align 4 .b8 k_shared[64];
    .reg .pred %p<3>;
    .reg .b32 %r<5>;
    .reg .b64 %rd<4>;
    ld.param.u64 %rd1, [k_param_0];
    mov.u32 %r2, 3;
    mov.u32 %r3, 5;
    setp.eq.s32 %p1, %r2, 3;
    {line}
    st.global.u32 [%rd1], %r1;
    ret;
}}
"""


def _program_of(line: str):
    from gpurf.sim.ptx.parser import parse_ptx
    from gpurf.sim.sm.program import Program

    module = parse_ptx(_PTX.format(line=line), "t.ptx")
    return Program(module.kernels["k"])


def test_values_are_1024_bit_signatures():
    program = _program_of("add.s32 %r1, %r2, 7;")
    storage = WirStorage(program, CONFIGS["R"])
    a = np.arange(32, dtype=np.uint32)
    b = a.copy()
    b[31] ^= 1
    assert storage.signature(a) != storage.signature(b)


def test_table_iii_energies_are_the_papers():
    from gpurf.sim.reproduce.wir import PJ_KEYS
    from gpurf.sim.sm.wir import TABLE_III_PJ
    from gpurf.synth.papers import paper_values

    papers = paper_values("wir")
    assert {n: papers[PJ_KEYS[n]].value for n in TABLE_III_PJ} == TABLE_III_PJ


def test_reproduce_on_one_kernel_follows_the_schema(tmp_path):
    from gpurf.sim.reproduce import reproduce, write_results
    from gpurf.sim.reproduce.schema import problems

    result = reproduce("wir", "test", kernels=["vecadd"])
    document = write_results(result, tmp_path)
    assert problems(document) == []
    names = [t["name"] for t in document["tables"]]
    assert names[:3] == ["means", "reuse", "speedup"]
    keys = {c["key"] for c in document["comparisons"]}
    assert {"reuse_rate_rlpv", "sm_energy_saving_rlpv"} <= keys
    assert (tmp_path / "reuse.svg").is_file()


def test_a_symbol_and_an_equal_immediate_get_different_codes():
    """``mov.u32 %r4, k_shared`` (symbol index 1) must not reuse ``mov.u32 %r1, 1``."""
    program = _program_of("mov.u32 %r1, 1;\n    mov.u32 %r4, k_shared;")
    first, second = eligibility(program)[-4], eligibility(program)[-3]
    assert first.fields == (("imm", 1),) and second.fields == (("sym", 1),)
    assert first.opcode != second.opcode


def test_the_sms_hash_is_the_golden_h3(seed):
    from gpurf.golden.wir.h3_hash import h3

    rng = np.random.default_rng(seed)
    program = _program_of("add.s32 %r1, %r2, 7;")
    storage = WirStorage(program, WirConfig("t", seed=int(rng.integers(2**31))))
    for _ in range(50):
        values = rng.integers(0, 2**32, 32, dtype=np.uint32)
        value = int.from_bytes(values.astype("<u4").tobytes(), "little")
        assert storage.signature(values) == h3(value, storage.masks), f"seed {seed}"


def test_references_hold_throughout_a_run():
    stats = run_wir("reduction", "RLPVc", baseline=False, check_every=50)
    assert stats["passed"] and stats["reference_checks"] >= stats["results"] // 50


def test_vsb_ports_recorded_in_a_kernel_run_replay_on_the_golden_block(tmp_path):
    """The trace format of docs/traces.md; ``gpurf replay`` runs the same file on the RTL
    (docs/wir.md gives the figure)."""
    from gpurf.golden.trace import Trace
    from gpurf.golden.wir.value_signature_buffer import ValueSignatureBuffer

    _, program, _ = load_workload("vecadd")
    storage = WirStorage(program, CONFIGS["RLPV"])
    path = tmp_path / "vsb.trace"
    storage.record_vsb(path, {"kind": "kernel", "kernel": "vecadd"})
    config = wir_sm_config(load_config(preset="fermi"), CONFIGS["RLPV"])
    assert run_kernel("vecadd", "test", timing=config, values=storage).passed
    cycles = storage.close_trace()
    trace = Trace(path)
    trace.check_block("wir.value_signature_buffer")
    stats = storage.summary()
    assert trace.cycles == cycles >= 2 * stats["hashes"] + stats["vsb_writes"]
    model = ValueSignatureBuffer(**trace.params)
    for cycle, inputs, outputs in trace.rows():
        got = model.step(inputs)
        assert all(got[k] == v for k, v in outputs.items() if v is not None), cycle


def test_store_flags_and_barrier_counts():
    """A warp's store flags its space until its next barrier; each barrier counts."""
    from gpurf.golden.wir.load_filter import load_answer
    from gpurf.hw.wir.layouts import LoadKind

    program = _program_of("bar.sync 0;\n    st.shared.u32 [%rd1], %r2;")
    storage = WirStorage(program, CONFIGS["RLPV"])
    code = [ins.base for ins in program.code]
    bar, store_shared = code.index("bar"), len(code) - 3
    store_global = len(code) - 2
    key = ("block", 0)
    storage._memory_events(key, store_global)
    storage._memory_events(key, store_shared)
    assert storage.flags[key] == {"global", "shared"}
    for kind in (LoadKind.GLOBAL.value, LoadKind.SHARED.value):
        assert not load_answer(kind, storage.flags[key], 0, 0, saturated=31,
                               null_tbid=15)["reuse"]
    storage._memory_events(key, bar)
    assert key not in storage.flags and storage.barriers[key] == 1
