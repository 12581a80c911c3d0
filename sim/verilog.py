"""Verilog generation: one build folder per block and parameter set.

Generating a large block takes seconds to a minute, so the digest of each generated text is
remembered in the cache (:mod:`gpurf.sim.cache`) under the sources that generate it: the
block's component module and every ``gpurf`` module it imports, its parameters and the tool
versions. A file already in the build folder with that digest is not generated again.
"""

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from amaranth.back import rtlil, verilog

from gpurf.hw.registry import Block

from .cache import cache_key, default_cache, source_digest, text_digest, tool_key
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
    text = json.dumps(full, sort_keys=True, indent=1) + "\n"
    path = folder / "params.json"
    if not path.exists() or path.read_text() != text:
        write_atomically(path, text)
    return folder


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step, so a parallel reader never sees half."""
    with tempfile.NamedTemporaryFile("w", dir=path.parent, prefix=f".{path.name}-",
                                     delete=False) as part:
        part.write(text)
    os.replace(part.name, path)


def _generator_key(block: Block, params: dict[str, Any], form: str) -> str:
    """The key of a block's generated ``form`` ("verilog" or "rtlil") under its sources."""
    return cache_key(form, block.qualname, block.toplevel, params,
                     source_digest([block.component.__module__]), tool_key())


def design_digest(block: Block, params: dict[str, Any] | None = None) -> tuple[str, str | None]:
    """The SHA-256 of the block's RTLIL with ``params``, and the text when it had to be
    generated (``None`` when the digest was known from the cache)."""
    full = block.resolve(params)
    cache = default_cache()
    key = _generator_key(block, full, "rtlil")
    known = cache.get("design", key)
    if known is not None:
        return known["sha256"], None
    text = rtlil_text(block, full)
    cache.put("design", key, {"sha256": text_digest(text)})
    return text_digest(text), text


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

    The file is replaced atomically, so parallel test workers never read half of it; a file
    whose digest the cache knows for the block's current sources is kept as it is.
    """
    full = block.resolve(params)
    path = build_dir(block, full, root) / f"{block.toplevel}.v"
    cache = default_cache()
    key = _generator_key(block, full, "verilog")
    known = cache.get("design", key)
    if known is not None and path.exists() and text_digest(path.read_bytes()) == known["sha256"]:
        return path
    text = verilog_text(block, full)
    if not path.exists() or path.read_text() != text:
        write_atomically(path, text)
    cache.put("design", key, {"sha256": text_digest(text)})
    return path
