# amaranth: UnusedElaboratable=no
"""Widths, the bank mapping and the proof of ``subcore.operand_collector``."""

import pytest
from amaranth import ClockDomain, Module, Value
from amaranth.sim import Simulator

from gpurf.golden.subcore.operand_collector import bank_of
from gpurf.hw.registry import get_block
from gpurf.hw.subcore.configs import OperandCollectorConfig
from gpurf.hw.subcore.operand_collector import CollectorUnit
from gpurf.sim.formal import missing_solver, prove
from gpurf.tb.subcore.formal_operand_collector import OperandCollectorFormal
from gpurf.tb.subcore.mutants import AgeNeverCleared, WriteIgnored


@pytest.mark.parametrize(("name", "value"), [
    (name, value) for name, (_, spec) in OperandCollectorConfig.declared().items()
    for value in spec.extremes()])
def test_declared_extremes_accepted(name, value):
    """No rule between parameters rejects the end of a declared range."""
    assert getattr(OperandCollectorConfig(**{name: value}), name) == value


def test_default_widths():
    config = OperandCollectorConfig(**get_block("subcore.operand_collector").defaults)
    assert config == OperandCollectorConfig(cus=2, banks=2, operands=3, lanes=32, data_width=32,
                                            slots=16, reg_bits=8, read_latency=1,
                                            bank_map="swizzle")
    assert (config.warp_bits, config.requests, config.queue_bits) == (4, 6, 3)
    assert config.register_layout.size == 1024
    assert config.issue_layout.size == 4 + 3 * 9
    assert config.dispatch_layout.size == 4 + 3 + 3 * 1024
    assert config.address_layout.size == 12
    assert config.queue_len_layout.size == 2 * 3
    assert config.signature().members["write"].shape == 2


def test_bank_of_examples():
    assert bank_of(5, 3, banks=2, bank_map="swizzle") == 0
    assert bank_of(5, 3, banks=2, bank_map="modulo") == 1
    assert bank_of(7, 6, banks=3, bank_map="swizzle") == 1
    assert bank_of(255, 15, banks=8, bank_map="swizzle") == 6
    assert [bank_of(r, 1, banks=2, bank_map="swizzle") for r in range(4)] == [1, 0, 1, 0]
    assert [bank_of(r, w, banks=1, bank_map="swizzle") for r in range(3) for w in range(3)] \
        == [0] * 9


def test_bank_of_swizzle_spreads_warps():
    """The same register of consecutive warps rotates through all banks."""
    for banks in range(1, 9):
        assert sorted(bank_of(4, w, banks=banks, bank_map="swizzle")
                      for w in range(banks)) == list(range(banks))
        assert {bank_of(4, w, banks=banks, bank_map="modulo") for w in range(banks)} == {4 % banks}


@pytest.mark.parametrize(("banks", "bank_map"),
                         [(1, "swizzle"), (2, "swizzle"), (3, "swizzle"), (5, "modulo"),
                          (6, "swizzle"), (8, "modulo"), (7, "swizzle")])
def test_unit_bank_matches_bank_of(banks, bank_map):
    """The CU's one-hot bank register equals ``bank_of`` for every (warp, reg)."""
    config = OperandCollectorConfig(cus=1, banks=banks, operands=4, lanes=1, data_width=1,
                                    slots=6, reg_bits=4, read_latency=1, bank_map=bank_map)
    unit = CollectorUnit(config)
    top = Module()
    top.domains.sync = ClockDomain()
    top.submodules.unit = unit
    async def bench(ctx):
        ctx.set(unit.allocate, 1)
        for warp in range(config.slots):
            for start in range(0, 1 << config.reg_bits, config.operands):
                regs = range(start, start + config.operands)
                ctx.set(Value.cast(unit.instr), config.codecs["issue__payload"].pack({
                    "warp": warp, "operand": [{"valid": 1, "reg": reg} for reg in regs]}))
                await ctx.tick()
                for index, reg in enumerate(regs):
                    expected = 1 << bank_of(reg, warp, banks=banks, bank_map=bank_map)
                    assert ctx.get(unit.bank[index]) == expected, (warp, reg)

    sim = Simulator(top)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("params", [{}, {"banks": 3, "operands": 2, "read_latency": 2}],
                         ids=["small", "banks3-lat2"])
def test_formal_invariants(params):
    """BMC, depth 20. ``small`` (``formal_operand_collector.SMALL``): 2 CUs x 2 banks x
    3 operands, 1 lane x 2 bits, 2 warp slots, 2-bit register ids, read latency 1;
    ``banks3-lat2``: the same with 3 banks (modulo by 3), 2 operands, read latency 2.
    One grant per bank to the oldest request and none to a written bank, no lost request,
    queue_len = pending count, data reaches its CU (bypassed in its arrival cycle), dispatch
    only when complete and held while refused, the issue register allocated to the lowest
    CU free after dispatch."""
    name = "operand_collector_" + ("_".join(f"{k}{v}" for k, v in params.items()) or "small")
    result = prove(OperandCollectorFormal(**params), name=name, depth=20, mode="bmc")
    assert result.passed, result.log_tail


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_formal_covers_reached():
    """SymbiYosys cover mode, depth 8, on ``formal_operand_collector.SMALL``: every event the
    harness claims (bank conflict, full collector, dispatch, refused offer, a CU dispatched
    and allocated on one edge, a write holding back a pending read) is reached from reset
    under its assumptions."""
    result = prove(OperandCollectorFormal(), name="operand_collector_cover", depth=8, mode="cover")
    assert result.passed and not result.unreached, (result.unreached, result.log_tail)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
@pytest.mark.parametrize("mutant", [AgeNeverCleared, WriteIgnored], ids=lambda m: m.__name__)
def test_formal_kills_mutant(mutant):
    """BMC, depth 20, on ``small``: the proof of :func:`test_formal_invariants` (which passes on
    the block) fails on ``mutants.AgeNeverCleared`` (a reallocated CU keeps its old age) and
    ``mutants.WriteIgnored`` (a written bank still grants a read)."""
    result = prove(OperandCollectorFormal(block=mutant),
                   name=f"operand_collector_{mutant.__name__}", depth=20, mode="bmc")
    assert result.status == "FAIL" and result.failed_step is not None, result.log_tail


def _collector(**params):
    from gpurf.golden.subcore.operand_collector import OperandCollector as Golden

    return Golden(**{"cus": 2, "banks": 2, "operands": 3, "lanes": 1, "data_width": 8,
                     "slots": 4, "reg_bits": 4, "read_latency": 1, **params})


def _run(oc, program, *, cycles, writes=lambda cycle: 0):
    """Issue ``program`` (``(warp, {operand: reg})``) as fast as accepted, dispatch always
    ready; returns the cycles instructions dispatched in (by their program index)."""
    pending, dispatched = list(enumerate(program)), {}
    for cycle in range(cycles):
        grants, offer = oc.grants(writes(cycle)), oc.offer()
        if offer is not None:
            dispatched[oc.units[offer].tag] = cycle
        issue = (*pending[0][1], pending[0][0]) if pending else None
        if oc.advance(grants, offer, True, issue):
            pending.pop(0)
    return [dispatched.get(k) for k in range(len(program))]


def test_golden_turnaround_is_one_plus_read_latency():
    """Accel-Sim's order (dispatch, read, allocate): with no bank conflict two CUs dispatch
    one instruction a cycle; issue t, allocate t+1, grant t+2, data and dispatch t+3."""
    program = [(0, {0: reg}) for reg in range(8)]  # one read each, banks 0, 1, 0, ...
    assert _run(_collector(), program, cycles=20) == list(range(3, 11))
    assert _run(_collector(read_latency=2), program, cycles=30) == \
        [4, 5, 7, 8, 10, 11, 13, 14]
    assert _run(_collector(cus=1), [(0, {})] * 3, cycles=10) == [2, 3, 4]


def test_golden_write_holds_back_reads():
    """A written bank grants nothing that cycle; the other bank still does."""
    oc = _collector()
    program = [(0, {0: 0}), (0, {0: 1})]  # banks 0 and 1
    assert _run(oc, program, cycles=10, writes=lambda cycle: 0b01 if cycle < 5 else 0) == \
        [6, 4]


def test_golden_issue_register_waits_for_a_cu():
    """Both CUs busy and the issue register full: a third issue is refused until a dispatch
    frees a CU (then accepted in the same cycle)."""
    oc = _collector()
    assert oc.accepts(False)
    oc.advance({}, None, False, (0, {0: 0, 1: 2, 2: 4}))
    oc.advance(oc.grants(), None, False, (1, {0: 1}))
    oc.advance(oc.grants(), None, False, (2, {0: 0}))
    assert oc.buffer is not None and None not in oc.units
    assert not oc.accepts(False)
    assert oc.accepts(True)
