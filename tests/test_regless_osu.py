# amaranth: UnusedElaboratable=no
"""``regless.osu``: parameters, the bank mapping, widths and storage."""

from collections import defaultdict

import pytest

from gpurf.golden.regless.osu import Osu as GoldenOsu
from gpurf.hw.registry import get_block
from gpurf.hw.regless.configs import OsuConfig
from gpurf.hw.regless.osu import Osu
from gpurf.sim.formal import missing_solver, prove
from gpurf.synth.flow import storage
from gpurf.tb.harness import MismatchError, simulate_amaranth
from gpurf.tb.regless.formal_osu import OsuFormal
from gpurf.tb.regless.mutants import ConflictIgnored
from gpurf.tb.regless.test_osu import random_stream


def golden(**params):
    return get_block("regless.osu").golden(params)


BUILDS = pytest.mark.parametrize("build", [Osu, golden], ids=["hw", "golden"])


@BUILDS
def test_lines_a_multiple_of_banks(build):
    with pytest.raises(ValueError, match=r"^lines must be a multiple of banks \(8\), not 100$"):
        build(lines=100)


@BUILDS
def test_lines_per_bank_limit(build):
    with pytest.raises(ValueError, match=r"^lines must be an integer in 1\.\.256, not 512$"):
        build(lines=1024, banks=2)


def test_bank_mapping():
    """Paper 5.2: the lower 3 bits of ``warp + reg`` with 8 banks."""
    config = OsuConfig(**get_block("regless.osu").defaults)
    assert [config.bank_of(0, r) for r in range(10)] == [0, 1, 2, 3, 4, 5, 6, 7, 0, 1]
    assert config.bank_of(5, 4) == 1
    assert config.bank_of(15, 63) == (15 + 63) % 8
    assert OsuConfig(lines=8, banks=2, warps=2, regs=4, lanes=1, data_width=1).bank_of(1, 2) == 1


def test_default_widths():
    config = OsuConfig(**get_block("regless.osu").defaults)
    assert (config.bank.lines, config.bank_bits) == (16, 3)
    assert config.line_layout.size == 4 + 3
    assert config.reserved_layout.size == 7 + 1
    assert config.fetch_layout.size == 4 + 6 + 7 + 1
    assert config.ack_layout.size == 1 + 4


def test_storage_small():
    """2 banks x 4 lines of 2 x 4 bits: two unmapped memories of 4 x 8 bits; flip-flops:
    the banks' state (per bank 4 tags of 3 bits, 6 x 4 state bits, eviction slot 1 + 1 + 2,
    fetch register 1 + 1 + 2 + 2 + 1, two more), each merge's lock (1 + 1 bank bit) and per
    read port (4) the one-hot of the bank that answers it next cycle (2 bits)."""
    params = {"lines": 8, "banks": 2, "warps": 2, "regs": 4, "lanes": 2, "data_width": 4}
    report = storage(get_block("regless.osu"), params)
    assert report.memories == 2
    assert report.memory_bits == 2 * 4 * 8
    per_bank = 4 * 3 + 6 * 4 + 4 + 7 + 2
    assert report.ff_bits == 2 * per_bank + 2 * 2 + 4 * 2


SMALL = {"lines": 8, "banks": 2, "warps": 2, "regs": 4, "lanes": 2, "data_width": 4}


def _cycle(model, **requests):
    """One golden cycle with ``requests`` (port name -> fields) valid."""
    inputs = defaultdict(int)
    for name, fields in requests.items():
        inputs[f"{name}__valid"] = 1
        inputs[f"{name}__payload"] = model.ports[f"{name}__payload"].pack(fields)
    return model.step(inputs)


def _reserved(model, warp, reg, port="reserve__0"):
    out = _cycle(model, **{port: {"warp": warp, "reg": reg, "last_use": 0}})
    assert out[f"{port}__ready"] == 1
    resp = port.replace("reserve", "reserve_resp", 1)
    return model.ports[f"{resp}__payload"].unpack(out[f"{resp}__payload"]).line


def test_ports_per_instruction():
    """Paper 5.2: two instructions per cycle, 2 reads and 1 write each."""
    config = OsuConfig(**SMALL)
    assert (config.read_ports, config.write_ports) == (4, 2)
    members = config.signature().members
    assert [len(members[k].dimensions and range(members[k].dimensions[0])) for k in
            ("read", "read_resp", "reserve", "reserve_resp", "write", "release")] == \
        [4, 4, 2, 2, 2, 4]
    assert OsuConfig(**SMALL, instructions=1).read_ports == 2


def test_reads_of_two_banks_complete_in_one_cycle():
    """Registers (0, 0) (bank 0) and (0, 1) (bank 1): both reserved in one cycle on two
    reserve ports, written in one cycle on two write ports, read in one cycle on ports 0
    and 3; each answer comes on its own port the next cycle."""
    model = golden(**SMALL)
    out = _cycle(model, reserve__0={"warp": 0, "reg": 0, "last_use": 0},
                 reserve__1={"warp": 0, "reg": 1, "last_use": 0})
    assert (out["reserve__0__ready"], out["reserve__1__ready"]) == (1, 1)
    lines = [model.ports[f"reserve_resp__{i}__payload"].unpack(
        out[f"reserve_resp__{i}__payload"]).line for i in (0, 1)]
    assert [line.bank for line in lines] == [0, 1]
    out = _cycle(model, write__0={"line": lines[1], "data": 0x21, "last_use": 0},
                 write__1={"line": lines[0], "data": 0x10, "last_use": 0})
    assert (out["write__0__ready"], out["write__1__ready"]) == (1, 1)
    out = _cycle(model, read__0={"warp": 0, "reg": 1}, read__3={"warp": 0, "reg": 0})
    assert (out["read__0__ready"], out["read__3__ready"]) == (1, 1)
    out = _cycle(model)
    assert [out[f"read_resp__{i}__valid"] for i in range(4)] == [1, 0, 0, 1]
    assert (out["read_resp__0__payload"], out["read_resp__3__payload"]) == (0x21, 0x10)


def test_bank_conflict_lowest_port_first():
    """Registers (0, 0) and (1, 1) share bank 0: read ports 2 and 1 ask at once; port 1
    goes, port 2 waits a cycle; two writes to one bank: port 0 goes, port 1 waits."""
    model = golden(**SMALL)
    first, second = _reserved(model, 0, 0), _reserved(model, 1, 1, "reserve__1")
    assert first.bank == second.bank == 0
    out = _cycle(model, write__0={"line": first, "data": 1, "last_use": 0},
                 write__1={"line": second, "data": 2, "last_use": 0})
    assert (out["write__0__ready"], out["write__1__ready"]) == (1, 0)
    _cycle(model, write__1={"line": second, "data": 2, "last_use": 0})
    out = _cycle(model, read__1={"warp": 0, "reg": 0}, read__2={"warp": 1, "reg": 1})
    assert (out["read__1__ready"], out["read__2__ready"]) == (1, 0)
    out = _cycle(model, read__2={"warp": 1, "reg": 1})
    assert (out["read_resp__1__valid"], out["read_resp__1__payload"]) == (1, 1)
    assert out["read__2__ready"] == 1
    out = _cycle(model)
    assert (out["read_resp__2__valid"], out["read_resp__2__payload"]) == (1, 2)


class HighestPortFirst(GoldenOsu):
    """A broken model: per bank the highest-numbered port wins."""

    def _grants(self, requests, targets):
        grants = {}
        for i, ((valid, _), bank) in enumerate(zip(requests, targets, strict=True)):
            if valid:
                grants[bank] = i
        return grants


def test_cosim_catches_a_wrong_port_priority(seed):
    """The RTL against a model whose conflicts go to the highest port: the bench's random
    stimulus finds the difference."""
    params = get_block("regless.osu").resolve(SMALL)
    with pytest.raises(MismatchError, match=r"port \w+__\d+__"):
        simulate_amaranth(Osu(**params), HighestPortFirst(**params), random_stream, params,
                          seed, 400)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_routing_k_induction():
    """k-induction, depth 4, on ``formal_osu.SMALL`` (2 banks x 2 lines, 4 read / 2
    reserve / 2 write / 4 release ports), every input free, the banks' stream rule assumed:
    one port per kind and bank per cycle, lowest port first, answers on the port that asked,
    merged offers kept while waiting."""
    result = prove(OsuFormal(), name="osu_routing", depth=4, mode="prove")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """Cover, depth 10 (every event after the reset cycle): bank conflicts (read, write),
    reads and writes on two banks in one cycle, two reserves at once, a preload hit, a
    fetched preload miss, an eviction, a merged offer waiting while another bank offers."""
    result = prove(OsuFormal(), name="osu_cover", depth=10, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_kills_mutant():
    """BMC, depth 4: fails on ``mutants.ConflictIgnored`` (every port asking for a bank is
    granted it)."""
    result = prove(OsuFormal(block=ConflictIgnored), name="osu_mutant", depth=4, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail
