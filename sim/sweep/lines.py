"""Lines of a TOML file's keys and tables, for ``file:line:`` messages (``tomllib`` gives
line numbers only for syntax errors).

A path is the keys from the root to a value, with an integer for each ``[[array]]`` table:
``("blocks", 1, "params", "slots")`` is the ``slots`` key of the ``params`` table of the
second ``[[blocks]]``. :func:`line_of` returns the line of the deepest prefix of the path
it finds, so a value in a list, or a key of an inline table, points at the line of the key
that holds it, and a missing key at the header of its table.
"""

import re

__all__ = ["line_of"]

_KEY_PART = r"""(?:"[^"]*"|'[^']*'|[A-Za-z0-9_-]+)"""
_DOTTED = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_ARRAY_HEADER = re.compile(rf"^\[\[\s*({_DOTTED})\s*\]\]")
_TABLE_HEADER = re.compile(rf"^\[\s*({_DOTTED})\s*\]")
_KEY_VALUE = re.compile(rf"^({_DOTTED})\s*=")


def _parts(dotted: str) -> tuple[str, ...]:
    return tuple(part.strip("\"'") for part in re.findall(_KEY_PART, dotted))


def _table_path(names: tuple[str, ...], arrays: dict[tuple, int]) -> tuple:
    """``names`` of a header with the current index of every array table on the way."""
    path: tuple = ()
    for name in names:
        path = (*path, name)
        if path in arrays:
            path = (*path, arrays[path])
    return path


def key_lines(text: str) -> dict[tuple, int]:
    """The line of every table header and key of ``text``, by path."""
    lines: dict[tuple, int] = {}
    arrays: dict[tuple, int] = {}
    current: tuple = ()
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if match := _ARRAY_HEADER.match(line):
            parent = _table_path(_parts(match.group(1))[:-1], arrays)
            array = (*parent, _parts(match.group(1))[-1])
            arrays[array] = arrays.get(array, -1) + 1
            current = (*array, arrays[array])
            lines.setdefault(array, number)
        elif match := _TABLE_HEADER.match(line):
            current = _table_path(_parts(match.group(1)), arrays)
        elif match := _KEY_VALUE.match(line):
            lines.setdefault((*current, *_parts(match.group(1))), number)
            continue
        else:
            continue
        lines.setdefault(current, number)
    return lines


def line_of(text: str, path: tuple) -> int:
    """The line of ``path`` in ``text``, or of its deepest prefix there; 1 if none is."""
    lines = key_lines(text)
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return 1
