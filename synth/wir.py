"""WIR synthesis figures: storage beside the paper's (Section VII-E) and the H3 hash's XOR2
depth (paper: 13 cascaded XOR2); ``gpurf cost wir``.

:func:`cost_report` synthesizes every WIR block at its defaults (the paper's SM: 48 warps,
63 logical and 1024 physical registers, 256-entry tables) and lists, per structure, the
bits the paper counts (the entries, whether they live in an unmapped memory or in
flip-flops such as valid bits; ``storage_bits`` of the block's configuration), the
synthesized memory and flip-flop bits, and the transistors (logic from ``stat -tech cmos``,
memories as 6T SRAM). Structures the paper calls trivial and leaves out — the free-pool
queue, the pending-retry queue, store flags and barrier counters — are separate rows.

:func:`xor_depth` maps the hash to 2-input gates and reads the longest topological path
(``ltp -noff``) in gate levels. Yosys' ``techmap`` turns each output bit's ``$reduce_xor``
into a balanced tree of ``$_XOR_`` cells, and the netlist then holds nothing else, so the
path length is the XOR2 depth. ``abc=True`` maps with ``abc -g AND,XOR`` instead (the
spec's "XOR depth after mapping to AND,XOR"; about 25 s at the defaults, same depth).
"""

import re
import subprocess
from pathlib import Path
from typing import Any

from amaranth.back import rtlil

from gpurf.hw.registry import Block, get_block
from gpurf.sim.toolchain import tool_env, yosys_command
from gpurf.sim.verilog import build_dir

from .costs import CostReport, table
from .flow import SynthesisError, SynthReport, synthesize
from .papers import Papers, paper_values

__all__ = ["PAPER_BITS", "cost_data", "cost_markdown", "cost_report", "xor_depth"]

PAPER_BITS = {
    "wir.rename_table": "rename_table_bits",
    "wir.reuse_buffer": "reuse_buffer_bits",
    "wir.value_signature_buffer": "value_signature_buffer_bits",
    "wir.verify_cache": "verify_cache_bits",
    "wir.register_pool": "register_pool_bits",
}
"""The structures Section VII-E counts, each with its key in ``synth/papers/wir.toml``
(rename tables 48 x 63 x 12, reuse buffer 256 x 59, VSB 256 x 43, verify cache 8 x 1035,
reference counters 1024 x 10; 9.9 KB in all)."""

_LABELS = {
    "wir.rename_table": "rename tables",
    "wir.reuse_buffer": "reuse buffer",
    "wir.value_signature_buffer": "value signature buffer",
    "wir.verify_cache": "verify cache",
    "wir.register_pool": "reference counters (register pool)",
}

_XOR_SCRIPT = """\
read_rtlil top.il
hierarchy -top {top}
proc
flatten
opt_clean
techmap
opt
{abc}opt_clean
tee -q -o xor_cells.txt select -count t:* t:$_XOR_ %d
tee -q -o xor_ltp.txt ltp -noff
"""


def xor_depth(block: Block | str = "wir.h3_hash", params: dict[str, Any] | None = None,
              *, root: Path | None = None, abc: bool = False) -> int:
    """XOR2 levels of the H3 hash ``block`` (default ``wir.h3_hash``) with ``params``.

    Raises :class:`~gpurf.synth.flow.SynthesisError` if the mapped netlist holds cells other
    than XOR2 (``abc=False``), so the path length counts XOR2 gates only.
    """
    block = get_block(block) if isinstance(block, str) else block
    full = block.resolve(params)
    folder = build_dir(block, full, root) / "xor_depth"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "top.il").write_text(rtlil.convert(block.build(full), name=block.toplevel,
                                                 emit_src=False))
    script = _XOR_SCRIPT.format(top=block.toplevel,
                                abc="abc -g AND,XOR\n" if abc else "")
    (folder / "xor.ys").write_text(script)
    run = subprocess.run([yosys_command(), "-q", "-l", "xor.log", "xor.ys"], cwd=folder,
                         env=tool_env(), capture_output=True, text=True, check=False)
    if run.returncode != 0:
        raise SynthesisError(f"yosys failed on {block.qualname} in {folder}:\n"
                             f"{run.stderr[-3000:]}")
    others = re.search(r"(\d+) objects", (folder / "xor_cells.txt").read_text())
    if not abc and others and int(others.group(1)):
        raise SynthesisError(f"{block.qualname}: {others.group(1)} mapped cells are not XOR2")
    match = re.search(r"Longest topological path in \S+ \(length=(\d+)\)",
                      (folder / "xor_ltp.txt").read_text())
    if not match:
        raise SynthesisError(f"no longest path in {folder / 'xor_ltp.txt'}")
    return int(match.group(1))


def _kib(bits: int) -> str:
    return f"{bits / 8192:.2f}"


_BITS_UNITS = {"structure": "", "block": "", "paper": "bits", "gpurf": "bits", "equal": "",
               "memory bits": "bits", "ff bits": "bits", "transistors": "transistors"}


def _counted_rows(reports: dict[str, SynthReport], papers: Papers) -> list[dict]:
    rows = []
    for name, key in PAPER_BITS.items():
        ours = get_block(name).golden().config.storage_bits
        paper = int(papers[key].value)
        r = reports[name]
        rows.append({"structure": _LABELS[name], "block": name, "paper": paper, "gpurf": ours,
                     "equal": ours == paper, "memory bits": r.memory_bits,
                     "ff bits": r.ff_bits, "transistors": r.transistors})
    return rows


def _uncounted_rows(reports: dict[str, SynthReport]) -> list[dict]:
    pool = get_block("wir.register_pool").golden().config
    retry = get_block("wir.pending_retry").golden().config
    loads = get_block("wir.load_filter").golden().config
    r = reports
    return [
        {"structure": "free-pool queue (in the register pool)", "bits": pool.queue_bits,
         "storage": "memory", "ff bits": None, "transistors": None,
         "shape": f"{pool.pregs} x {pool.preg_bits} bits"},
        {"structure": "pending-retry queue", "bits": retry.storage_bits, "storage": "memory",
         "ff bits": r["wir.pending_retry"].ff_bits,
         "transistors": r["wir.pending_retry"].transistors, "shape": None},
        {"structure": "store flags + barrier counters (load filter)", "bits": loads.state_bits,
         "storage": "flip-flops", "ff bits": None,
         "transistors": r["wir.load_filter"].transistors, "shape": None},
    ]


def cost_data(root: Path | None = None) -> CostReport:
    """``gpurf cost wir`` as data (synthesizes every WIR block's defaults)."""
    names = [*PAPER_BITS, "wir.pending_retry", "wir.load_filter", "wir.h3_hash"]
    reports = {name: synthesize(get_block(name), root=root) for name in names}
    papers = paper_values("wir")
    h3 = reports["wir.h3_hash"]
    return CostReport(
        mechanism="wir",
        tables={"storage": table("storage", _BITS_UNITS, _counted_rows(reports, papers)),
                "uncounted": table("uncounted", {
                    "structure": "", "bits": "bits", "storage": "", "ff bits": "bits",
                    "transistors": "transistors", "shape": ""}, _uncounted_rows(reports))},
        papers=papers,
        figures={"xor depth": {"value": xor_depth("wir.h3_hash", root=root),
                               "unit": "XOR2 gates"},
                 "h3 cells": {"value": h3.cells, "unit": "cells"},
                 "h3 transistors": {"value": h3.transistors, "unit": "transistors"},
                 "h3 logic depth": {"value": h3.logic_depth, "unit": "gate levels"}})


def _counted_lines(rows: list[dict], papers: Papers) -> list[str]:
    lines = []
    for row in rows:
        paper, ours = row["paper"], row["gpurf"]
        lines.append(f"| {row['structure']} | {paper:,} ({_kib(paper)}) | {ours:,} "
                     f"({_kib(ours)}) | {'yes' if row['equal'] else '**no**'} | "
                     f"{row['memory bits']:,} | {row['ff bits']:,} | {row['transistors']:,} |")
    total = sum(row["gpurf"] for row in rows)
    paper_total = sum(row["paper"] for row in rows)
    lines.append(f"| **total** | {paper_total:,} ({_kib(paper_total)}; paper "
                 f"{papers['total_kb'].value} KB) | {total:,} ({_kib(total)}) | "
                 f"{'yes' if total == paper_total else '**no**'} | | | |")
    return lines


def _uncounted_lines(rows: list[dict]) -> list[str]:
    queue, retry, loads = rows
    return [
        f"| {queue['structure']} | {queue['bits']:,} | memory, {queue['shape']} |",
        f"| {retry['structure']} | {retry['bits']:,} | memory "
        f"(+{retry['ff bits']} ff bits of pointers); {retry['transistors']:,} transistors |",
        f"| {loads['structure']} | {loads['bits']:,} | flip-flops; "
        f"{loads['transistors']:,} transistors |",
    ]


def cost_markdown(report: CostReport) -> str:
    """The Markdown of ``gpurf cost wir``."""
    figures = {name: figure["value"] for name, figure in report.figures.items()}
    return "\n".join([
        "## Storage at the paper's SM (Section VII-E), bits (KiB)",
        "",
        "| structure | paper | gpurf entries | equal | synthesized memory bits "
        "| synthesized ff bits (all) | transistors |",
        "|---|---|---|---|---|---|---|",
        *_counted_lines(report.rows("storage"), report.papers),
        "",
        "The register pool's memory bits include its free-pool queue (below); ff bits include "
        "pipeline and control registers, not only entry state (valid bits, tags).",
        "",
        "## Not counted by the paper",
        "",
        "| structure | bits | note |",
        "|---|---|---|",
        *_uncounted_lines(report.rows("uncounted")),
        "",
        "## H3 hash (1024 -> 32 bits)",
        "",
        f"- XOR2 depth: {figures['xor depth']} (paper: "
        f"{report.papers['xor_depth'].value} cascaded XOR2); a balanced tree of the widest "
        "output bit's inputs",
        f"- cells {figures['h3 cells']:,}, transistors {figures['h3 transistors']:,}, "
        f"logic depth {figures['h3 logic depth']} gate levels",
    ])


def cost_report(root: Path | None = None) -> str:
    """The Markdown report of ``gpurf cost wir``."""
    return cost_markdown(cost_data(root))
