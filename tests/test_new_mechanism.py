"""Adding a mechanism is one folder in each of hw, golden and tb plus a synth entry.

A toy sixth mechanism (``tests/toy_mechanism/``: a counter block) is copied into a temporary
folder named in ``GPURF_PATH`` and found by the registry's discovery alone: it appears in
``gpurf list``, in the generated parameter tests, the cosimulation and lint tests (a pytest
run in a subprocess), in the main job's synthesis table and in ``gpurf cost``.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).parent
TOY = TESTS / "toy_mechanism"
GPURF = Path(sys.executable).parent / "gpurf"


@pytest.fixture(scope="module")
def toy_env(tmp_path_factory):
    root = tmp_path_factory.mktemp("ext") / "mechanisms"
    shutil.copytree(TOY, root)
    return {**os.environ, "GPURF_PATH": str(root)}


def _run(command, env, **kwargs):
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=900,
                          **kwargs)


def test_listed(toy_env):
    result = _run([GPURF, "list", "--json"], toy_env)
    assert result.returncode == 0, result.stderr
    entry = next(e for e in json.loads(result.stdout) if e["name"] == "toy.counter")
    assert entry["params"] == {"width": 4} and entry["allowed"] == {"width": "1..16"}


def test_in_the_generated_and_parametrized_tests(toy_env, seed):
    result = _run([sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider",
                   "-k", "toy", "--seed", str(seed), "tests/test_params.py",
                   "tests/test_cosim.py", "tests/test_lint.py"], toy_env, cwd=TESTS.parent)
    summary = result.stdout.strip().splitlines()[-1]
    assert result.returncode == 0, result.stdout[-3000:]
    assert int(re.search(r"(\d+) passed", summary).group(1)) >= 8, summary
    ran = set(re.findall(r"^PASSED tests/\S+?::(\w+)", result.stdout, re.MULTILINE))
    assert ran >= {"test_cocotb", "test_amaranth_sim", "test_verilator_lint_clean",
              "test_value_outside_the_declaration_is_rejected"}, sorted(ran)


def test_in_the_main_job_and_its_cost_report(toy_env):
    result = _run([GPURF, "run", "toy", "--cycles", "200"], toy_env)
    assert result.returncode == 0, result.stdout + result.stderr
    verdict, synthesis = [line for line in result.stdout.splitlines()
                          if line.startswith("| toy.counter |")][:2]
    assert "FAIL" not in verdict and "PASS" in verdict
    assert int(synthesis.split("|")[2].replace(",", "")) > 0
    report = _run([GPURF, "cost", "toy"], toy_env)
    assert report.returncode == 0 and "| toy.counter |" in report.stdout, report.stderr


def test_a_missing_folder_is_one_line_exit_2(tmp_path):
    result = _run([GPURF, "list"], {**os.environ, "GPURF_PATH": str(tmp_path / "none")})
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"gpurf: GPURF_PATH names {tmp_path / 'none'}, which is not a folder"]
