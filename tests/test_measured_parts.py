"""The committed parts of paper-size runs in progress (``docs/measured/``, docs/results.md
"Runs longer than a session"): each folder is one pinned run, so every part in it reads back
(key and SHA-256 intact) and names the folder's mechanism, size and one revision."""

import json
from pathlib import Path

import pytest

from gpurf.sim.reproduce.parts import import_parts

MEASURED = Path(__file__).resolve().parent.parent / "docs" / "measured"
FOLDERS = sorted(p for p in MEASURED.iterdir() if p.is_dir()) if MEASURED.is_dir() else []


@pytest.mark.parametrize("folder", FOLDERS, ids=[f.name for f in FOLDERS])
def test_a_pinned_runs_parts_read_back_and_agree_on_its_revision(folder, tmp_path,
                                                                  monkeypatch):
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    files = sorted(folder.glob("*.json"))
    assert import_parts(folder) == len(files) > 0
    parts = [json.loads(f.read_text()) for f in files]
    mechanism, size = folder.name.split("-")
    assert {(p["mechanism"], p["size"]) for p in parts} == {(mechanism, size)}
    assert len({p["revision"] for p in parts}) == 1
    readme = (folder / "README.md").read_text()
    assert parts[0]["revision"][:7] in readme
