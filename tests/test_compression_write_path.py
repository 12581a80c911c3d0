# amaranth: UnusedElaboratable=no
"""``compression.write_path``: the composed write-back path's two-cycle delay, conflicts
waiting in the destination table's buffer, its writes equal to the golden composed path
(``golden/compression/paths.py``), its parameters, and a mutant its bench kills."""

import random

import pytest

from gpurf.golden.compression.paths import write_back
from gpurf.golden.compression.write_path import WritePath as GoldenWritePath
from gpurf.hw.compression.formats import table3_format
from gpurf.hw.compression.write_path import WritePath
from gpurf.hw.registry import get_block
from gpurf.tb.compression.drivers import random_fp32, random_writeback_entry
from gpurf.tb.compression.mutants import FloatsNotNarrowed
from gpurf.tb.compression.test_write_path import STIMULI
from gpurf.tb.harness import MismatchError, simulate_amaranth

PARAMS = {"lanes": 2, "entries": 16, "banks": 2, "ports": 3, "buffer": 1}


def _model(entries):
    model = GoldenWritePath(**PARAMS)
    for reg, entry in entries.items():
        model.step({"load__valid": 1, "load__payload": model.ports["load__payload"].pack(
            {"reg": reg, "entry": entry}), "write_valid": 0, "write": 0})
    return model


def _run(model, offers, cycles=8):
    """Offer ``offers`` (per port: (reg, float, lanes) or None) in cycle 0, held until
    accepted; returns per port the cycle each was accepted and the writes shown."""
    codecs = model.ports
    accepted, shown = {}, []
    for cycle in range(cycles):
        waiting = [o if p not in accepted else None for p, o in enumerate(offers)]
        out = model.step({
            "write_valid": sum(1 << p for p, o in enumerate(waiting) if o),
            "write": codecs["write"].pack([{"reg": o[0], "float": o[1], "data": o[2]}
                                           if o else {} for o in waiting]),
            "load__valid": 0, "load__payload": 0})
        for p, offer in enumerate(waiting):
            if offer and out["write_ready"] >> p & 1:
                accepted[p] = cycle
        for p, writes in enumerate(codecs["rf_write"].unpack(out["rf_write"])):
            if writes[0].mask:
                shown.append((cycle, p, writes))
    return accepted, shown


def test_a_float_writeback_shows_two_cycles_later_as_masked_writes(seed):
    rng = random.Random(seed)
    entry = random_writeback_entry(rng, 4, split=True)
    lanes = [random_fp32(rng, table3_format(4)) for _ in range(2)]
    accepted, shown = _run(_model({5: entry}), [(5, 1, lanes), None, None])
    assert accepted == {0: 0}
    ((cycle, port, writes),) = shown
    assert (cycle, port) == (2, 0)
    for lane, value in enumerate(lanes):
        golden = {reg: (word, mask) for reg, word, mask in write_back(value, entry,
                                                                     table3_format(4))}
        for p in (0, 1):
            reg, word, mask = writes[p].reg, writes[p].data[lane], writes[p].mask
            assert reg == entry[f"r{p}"] and mask == entry[f"m{p}"]
            if entry["r0"] != entry["r1"]:
                assert word == golden[reg][0] & golden[reg][1]


def test_a_bank_conflict_waits_in_the_buffer():
    """Three ports to one bank: port 0 served first; ports 1 and 2 accepted into their
    buffers in cycle 0 and written one and two cycles later."""
    entries = {r: {"r0": r, "m0": 0xFF, "r1": 0, "m1": 0} for r in (0, 2, 4)}
    offers = [(r, 0, [r, r + 1]) for r in (0, 2, 4)]
    accepted, shown = _run(_model(entries), offers)
    assert accepted == {0: 0, 1: 0, 2: 0}
    assert [(cycle, port) for cycle, port, _ in shown] == [(2, 0), (3, 1), (4, 2)]
    assert [writes[0].data for _, _, writes in shown] == [[0, 1], [2, 3], [4, 5]]


def test_parameters_are_checked():
    with pytest.raises(ValueError, match=r"ports must be an integer in 1\.\.3"):
        WritePath(ports=4)
    with pytest.raises(ValueError, match="banks must be at most entries"):
        WritePath(entries=4, banks=16)


@pytest.mark.parametrize("stimulus", STIMULI, ids=lambda s: s.__name__)
def test_the_bench_kills_unnarrowed_floats(stimulus, seed):
    block = get_block("compression.write_path")
    params = block.resolve(PARAMS)
    with pytest.raises(MismatchError, match="port rf_write"):
        simulate_amaranth(FloatsNotNarrowed(**params), block.golden(params), stimulus,
                          params, seed, 400)
