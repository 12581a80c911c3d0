"""A user's own kernel: ``gpurf sm run PATH`` with a kernel folder outside the package, the
launch file's limits, and a broken folder that breaks nothing else."""

import re
import shutil

import numpy as np
import pytest

import gpurf.sim.kernels as kernels
from gpurf.sim.cli import main
from gpurf.sim.kernels import kernel_dir, reference
from gpurf.sim.sm import run_kernel
from gpurf.sim.sm.launch import LaunchError, load_launch
from gpurf.sim.sm.workload import UnknownKernelError, find_workload

SAXPY = kernel_dir("saxpy")
LAUNCH = (SAXPY / "launch.toml").read_text()
USER_REFERENCE = '''"""The user's reference: saxpy with one fused multiply-add per element."""
import numpy as np
from gpurf.sim.kernels.fp import fma_f32


def mine(buffers, scalars):
    y = buffers["y"].copy()
    n = scalars["n"]
    y[:n] = fma_f32(np.float32(scalars["a"]), buffers["x"][:n], y[:n])
    return {"y": y}
'''


def run_cli(capsys, *argv):
    with pytest.raises(SystemExit) as done:
        main(list(argv))
    out, err = capsys.readouterr()
    return done.value.code, out, err


def _folder(tmp_path, launch=LAUNCH, reference_py=None, source="kernel.ptx"):
    folder = tmp_path / "mykernel"
    folder.mkdir()
    shutil.copy(SAXPY / source, folder / source)
    (folder / "launch.toml").write_text(launch)
    if reference_py is not None:
        (folder / "reference.py").write_text(reference_py)
    return folder


def _expected_npy(folder, size="test"):
    """The shipped reference's outputs, saved as the folder's expected ``.npy`` files."""
    spec = load_launch(SAXPY / "launch.toml")
    launch = spec.make(size)
    scalars = {**launch.variables, **{n: v for n, t, v in launch.params if t != "ptr"}}
    expected = reference.saxpy({k: v.copy() for k, v in launch.buffers.items()}, scalars)
    (folder / "expected" / size).mkdir(parents=True)
    for name, array in expected.items():
        np.save(folder / "expected" / size / f"{name}.npy", array)


def test_a_folder_with_its_own_reference_runs_and_passes(capsys, tmp_path):
    folder = _folder(tmp_path, LAUNCH.replace('reference = "saxpy"', 'reference = "mine"'),
                     USER_REFERENCE)
    code, out, _ = run_cli(capsys, "sm", "run", str(folder), "--no-timing")
    assert code == 0, out
    assert f"PASS {folder} (test): outputs equal the numpy reference" in out
    code, out, _ = run_cli(capsys, "sm", "run", str(folder), "--json")
    assert code == 0 and '"passed": true' in out


def test_a_folder_with_expected_outputs_runs_and_a_wrong_value_fails(capsys, tmp_path):
    folder = _folder(tmp_path, LAUNCH.replace('reference = "saxpy"\n', ""))
    _expected_npy(folder)
    assert run_cli(capsys, "sm", "run", str(folder), "--no-timing")[0] == 0
    y = np.load(folder / "expected" / "test" / "y.npy")
    y[7] += 1
    np.save(folder / "expected" / "test" / "y.npy", y)
    code, out, _ = run_cli(capsys, "sm", "run", str(folder), "--no-timing")
    assert code == 1
    assert re.search(r"^\| y \| float32 \| 3,000 \| 1 \|$", out, re.MULTILINE)


def test_compile_and_bench_take_a_folder(capsys, tmp_path):
    folder = _folder(tmp_path, LAUNCH.replace('reference = "saxpy"\n', ""))
    _expected_npy(folder)
    code, out, _ = run_cli(capsys, "compile", str(folder), "--pass", "greener")
    assert code == 0 and "fma.rn.f32" in out
    code, out, _ = run_cli(capsys, "sm", "bench", str(folder))
    assert code == 0 and "| PASS |" in out


@pytest.mark.parametrize(("launch", "files", "message"), [
    (LAUNCH.replace('reference = "saxpy"\n', ""), {},
     r"mykernel/expected/test/y\.npy: missing \(the expected output 'y' at size test; "),
    (LAUNCH.replace('reference = "saxpy"', 'reference = "np"'), {"reference.py": USER_REFERENCE},
     r"mykernel/launch\.toml:3: no function 'np' in reference\.py$"),
    (LAUNCH, {}, r"mykernel/reference\.py: missing \(the launch file names a reference "),
    (LAUNCH.replace('reference = "saxpy"', 'reference = "mine"'),
     {"reference.py": "def mine(:\n"}, r"mykernel/reference\.py:1: "),
    (LAUNCH.replace('reference = "saxpy"', 'reference = "mine"'),
     {"reference.py": "raise ImportError('no numpy here')\n"},
     r"mykernel/reference\.py: importing it raised ImportError: no numpy here$"),
])
def test_a_folder_without_usable_expected_outputs_is_named(capsys, tmp_path, launch, files,
                                                           message):
    folder = _folder(tmp_path, launch)
    for name, text in files.items():
        (folder / name).write_text(text)
    code, out, err = run_cli(capsys, "sm", "run", str(folder), "--no-timing")
    assert (code, out) == (2, "")
    assert len(err.splitlines()) == 1 and re.search(message, err), err


def test_cuda_source_without_nvcc_asks_for_the_ptx(capsys, tmp_path, monkeypatch):
    folder = _folder(tmp_path, source="kernel.cu")
    monkeypatch.setattr(shutil, "which", lambda _: None)
    code, _, err = run_cli(capsys, "sm", "run", str(folder))
    assert code == 2
    assert err == (f"gpurf: {folder}/kernel.cu: nvcc is not installed; add the kernel's PTX "
                   "as kernel.ptx (nvcc -ptx -arch=sm_80)\n")


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed")
def test_cuda_source_is_compiled_when_nvcc_is_here(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    folder = _folder(tmp_path, LAUNCH.replace('reference = "saxpy"', 'reference = "mine"'),
                     USER_REFERENCE, source="kernel.cu")
    code, out, _ = run_cli(capsys, "sm", "run", str(folder), "--no-timing")
    assert code == 0, out
    assert list((tmp_path / "cache" / "ptx").glob("*.ptx"))


def test_names_resolve_to_folders_first_then_shipped_kernels(tmp_path, monkeypatch):
    assert find_workload("fma_subcore/unbalanced").shipped
    with pytest.raises(UnknownKernelError, match=r"^x/y: no such kernel folder$"):
        find_workload("x/y")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "saxpy").mkdir()
    shutil.copy(SAXPY / "launch.toml", tmp_path / "saxpy" / "launch.toml")
    assert not find_workload("saxpy").shipped


@pytest.mark.parametrize(("old", "new", "key", "message"), [
    ('block = ["block", 1, 1]', 'block = [0, 1, 1]', "block = [0",
     r"'block' must be an integer >= 1, not 0$"),
    ('block = ["block", 1, 1]', 'block = ["block", 16, 1]', "block = [",
     r"2,048 threads per block; at most 1,024 are allowed$"),
    ("n = 3000", "n = 42.5", 'shape = ["n"]', r"'shape' must be an integer >= 0, not 'n' = 42\.5$"),
    ("n = 3000", "n = -5", "grid =",
     r"'grid' must be an integer >= 1, not 'cdiv\(n, block\)' = 0$"),
    ("n = 3000", "n = 100_000_000_000", 'shape = ["n"]',
     r"buffer 'x' of shape \(100000000000,\) takes 400,000,000,000 bytes; at most "),
    ("range = [-10.0, 10.0]", "range = [10.0, -10.0]", "range = [10.0",
     r"range must be \[low, high\] with low <= high, not \[10\.0, -10\.0\]$"),
    ('grid = ["cdiv(n, block)", 1, 1]', 'grid = ["' + "+".join(["n"] * 5000) + '", 1, 1]',
     "grid =", r"expression of 9,999 characters; at most 200 are allowed$"),
])
def test_launch_limits_name_file_line_and_expectation(tmp_path, old, new, key, message):
    assert old in LAUNCH
    text = LAUNCH.replace(old, new, 1)
    path = tmp_path / "launch.toml"
    path.write_text(text)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if key in row)
    with pytest.raises(LaunchError, match=rf"^{re.escape(str(path))}:{line}: {message}"):
        load_launch(path).make("test")


def test_one_broken_launch_file_breaks_no_other_kernel(tmp_path, monkeypatch):
    for name in ("saxpy", "vecadd"):
        shutil.copytree(kernel_dir(name), tmp_path / name)
    (tmp_path / "vecadd" / "launch.toml").write_bytes(b"\xff\xfe not toml")
    monkeypatch.setattr(kernels, "KERNELS_DIR", tmp_path)
    assert kernels.workload_names() == ["saxpy", "vecadd"]
    assert run_kernel("saxpy").passed
    with pytest.raises(LaunchError, match=r"vecadd/launch\.toml:1: not a UTF-8 TOML file$"):
        run_kernel("vecadd")


def test_compile_table_reports_a_broken_kernel_and_goes_on(capsys, tmp_path, monkeypatch):
    for name in ("saxpy", "vecadd"):
        shutil.copytree(kernel_dir(name), tmp_path / name)
    ptx = tmp_path / "vecadd" / "kernel.ptx"
    ptx.write_text(ptx.read_text().replace("ret;", "brkpt;\n\tret;"))
    monkeypatch.setattr(kernels, "KERNELS_DIR", tmp_path)
    code, out, err = run_cli(capsys, "compile", "--table", "--pass", "regless")
    assert code == 1
    assert re.search(r"^\| saxpy \| saxpy \| \d+ \| ", out, re.MULTILINE)
    assert re.search(r"^\| vecadd \| - \| - \| .*unsupported instruction 'brkpt' \|$", out,
                     re.MULTILINE)
    assert re.fullmatch(r"gpurf: vecadd: \S+/vecadd/kernel\.ptx:\d+: unsupported instruction "
                        r"'brkpt'\n", err)
