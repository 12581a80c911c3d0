"""``gpurf compile``: the passes' listings, JSON and per-kernel tables, and its bad input."""

import json
import re

import pytest

from gpurf.sim.kernels import workload_names
from tests.test_cli import run_cli


def test_greener_listing_appends_operand_states(capsys):
    code, out, _ = run_cli(capsys, "compile", "saxpy", "--pass", "greener")
    assert code == 0
    assert re.search(r"^\s+7\s+mad\.lo\.s32 .*, (ON|SLEEP|OFF)", out, re.MULTILINE)


def test_regless_listing_has_region_headers_and_flags(capsys):
    code, out, _ = run_cli(capsys, "compile", "saxpy", "--pass", "regless")
    assert code == 0
    assert out.startswith("  // region 0: preload [")
    assert re.search(r"// R\d+:(evict|erase)", out)


@pytest.mark.parametrize("pass_name, key", [("greener", "instructions"),
                                            ("regless", "regions")])
def test_json_parses(capsys, pass_name, key):
    code, out, _ = run_cli(capsys, "compile", "hotspot", "--pass", pass_name, "--json")
    assert code == 0
    document = json.loads(out)
    assert document["kernel"] and document[key]


def test_regless_table_has_a_row_per_kernel(capsys):
    code, out, _ = run_cli(capsys, "compile", "--pass", "regless", "--table", "--json")
    assert code == 0
    kernels = {name.partition("/")[0] for name in workload_names()}
    assert {row["workload"] for row in json.loads(out)} == kernels


@pytest.mark.parametrize("argv, message", [
    (("compile", "nope", "--pass", "regless"), r"unknown kernel 'nope'; known: .*"),
    (("compile", "--pass", "greener"), r"give a KERNEL .* or --table"),
    (("compile", "saxpy", "--pass", "greener", "--table"), r"give a KERNEL or --table, not both"),
])
def test_bad_input_is_one_line_exit_2(capsys, argv, message):
    code, out, err = run_cli(capsys, *argv)
    assert (code, out) == (2, "")
    assert re.fullmatch(rf"gpurf: {message}\n", err), err
