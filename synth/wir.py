"""WIR synthesis figures: the H3 hash's XOR2 depth (paper Section VII-E: 13 cascaded XOR2).

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

from hw.registry import Block, get_block
from sim.toolchain import tool_env, yosys_command
from sim.verilog import build_dir

from .flow import SynthesisError

__all__ = ["xor_depth"]

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

    Raises :class:`~synth.flow.SynthesisError` if the mapped netlist holds cells other
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
