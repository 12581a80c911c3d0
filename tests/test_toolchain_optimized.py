"""Optimized per-cycle Verilator models (``gpurf.sim.toolchain.OPTIMIZED``, issue 14 item 6).

A block listed in ``OPTIMIZED`` gets its own cocotb model compiled at the listed level:
the level reaches the C++ compiler after the ``-O0`` the make variables set (checked on
the compile lines of the build log), the model is a separate build folder (the flags are
in its hash), and the bench passes on it. Uses the small ``subcore.subcore_assigner``;
two Verilator builds, 5 min wall / 23 s CPU on the loaded machine, hence the ``soak`` tier.
"""

import re

import pytest

from gpurf.hw.registry import get_block
from gpurf.sim import toolchain, verilog
from gpurf.sim.runner import build_model, run_bench

SMALL = "subcore.subcore_assigner"


@pytest.fixture
def build_root(tmp_path, monkeypatch):
    monkeypatch.setenv("GPURF_CACHE", str(tmp_path / "cache"))
    monkeypatch.setattr(verilog, "BUILD_ROOT", tmp_path / "build")
    if toolchain.missing_simulator("verilator"):
        pytest.skip(toolchain.missing_simulator("verilator"))
    return tmp_path / "build"


def _compile_levels(model) -> set[str]:
    """The last ``-O`` level on each compile line of the model's generated C++
    (``Vtop*``; cocotb's ``verilator.cpp`` main loop is a user file whose rule puts
    ``OPT_FAST`` last, so it stays at ``-O0``)."""
    levels = set()
    for line in (model / "build.log").read_text().splitlines():
        if " -c -o Vtop" in line:
            found = re.findall(r"\s(-O[0-3s])\b", line)
            if found:
                levels.add(found[-1])
    return levels


@pytest.mark.soak
def test_listed_blocks_are_compiled_optimized(build_root, monkeypatch):
    block = get_block(SMALL)
    params = block.resolve()
    source = verilog.write_verilog(block, params)
    plain = build_model(block, params, sim="verilator", waves=False, source=source)
    monkeypatch.setitem(toolchain.OPTIMIZED, SMALL, "-O2")
    optimized = build_model(block, params, sim="verilator", waves=False, source=source)
    assert optimized != plain
    assert _compile_levels(plain) == {"-O0"}
    assert _compile_levels(optimized) == {"-O2"}
    assert run_bench(block, sim="verilator", cycles=50).passed


def test_the_large_blocks_are_listed():
    """The two blocks whose -O0 model held the per-cycle path under 5,000 cycles/s."""
    assert toolchain.verilator_build_args("greener.power_controller") == ("-CFLAGS", "-O2")
    assert toolchain.verilator_build_args("regless.osu") == ("-CFLAGS", "-O2")
    assert toolchain.verilator_build_args(SMALL) == ()
