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

from .flow import SynthesisError, SynthReport, synthesize

__all__ = ["PAPER_BITS", "PAPER_XOR_DEPTH", "cost_report", "xor_depth"]

PAPER_BITS = {
    "wir.rename_table": 36_288,
    "wir.reuse_buffer": 15_104,
    "wir.value_signature_buffer": 11_008,
    "wir.verify_cache": 8_280,
    "wir.register_pool": 10_240,
}
"""Section VII-E: rename tables 48 x 63 x 12 (4.42 KB), reuse buffer 256 x 59 (1.84 KB), VSB
256 x 43 (1.34 KB), verify cache 8 x 1035 (1.01 KB), reference counters 1024 x 10 (1.25 KB);
9.9 KB in all."""

PAPER_XOR_DEPTH = 13
"""Section VII-E: the H3 hash's critical path, in cascaded XOR2 gates."""

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


def _counted_rows(reports: dict[str, SynthReport]) -> list[str]:
    lines, total = [], 0
    for name, paper in PAPER_BITS.items():
        ours = get_block(name).golden().config.storage_bits
        total += ours
        r = reports[name]
        lines.append(f"| {_LABELS[name]} | {paper:,} ({_kib(paper)}) | {ours:,} "
                     f"({_kib(ours)}) | {'yes' if ours == paper else '**no**'} | "
                     f"{r.memory_bits:,} | {r.ff_bits:,} | {r.transistors:,} |")
    paper_total = sum(PAPER_BITS.values())
    lines.append(f"| **total** | {paper_total:,} ({_kib(paper_total)}; paper 9.9 KB) | "
                 f"{total:,} ({_kib(total)}) | {'yes' if total == paper_total else '**no**'} "
                 "| | | |")
    return lines


def _uncounted_rows(reports: dict[str, SynthReport]) -> list[str]:
    pool = get_block("wir.register_pool").golden().config
    retry = get_block("wir.pending_retry").golden().config
    loads = get_block("wir.load_filter").golden().config
    r = reports
    return [
        f"| free-pool queue (in the register pool) | {pool.queue_bits:,} | memory, "
        f"{pool.pregs} x {pool.preg_bits} bits |",
        f"| pending-retry queue | {retry.storage_bits:,} | memory "
        f"(+{r['wir.pending_retry'].ff_bits} ff bits of pointers); "
        f"{r['wir.pending_retry'].transistors:,} transistors |",
        f"| store flags + barrier counters (load filter) | {loads.state_bits:,} | flip-flops; "
        f"{r['wir.load_filter'].transistors:,} transistors |",
    ]


def cost_report(root: Path | None = None) -> str:
    """The Markdown report of ``gpurf cost wir`` (synthesizes every WIR block's defaults)."""
    names = [*PAPER_BITS, "wir.pending_retry", "wir.load_filter", "wir.h3_hash"]
    reports = {name: synthesize(get_block(name), root=root) for name in names}
    hash_report = reports["wir.h3_hash"]
    return "\n".join([
        "## Storage at the paper's SM (Section VII-E), bits (KiB)",
        "",
        "| structure | paper | gpurf entries | equal | synthesized memory bits "
        "| synthesized ff bits (all) | transistors |",
        "|---|---|---|---|---|---|---|",
        *_counted_rows(reports),
        "",
        "The register pool's memory bits include its free-pool queue (below); ff bits include "
        "pipeline and control registers, not only entry state (valid bits, tags).",
        "",
        "## Not counted by the paper",
        "",
        "| structure | bits | note |",
        "|---|---|---|",
        *_uncounted_rows(reports),
        "",
        "## H3 hash (1024 -> 32 bits)",
        "",
        f"- XOR2 depth: {xor_depth('wir.h3_hash', root=root)} (paper: {PAPER_XOR_DEPTH} "
        "cascaded XOR2); a balanced tree of the widest output bit's inputs",
        f"- cells {hash_report.cells:,}, transistors {hash_report.transistors:,}, "
        f"logic depth {hash_report.logic_depth} gate levels",
    ])
