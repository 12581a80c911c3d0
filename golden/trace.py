"""Port traces: one file per block instance, every cycle's inputs, outputs and compare mask.

The format is specified in ``docs/traces.md`` (version :data:`VERSION`). In short: a magic
line, one line of JSON (the header, space-padded so that the cycle count can be written in
place when the recording ends), then one fixed-size record per cycle: every input port, then
every output port, by Verilog name in signature order, each as ``ceil(width / 8)`` bytes
little-endian, then the compare mask (bit ``i`` of the mask bytes is output ``i``; 0 where
the golden model said "don't care", i.e. returned ``None``).

:class:`TraceWriter` appends records in chunks, :class:`Recorder` wraps any golden model's
``step`` and writes what it sees, :class:`Trace` reads a file back (header checks, chunked
iteration, random access to a cycle range) and :meth:`Trace.check_block` refuses a trace whose
block, parameters or port signature no longer match the code. This module sits in the golden
layer so that the golden SM can record traces too (it may not import ``tb``).
"""

import hashlib
import json
import os
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from amaranth.hdl import Shape, ShapeCastable, Value
from amaranth.lib import data, wiring

__all__ = ["FORMAT", "MAGIC", "VERSION", "Column", "Layout", "Recorder", "Trace", "TraceError",
           "TraceWriter", "format_row", "gpurf_revision", "layout_of"]

MAGIC = b"GPURF-TRACE\n"
"""The first line of every trace file."""

FORMAT = "gpurf-trace"
VERSION = 1
"""The format version this code writes and the only one it reads."""

CHUNK_CYCLES = 65536
"""Records buffered by the writer and read per chunk by the readers."""

_HEADER_LIMIT = 1 << 22
"""Longest header line a reader accepts (4 MiB); a longer one is not a trace header."""

_RESERVE = 32
"""Spaces kept after the JSON header for the cycle count written when the recording ends."""

RESET = "sync-rst-1"
"""Reset before cycle 0: inputs 0, ``rst`` high for one rising edge of ``clk`` (none for a
block without a clock); the cocotb harness's reset, the golden model's ``reset()``."""


class TraceError(ValueError):
    """A trace file that cannot be read or does not fit the block it names; the message
    starts with the file's name."""


@dataclass(frozen=True)
class Column:
    """One port's bytes in a record."""

    name: str
    direction: str
    """``"in"`` or ``"out"``."""
    width: int
    offset: int
    """Byte offset in the record."""

    @property
    def size(self) -> int:
        """Bytes in the record: ``ceil(width / 8)``."""
        return (self.width + 7) // 8

    @property
    def mask(self) -> int:
        return (1 << self.width) - 1

    def as_dict(self) -> dict:
        return {"name": self.name, "dir": self.direction, "width": self.width,
                "offset": self.offset, "bytes": self.size}


@dataclass(frozen=True)
class Layout:
    """The record layout of one port signature: inputs, outputs, mask bytes; and its hash."""

    inputs: tuple[Column, ...]
    outputs: tuple[Column, ...]
    signature_hash: str

    @property
    def columns(self) -> tuple[Column, ...]:
        return (*self.inputs, *self.outputs)

    @property
    def mask_offset(self) -> int:
        last = self.columns[-1] if self.columns else None
        return last.offset + last.size if last else 0

    @property
    def mask_bytes(self) -> int:
        return (len(self.outputs) + 7) // 8

    @property
    def record_bytes(self) -> int:
        return self.mask_offset + self.mask_bytes

    def header_fields(self) -> dict:
        return {"signature": self.signature_hash, "record_bytes": self.record_bytes,
                "mask_offset": self.mask_offset, "mask_bytes": self.mask_bytes,
                "columns": [c.as_dict() for c in self.columns]}


def _describe(shape) -> Any:
    """A canonical, JSON-able description of a port shape: layouts field by field, enums
    member by member (their ``repr`` omits the values), plain shapes as ``u<w>``/``s<w>``."""
    if isinstance(shape, data.StructLayout | data.UnionLayout):
        kind = "struct" if isinstance(shape, data.StructLayout) else "union"
        return {kind: [[str(name), _describe(f.shape), f.offset] for name, f in shape]}
    if isinstance(shape, data.ArrayLayout):
        return {"array": _describe(shape.elem_shape), "length": shape.length}
    if isinstance(shape, type) and issubclass(shape, Enum):
        return {"enum": shape.__qualname__,
                "members": {m.name: int(m.value) for m in shape},
                "shape": _describe(Shape.cast(shape))}
    if isinstance(shape, ShapeCastable) and not isinstance(shape, type):
        return {"castable": type(shape).__qualname__, "shape": _describe(Shape.cast(shape))}
    plain = Shape.cast(shape)
    return f"{'s' if plain.signed else 'u'}{plain.width}"


def layout_of(component: wiring.Component) -> Layout:
    """The record layout of ``component``'s ports (Verilog names, the path joined with
    ``__`` as :func:`gpurf.tb.harness.port_map` names them) and the hash of its signature:
    SHA-256 of every port's name, flow and shape description."""
    described, inputs, outputs = [], [], []
    for path, member, value in component.signature.flatten(component):
        name = "__".join(str(p) for p in path)
        width = Value.cast(value).shape().width
        flow = "in" if member.flow == wiring.In else "out"
        described.append([name, flow, _describe(member.shape)])
        (inputs if flow == "in" else outputs).append((name, flow, width))
    text = json.dumps(described, sort_keys=True, separators=(",", ":"))
    columns, offset = [], 0
    for name, flow, width in (*inputs, *outputs):
        columns.append(Column(name, flow, width, offset))
        offset += columns[-1].size
    return Layout(tuple(columns[:len(inputs)]), tuple(columns[len(inputs):]),
                  hashlib.sha256(text.encode()).hexdigest())


@cache
def gpurf_revision() -> str:
    """The git revision of the gpurf checkout (``+dirty`` with uncommitted changes to
    tracked files), or ``"unknown"`` outside a checkout."""
    folder = Path(__file__).resolve().parent
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True,
                              text=True, timeout=30)
        if head.returncode:
            return "unknown"
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=folder, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def gpurf_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("gpurf")
    except PackageNotFoundError:
        return "unknown"


class TraceWriter:
    """Writes one trace: the header first, then records appended a chunk at a time.

    ``header`` holds what the format's header asks for beside the layout (``block``,
    ``params``, ``source``, ``seed``, ``sm``, ``unmodeled``); :meth:`close` writes the cycle
    count into the header, and a file left without it is refused by :class:`Trace` as an
    unfinished recording. Use as a context manager.
    """

    def __init__(self, path: str | os.PathLike, layout: Layout, header: Mapping[str, Any]):
        self.path = Path(path)
        self.layout = layout
        self.unmodeled = frozenset(header.get("unmodeled", ()))
        known = {c.name for c in layout.columns}
        if not self.unmodeled <= known:
            raise ValueError(f"unmodeled ports {sorted(self.unmodeled - known)} are not ports")
        self.header = {"format": FORMAT, "version": VERSION, "block": None, "params": {},
                       **layout.header_fields(),
                       "gpurf": {"version": gpurf_version(), "revision": gpurf_revision()},
                       "source": None, "sm": None, "seed": None,
                       "unmodeled": sorted(self.unmodeled), "reset": RESET,
                       "storage": "dense", "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                       **header, "cycles": None}
        self.cycles = 0
        self._inputs = [(c.name, c.offset, c.size, c.mask, c.name in self.unmodeled)
                        for c in layout.inputs]
        self._outputs = [(c.name, c.offset, c.size, c.mask, c.name in self.unmodeled)
                         for c in layout.outputs]
        self._input_names = frozenset(c.name for c in layout.inputs)
        self._buffer = bytearray()
        self._record = bytearray(layout.record_bytes)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("wb")
        self._header_at = len(MAGIC)
        text = self._header_text()
        self._header_room = len(text) + _RESERVE
        self._file.write(MAGIC + text.ljust(self._header_room).encode() + b"\n")

    def _header_text(self) -> str:
        return json.dumps(self.header, separators=(",", ":"))

    def append(self, inputs: Mapping[str, int], outputs: Mapping[str, int | None]) -> None:
        """One cycle: ``inputs`` by port name (a port left out is 0), ``outputs`` as the
        golden model returned them (``None``: not compared this cycle)."""
        record, mask = self._record, 0
        for name, offset, size, limit, unmodeled in self._inputs:
            value = 0 if unmodeled else inputs.get(name, 0)
            record[offset:offset + size] = _bytes(name, value, size, limit)
        for bit, (name, offset, size, limit, unmodeled) in enumerate(self._outputs):
            if name not in outputs and not unmodeled:
                raise ValueError(f"cycle {self.cycles}: no value for output {name}")
            value = None if unmodeled else outputs[name]
            if value is None:
                record[offset:offset + size] = bytes(size)
            else:
                record[offset:offset + size] = _bytes(name, value, size, limit)
                mask |= 1 << bit
        if not inputs.keys() <= self._input_names or len(outputs) != len(self._outputs):
            self._check_names(inputs, outputs)
        at = self.layout.mask_offset
        record[at:] = mask.to_bytes(self.layout.mask_bytes, "little")
        self._buffer += record
        self.cycles += 1
        if self.cycles % CHUNK_CYCLES == 0:
            self.flush()

    def _check_names(self, inputs, outputs):
        for given, columns, kind in ((inputs, self.layout.inputs, "input"),
                                     (outputs, self.layout.outputs, "output")):
            unknown = set(given) - {c.name for c in columns}
            if unknown:
                raise ValueError(f"cycle {self.cycles}: unknown {kind} ports {sorted(unknown)}")

    def flush(self) -> None:
        self._file.write(self._buffer)
        self._buffer.clear()

    def close(self) -> None:
        """Write the last records and the cycle count; the trace is complete."""
        if self._file.closed:
            return
        self.flush()
        self.header["cycles"] = self.cycles
        text = self._header_text()
        if len(text) > self._header_room:
            raise RuntimeError(f"{self.path}: no room for the cycle count in the header")
        self._file.seek(self._header_at)
        self._file.write(text.ljust(self._header_room).encode())
        self._file.close()

    def abandon(self) -> None:
        """Stop without completing: the file stays an unfinished recording."""
        if not self._file.closed:
            self.flush()
            self._file.close()

    def __enter__(self) -> "TraceWriter":
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if kind is None:
            self.close()
        else:
            self.abandon()


def _bytes(name: str, value, size: int, limit: int) -> bytes:
    value = int(value)
    if value < 0 and value >= -((limit + 1) >> 1):
        value &= limit
    if not 0 <= value <= limit:
        raise ValueError(f"port {name}: {value:#x} does not fit {limit.bit_length()} bits")
    return value.to_bytes(size, "little")


class Recorder:
    """A golden model whose every ``step`` is also written to ``writer``: drive it in place
    of the model (:func:`gpurf.tb.harness.run_golden`, the golden SM) to record a run."""

    def __init__(self, model, writer: TraceWriter):
        self.model, self.writer = model, writer

    def reset(self) -> None:
        self.model.reset()

    def step(self, inputs: Mapping[str, int]) -> dict[str, int | None]:
        outputs = self.model.step(inputs)
        self.writer.append(inputs, outputs)
        return outputs

    def line_trace(self) -> str:
        return self.model.line_trace()


_REQUIRED = ("format", "version", "block", "params", "signature", "gpurf", "source", "seed",
             "unmodeled", "reset", "storage", "record_bytes", "mask_offset", "mask_bytes",
             "columns", "cycles")


class Trace:
    """A trace file, opened and checked: format, version, header, size against the cycle
    count (truncation). :meth:`check_block` checks it against the block it names.

    Raises :class:`TraceError` with a one-line message naming the file.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        try:
            with open(self.path, "rb") as file:
                magic = file.read(len(MAGIC))
                if magic != MAGIC:
                    self._fail("not a gpurf trace (no GPURF-TRACE magic line)")
                line = file.readline(_HEADER_LIMIT)
            size = self.path.stat().st_size
        except OSError as error:
            raise TraceError(f"{self.path}: cannot read ({error.strerror})") from None
        if not line.endswith(b"\n"):
            self._fail("truncated in its header")
        try:
            header = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as error:
            self._fail(f"header is not JSON ({error})")
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            self._fail("header does not name the gpurf-trace format")
        if header.get("version") != VERSION:
            self._fail(f"format version {header.get('version')!r}; this gpurf reads "
                       f"version {VERSION} only (re-record the trace)")
        missing = [key for key in _REQUIRED if key not in header]
        if missing:
            self._fail(f"header lacks {', '.join(missing)}")
        if header["storage"] != "dense":
            self._fail(f"storage {header['storage']!r} is not supported (dense only)")
        if header["reset"] != RESET:
            self._fail(f"reset {header['reset']!r} is not supported ({RESET} only)")
        self.header = header
        self.body_offset = len(MAGIC) + len(line)
        self.layout = self._layout()
        record = self.layout.record_bytes
        body = size - self.body_offset
        if header["cycles"] is None:
            self._fail(f"unfinished recording (no cycle count; {body // record:,} whole "
                       f"records)")
        if not isinstance(header["cycles"], int) or header["cycles"] < 0:
            self._fail(f"bad cycle count {header['cycles']!r}")
        expected = header["cycles"] * record
        if body < expected:
            self._fail(f"truncated: {body:,} bytes of records, the header's "
                       f"{header['cycles']:,} cycles of {record} bytes need {expected:,}")
        if body > expected:
            self._fail(f"{body - expected:,} bytes after the header's {header['cycles']:,} "
                       f"cycles of {record} bytes")

    def _fail(self, what: str):
        raise TraceError(f"{self.path}: {what}")

    def _layout(self) -> Layout:
        header = self.header
        try:
            columns = [Column(c["name"], c["dir"], int(c["width"]), int(c["offset"]))
                       for c in header["columns"]]
        except (KeyError, TypeError, ValueError):
            self._fail("header columns are malformed")
        inputs = tuple(c for c in columns if c.direction == "in")
        outputs = tuple(c for c in columns if c.direction == "out")
        layout = Layout(inputs, outputs, str(header["signature"]))
        offset = 0
        for column in layout.columns:
            if column.offset != offset or column.width < 0:
                self._fail("header columns are not contiguous inputs then outputs")
            offset += column.size
        if list(layout.columns) != columns or (
                (layout.record_bytes, layout.mask_offset, layout.mask_bytes)
                != (header["record_bytes"], header["mask_offset"], header["mask_bytes"])):
            self._fail("header record size does not match its columns")
        if layout.record_bytes == 0:
            self._fail("header has no ports")
        return layout

    @property
    def block(self) -> str:
        return self.header["block"]

    @property
    def params(self) -> dict:
        return dict(self.header["params"])

    @property
    def cycles(self) -> int:
        return self.header["cycles"]

    @property
    def seed(self):
        return self.header["seed"]

    def check_block(self, expect: str | None = None):
        """The registered block this trace was recorded from, after checking that it exists
        (and is ``expect``, if given), takes the recorded parameters and still has the
        recorded port signature. Returns ``(block, params)``."""
        from gpurf.hw.registry import BlockError, get_block

        if expect is not None and self.block != expect:
            self._fail(f"recorded from block {self.block!r}, not {expect!r}")
        try:
            block = get_block(self.block)
            params = block.resolve(self.params)
            component = block.build(params)
        except BlockError as error:
            self._fail(f"recorded from block {self.block!r}: {error}")
        except (TypeError, ValueError) as error:
            self._fail(f"recorded parameters of {self.block} are no longer valid ({error})")
        now = layout_of(component)
        if now.signature_hash != self.layout.signature_hash:
            self._fail(f"port signature of {self.block} changed since the recording "
                       f"(hash {self.layout.signature_hash[:12]}, now "
                       f"{now.signature_hash[:12]}): re-record the trace")
        if now != self.layout:
            self._fail(f"header columns differ from the ports of {self.block}")
        return block, params

    def golden_divergence(self, edit=None) -> int:
        """Step the recorded block's golden model through the recorded inputs: the first
        cycle whose outputs differ from the recorded ones (masked outputs aside), else -1.
        ``edit(cycle, outputs) -> outputs`` alters the recorded outputs first (a test's
        corrupted recording)."""
        block, params = self.check_block()
        model = block.golden(params)
        model.reset()
        for cycle, inputs, outputs in self.rows():
            if edit is not None:
                outputs = edit(cycle, outputs)
            got = model.step(inputs)
            if any(want is not None and got[name] != want for name, want in outputs.items()):
                return cycle
        return -1

    # Reading records.

    def records(self, start: int = 0, stop: int | None = None) -> np.ndarray:
        """Records ``start:stop`` as a read-only ``(cycles, record_bytes)`` ``uint8`` array
        (memory-mapped: any range of a large trace without reading the rest)."""
        stop = self.cycles if stop is None else min(stop, self.cycles)
        start = max(0, min(start, stop))
        if start == stop:
            return np.zeros((0, self.layout.record_bytes), dtype=np.uint8)
        record = self.layout.record_bytes
        return np.memmap(self.path, dtype=np.uint8, mode="r",
                         offset=self.body_offset + start * record,
                         shape=(stop - start, record))

    def chunks(self, start: int = 0, stop: int | None = None,
               size: int = CHUNK_CYCLES) -> Iterator[tuple[int, np.ndarray]]:
        """``(first cycle, records)`` of ``start:stop``, ``size`` cycles at a time, read
        with plain file reads (one chunk in memory at a time)."""
        stop = self.cycles if stop is None else min(stop, self.cycles)
        record = self.layout.record_bytes
        with open(self.path, "rb") as file:
            file.seek(self.body_offset + start * record)
            for first in range(start, stop, size):
                count = min(size, stop - first)
                chunk = np.fromfile(file, dtype=np.uint8, count=count * record)
                if chunk.size != count * record:
                    self._fail(f"truncated at cycle {first + chunk.size // record}")
                yield first, chunk.reshape(count, record)

    def decode(self, record: np.ndarray | bytes) -> tuple[dict[str, int], dict[str, int | None]]:
        """One record as ``(inputs, outputs)`` by port name; outputs ``None`` where masked."""
        raw = bytes(record)
        inputs = {c.name: int.from_bytes(raw[c.offset:c.offset + c.size], "little")
                  for c in self.layout.inputs}
        mask = int.from_bytes(raw[self.layout.mask_offset:], "little")
        outputs = {c.name: (int.from_bytes(raw[c.offset:c.offset + c.size], "little")
                            if mask >> bit & 1 else None)
                   for bit, c in enumerate(self.layout.outputs)}
        return inputs, outputs

    def rows(self, start: int = 0, stop: int | None = None) -> list[tuple[int, dict, dict]]:
        """``(cycle, inputs, outputs)`` of cycles ``start:stop``, decoded."""
        return [(start + i, *self.decode(record))
                for i, record in enumerate(self.records(start, stop))]

    def describe(self) -> str:
        """The header as ``key: value`` lines."""
        header = self.header
        lines = [f"trace {self.path}",
                 f"  format {header['format']} version {header['version']}, "
                 f"{header['storage']} storage, {self.cycles:,} cycles of "
                 f"{self.layout.record_bytes} bytes",
                 f"  block {header['block']} {json.dumps(header['params'], sort_keys=True)}",
                 f"  port signature {header['signature']}",
                 f"  gpurf {header['gpurf'].get('version')} revision "
                 f"{header['gpurf'].get('revision')}",
                 f"  source {json.dumps(header['source'], sort_keys=True)}, "
                 f"seed {header['seed']}, SM {json.dumps(header['sm'])}",
                 f"  reset {header['reset']}; unmodeled ports (recorded as 0): "
                 f"{', '.join(header['unmodeled']) or 'none'}"]
        for column in self.layout.columns:
            lines.append(f"  {column.direction:3} {column.name} [{column.width}] "
                         f"bytes {column.offset}..{column.offset + column.size - 1}")
        return "\n".join(lines)


def format_row(cycle: int, inputs: Mapping[str, int], outputs: Mapping[str, int | None],
               names: Sequence[str] | None = None) -> str:
    """One cycle on one line: ``cycle N: in a=0x.. | out b=0x.. c=-`` (``-``: not compared)."""
    def show(value):
        return "-" if value is None else hex(value)

    keep = set(names) if names is not None else None
    ins = " ".join(f"{k}={show(v)}" for k, v in inputs.items() if keep is None or k in keep)
    outs = " ".join(f"{k}={show(v)}" for k, v in outputs.items() if keep is None or k in keep)
    return f"cycle {cycle}: in {ins} | out {outs}"
