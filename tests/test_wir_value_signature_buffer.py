# amaranth: UnusedElaboratable=no
"""Value signature buffer: the hash-width rule, the paper's 11,008 storage bits, golden rules and
the formal proof of its lookups and reference accounting."""

import pytest

from gpurf.hw.registry import get_block
from gpurf.hw.wir.configs import ValueSignatureBufferConfig
from gpurf.hw.wir.value_signature_buffer import ValueSignatureBuffer
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.wir.formal_value_signature_buffer import ValueSignatureBufferFormal
from gpurf.tb.wir.mutants import ReplacedNotReleased


def golden(**params):
    return get_block("wir.value_signature_buffer").golden(params)


@pytest.mark.parametrize("build", [ValueSignatureBuffer, golden], ids=["hw", "golden"])
def test_hash_width_covers_the_index(build):
    with pytest.raises(ValueError, match=r"^hash_width must be at least log2\(entries\) = "
                                         r"8, not 7$"):
        build(hash_width=7)


def test_default_widths():
    config = ValueSignatureBufferConfig(**get_block("wir.value_signature_buffer").defaults)
    assert (config.entries, config.hash_width, config.pregs) == (256, 32, 1024)
    assert (config.index_bits, config.preg_bits, config.entry_bits) == (8, 10, 43)
    assert config.entry_layout.size == 42
    assert config.storage_bits == 11008


def test_storage_is_the_papers_256_x_43_bits():
    """Paper VII-E: 256 entries x 43 bits = 11,008 bits: {hash, preg} in one unmapped
    memory (256 x 42) and the 256 valid bits in flip-flops. The other flip-flops are the
    lookup's result register: result valid, the looked-up hash (32) and the entry's valid."""
    report = storage(get_block("wir.value_signature_buffer"))
    assert report.memories == 1
    assert report.memory_bits == 256 * 42
    assert report.ff_bits == 256 + 1 + 32 + 1
    assert report.memory_bits + 256 == 11008


def _step(model, **ins):
    inputs = {"lookup__valid": 0, "lookup__payload": 0, "install__valid": 0,
              "install__payload": 0, "evict__valid": 0, "evict__payload": 0, **ins}
    return model.step(inputs)


def test_golden_hit_displace_and_divergent():
    model = golden(entries=4, hash_width=4, pregs=16)
    config = model.config

    def install(h, p, divergent=0):
        return config.codecs["install__payload"].pack(
            {"hash": h, "preg": p, "divergent": divergent})

    def event(p):
        return model.event(p)

    out = _step(model, install__valid=1, install__payload=install(0x5, 3))
    assert (out["ref_inc"], out["ref_dec"]) == (event(3), event(None))
    _step(model, lookup__valid=1, lookup__payload=0x5)
    out = _step(model, lookup__valid=1, lookup__payload=0xD)
    assert config.codecs["result__payload"].unpack(out["result__payload"]) == (1, 3)
    out = _step(model, install__valid=1, install__payload=install(0xD, 7, 1))
    assert out["result__payload"] == 0
    assert (out["ref_inc"], out["ref_dec"]) == (event(None), event(None))
    out = _step(model, install__valid=1, install__payload=install(0xD, 7))
    assert (out["ref_inc"], out["ref_dec"]) == (event(7), event(3))
    out = _step(model, evict__valid=1, evict__payload=1, install__valid=1,
                install__payload=install(0x2, 9))
    assert out["evict__ready"] == 0 and out["ref_dec"] == event(None)
    out = _step(model, evict__valid=1, evict__payload=1)
    assert out["evict__ready"] == 1 and out["ref_dec"] == event(7)


pytestmark_formal = pytest.mark.skipif(missing_solver() is not None,
                                       reason=str(missing_solver()))


@pytestmark_formal
@pytest.mark.parametrize("params", [{}, {"entries": 2, "hash_width": 2, "pregs": 3}],
                         ids=["small", "e2-p3"])
def test_formal_lookup_events_and_no_leak(params):
    """k-induction, depth 4. ``small`` (``formal_value_signature_buffer.SMALL``): 4
    entries, 3-bit hashes, 4 registers; ``e2-p3``: 2 entries, 2-bit hashes, 3 registers.
    A hit implies a valid entry with an equal hash; lookups, events and evict readiness
    follow the spec; per register, increments minus decrements == entries holding it."""
    name = "vsb_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(ValueSignatureBufferFormal(**params), name=name, depth=4, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 5, on ``formal_value_signature_buffer.SMALL``: every event the
    harness claims (hit, replacement, eviction) is reached from reset under its assumptions."""
    result = prove(ValueSignatureBufferFormal(),
                   name="value_signature_buffer_cover", depth=5, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 4 (the base case of the ``small`` k-induction of
    :func:`test_formal_lookup_events_and_no_leak`), fails on ``mutants.ReplacedNotReleased`` (a
    replaced entry's register not released)."""
    result = prove(ValueSignatureBufferFormal(block=ReplacedNotReleased),
                   name="value_signature_buffer_mutant", depth=4, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
