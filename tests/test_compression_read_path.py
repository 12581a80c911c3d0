# amaranth: UnusedElaboratable=no
"""``compression.read_path``: the composed operand-read path's latency (one more cycle for a
split operand's second read), its operands equal to the golden composed path
(``golden/compression/paths.py``), its parameters, and a mutant its bench kills."""

import random

import pytest

from gpurf.golden.compression.paths import operand_read
from gpurf.golden.compression.read_path import ReadPath as GoldenReadPath
from gpurf.hw.compression.formats import table3_format
from gpurf.hw.compression.read_path import ReadPath
from gpurf.hw.registry import get_block
from gpurf.sim.formal import prove
from gpurf.tb.compression.drivers import FIG3_ENTRY, random_entry
from gpurf.tb.compression.formal_read_path import ReadPathFormal
from gpurf.tb.compression.mutants import FirstPartCompletes, SecondReadOfR0
from gpurf.tb.compression.test_read_path import STIMULI
from gpurf.tb.harness import MismatchError, simulate_amaranth

PARAMS = {"lanes": 2, "entries": 16, "banks": 4, "tag_width": 3}


def _read(model, reg, registers, *, signed=0, convert=0, tag=5, cycles=8):
    """Load ``reg``'s entry beforehand, request it once and answer every register-file
    read from ``registers`` (register -> per-lane words); returns the cycle of each read,
    the cycle the result shows, its data and tag, and the cycles ``request_ready`` was
    low."""
    codecs = model.ports
    pending, reads, busy, result = None, [], [], None
    for cycle in range(cycles):
        inputs = {"request_valid": int(cycle == 0),
                  "request": codecs["request"].pack({"reg": reg, "signed": signed,
                                                     "convert": convert, "tag": tag}),
                  "load__valid": 0, "load__payload": 0,
                  "rf_data": codecs["rf_data"].pack(registers[pending] if pending is not None
                                                    else [0] * model.config.lanes)}
        out = model.step(inputs)
        pending = out["rf_reg"] if out["rf_valid"] else None
        if out["rf_valid"]:
            reads.append((cycle, out["rf_reg"]))
        if not out["request_ready"]:
            busy.append(cycle)
        if out["result_valid"]:
            got = codecs["result"].unpack(out["result"])
            result = (cycle, got.data, got.tag)
    return reads, busy, result


def _loaded(entry, reg=3):
    model = GoldenReadPath(**PARAMS)
    model.step({"load__valid": 1, "load__payload": model.ports["load__payload"].pack(
        {"reg": reg, "entry": entry}), "request_valid": 0, "request": 0, "rf_data": 0})
    return model


def test_an_unsplit_operand_takes_four_cycles():
    entry = {"r0": 7, "m0": 0b0011_0000, "r1": 0, "m1": 0}
    registers = {7: [0x00F5_0000, 0x0012_3456]}
    reads, busy, (cycle, data, tag) = _read(_loaded(entry), 3, registers, signed=1)
    assert reads == [(1, 7)] and busy == [] and tag == 5
    assert cycle == 4
    assert data == [operand_read({7: w}, entry, signed=True) for w in registers[7]]
    assert data == [0xFFFF_FFF5, 0x12]


def test_a_split_operand_reads_twice_and_takes_five_cycles():
    """Fig. 3's 16-bit float: a second register-file read of ``r1`` in the next cycle,
    the request port busy meanwhile, then the converted fp32."""
    entry = FIG3_ENTRY
    rng = random.Random(3)
    registers = {entry["r0"]: [rng.getrandbits(32) for _ in range(2)],
                 entry["r1"]: [rng.getrandbits(32) for _ in range(2)]}
    reads, busy, (cycle, data, _) = _read(_loaded(entry), 3, registers, convert=1)
    assert reads == [(1, entry["r0"]), (2, entry["r1"])]
    assert busy == [1] and cycle == 5
    fmt = table3_format(4)
    assert data == [operand_read({r: words[lane] for r, words in registers.items()}, entry,
                                 fmt=fmt) for lane in range(2)]


def test_random_operands_equal_the_golden_composed_path(seed):
    rng = random.Random(seed)
    for _ in range(200):
        entry = random_entry(rng)
        slices = entry["m0"].bit_count() + entry["m1"].bit_count()
        convert = int(slices >= 2 and rng.random() < 0.5)
        signed = int(not convert and rng.random() < 0.5)
        registers = {r: [rng.getrandbits(32) for _ in range(2)]
                     for r in (entry["r0"], entry["r1"])}
        _, _, (_, data, _) = _read(_loaded(entry), 3, registers, signed=signed,
                                   convert=convert)
        fmt = table3_format(slices) if convert else None
        want = [operand_read({r: words[lane] for r, words in registers.items()}, entry,
                             bool(signed), fmt) for lane in range(2)]
        assert data == want, (entry, signed, convert, seed)


def test_a_convert_operand_of_one_slice_breaks_the_protocol():
    entry = {"r0": 1, "m0": 1, "r1": 0, "m1": 0}
    with pytest.raises(ValueError, match="no Table 3 format"):
        _read(_loaded(entry), 3, {1: [0, 0]}, convert=1)


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="banks must be at most entries"):
        ReadPath(entries=4, banks=8)
    with pytest.raises(ValueError, match=r"tag_width must be an integer in 1\.\.16"):
        ReadPath(tag_width=0)


@pytest.mark.parametrize("stimulus", STIMULI, ids=lambda s: s.__name__)
def test_the_bench_kills_a_lost_double_fetch(stimulus, seed):
    block = get_block("compression.read_path")
    params = block.resolve(PARAMS)
    with pytest.raises(MismatchError, match="port rf_reg"):
        simulate_amaranth(SecondReadOfR0(**params), block.golden(params), stimulus, params,
                          seed, 400)


@pytest.mark.parametrize("depth", [12, pytest.param(20, marks=pytest.mark.slow_formal)])
def test_formal_one_result_per_request_in_order(depth):
    """SymbiYosys BMC on ``formal_read_path.SMALL`` (depth 12; 20 in the slow tier): every
    accepted request gives one result, in request order; at most 4 in flight; reads only
    while one is."""
    result = prove(ReadPathFormal(), name=f"read_path_small_{depth}", depth=depth,
                   mode="bmc")
    assert result.passed, result


def test_formal_covers_reached():
    result = prove(ReadPathFormal(), name="read_path_small_cover", depth=12, mode="cover")
    assert result.passed and not result.unreached, result


def test_formal_kills_a_split_operand_completing_twice():
    result = prove(ReadPathFormal(block=FirstPartCompletes), name="read_path_mutant",
                   depth=12, mode="bmc")
    assert not result.passed, result
