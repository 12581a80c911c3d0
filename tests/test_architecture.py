"""The layers of docs/architecture.md: import-linter's contracts (pyproject.toml) hold on the
code, break on a copy of it with one upward import added, and leave no module outside a
layer; the folders are importable only under ``gpurf``; the registry holds each block once.
"""

import ast
import importlib
import os
import pkgutil
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from gpurf import hw
from gpurf.hw.registry import all_blocks

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("hw", "golden", "sim", "synth", "tb")
LINT_IMPORTS = Path(sys.executable).parent / "lint-imports"
CONFIG = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]


def _lint(cwd: Path, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(LINT_IMPORTS), "--no-cache", "--no-logo"], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=600)


def _module(path: str | Path) -> str:
    """The installed name of the module at ``path`` (relative to the repository)."""
    return ".".join(("gpurf", *Path(path).with_suffix("").parts)).removesuffix(".__init__")


def _modules() -> list[str]:
    """Every module of the five folders."""
    return [_module(path.relative_to(ROOT))
            for folder in FOLDERS for path in sorted((ROOT / folder).rglob("*.py"))]


def test_contracts_kept():
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_every_module_is_in_a_layer():
    """A layers contract says nothing of a module in no layer: a new module must be placed
    (only the namespace's package modules, ``gpurf.sim`` being one, sit above the layers)."""
    (layers,) = [c["layers"] for c in CONFIG["contracts"] if c["type"] == "layers"]
    named = {n.strip() for layer in layers for part in layer.split("|")
             for n in part.split(":")}
    outside = [m for m in _modules() if m not in CONFIG["root_packages"]
               and not any(m == n or m.startswith(f"{n}.") for n in named)]
    assert not outside, f"modules in no layer of pyproject.toml: {outside}"


def _copy(tmp_path: Path) -> Path:
    """The five folders' Python files as package ``gpurf`` under ``tmp_path``, beside a copy of
    pyproject.toml (the contracts)."""
    for folder in FOLDERS:
        for source in (ROOT / folder).rglob("*.py"):
            target = tmp_path / "gpurf" / folder / source.relative_to(ROOT / folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
    shutil.copyfile(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


@pytest.mark.parametrize(("module", "upward"), [
    ("sim/passes/dataflow.py", "gpurf.sim.sm.run"),   # a pass runs the SM
    ("golden/__init__.py", "gpurf.sim.ptx.ir"),       # golden models use the PTX front end
    ("tb/harness.py", "gpurf.sim.verilog"),           # the harness generates Verilog
    ("sim/verilog.py", "gpurf.synth.flow"),           # a lower tool flow imports synthesis
    ("sim/sm/timing.py", "gpurf.tb.harness"),         # the SM drives RTL itself
])
def test_upward_import_is_caught(tmp_path, module, upward):
    """The real contracts on a copy of the code with one import added: lint-imports fails
    and names that import."""
    copy = _copy(tmp_path)
    path = copy / "gpurf" / module
    path.write_text(f"{path.read_text()}\nimport {upward}\n")
    result = _lint(copy, {**os.environ, "PYTHONPATH": str(copy)})
    assert result.returncode == 1, result.stdout + result.stderr
    line = rf"-\s+{re.escape(_module(module))} -> {re.escape(upward)} \(l\.\d+\)"
    assert re.search(line, result.stdout), result.stdout


@pytest.mark.parametrize("name", FOLDERS)
def test_old_top_level_name_is_not_importable(tmp_path, name):
    """The folders install only as ``gpurf.<folder>``: from a directory without them, the
    bare names are not modules (so no block is ever loaded twice under two names)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run([sys.executable, "-c", f"import {name}"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"ModuleNotFoundError: No module named '{name}'" in result.stderr


def test_registry_holds_each_block_once():
    """Every block declared in a mechanism's ``BLOCKS`` is in the registry exactly once, its
    component class once and loaded from ``gpurf.hw``."""
    declared = [block.qualname
                for info in pkgutil.iter_modules(hw.__path__) if info.ispkg
                for block in getattr(importlib.import_module(f"gpurf.hw.{info.name}"),
                                     "BLOCKS", ())]
    blocks = all_blocks()
    assert sorted(declared) == [b.qualname for b in blocks]
    assert len(set(declared)) == len(declared)
    components = [b.component for b in blocks]
    assert len(set(components)) == len(components)
    assert all(c.__module__.startswith("gpurf.hw.") for c in components)
    assert not [m for m in sys.modules if m.partition(".")[0] in FOLDERS]


def _imported_modules(path: Path) -> set[str]:
    """Every module ``path`` imports (``from X import Y`` counts ``X`` and ``X.Y``)."""
    tree = ast.parse(path.read_text())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return found


def test_golden_models_import_no_component_module():
    """Golden models reach a block's parameters and layouts through ``hw/<m>/configs.py`` and
    ``layouts.py``, never through the component (a model must not share the RTL's code)."""
    components = {block.component.__module__ for block in all_blocks()}
    golden = Path(importlib.import_module("gpurf.golden").__file__).parent
    offenders = {f"{path.relative_to(golden)}: {module}"
                 for path in golden.rglob("*.py") for module in _imported_modules(path)
                 if module in components}
    assert not offenders, sorted(offenders)
