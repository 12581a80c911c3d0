"""Results cached by content: a result is stored under the hash of everything it depends on.

A key is the SHA-256 of the inputs of a computation (:func:`cache_key`): for synthesis the
design's RTLIL text, the yosys script, the flow's sources and the tool versions; for a
cosimulation the Verilog text, the sources of its bench, golden model and harness
(:func:`source_digest`), parameters, seed, cycles, simulator and tool versions. A second run
finds what did not change and recomputes only the rest.

Entries live in ``$GPURF_CACHE``, else ``$XDG_CACHE_HOME/gpurf``, else ``~/.cache/gpurf``
(``GPURF_CACHE=off`` turns the cache off), one JSON file per entry,
``<kind>/<key[:2]>/<key>.json``. An entry is written to a temporary file and renamed into
place, so a killed writer leaves no entry; it carries its key and the SHA-256 of its value,
so an entry that was truncated or edited is dropped and recomputed, never trusted.
"""

import ast
import hashlib
import importlib.util
import json
import os
import tempfile
from collections.abc import Iterable
from contextlib import AbstractContextManager, nullcontext
from functools import cache
from pathlib import Path
from typing import Any

from filelock import FileLock

from .provenance import tool_versions

__all__ = ["Cache", "cache_key", "default_cache", "source_digest", "source_files", "text_digest",
           "tool_key", "value_digest"]

OFF = "off"
"""The value of ``GPURF_CACHE`` that turns the cache off."""


def _canonical(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str).encode()


def cache_key(*parts: Any) -> str:
    """The SHA-256 (hex) of ``parts`` as canonical JSON (dict order does not matter)."""
    return hashlib.sha256(_canonical(parts)).hexdigest()


def text_digest(text: str | bytes) -> str:
    """The SHA-256 (hex) of a text, e.g. a generated design."""
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


def value_digest(value: Any) -> str:
    """The SHA-256 (hex) a cache entry carries of its JSON ``value``."""
    return text_digest(_canonical(value))


def tool_key() -> dict[str, str | None]:
    """The tool versions a cached result depends on: :func:`tool_versions` without the git
    revision (the sources that matter are hashed themselves)."""
    return {name: v for name, v in tool_versions().items() if name != "revision"}


class Cache:
    """A content-addressed store of JSON values; ``root=None`` is a cache that holds nothing."""

    def __init__(self, root: Path | None):
        self.root = root

    @property
    def enabled(self) -> bool:
        return self.root is not None

    def path(self, kind: str, key: str) -> Path:
        return self.root / kind / key[:2] / f"{key}.json"

    def get(self, kind: str, key: str) -> Any | None:
        """The value stored under ``key``, or ``None`` when there is none or it is damaged
        (a damaged entry is removed)."""
        if not self.enabled:
            return None
        path = self.path(kind, key)
        try:
            entry = json.loads(path.read_bytes())
            if entry["key"] == key and entry["sha256"] == value_digest(entry["value"]):
                return entry["value"]
        except FileNotFoundError:
            return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        path.unlink(missing_ok=True)
        return None

    def put(self, kind: str, key: str, value: Any) -> None:
        """Store ``value`` (JSON-serializable) under ``key``, atomically."""
        if not self.enabled:
            return
        path = self.path(kind, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        entry = {"key": key, "sha256": value_digest(value), "value": value}
        with tempfile.NamedTemporaryFile("wb", dir=path.parent, prefix=".part-",
                                         delete=False) as part:
            part.write(_canonical(entry))
        os.replace(part.name, path)

    def lock(self, kind: str, key: str) -> AbstractContextManager:
        """A lock held while computing ``key``, so that two processes never compute it
        twice: take it, look again, compute only on a miss."""
        if not self.enabled:
            return nullcontext()
        path = self.path(kind, key).with_suffix(".lock")
        path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(path)


def default_cache() -> Cache:
    """The cache of ``$GPURF_CACHE`` (``off``: none), else the user's cache folder."""
    chosen = os.environ.get("GPURF_CACHE")
    if chosen == OFF:
        return Cache(None)
    if chosen:
        return Cache(Path(chosen).expanduser().resolve())
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Cache(Path(base) / "gpurf")


def source_digest(modules: Iterable[str]) -> str:
    """The SHA-256 of the sources of ``modules`` and of every module of their package they
    import, directly or not (:func:`source_files`).

    The key of a result that runs code: editing any module it may execute changes it.
    """
    return cache_key(sorted(source_files(modules).items()))


def source_files(modules: Iterable[str]) -> dict[str, str]:
    """``module -> SHA-256 of its file`` for ``modules`` and every module of the same
    top-level package (``gpurf``) they import, directly or not: import statements read from
    the source, those inside functions too, and the parent packages whose ``__init__`` runs
    first. Imports made by name at run time (``importlib``) are not seen: name those modules
    in ``modules``."""
    files = {}
    pending = list(modules)
    while pending:
        name = pending.pop()
        if name in files:
            continue
        spec = _find_spec(name)
        if spec is None or not spec.origin or not Path(spec.origin).is_file():
            continue
        path = Path(spec.origin)
        stat = path.stat()
        is_package = spec.submodule_search_locations is not None
        files[name], imports = _parsed(name, is_package, path, stat.st_mtime_ns, stat.st_size)
        pending.extend(imports)
    return files


@cache
def _parsed(name: str, is_package: bool, path: Path, _mtime: int,
            _size: int) -> tuple[str, tuple[str, ...]]:
    """The digest of a module's file and the modules of its package it imports (cached per
    version of the file: its modification time and size are in the arguments)."""
    source = path.read_bytes()
    package = name if is_package else name.rpartition(".")[0]
    root = name.partition(".")[0]
    imports = set(_parents(name))
    for node in ast.walk(ast.parse(source)):
        imports.update(_imported(node, package, root))
    return text_digest(source), tuple(sorted(imports))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _imported(node: ast.AST, package: str, root: str) -> list[str]:
    """Modules of package ``root`` an import statement may load: the modules named, and for
    ``from package import name`` the submodule ``package.name`` where there is one."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name.partition(".")[0] == root]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
        module = f"{base}.{node.module}" if node.module else base
    else:
        module = node.module or ""
    if module.partition(".")[0] != root:
        return []
    spec = _find_spec(module)
    if spec is None or spec.submodule_search_locations is None:
        return [module]
    return [module, *(f"{module}.{alias.name}" for alias in node.names)]


@cache
def _find_spec(name: str):
    try:
        return importlib.util.find_spec(name)
    except (ImportError, AttributeError, ValueError):
        return None
