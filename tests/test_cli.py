"""The ``gpurf`` command line: every command's happy path and every bad input's one-line error."""

import json
import re

import pytest

from gpurf.sim.cli import main
from gpurf.sim.toolchain import missing_simulator


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def test_list_json_names_every_block_with_defaults(capsys):
    code, out, _ = run_cli(capsys, "list", "--json")
    assert code == 0
    blocks = {entry["name"]: entry["params"] for entry in json.loads(out)}
    assert blocks["subcore.warp_selector"] == {"slots": 16, "score_width": 5, "policy": "rba",
                                               "rba_greedy": False}
    assert all(re.fullmatch(r"[a-z]+\.[a-z0-9_]+", name) for name in blocks)


def test_generate_writes_verilog_with_the_block_top(capsys, tmp_path):
    target = tmp_path / "sel.v"
    code, _, _ = run_cli(capsys, "generate", "subcore.warp_selector", "-p", "slots=4",
                         "-p", "policy=gto", "-o", str(target))
    assert code == 0
    assert re.search(r"^module subcore_warp_selector\(", target.read_text(), re.MULTILINE)


def test_synth_json_has_the_report_keys(capsys):
    code, out, _ = run_cli(capsys, "synth", "subcore.warp_selector", "-p", "slots=4", "--json")
    assert code == 0
    (report,) = json.loads(out)
    for key in ("cells", "cells_by_type", "transistors", "memory_bits", "ff_bits",
                "logic_depth"):
        assert key in report
    assert report["cells"] == sum(report["cells_by_type"].values())
    assert report["transistors"] > 0


@pytest.mark.skipif(missing_simulator("icarus") is not None,
                    reason=str(missing_simulator("icarus")))
def test_test_command_passes_a_bench(capsys):
    code, out, _ = run_cli(capsys, "test", "subcore.warp_selector", "-p", "slots=4",
                           "--cycles", "50", "--seed", "3")
    assert code == 0
    assert re.search(r"^PASS subcore\.warp_selector on icarus: 3/3 tests passed \(seed 3\)",
                     out, re.MULTILINE)


@pytest.mark.parametrize(("argv", "message"), [
    (["generate", "subcore.nope"],
     r"^gpurf: unknown block 'subcore\.nope'; known blocks: .*subcore\.warp_selector"),
    (["generate", "subcore.warp_selector", "-p", "slots=1"],
     r"^gpurf: subcore\.warp_selector: slots must be an integer in 2\.\.64, not 1$"),
    (["generate", "subcore.warp_selector", "-p", "slots=x"],
     r"^gpurf: subcore\.warp_selector: parameter 'slots' takes an integer, not 'x'$"),
    (["generate", "subcore.warp_selector", "-p", "rba_greedy=maybe"],
     r"^gpurf: subcore\.warp_selector: parameter 'rba_greedy' takes true or false, not 'maybe'$"),
    (["generate", "subcore.warp_selector", "-p", "bogus=1"],
     r"^gpurf: subcore\.warp_selector has no parameter 'bogus'; its parameters are "),
    (["generate", "subcore.warp_selector", "-p", "slots"],
     r"^gpurf: subcore\.warp_selector: parameter 'slots' is not of the form KEY=VALUE$"),
    (["synth", "all", "-p", "slots=4"], r"^gpurf: --param applies to one block, not to `all`$"),
    (["test", "subcore.warp_selector", "--sim", "modelsim"], r"^gpurf: Invalid value for '--sim'"),
    (["energy", "nokernel"],
     r"^gpurf: unknown kernel 'nokernel'; known: bankconflict, divergent, .*vecadd$"),
    (["energy", "vecadd", "--warps", "65"], r"^gpurf: Invalid value for '--warps'"),
    (["test", "subcore.warp_selector", "--cycles", "0"], r"^gpurf: Invalid value for '--cycles'"),
    (["run", "nomechanism"], r"^gpurf: unknown mechanism 'nomechanism'; known: (\w+, )*wir; "
                             r"or a kernel: bankconflict, divergent, .*saxpy, sobel, vecadd$"),
    (["run", "subcore", "--size", "paper"],
     r"^gpurf: --size and --json apply to a KERNEL, not to the main job$"),
    (["run", "saxpy", "--size", "huge"], r"^gpurf: Invalid value for '--size'"),
    (["bench", "--kernel", "nope"],
     r"^gpurf: unknown kernel 'nope'; known: bankconflict, divergent, "),
    (["frobnicate"], r"^gpurf: No such command 'frobnicate'\.$"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert re.search(message, err.strip()), err
    assert "Traceback" not in err


def test_run_kernel_checks_it_against_its_reference(capsys):
    code, out, _ = run_cli(capsys, "run", "saxpy")
    assert code == 0
    assert re.search(r"^\| y \| float32 \| 3,000 \| 0 \|$", out, re.MULTILINE)
    assert re.search(r"^PASS saxpy \(test\): outputs equal the numpy reference$", out, re.MULTILINE)


def test_run_kernel_json_has_outputs_and_statistics(capsys):
    code, out, _ = run_cli(capsys, "run", "fma_subcore/unbalanced", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["passed"] and report["outputs"]["out"] == {"elements": 1024, "mismatches": 0}
    assert report["stats"]["barriers"] == 1 and report["stats"]["warps"] == 32
    assert report["stats"]["warp_instructions"] > 1000


def test_energy_compares_the_three_policies(capsys):
    code, out, _ = run_cli(capsys, "energy", "vecadd", "--warps", "2", "--json")
    assert code == 0
    result = json.loads(out)
    assert set(result["runs"]) == {"always_on", "greener", "sleep_reg"}
    assert result["states"] == "compiler" and result["threshold"] == 3


def test_bench_kernel_reports_warp_instructions_per_second(capsys):
    code, out, _ = run_cli(capsys, "bench", "--kernel", "vecadd")
    assert code == 0
    assert re.search(r"^\| vecadd \| test \| 2,090 \| [\d.]+ \| [\d,]+ \| [\d.]+ \([\d.]+\) \| "
                     r"[\d,]+ \([\d,]+\) \| [\d,]+ \| PASS \|$", out, re.MULTILINE)


@pytest.mark.parametrize("command", ["list", "generate", "synth", "test", "run"])
def test_every_command_has_help(capsys, command):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0
    assert out.startswith("Usage: gpurf")
