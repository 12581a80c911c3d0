"""Verilog generation: one build folder per block and parameter set."""

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from amaranth.back import rtlil, verilog

from gpurf.hw.registry import Block

from .toolchain import activate

BUILD_ROOT = Path(os.environ.get("GPURF_BUILD", "build"))


def param_tag(params: dict[str, Any]) -> str:
    """A short, deterministic folder name for a full parameter set."""
    text = json.dumps(params, sort_keys=True)
    return "p" + hashlib.sha1(text.encode()).hexdigest()[:10]


def build_dir(block: Block, params: dict[str, Any], root: Path | None = None) -> Path:
    """``build/<mechanism>.<block>/<tag>/``, created, with ``params.json`` inside."""
    full = block.resolve(params)
    folder = (root or BUILD_ROOT).resolve() / block.qualname / param_tag(full)
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "params.json").write_text(json.dumps(full, sort_keys=True, indent=1) + "\n")
    return folder


def verilog_text(block: Block, params: dict[str, Any] | None = None) -> str:
    """The Verilog of ``block`` with ``params``; the top module is ``block.toplevel``."""
    activate()
    component = block.build(params)
    return verilog.convert(component, name=block.toplevel, emit_src=False)


def rtlil_text(block: Block, params: dict[str, Any] | None = None) -> str:
    """The RTLIL of ``block`` with ``params``, for the synthesis flow."""
    component = block.build(params)
    return rtlil.convert(component, name=block.toplevel, emit_src=False)


def write_verilog(block: Block, params: dict[str, Any] | None = None,
                  root: Path | None = None) -> Path:
    """Write the block's Verilog into its build folder and return the file's path.

    The file is replaced atomically, so parallel test workers never read half of it.
    """
    path = build_dir(block, params or {}, root) / f"{block.toplevel}.v"
    text = verilog_text(block, params)
    if not path.exists() or path.read_text() != text:
        with tempfile.NamedTemporaryFile("w", dir=path.parent, delete=False) as part:
            part.write(text)
        os.replace(part.name, path)
    return path
