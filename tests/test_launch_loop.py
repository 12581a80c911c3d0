"""Host loops in launch descriptions: a fixed count or until a flag buffer says done, the
loop variable in parameters and grids, ping-pong swaps, structured inputs; every mistake a
one-line error naming file, line and what was expected; a broken kernel or reference is
caught."""

import re
import shutil
from dataclasses import replace

import numpy as np
import pytest

from gpurf.sim.cli import main
from gpurf.sim.kernels import kernel_dir, reference
from gpurf.sim.sm import load_config, run_kernel
from gpurf.sim.sm.launch import MAX_ITERATIONS, LaunchError, load_launch
from gpurf.sim.sm.run import add_timing_stats, load_workload

COUNTDOWN_PTX = """.version 8.0
.target sm_80
.address_size 64

.visible .entry countdown(.param .u64 countdown_param_0, .param .u64 countdown_param_1,
    .param .u64 countdown_param_2, .param .u32 countdown_param_3,
    .param .u32 countdown_param_4)
{
\t.reg .pred %p<4>;
\t.reg .b32 %r<8>;
\t.reg .b64 %rd<10>;
\tld.param.u64 %rd1, [countdown_param_0];
\tld.param.u64 %rd2, [countdown_param_1];
\tld.param.u64 %rd3, [countdown_param_2];
\tld.param.u32 %r1, [countdown_param_3];
\tld.param.u32 %r2, [countdown_param_4];
\tmov.u32 %r3, %tid.x;
\tsetp.ne.s32 %p3, %r3, 0;
\t@%p3 bra $COUNT;
\tmul.wide.u32 %rd7, %r2, 4;
\tadd.s64 %rd8, %rd3, %rd7;
\tadd.s32 %r7, %r2, 100;
\tst.global.u32 [%rd8], %r7;
$COUNT:
\tsetp.ge.u32 %p1, %r3, %r1;
\t@%p1 bra $DONE;
\tmul.wide.u32 %rd4, %r3, 4;
\tadd.s64 %rd5, %rd1, %rd4;
\tld.global.u32 %r4, [%rd5];
\tsetp.eq.s32 %p2, %r4, 0;
\t@%p2 bra $DONE;
\tsub.s32 %r5, %r4, 1;
\tst.global.u32 [%rd5], %r5;
\tsetp.eq.s32 %p2, %r5, 0;
\t@%p2 bra $DONE;
\tmov.u32 %r6, 1;
\tst.global.u32 [%rd2], %r6;
$DONE:
\tret;
}
"""
"""Each launch counts every non-zero ``x`` down by one, raises ``flag`` while any stays
above zero, and thread 0 writes ``log[iteration] = iteration + 100``."""

COUNTDOWN_TOML = """entry = "countdown"
reference = "countdown"
seed = 3

[sizes.test]
n = 40
high = 9

[sizes.paper]
n = 64
high = 12

[launch]
grid = [1, 1, 1]
block = [64, 1, 1]

[loop]
until = "flag"
max = "high + 1"

[[params]]
name = "x"
buffer = "x"

[[params]]
name = "flag"
buffer = "flag"

[[params]]
name = "log"
buffer = "log"

[[params]]
name = "n"
type = "u32"
value = "n"

[[params]]
name = "step"
type = "u32"
value = "iteration"

[buffers.x]
dtype = "uint32"
shape = ["n"]
init = "uniform"
range = [1, "high"]
output = true

[buffers.flag]
dtype = "uint32"
shape = [1]

[buffers.log]
dtype = "uint32"
shape = ["high + 1"]
output = true
"""

COUNTDOWN_REFERENCE = '''import numpy as np


def countdown(buffers, scalars):
    launches = int(buffers["x"].max())
    log = buffers["log"].copy()
    log[:launches] = np.arange(launches) + 100
    return {"x": np.zeros_like(buffers["x"]), "log": log}
'''


def _countdown(tmp_path, toml=COUNTDOWN_TOML):
    folder = tmp_path / "countdown"
    folder.mkdir()
    (folder / "kernel.ptx").write_text(COUNTDOWN_PTX)
    (folder / "launch.toml").write_text(toml)
    (folder / "reference.py").write_text(COUNTDOWN_REFERENCE)
    return folder


def test_until_loop_runs_until_the_flag_stays_clear(tmp_path):
    run = run_kernel(str(_countdown(tmp_path)))
    assert run.passed, run.mismatches()
    assert run.stats["launches"] == run.inputs["x"].max() == 9
    assert run.stats["blocks"] == 9


def test_until_loop_past_its_max_is_an_error_at_the_max_key(tmp_path):
    toml = COUNTDOWN_TOML.replace('max = "high + 1"', 'max = "high - 2"')
    folder = _countdown(tmp_path, toml)
    line = _line(toml, "max =")
    with pytest.raises(LaunchError, match=rf"^{re.escape(str(folder))}/launch\.toml:{line}: "
                                          r"the loop still asks for a launch after max = 7 "
                                          r"launches \(flag buffer 'flag' is not all zeros\)$"):
        run_kernel(str(folder))


def test_timing_statistics_add_across_launches(tmp_path):
    folder = _countdown(tmp_path)
    run = run_kernel(str(folder), timing=load_config())
    timing = run.stats["timing"]
    assert run.passed
    assert timing.instructions == run.stats["warp_instructions"]
    assert sum(timing.stalls.values()) + timing.instructions == timing.cycles * 4
    one = _single_launch_cycles(tmp_path, folder)
    assert timing.cycles > 9 * one / 2


def _single_launch_cycles(tmp_path, folder):
    """Cycles of the countdown's first launch alone (``repeat = 1``)."""
    toml = COUNTDOWN_TOML.replace('until = "flag"\nmax = "high + 1"', "repeat = 1")
    single = tmp_path / "single"
    shutil.copytree(folder, single)
    (single / "launch.toml").write_text(toml)
    return run_kernel(str(single), timing=load_config()).stats["timing"].cycles


def test_add_timing_stats_adds_numbers_lists_and_dicts():
    run = run_kernel("saxpy", timing=load_config())
    one = run.stats["timing"]
    two = add_timing_stats(add_timing_stats(None, one), one)
    assert two.cycles == 2 * one.cycles and two.issued == [2 * x for x in one.issued]
    assert two.stalls == {k: 2 * v for k, v in one.stalls.items()}
    assert two.l1_hits == 2 * one.l1_hits and two.config == one.config
    assert add_timing_stats(one, replace(one, cycles=1)).cycles == one.cycles + 1


def test_repeat_loop_passes_the_iteration_and_swaps_buffers():
    spec = load_launch(kernel_dir("pathfinder") / "launch.toml")
    launch = spec.make("test")
    assert [dict((n, v) for n, _, v in it.params)["row"] for it in launch.iterations] == \
        list(range(1, 8))
    assert launch.loop.swaps == (("src", "dst"),)
    run = run_kernel("pathfinder")
    assert run.passed and run.stats["launches"] == 7


def test_grid_may_follow_the_iteration():
    with pytest.raises(LaunchError, match=r"nw/launch\.toml:5: inputs function 'nw_inputs' is "
                                          r"not loaded \(load the kernel as a workload\)$"):
        load_launch(kernel_dir("nw") / "launch.toml").make("test")
    launch = load_workload("nw")[0].make("test")
    assert [it.grid[0] for it in launch.iterations] == [1, 2, 3, 4, 3, 2, 1]
    assert launch.max_grid == (4, 1, 1)
    fixed = {name: value for name, _, value in launch.fixed_params}
    assert fixed["diagonal"] is None and fixed["n"] == 64


def _copy_kernel(tmp_path, name, reference_py):
    folder = tmp_path / name
    shutil.copytree(kernel_dir(name), folder)
    (folder / "reference.py").write_text(reference_py)
    return folder


GAUSSIAN_REFERENCE = "from gpurf.sim.kernels.reference import gaussian, gaussian_inputs\n"


def test_without_the_swap_gaussian_is_caught(tmp_path):
    folder = _copy_kernel(tmp_path, "gaussian", GAUSSIAN_REFERENCE)
    assert run_kernel(str(folder)).passed
    toml = folder / "launch.toml"
    toml.write_text(toml.read_text().replace('swap = [["a", "out"]]\n', ""))
    assert run_kernel(str(folder)).mismatches()["a"] > 0


def test_a_broken_kernel_is_caught(tmp_path):
    """nw with max replaced by min in its PTX: scores differ from the reference."""
    folder = _copy_kernel(tmp_path, "nw", "from gpurf.sim.kernels.reference import nw, "
                                          "nw_inputs\n")
    ptx = folder / "kernel.ptx"
    assert ptx.read_text().count("max.s32") >= 2
    ptx.write_text(ptx.read_text().replace("max.s32", "min.s32"))
    assert run_kernel(str(folder)).mismatches()["score"] > 0


def test_a_reference_with_another_rounding_order_is_caught(monkeypatch):
    """lud's reference with an unfused multiply-add (two roundings): bit-exact comparison
    sees the difference."""
    assert run_kernel("lud").passed
    monkeypatch.setattr(reference, "fma_f32",
                        lambda a, b, c: np.float32(a) * np.float32(b) + np.float32(c))
    assert run_kernel("lud").mismatches()["m"] > 0


GOOD = (kernel_dir("pathfinder") / "launch.toml").read_text()


def _line(text, needle):
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(("old", "new", "needle", "message"), [
    ('repeat = "rows - 1"', 'repeat = "rows - 1"\nuntil = "src"', "[loop]",
     r"\[loop\] needs exactly one of 'repeat' \(a launch count\) and 'until' "
     r"\(a flag buffer\)$"),
    ('repeat = "rows - 1"', "", "[loop]", r"\[loop\] needs exactly one of "),
    ('repeat = "rows - 1"', 'until = "dst"', "[loop]",
     r"missing 'max' \(expected the most launches an 'until' loop may take\)$"),
    ('repeat = "rows - 1"', 'repeat = "rows - 1"\nmax = 4', "max = 4",
     r"'max' belongs to an 'until' loop; 'repeat' gives the count$"),
    ('repeat = "rows - 1"', 'until = "flags"\nmax = 3', 'until = "flags"',
     r"unknown buffer 'flags' \(expected one of wall, src, dst\)$"),
    ('repeat = "rows - 1"', 'repeat = "rows - 1"\ntimes = 2', "times = 2",
     r"unknown loop key 'times' \(expected one of max, repeat, swap, until\)$"),
    ('swap = [["src", "dst"]]', 'swap = [["src", "src"]]', "swap =",
     r"each swap must be \[a, b\], two different buffer names, not \['src', 'src'\]$"),
    ('swap = [["src", "dst"]]', 'swap = ["src"]', "swap =",
     r"each swap must be \[a, b\], two different buffer names, not 'src'$"),
    ('swap = [["src", "dst"]]', 'swap = [["src", "wall"]]', "swap =",
     r"swapped buffers 'src' and 'wall' must have the same dtype and shape$"),
    ('swap = [["src", "dst"]]', 'swap = [["src", "out"]]', "swap =",
     r"unknown buffer 'out' \(expected one of wall, src, dst\)$"),
    ('seed = 18', 'seed = 18\ninputs = 7', "inputs = 7",
     r"'inputs' must be the name of a function that makes the structured input buffers, "
     r"not 7$"),
])
def test_malformed_loop_names_file_line_and_expectation(tmp_path, old, new, needle, message):
    path, expected = _edited_launch(tmp_path, old, new, needle, message)
    with pytest.raises(LaunchError, match=expected):
        load_launch(path)


@pytest.mark.parametrize(("old", "new", "needle", "message"), [
    ('repeat = "rows - 1"', 'repeat = "rows - 8"', "repeat =",
     r"'repeat' must be an integer >= 1, not 'rows - 8' = 0$"),
    ('repeat = "rows - 1"', f"repeat = {MAX_ITERATIONS + 1}", "repeat =",
     rf"'repeat' is {MAX_ITERATIONS + 1:,} launches; at most {MAX_ITERATIONS:,} are allowed$"),
    ('value = "iteration + 1"', 'value = "iteration + step"', "iteration + step",
     r"cannot evaluate 'iteration \+ step': unknown variable 'step' \(size variables: rows, "
     r"cols, iteration\)$"),
    ('grid = ["cdiv(cols, 128)", 1, 1]', 'grid = ["cdiv(cols, 128) - iteration", 1, 1]',
     "grid =", r"'grid' must be an integer >= 1, not 'cdiv\(cols, 128\) - iteration' = 0$"),
])
def test_bad_loop_values_are_errors_before_any_launch(tmp_path, old, new, needle, message):
    path, expected = _edited_launch(tmp_path, old, new, needle, message)
    with pytest.raises(LaunchError, match=expected):
        load_launch(path).make("test")


def _edited_launch(tmp_path, old, new, needle, message):
    """``GOOD`` with ``old`` replaced by ``new``, written to ``tmp_path``; and the error
    pattern naming that file, the line holding ``needle`` and ``message``."""
    assert old in GOOD
    text = GOOD.replace(old, new, 1)
    path = tmp_path / "launch.toml"
    path.write_text(text)
    return path, rf"^{re.escape(str(path))}:{_line(text, needle)}: {message}"


def test_loop_must_be_a_table(tmp_path):
    section = '[loop]\nrepeat = "rows - 1"\nswap = [["src", "dst"]]\n'
    assert section in GOOD
    text = GOOD.replace(section, "").replace("seed = 18", "seed = 18\nloop = 3")
    path = tmp_path / "launch.toml"
    path.write_text(text)
    with pytest.raises(LaunchError, match=rf"launch\.toml:{_line(text, 'loop = 3')}: 'loop' "
                                          r"must be a table \[loop\], not 3$"):
        load_launch(path)


def test_iteration_outside_a_loop_is_an_unknown_variable(tmp_path):
    text = (kernel_dir("saxpy") / "launch.toml").read_text().replace('value = "n"',
                                                                     'value = "iteration"')
    path = tmp_path / "launch.toml"
    path.write_text(text)
    with pytest.raises(LaunchError, match=r"unknown variable 'iteration' \(size variables: "
                                          r"n, block\)$"):
        load_launch(path).make("test")


@pytest.mark.parametrize(("body", "message"), [
    ("    return {'row_start': buffers['row_start'].astype('int64')}",
     r"inputs function 'made' made 'row_start' as int64 of shape \(1025,\); expected int32 "
     r"of shape \(1025,\)$"),
    ("    return {'rows': buffers['row_start']}", r"inputs function 'made' made unknown buffer "
                                                r"'rows'$"),
])
def test_inputs_function_must_make_declared_buffers(tmp_path, body, message):
    folder = tmp_path / "spmv"
    shutil.copytree(kernel_dir("spmv"), folder)
    (folder / "reference.py").write_text("from gpurf.sim.kernels.reference import spmv\n\n\n"
                                         f"def made(buffers, scalars, rng):\n{body}\n")
    toml = folder / "launch.toml"
    text = toml.read_text().replace('inputs = "spmv_inputs"', 'inputs = "made"')
    toml.write_text(text)
    with pytest.raises(LaunchError, match=rf"^{re.escape(str(toml))}:"
                                          rf"{_line(text, 'inputs =')}: {message}"):
        run_kernel(str(folder))


def test_unknown_inputs_function_is_an_error(tmp_path):
    folder = tmp_path / "spmv"
    shutil.copytree(kernel_dir("spmv"), folder)
    (folder / "reference.py").write_text("from gpurf.sim.kernels.reference import spmv\n")
    with pytest.raises(LaunchError, match=r"launch\.toml:\d+: no function 'spmv_inputs' in "
                                          r"reference\.py$"):
        run_kernel(str(folder))


def test_cli_reports_an_unfinished_loop_in_one_line_exit_2(tmp_path, capsys):
    folder = _countdown(tmp_path, COUNTDOWN_TOML.replace('max = "high + 1"', "max = 2"))
    with pytest.raises(SystemExit) as done:
        main(["sm", "run", str(folder), "--no-timing"])
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert err == (f"gpurf: {folder}/launch.toml:{_line(COUNTDOWN_TOML, 'max =')}: the loop "
                   f"still asks for a launch after max = 2 launches (flag buffer 'flag' is not "
                   f"all zeros)\n")
