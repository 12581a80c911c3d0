# amaranth: UnusedElaboratable=no
"""``regless.capacity_manager``: parameters, widths, the golden model's rules (fit / no fit,
free-line arithmetic, drain release, exit, stack order) and the SymbiYosys proof of the
conservation, activation and stack invariants."""

import pytest

from gpurf.golden.regless.capacity_manager import Entry, done_word, fits, region_words
from gpurf.hw.registry import get_block
from gpurf.hw.regless.capacity_manager import CapacityManager
from gpurf.hw.regless.configs import CapacityManagerConfig
from gpurf.hw.regless.layouts import RegionWord, WarpState
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.regless.formal_capacity_manager import CapacityManagerFormal

SMALL = {"warps": 3, "banks": 2, "lines": 4, "regs": 4, "max_entries": 4}


def golden(**params):
    return get_block("regless.capacity_manager").golden(params)


BUILDS = pytest.mark.parametrize("build", [CapacityManager, golden], ids=["hw", "golden"])


@BUILDS
@pytest.mark.parametrize(("params", "message"), [
    ({"lines": 12}, r"^lines must be a multiple of banks \(8\), not 12$"),
    ({"lines": 4096}, r"^lines must be an integer in 1\.\.256, not 512$"),
], ids=["lines=12", "lines=4096"])
def test_lines_and_banks(build, params, message):
    with pytest.raises(ValueError, match=message):
        build(**params)


def test_default_widths():
    config = CapacityManagerConfig(**get_block("regless.capacity_manager").defaults)
    assert (config.lines_per_bank, config.warp_bits, config.reg_bits, config.bank_bits,
            config.count_bits, config.entry_bits, config.stack_bits) == (16, 4, 6, 3, 5, 7, 5)
    assert config.region_layout.size == 2 + 4 + 6 + 7 + 8 * 5 + 1
    assert config.preload_layout.size == 4 + 6 + 1
    assert config.codecs["state"].width == 32


def _step(model, **inputs):
    config = model.config
    full = {"region__valid": 0, "region__payload": 0, "preloaded": 0, "issue__valid": 0,
            "issue__payload": 0, "written__valid": 0, "written__payload": 0, "at_barrier": 0,
            **{f"preload__{b}__ready": 0 for b in range(config.banks)}}
    full.update(inputs)
    return model.step(full)


def _header(model, warp, usage, entries=()):
    words = region_words(model.config, {"warp": warp, "bank_usage": usage,
                                        "n_entries": len(entries), "entries": list(entries)})
    return words


def _issue(model, warp, bank=0, dst=False, last=False):
    return {"issue__valid": 1, "issue__payload": model.ports["issue__payload"].pack(
        {"warp": warp, "has_dst": int(dst), "dst_bank": bank, "last": int(last)})}


def test_fits():
    assert fits([1, 2], [1, 2])
    assert not fits([1, 3], [4, 2])


def test_region_words_packed_with_layout():
    config = CapacityManagerConfig(**SMALL)
    words = region_words(config, {"warp": 2, "bank_usage": [1, 2], "n_entries": 2,
                                  "entries": [(3, "preload"), (1, "invalidate")]})
    head, first, second = (config.codecs["region__payload"].unpack(w) for w in words)
    assert head.kind == RegionWord.HEADER.value and head.warp == 2
    assert head.bank_usage == [1, 2] and head.n_entries == 2
    assert first.kind == RegionWord.PRELOAD.value and first.reg == 3
    assert second.kind == RegionWord.INVALIDATE.value and second.warp == 0
    assert config.codecs["region__payload"].unpack(done_word(config, 1)).done


def test_fit_and_free_arithmetic_and_entries():
    """A fitting header takes its lines; its entries go to bank (warp + reg) & 1; the warp
    is ACTIVE the cycle after its last acknowledgement; a region larger than what is free
    waits (strict stack order)."""
    model = golden(**SMALL)
    words = _header(model, 0, [2, 1], [(1, "preload"), (0, "invalidate")])
    out = _step(model, region__valid=1, region__payload=words[0])
    assert out["region__ready"] == 1 and out["want__payload"] == 0
    assert model.free == [0, 1] and model.state[0] == WarpState.PRELOADING
    assert _step(model)["want__valid"] == 0          # entries are due
    _step(model, region__valid=1, region__payload=words[1])
    _step(model, region__valid=1, region__payload=words[2])
    assert [list(q) for q in model.queues] == [[Entry(warp=0, reg=0, invalidate=1)],
                                               [Entry(warp=0, reg=1, invalidate=0)]]
    acks = model.ports["preloaded"].pack([{"valid": 1, "warp": 0}] * 2)
    out = _step(model, preloaded=acks, preload__0__ready=1, preload__1__ready=1)
    assert out["preload__0__valid"] == 1 and model.state[0] == WarpState.ACTIVE
    big = _header(model, 1, [1, 0])
    out = _step(model, region__valid=1, region__payload=big[0])
    assert out["want__payload"] == 1 and out["region__ready"] == 0


def test_drain_release_and_late_write():
    """``last``: usage - outstanding released at once; each late write releases one line;
    with none outstanding the warp is pushed back on top of the stack."""
    model = golden(**SMALL)
    _step(model, region__valid=1, region__payload=_header(model, 0, [2, 2])[0])
    _step(model)
    _step(model, **_issue(model, 0, bank=1, dst=True))
    _step(model, **_issue(model, 0, bank=1, dst=True, last=True))
    assert model.state[0] == WarpState.DRAINING and model.free == [2, 0]
    write = model.ports["written__payload"].pack({"warp": 0, "bank": 1})
    _step(model, written__valid=1, written__payload=write)
    assert model.free == [2, 1]
    _step(model, written__valid=1, written__payload=write)
    assert model.free == [2, 2] and model.state[0] == WarpState.DRAINING
    _step(model)
    assert model.state[0] == WarpState.INACTIVE and model.stack == [0, 1, 2]


def test_a_warp_at_a_barrier_is_not_pushed():
    """A drained warp whose ``at_barrier`` bit is set stays DRAINING, off the stack, and
    holds no line; the cycle its bit clears it is pushed (a lower held warp does not block
    a higher one)."""
    model = golden(**SMALL)
    for warp in (0, 1):
        _step(model, region__valid=1, region__payload=_header(model, warp, [1, 0])[0])
    _step(model)
    for warp in (0, 1):
        _step(model, **_issue(model, warp, last=True), at_barrier=0b11)
    for _ in range(3):
        _step(model, at_barrier=0b11)
    assert model.state[:2] == [WarpState.DRAINING] * 2 and model.stack == [2]
    assert model.free == [2, 2]
    _step(model, at_barrier=0b01)
    assert model.state[1] == WarpState.INACTIVE and model.stack == [1, 2]
    _step(model, at_barrier=0b01)
    assert model.state[0] == WarpState.DRAINING
    _step(model)
    assert model.stack == [0, 1, 2]


def test_exit_and_stack_order():
    """A ``done`` header pops the warp for good; deactivated warps go on top."""
    model = golden(**SMALL)
    _step(model, region__valid=1, region__payload=done_word(model.config, 0))
    assert model.stack == [1, 2] and model.exited == {0}
    for warp in (1, 2):
        _step(model, region__valid=1, region__payload=_header(model, warp, [0, 0])[0])
    _step(model)
    for warp in (1, 2):
        _step(model, **_issue(model, warp, last=True))
    _step(model)
    _step(model)
    assert model.stack == [2, 1] and model.state[0] == WarpState.INACTIVE


@pytest.mark.slow_formal
@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_conservation_activation_stack():
    """BMC, depth 20, on 2 warps, 2 banks x 1 line, 2 registers, up to 2 entries (the
    harness of :mod:`gpurf.tb.regless.formal_capacity_manager`): free-line conservation per
    bank, ACTIVE only after every entry was taken and acknowledged, a consistent stack.
    Opt-in (1,164 s wall / 100 s CPU at load 20): the k-induction of
    ``tests/test_formal_regless.py`` proves this configuration."""
    result = prove(CapacityManagerFormal(lines=2, regs=2, max_entries=2),
                   name="capacity_manager_bmc20", depth=20, mode="bmc")
    assert result.passed, result.log_tail
