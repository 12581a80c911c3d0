"""Every probe of ``tests/bad_input.py``: one line on stderr, the exit status, no traceback."""

import re

import pytest

from tests.bad_input import PROBES, Probe, run_probe


@pytest.mark.parametrize("probe", PROBES, ids=[" ".join(p.argv[:2]) for p in PROBES])
def test_probe_is_one_clear_line(probe, tmp_path):
    status, out, err = run_probe(probe, tmp_path)
    assert (status, out) == (probe.status, ""), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert re.fullmatch(rf"gpurf: {probe.message}\n", err), err


def test_a_probe_that_passes_silently_is_caught(tmp_path):
    silent = Probe(("list",), "anything")
    status, _, err = run_probe(silent, tmp_path)
    assert status == 0 and err == ""
