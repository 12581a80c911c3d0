"""Read a SymbiYosys counterexample, one column per step:
``python -m tests.formal_trace TRACE.vcd PATTERN... [--nonzero]`` prints every signal whose
hierarchical name (``dut.back.pool.fresh``; the harness's own signals without a prefix)
matches a ``PATTERN`` (a regular expression, matched in full), with its value at each step
(``smtbmc`` writes step ``k`` at time ``10 k``). ``--nonzero`` leaves out signals that are
0 at every step. This is how the induction counterexamples of ``wir.backend`` were read
(docs/reliability.md, "Not yet proved"); an assertion ``_witness_.assert_N`` in a
SymbiYosys log is the ``$check`` cell ``$N`` of the proof's ``top.il``, named by its
``FORMAT``.
"""

import argparse
import re
from pathlib import Path

STEP = 10
"""Time units per step in ``smtbmc``'s VCD."""


def _header(path, lines, patterns):
    """Identifier -> names of the matching variables; and the index where values start."""
    scope, ids = [], {}
    for index, line in enumerate(lines):
        if line.startswith("$scope"):
            scope.append(line.split()[2])
        elif line.startswith("$upscope"):
            scope.pop()
        elif line.startswith("$var"):
            fields = line.split()
            name = ".".join([*scope[1:], fields[4]])
            if any(p.fullmatch(name) for p in patterns):
                ids.setdefault(fields[3], []).append(name)
        elif line.startswith("$enddefinitions"):
            return ids, index + 1
    raise ValueError(f"{path}: no $enddefinitions line: expected a VCD file")


def steps(path: Path, patterns: list[str]) -> dict[str, list[int | str]]:
    """Each matching signal's value at every step of the VCD at ``path``."""
    lines = path.read_text().splitlines()
    ids, start = _header(path, lines, [re.compile(p) for p in patterns])
    current, table, time = {}, [], None
    for line in lines[start:]:
        if line.startswith("#"):
            if time is not None and time % STEP == 0:
                table.append(dict(current))
            time = int(line[1:])
        elif line.startswith("b") and line.split()[1] in ids:
            bits, ident = line[1:].split()
            current[ident] = int(bits, 2) if "x" not in bits else bits
        elif line[:1] in ("0", "1") and line[1:] in ids:
            current[line[1:]] = int(line[0])
    return {name: [row.get(ident, "?") for row in table]
            for ident, names in ids.items() for name in names}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", type=Path)
    parser.add_argument("patterns", nargs="+")
    parser.add_argument("--nonzero", action="store_true")
    args = parser.parse_args(argv)
    for name, values in sorted(steps(args.trace, args.patterns).items()):
        if not args.nonzero or any(values):
            print(f"{name:48s}", " ".join(map(str, values)))


if __name__ == "__main__":
    main()
