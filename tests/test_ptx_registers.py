"""Register allocation on the real kernels: within 25% of ``ptxas -v``, and correct by
execution (every read of a virtual register finds its value in its physical registers)."""

import shutil

import numpy as np
import pytest

from gpurf.sim.kernels import kernel_names
from gpurf.sim.ptx.regalloc import allocate_registers
from gpurf.sim.ptx.registers import register_counts, register_table
from gpurf.sim.sm.memory import GlobalMemory
from gpurf.sim.sm.run import _blocks, load_workload, pack_params
from gpurf.sim.sm.warp import ThreadBlock

PTXAS = shutil.which("ptxas")


@pytest.fixture(scope="module")
def counts():
    return register_counts()


@pytest.mark.skipif(PTXAS is None, reason="ptxas is not on PATH: no reference register counts")
def test_registers_within_25_percent_of_ptxas(counts):
    assert {c.kernel for c in counts} == set(kernel_names())
    for c in counts:
        assert c.ptxas is not None, c
        assert c.ours <= 1.25 * c.ptxas, c


@pytest.mark.parametrize("kernel", kernel_names())
def test_allocation_reaches_the_register_pressure_of_the_ptx(counts, kernel):
    (count,) = [c for c in counts if c.kernel == kernel]
    assert count.pressure <= count.ours <= count.pressure + 2, count


def test_table_has_a_row_per_kernel(counts):
    table = register_table(counts)
    assert table.startswith("| kernel | ours (32-bit regs) | predicates | ptxas -v |")
    assert len(table.splitlines()) == 2 + len(kernel_names())


class _Shadow:
    """The physical register file of one warp, written after every instruction with the
    destination's value and checked before every instruction against each source."""

    def __init__(self, program, alloc):
        self.program, self.alloc = program, alloc
        self.regs = np.zeros((max(1, alloc.registers), 32), np.uint32)
        self.preds = np.zeros((max(1, alloc.predicates), 32), bool)

    def _units(self, warp, name):
        value = warp.regs[self.program.slots[name]]
        if self.alloc.units[name] == 0:
            return [(self.preds, self.alloc.physical[name], value)]
        first = self.alloc.physical[name]
        if self.alloc.units[name] == 2:
            return [(self.regs, first, (value & 0xFFFF_FFFF).astype(np.uint32)),
                    (self.regs, first + 1, (value >> np.uint64(32)).astype(np.uint32))]
        return [(self.regs, first, value.astype(np.uint32))]

    def check(self, warp, name, lanes, where):
        for file, index, value in self._units(warp, name):
            bad = lanes & (file[index] != value)
            assert not bad.any(), f"{where}: {name} in {self.alloc.name(name)} was overwritten"

    def write(self, warp, name, lanes):
        for file, index, value in self._units(warp, name):
            file[index][lanes] = value[lanes]


def _run_checked(name):
    spec, program, variant = load_workload(name)
    alloc = allocate_registers(program.kernel)
    launch = spec.make("test", variant)
    memory = GlobalMemory(launch.buffers)
    params = pack_params(launch, program.kernel, memory)
    checked = 0
    for block_id in _blocks(launch.grid):
        block = ThreadBlock(program, block_id, launch.block, launch.grid, memory, params)
        shadows = [_Shadow(program, alloc) for _ in block.warps]
        with np.errstate(all="ignore"):
            while not block.done:
                for warp, shadow in zip(block.warps, shadows, strict=True):
                    while warp.ready:
                        top = warp.stack[-1]
                        ins = program.code[top[0]]
                        active = top[2]
                        run = active
                        if ins.guard is not None:
                            g = warp.regs[program.slots[ins.guard]]
                            run = active & (~g if ins.guard_negated else g)
                        for src in ins.sources:
                            shadow.check(warp, src, active if src == ins.guard else run,
                                         f"{name} line {ins.line}")
                            checked += 1
                        step = warp.step()
                        for dst in ins.dests:
                            shadow.write(warp, dst, step.mask)
    return checked


@pytest.mark.parametrize("name", kernel_names())
def test_allocation_holds_every_value_until_its_last_read(name):
    assert _run_checked(name) > 100
