"""``gpurf.sim.bench.measure_per_cycle``: the CPU-time difference of a short and a long run,
and the golden model's share taken out (the cocotb runs are stand-ins here; their own tests
run them)."""

import itertools
import json
import re

import pytest

from gpurf.hw.registry import get_block
from gpurf.sim import bench


@pytest.fixture
def stand_ins(monkeypatch):
    """Cocotb runs that simulate exactly the cycles asked; children's CPU seconds 10 (before
    the short run), 13 (3 s for 200 cycles), 18 (5 s for 2,200)."""
    runs = []

    def cocotb(block, sim, cycles, seed, params):
        runs.append((sim, cycles, seed, params))
        return bench.Throughput(block.qualname, sim, cycles, cycles / 1000)

    clock = itertools.chain([10.0, 13.0, 18.0])
    monkeypatch.setattr(bench, "_cocotb", cocotb)
    monkeypatch.setattr(bench, "_cells", lambda block, params: 360)
    monkeypatch.setattr(bench, "_children_cpu_seconds", lambda: next(clock))
    return runs


def test_start_up_cancels_and_the_golden_share_is_taken_out(stand_ins, seed):
    block = get_block("subcore.subcore_assigner")
    cost = bench.measure_per_cycle(block, cycles=2000, seed=seed)
    params = block.resolve()
    assert stand_ins == [("verilator", 200, seed, params)] * 2 + [("verilator", 2200, seed, params)]
    assert cost.cycles == 2000
    assert cost.cosim_cpu_seconds == pytest.approx(2.0)       # (18 - 13) - (13 - 10)
    assert cost.cpu == pytest.approx(1000)
    assert cost.wall == pytest.approx(1000)
    assert 0 < cost.golden_cpu_seconds < cost.cosim_cpu_seconds
    assert cost.cocotb_side == pytest.approx(2000 / (2.0 - cost.golden_cpu_seconds))
    assert set(cost.as_dict()) >= {"cpu_cycles_per_second", "cocotb_side_cycles_per_second"}


def test_a_golden_model_slower_than_the_whole_run_leaves_no_cocotb_share():
    cost = bench.PerCycleCost("b", {}, 100, 10.0, cosim_cpu_seconds=1.0, golden_cpu_seconds=2.0)
    assert cost.cocotb_side == float("inf")


def test_a_stimulus_that_ends_on_its_own_cannot_be_measured(monkeypatch):
    monkeypatch.setattr(bench, "_cocotb", lambda block, sim, cycles, seed, params:
                        bench.Throughput(block.qualname, sim, 1220, 1.0))
    monkeypatch.setattr(bench, "_children_cpu_seconds", lambda: 1.0)
    with pytest.raises(ValueError, match=r"^regless\.shard: its first stimulus ran 1220 cycles "
                                         r"when asked for 2200, as many as when asked for 200"):
        bench.measure_per_cycle(get_block("regless.shard"), cycles=2000, seed=1)
    with pytest.raises(ValueError, match=r"^regless\.shard test\[1\]: its first stimulus"):
        bench.measure_per_cycle(get_block("regless.shard"), cycles=2000, seed=1,
                                params=get_block("regless.shard").test_params[1], label="test[1]")


def test_cli_per_cycle_table(stand_ins, capsys):
    from gpurf.sim.cli import main

    with pytest.raises(SystemExit) as done:
        main(["bench", "--per-cycle", "subcore.subcore_assigner", "--cycles", "2000"])
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    assert re.search(r"^\| subcore\.subcore_assigner \| defaults \| 2,000 \| 2\.00 \| 1,000 \| "
                     r"1,000 \| "
                     r"[\d,]+ \| [\d,]+ \| 360 \|$", out, re.MULTILINE), out


def test_cli_per_cycle_refuses_a_stimulus_that_ends_on_its_own(monkeypatch, capsys):
    from gpurf.sim.cli import main

    monkeypatch.setattr(bench, "_cocotb", lambda block, sim, cycles, seed, params:
                        bench.Throughput(block.qualname, sim, 1220, 1.0))
    monkeypatch.setattr(bench, "_children_cpu_seconds", lambda: 1.0)
    with pytest.raises(SystemExit) as done:
        main(["bench", "--per-cycle", "regless.shard"])
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert err.startswith("gpurf: regless.shard: its first stimulus ran 1220 cycles")


def test_cli_per_cycle_measures_the_others_past_a_stimulus_that_ends_on_its_own(
        monkeypatch, capsys):
    from gpurf.sim.cli import main

    def measure(block, *, cycles, seed, params, cells, label):
        if block.qualname == "regless.shard":
            raise ValueError("regless.shard: its first stimulus ran 1220 cycles")
        return bench.PerCycleCost(block.qualname, params, cycles, 1000.0, 0.5, 0.25, 360, label)

    monkeypatch.setattr(bench, "measure_per_cycle", measure)
    with pytest.raises(SystemExit) as done:
        main(["bench", "--per-cycle", "regless.shard", "subcore.subcore_assigner"])
    out, err = capsys.readouterr()
    assert done.value.code in (0, None)
    assert "| subcore.subcore_assigner | defaults | 20,000 | 0.50 |" in out
    assert "regless.shard |" not in out
    assert err.strip() == "gpurf: not measured: regless.shard: its first stimulus ran 1220 cycles"


def test_parameter_sets_are_the_defaults_the_registered_test_sets_or_both():
    block = get_block("subcore.subcore_assigner")
    tests = [(f"test[{i}]", params) for i, params in enumerate(block.test_params)]
    assert len(tests) == 3
    assert bench.parameter_sets(block) == [("defaults", {})]
    assert bench.parameter_sets(block, "test") == tests
    assert bench.parameter_sets(block, "all") == [("defaults", {}), *tests]
    with pytest.raises(ValueError, match="one of defaults, test, all, not 'every'"):
        bench.parameter_sets(block, "every")


def test_cli_per_cycle_sets_test_measures_every_test_configuration(monkeypatch, capsys):
    from gpurf.sim.cli import main

    measured = []

    def measure(block, *, cycles, seed, params, cells, label):
        measured.append((label, params))
        return bench.PerCycleCost(block.qualname, block.resolve(params), cycles, 1000.0, 0.5,
                                  0.25, 360, label)

    monkeypatch.setattr(bench, "measure_per_cycle", measure)
    with pytest.raises(SystemExit) as done:
        main(["bench", "--per-cycle", "subcore.subcore_assigner", "--sets", "test", "--json"])
    out = capsys.readouterr().out
    assert done.value.code in (0, None)
    block = get_block("subcore.subcore_assigner")
    assert measured == bench.parameter_sets(block, "test")
    rows = json.loads(out)
    assert [row["set"] for row in rows] == ["test[0]", "test[1]", "test[2]"]
    assert rows[2]["params"] == block.resolve(block.test_params[2])


def test_cli_sets_without_per_cycle_is_a_usage_error(capsys):
    from gpurf.sim.cli import main

    with pytest.raises(SystemExit) as done:
        main(["bench", "subcore.subcore_assigner", "--sets", "test"])
    assert done.value.code == 2
    assert capsys.readouterr().err.strip() == "gpurf: --sets applies to --per-cycle"


@pytest.mark.parametrize("stop_at, compared", [(120, 120), (0, 300)])
def test_stop_at_ends_the_comparison_where_the_stimulus_would_go_on(stop_at, compared):
    """The cap the per-cycle bench puts on a stimulus that runs to its own end (the shard's):
    a random stimulus asked for 300 cycles is compared for ``stop_at`` of them, all without."""
    import xml.etree.ElementTree as ET

    from gpurf.sim.runner import available_simulators, run_bench
    from gpurf.tb.harness import CLOCK_PERIOD_NS

    if "icarus" not in available_simulators():
        pytest.skip("icarus is not installed")
    result = run_bench(get_block("subcore.subcore_assigner"), sim="icarus", cycles=300,
                       seed=1, stop_at=stop_at, testcase="test_random_traffic")
    case = ET.parse(result.results_xml).find(".//testcase")
    simulated = {p.get("name"): p.get("value") for p in case.iter("property")}
    assert result.passed
    assert round(float(simulated["sim_time_duration"]) / CLOCK_PERIOD_NS) == compared
