"""Results cached by content (``gpurf.sim.cache``): what changes a key, what a damaged entry
does, and the two caches built on it — synthesis figures and cosimulation verdicts."""

import json
import time

import pytest

import gpurf.synth.flow as synth_flow
from gpurf.hw.registry import get_block
from gpurf.sim import verilog
from gpurf.sim.cache import Cache, cache_key, default_cache, source_digest, source_files
from gpurf.sim.flow.tasks import cosim_key, cosimulate
from gpurf.synth.flow import synthesize

SMALL = "subcore.subcore_assigner"
"""A block that synthesizes and builds in seconds."""


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    """A fresh cache and build folder for the test."""
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(verilog, "BUILD_ROOT", tmp_path / "build")
    return tmp_path / "cache"


def test_a_key_is_the_content_not_its_order():
    assert cache_key({"a": 1, "b": 2}, "x") == cache_key({"b": 2, "a": 1}, "x")
    assert cache_key({"a": 1}, "x") != cache_key({"a": 2}, "x")
    assert cache_key("x", 1) != cache_key(1, "x")


def test_stored_values_come_back(tmp_path):
    store = Cache(tmp_path)
    assert store.get("synth", "ab" * 32) is None
    store.put("synth", "ab" * 32, {"cells": 3})
    assert store.get("synth", "ab" * 32) == {"cells": 3}
    assert store.get("cosim", "ab" * 32) is None


@pytest.mark.parametrize("damage", [
    lambda text: text[: len(text) // 2],                          # a truncated write
    lambda text: "",                                               # an empty file
    lambda text: text.replace('"cells":3', '"cells":4'),           # an edited value
    lambda text: text.replace('"key":"' + "ab" * 32, '"key":"' + "cd" * 32),  # another's key
])
def test_a_damaged_entry_is_dropped_never_trusted(tmp_path, damage):
    store = Cache(tmp_path)
    store.put("synth", "ab" * 32, {"cells": 3})
    path = store.path("synth", "ab" * 32)
    path.write_text(damage(path.read_text()))
    assert store.get("synth", "ab" * 32) is None
    assert not path.exists()


def test_a_partial_write_is_no_entry(tmp_path):
    """A writer killed before its rename leaves a temporary file, which is never read."""
    store = Cache(tmp_path)
    folder = store.path("synth", "ab" * 32).parent
    folder.mkdir(parents=True)
    (folder / ".part-x").write_text('{"key": "' + "ab" * 32 + '", "value": {"cells": 3}')
    assert store.get("synth", "ab" * 32) is None


def test_where_the_cache_lives(monkeypatch, tmp_path):
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path))
    assert default_cache().root == tmp_path
    monkeypatch.setenv("GPURF_CACHE", "off")
    off = default_cache()
    off.put("synth", "ab" * 32, {"cells": 3})
    assert not off.enabled and off.get("synth", "ab" * 32) is None
    monkeypatch.delenv("GPURF_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache().root == tmp_path / "xdg" / "gpurf"


def _package(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_sources_that_matter_are_what_is_imported(tmp_path, monkeypatch):
    """A module's digest follows what it imports (relative, absolute, inside functions),
    and only that."""
    _package(tmp_path, {
        "toypkg/__init__.py": "",
        "toypkg/top.py": "from . import used\n\ndef later():\n    import toypkg.late\n",
        "toypkg/used.py": "from toypkg.deep import X\n",
        "toypkg/deep.py": "X = 1\n",
        "toypkg/late.py": "",
        "toypkg/unrelated.py": "",
    })
    monkeypatch.syspath_prepend(str(tmp_path))
    assert set(source_files(["toypkg.top"])) == {
        "toypkg", "toypkg.top", "toypkg.used", "toypkg.deep", "toypkg.late"}
    before = source_digest(["toypkg.top"])
    (tmp_path / "toypkg" / "unrelated.py").write_text("Y = 2\n")
    assert source_digest(["toypkg.top"]) == before
    time.sleep(0.01)
    (tmp_path / "toypkg" / "deep.py").write_text("X = 2  # an edit two imports away\n")
    assert source_digest(["toypkg.top"]) != before


def test_a_bench_key_covers_its_golden_model_harness_and_runner():
    block = get_block("subcore.warp_selector")
    files = source_files([block.tb_module, block.golden_module, "gpurf.sim.runner"])
    assert {"gpurf.tb.harness", "gpurf.golden.model", "gpurf.golden.subcore.warp_selector",
            "gpurf.hw.subcore.configs", "gpurf.sim.toolchain"} <= set(files)


def test_synthesis_is_cached_by_content(cache_dir, monkeypatch):
    block = get_block(SMALL)
    first = synthesize(block)
    assert not first.cached
    again = synthesize(block)
    assert again.cached and again == first
    other = synthesize(block, {"subcores": 2})
    assert not other.cached and other.cells != first.cells
    monkeypatch.setattr(synth_flow, "_SCRIPT", synth_flow._SCRIPT + "stat\n")
    assert not synthesize(block).cached


def test_a_damaged_synthesis_entry_is_recomputed(cache_dir):
    block = get_block(SMALL)
    first = synthesize(block)
    [entry] = (cache_dir / "synth").rglob("*.json")
    record = json.loads(entry.read_text())
    record["value"]["cells"] = 1
    entry.write_text(json.dumps(record))
    again = synthesize(block)
    assert not again.cached and again.cells == first.cells


def test_a_generated_design_is_not_generated_twice(cache_dir, monkeypatch):
    block = get_block(SMALL)
    path = verilog.write_verilog(block)

    def fail(*_args):
        raise AssertionError("generated again")

    monkeypatch.setattr(verilog, "verilog_text", fail)
    assert verilog.write_verilog(block) == path
    path.write_text("// edited by hand\n")
    with pytest.raises(AssertionError, match="generated again"):
        verilog.write_verilog(block)


def test_a_cosimulation_key_changes_with_its_inputs(cache_dir):
    key = cosim_key(SMALL, "verilator", 100, 1)
    assert key == cosim_key(SMALL, "verilator", 100, 1)
    assert len({key, cosim_key(SMALL, "verilator", 100, 2), cosim_key(SMALL, "icarus", 100, 1),
                cosim_key(SMALL, "verilator", 101, 1)}) == 4


def test_a_cosimulation_verdict_is_cached(cache_dir):
    first = cosimulate(SMALL, "verilator", 100, 1)
    assert first["status"] == "pass" and not first["cached"]
    assert cosimulate(SMALL, "verilator", 100, 1) == {**first, "cached": True}
    [entry] = (cache_dir / "cosim").rglob("*.json")
    entry.write_text(entry.read_text()[:-10])
    assert not cosimulate(SMALL, "verilator", 100, 1)["cached"]
