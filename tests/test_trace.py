# amaranth: UnusedElaboratable=no
"""The trace format (``gpurf.golden.trace``, docs/traces.md): round trip, chunked and random
access, and every kind of bad trace refused with a one-line error naming the file."""

import importlib
import json
import random
import re

import pytest
from amaranth.hdl import signed
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from gpurf.golden.trace import (
    MAGIC,
    VERSION,
    Recorder,
    Trace,
    TraceError,
    TraceWriter,
    layout_of,
)
from gpurf.hw.registry import get_block
from gpurf.sim.cli import main
from gpurf.tb.harness import run_golden

WIDTHS = (1, 7, 8, 9, 33, 64, 65, 130)


class Ports(wiring.Component):
    """Ports of every width class the replay distinguishes (1 byte .. wide words)."""

    def __init__(self):
        super().__init__({**{f"i{w}": In(w) for w in WIDTHS},
                          **{f"o{w}": Out(w) for w in WIDTHS}})

    def elaborate(self, platform):
        raise NotImplementedError


def _cycles(rng, count):
    for _ in range(count):
        inputs = {f"i{w}": rng.getrandbits(w) for w in WIDTHS if rng.random() < 0.9}
        outputs = {f"o{w}": rng.getrandbits(w) if rng.random() < 0.7 else None
                   for w in WIDTHS}
        yield inputs, outputs


def test_round_trip_every_width(tmp_path, seed):
    layout = layout_of(Ports())
    assert [c.size for c in layout.inputs] == [1, 1, 1, 2, 5, 8, 9, 17]
    assert layout.mask_bytes == 1
    written = list(_cycles(random.Random(seed), 1000))
    with TraceWriter(tmp_path / "t.trace", layout, {"block": "none.ports"}) as writer:
        for inputs, outputs in written:
            writer.append(inputs, outputs)
    trace = Trace(tmp_path / "t.trace")
    assert trace.cycles == 1000
    assert trace.path.stat().st_size == trace.body_offset + 1000 * layout.record_bytes
    rows = trace.rows()
    for (cycle, inputs, outputs), (want_in, want_out) in zip(rows, written, strict=True):
        assert inputs == {f"i{w}": want_in.get(f"i{w}", 0) for w in WIDTHS}, cycle
        assert outputs == want_out, cycle
    assert trace.rows(997, 2000) == rows[997:]
    assert trace.rows(10, 13) == rows[10:13]
    chunks = list(trace.chunks(size=300))
    assert [first for first, _ in chunks] == [0, 300, 600, 900]
    assert [trace.decode(r) for _, chunk in chunks for r in chunk] == [r[1:] for r in rows]


def test_writer_checks_values_and_names(tmp_path):
    layout = layout_of(Ports())
    writer = TraceWriter(tmp_path / "t.trace", layout, {})
    outputs = dict.fromkeys((f"o{w}" for w in WIDTHS), None)
    with pytest.raises(ValueError, match=r"port i7: 0x80 does not fit 7 bits"):
        writer.append({"i7": 0x80}, outputs)
    with pytest.raises(ValueError, match=r"no value for output o1"):
        writer.append({}, {})
    with pytest.raises(ValueError, match=r"unknown input ports \['nope'\]"):
        writer.append({"nope": 1}, outputs)
    writer.append({"i9": -1}, outputs)            # a negative value as two's complement
    writer.close()
    assert Trace(tmp_path / "t.trace").rows()[0][1]["i9"] == 0x1FF


def test_unmodeled_ports_are_zeros_and_named(tmp_path):
    layout = layout_of(Ports())
    header = {"unmodeled": ["i8", "o8"]}
    with TraceWriter(tmp_path / "t.trace", layout, header) as writer:
        writer.append({"i8": 5}, {f"o{w}": 1 for w in WIDTHS if w != 8})
    trace = Trace(tmp_path / "t.trace")
    assert trace.header["unmodeled"] == ["i8", "o8"]
    (_, inputs, outputs), = trace.rows()
    assert inputs["i8"] == 0 and outputs["o8"] is None and outputs["o1"] == 1


def test_signature_hash_follows_shapes_not_just_widths():
    class Swapped(Ports):
        def __init__(self):
            wiring.Component.__init__(self, {**{f"i{w}": In(w) for w in WIDTHS},
                                             **{f"o{w}": Out(w) for w in reversed(WIDTHS)}})

    class Signed(Ports):
        def __init__(self):
            wiring.Component.__init__(self, {**{f"i{w}": In(w) for w in WIDTHS},
                                             **{f"o{w}": Out(w) for w in WIDTHS[:-1]},
                                             "o130": Out(signed(130))})

    class Fields(Ports):
        def __init__(self):
            wiring.Component.__init__(self, {**{f"i{w}": In(w) for w in WIDTHS[:-1]},
                                             "i130": In(data.StructLayout({"a": 2, "b": 128})),
                                             **{f"o{w}": Out(w) for w in WIDTHS}})

    variants = (Ports, Swapped, Signed, Fields)
    hashes = {layout_of(c()).signature_hash for c in variants}
    assert len(hashes) == len(variants)
    assert len({layout_of(c()).record_bytes for c in variants}) == 1
    assert layout_of(Ports()) == layout_of(Ports())


BLOCK = get_block("subcore.subcore_assigner")


@pytest.fixture
def recorded(tmp_path, seed):
    """A 200-cycle golden run of subcore.subcore_assigner, with what the model saw."""
    params = BLOCK.resolve()
    stimulus = importlib.import_module(BLOCK.tb_module).STIMULI[0]
    path = tmp_path / "good.trace"
    header = {"block": BLOCK.qualname, "params": params, "seed": seed,
              "source": {"kind": "stimulus", "stimulus": stimulus.__name__}}
    with TraceWriter(path, layout_of(BLOCK.build(params)), header) as writer:
        run_golden(Recorder(BLOCK.golden(params), writer), stimulus, params, seed, 200)
    return path


def test_recorded_run_matches_the_model(recorded, seed):
    trace = Trace(recorded)
    block, params = trace.check_block(BLOCK.qualname)
    assert block is BLOCK and params == BLOCK.resolve()
    model = BLOCK.golden(params)
    model.reset()
    for _, inputs, outputs in trace.rows():
        assert model.step(inputs) == outputs
    header = trace.header
    assert header["version"] == VERSION and header["storage"] == "dense"
    assert re.fullmatch(r"[0-9a-f]{40}(\+dirty)?|unknown", header["gpurf"]["revision"])
    assert header["seed"] == seed and header["sm"] is None and header["unmodeled"] == []


def _patch_header(path, **changes):
    """Rewrite header fields in place (the header line keeps its length)."""
    raw = path.read_bytes()
    end = raw.index(b"\n", len(MAGIC))
    header = json.loads(raw[len(MAGIC):end])
    header.update(changes)
    text = json.dumps(header, separators=(",", ":")).encode()
    assert len(text) <= end - len(MAGIC)
    path.write_bytes(raw[:len(MAGIC)] + text.ljust(end - len(MAGIC)) + raw[end:])


def _truncate(path, cut):
    path.write_bytes(path.read_bytes()[:-cut])


def _unfinished(path):
    _patch_header(path, cycles=None)
    _truncate(path, 9 * 50)


BAD = {
    "truncated mid-record": (lambda p: _truncate(p, 4),
                             r"truncated: 1,796 bytes of records, the header's 200 cycles of "
                             r"9 bytes need 1,800$"),
    "truncated at a record": (lambda p: _truncate(p, 9 * 20), r"truncated: 1,620 bytes"),
    "truncated in the header": (lambda p: p.write_bytes(p.read_bytes()[:40]),
                                r"truncated in its header$"),
    "unfinished recording": (_unfinished, r"unfinished recording \(no cycle count; 150 whole"),
    "trailing bytes": (lambda p: p.write_bytes(p.read_bytes() + b"x"),
                       r"1 bytes after the header's 200 cycles"),
    "wrong version": (lambda p: _patch_header(p, version=2),
                      r"format version 2; this gpurf reads version 1 only"),
    "not a trace": (lambda p: p.write_bytes(b"VCD\n" + p.read_bytes()),
                    r"not a gpurf trace \(no GPURF-TRACE magic line\)$"),
    "header not JSON": (lambda p: p.write_bytes(MAGIC + b"{nope\n"), r"header is not JSON"),
    "sparse storage": (lambda p: _patch_header(p, storage="sparse"),
                       r"storage 'sparse' is not supported \(dense only\)"),
    "unknown block": (lambda p: _patch_header(p, block="subcore.nope"),
                      r"recorded from block 'subcore\.nope': unknown block"),
    "params no longer valid": (lambda p: _patch_header(p, params={"subcores": 99, "depth": 4}),
                               r"recorded parameters of subcore\.subcore_assigner are no "
                               r"longer valid \(subcores must be"),
    "changed port signature": (lambda p: _patch_header(p, signature="0" * 64),
                               r"port signature of subcore\.subcore_assigner changed since the "
                               r"recording \(hash 000000000000, now [0-9a-f]{12}\): re-record"),
    "ports of other parameters": (lambda p: _patch_header(p, params={"subcores": 8, "depth": 4}),
                                  r"port signature of subcore\.subcore_assigner changed"),
}


@pytest.mark.parametrize("case", BAD)
def test_bad_trace_is_refused(recorded, case):
    damage, message = BAD[case]
    damage(recorded)
    with pytest.raises(TraceError) as error:
        Trace(recorded).check_block()
    text = str(error.value)
    assert text.startswith(f"{recorded}: ")
    assert "\n" not in text
    assert re.search(message, text), text


def test_wrong_block_expected(recorded):
    with pytest.raises(TraceError, match=r"recorded from block 'subcore\.subcore_assigner', "
                                         r"not 'subcore\.warp_selector'$"):
        Trace(recorded).check_block("subcore.warp_selector")


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main([str(a) for a in argv])
    return (done.value.code, *capsys.readouterr())


@pytest.mark.parametrize("command", ["replay", "show"])
@pytest.mark.parametrize("case", ["truncated mid-record", "wrong version", "unknown block",
                                  "changed port signature"])
def test_cli_refuses_bad_traces_in_one_line(capsys, recorded, case, command):
    damage, message = BAD[case]
    damage(recorded)
    argv = ["replay", recorded] if command == "replay" else ["trace", "show", recorded]
    code, _, err = run_cli(capsys, *argv)
    if command == "show" and case in ("unknown block", "changed port signature"):
        assert code == 0                          # shown by its own columns, with a warning
        assert err.startswith(f"warning: {recorded}: ")
        return
    assert code == 2
    assert err.startswith(f"gpurf: {recorded}: ")
    assert len(err.strip().splitlines()) == 1
    assert re.search(message, err)


def test_cli_replay_refuses_a_folder_with_one_bad_trace(capsys, recorded):
    (recorded.parent / "bad.trace").write_bytes(recorded.read_bytes()[:-3])
    code, _, err = run_cli(capsys, "replay", recorded.parent)
    assert code == 2
    assert re.fullmatch(r"gpurf: \S+bad\.trace: truncated: .*\n", err)


def test_cli_show_prints_header_and_cycles(capsys, recorded):
    code, out, _ = run_cli(capsys, "trace", "show", recorded, "--cycles", "3:6")
    assert code == 0
    assert "block subcore.subcore_assigner" in out
    assert re.search(r"^  in  table_data \[8\] bytes 5\.\.5$", out, re.MULTILINE)
    rows = [line for line in out.splitlines() if line.startswith("cycle ")]
    assert [row.split(":")[0] for row in rows] == ["cycle 3", "cycle 4", "cycle 5"]
    expected = Trace(recorded).rows(3, 6)
    for row, (_, _, outputs) in zip(rows, expected, strict=True):
        shown = "-" if outputs["subcore"] is None else hex(outputs["subcore"])
        assert row.endswith(f"subcore={shown}")
    code, out, _ = run_cli(capsys, "trace", "show", recorded, "--cycles", "199")
    assert [line.split(":")[0] for line in out.splitlines() if line.startswith("cycle ")] \
        == ["cycle 199"]


@pytest.mark.parametrize("span", ["x", "5:2", "-1:3"])
def test_cli_show_bad_span(capsys, recorded, span):
    code, _, err = run_cli(capsys, "trace", "show", recorded, "--cycles", span)
    assert code == 2 and err.startswith("gpurf: --cycles")
