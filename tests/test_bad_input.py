"""Every probe of ``tests/bad_input.py``: one line on stderr, the exit status, no traceback."""

import errno
import os
import re
from pathlib import Path

import pytest

from gpurf.sim.cli import main
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


def test_a_folder_gpurf_may_not_write_is_one_line(tmp_path, monkeypatch, capsys):
    """``gpurf test`` in a read-only folder. The suite may run as root, whom permissions do
    not stop, so the folder's refusal is made here: every directory gpurf creates below
    ``tmp_path`` raises the ``PermissionError`` the kernel would."""
    real_mkdir, real_makedirs = Path.mkdir, os.makedirs

    def below(path) -> bool:
        return Path(os.path.abspath(path)).is_relative_to(tmp_path)

    def mkdir(self, *args, **kwargs):
        if below(self):
            raise PermissionError(errno.EACCES, "Permission denied", str(self))
        return real_mkdir(self, *args, **kwargs)

    def makedirs(name, *args, **kwargs):
        if below(name):
            raise PermissionError(errno.EACCES, "Permission denied", name)
        return real_makedirs(name, *args, **kwargs)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(Path, "mkdir", mkdir)
    monkeypatch.setattr(os, "makedirs", makedirs)
    with pytest.raises(SystemExit) as done:
        main(["test", "subcore.warp_selector"])
    err = capsys.readouterr().err
    assert done.value.code == 2
    assert re.fullmatch(rf"gpurf: {re.escape(str(tmp_path))}/build/\S+: Permission denied\n",
                        err), err
