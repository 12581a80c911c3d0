"""The fast paths WIR in the SM takes are the golden blocks' behaviour: the reuse buffer's
plain-int tag packing equals the generic codec's, a fill with a packed tag equals one with
the tag's fields, and the SM's byte-table H3 equals the golden ``h3`` (docs/wir.md,
"Speed")."""

import random
import time

import numpy as np
import pytest

from gpurf.golden.wir.h3_hash import h3
from gpurf.golden.wir.reuse_buffer import ReuseBuffer, fold_index
from gpurf.hw.wir.configs import h3_matrix
from gpurf.sim.sm.wir import Fill, Lookup, Opcode, h3_byte_tables

ENTRIES = 16


def _random_lookup(rng: random.Random, buffer: ReuseBuffer) -> Lookup:
    config = buffer.config
    operand = [rng.choice([rng.randrange(1 << config.preg_bits), rng.randrange(1 << 32)])
               for _ in range(3)]
    return Lookup(Opcode(rng.randrange(32), rng.randrange(8)), operand,
                  rng.randrange(config.blocks + 1), rng.randrange(1 << config.barrier_bits),
                  0, 0)


def _codec_tag(buffer: ReuseBuffer, lookup) -> int:
    mask = (1 << buffer.config.preg_bits) - 1
    return buffer.tags.pack({"opcode": lookup.opcode,
                             "operand": [v & mask for v in lookup.operand],
                             "tbid": lookup.tbid, "barrier": lookup.barrier})


def test_fast_tag_equals_the_codec(seed):
    rng = random.Random(seed)
    buffer = ReuseBuffer(entries=ENTRIES)
    for _ in range(2000):
        lookup = _random_lookup(rng, buffer)
        tag, fits, index = buffer.locate(lookup)
        assert tag == _codec_tag(buffer, lookup), f"seed {seed}: {lookup}"
        assert fits == all(v < 1 << buffer.config.preg_bits for v in lookup.operand)
        assert index == fold_index(tag, buffer.tags.width, buffer.config.index_bits)


@pytest.mark.parametrize("opcode", [{"op": 3, "regs": 5}, (3, 5)])
def test_tag_of_other_field_types_takes_the_codec(opcode):
    """A mapping goes through the codec; a plain tuple (no field names) is refused by it,
    not packed by position."""
    buffer = ReuseBuffer(entries=ENTRIES)
    lookup = Lookup(opcode, [np.uint32(4), 7, 9], 2, 1, 0, 0)
    if isinstance(opcode, dict):
        assert buffer.tag(lookup)[0] == _codec_tag(buffer, lookup)
    else:
        with pytest.raises(AttributeError):
            buffer.tag(lookup)


def test_out_of_range_fields_raise_as_the_codec_does():
    buffer = ReuseBuffer(entries=ENTRIES)
    lookup = Lookup(Opcode(32, 0), [1, 2, 3], 0, 0, 0, 0)
    with pytest.raises(ValueError, match="does not fit"):
        buffer.tag(lookup)


def _drive(lookups_fills, packed: bool, seed: int):
    """Run one stimulus on a buffer, fills given packed or as the tag's fields."""
    rng = random.Random(seed)
    buffer = ReuseBuffer(entries=ENTRIES)
    outputs, reserved = [], []
    mask = (1 << buffer.config.preg_bits) - 1
    for lookup in lookups_fills:
        fill = None
        if reserved and rng.random() < 0.5:
            index, lk = reserved.pop(rng.randrange(len(reserved)))
            tag = buffer.locate(lk)[0] if packed else {
                "opcode": lk.opcode, "operand": [v & mask for v in lk.operand],
                "tbid": lk.tbid, "barrier": lk.barrier}
            fill = Fill(index, tag, rng.randrange(1 << buffer.config.preg_bits))
        response, probe, incs, decs = buffer.advance(
            lookup, fill, low_reg=int(rng.random() < 0.05))
        if response is not None and response["reserved"]:
            reserved.append((response["index"], lookup))
        outputs.append((response, probe, incs, decs))
    return outputs


def test_a_packed_fill_tag_is_the_same_fill(seed):
    rng = random.Random(seed)
    buffer = ReuseBuffer(entries=ENTRIES)
    pool = [_random_lookup(rng, buffer) for _ in range(12)]
    stimulus = [rng.choice(pool) if rng.random() < 0.8 else None for _ in range(3000)]
    assert _drive(stimulus, True, seed) == _drive(stimulus, False, seed), f"seed {seed}"


def test_byte_tables_give_the_golden_h3(seed):
    rng = np.random.default_rng(seed)
    masks = h3_matrix(1024, 32, int(rng.integers(2**31)))
    tables = h3_byte_tables(masks, 128)
    for _ in range(20):
        values = rng.integers(0, 2**32, 32, dtype=np.uint32)
        data = values.astype("<u4").view(np.uint8)
        ours = int(np.bitwise_xor.reduce(tables[np.arange(128), data]))
        assert ours == h3(int.from_bytes(data.tobytes(), "little"), masks), f"seed {seed}"


def test_a_broken_byte_table_is_caught(seed):
    """The comparison above can fail: one flipped table entry changes some hash."""
    rng = np.random.default_rng(seed)
    masks = h3_matrix(1024, 32, 1)
    tables = h3_byte_tables(masks, 128)
    tables[5, 0x80] ^= 1
    values = rng.integers(0, 2**32, 32, dtype=np.uint32)
    data = values.astype("<u4").view(np.uint8)
    data[5] = 0x80
    ours = int(np.bitwise_xor.reduce(tables[np.arange(128), data]))
    assert ours != h3(int.from_bytes(data.tobytes(), "little"), masks)


def test_the_speed_window_counts_the_whole_run_when_it_finishes():
    from gpurf.sim.sm.wir import run_wir
    from gpurf.sim.sm.wir_speed import window

    out = window("vecadd", "R", "test", 600)
    assert out["finished"]
    assert out["issued"] == run_wir("vecadd", "R", baseline=False)["issued"]


def test_the_speed_window_stops_when_its_time_is_spent():
    from gpurf.sim.sm.wir_speed import window

    out = window("matmul", "R", "test", 0.05)
    assert not out["finished"] and out["cpu"] >= 0.05


def test_the_speed_window_stops_a_run_that_swallowed_its_first_signal():
    """A garbage-collector callback swallows what is raised in it (CI, session 15): the
    timer fires again until the run itself is stopped."""
    from gpurf.sim.sm.wir_speed import _until_spent

    swallowed = []

    def spin(limit):
        end = time.process_time() + limit
        while time.process_time() < end:
            pass

    def swallows_once():
        try:
            spin(2.0)
        except BaseException as error:
            swallowed.append(error)
        spin(2.0)

    start = time.process_time()
    assert _until_spent(swallows_once, 0.05) is False
    assert len(swallowed) == 1 and time.process_time() - start < 1.0


def test_the_speed_window_refuses_bad_arguments(capsys):
    from gpurf.sim.sm.wir_speed import main

    assert main(["vecadd", "XYZ", "test", "1"]) == 2
    assert capsys.readouterr().err.count("\n") == 1
