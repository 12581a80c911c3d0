"""The harness's per-cycle cocotb path (``tb.harness.cosimulate``): raw port access, writes
only of changed inputs, and the check still made every cycle on every output.

The fast path writes inputs at the clock edge on Verilator and in the ReadWrite phase on
Icarus (``tb.harness._write_phase``); a mutant of ``subcore.subcore_assigner`` (one comparison
flipped) must fail lock-step cosimulation at the same cycle and port on both simulators, the
one its recorded golden trace says differs (``tests/test_replay.py`` ties the Icarus run to
the replay's first divergence too). This mutant does not tell the two write phases apart (it
still fails at the same cycle when Icarus's inputs are written at the edge); the Icarus tier
of ``tests/test_cosim.py`` does: ``compression.indirection_table``'s test sets fail within
a few hundred cycles with inputs written at the edge on Icarus.
"""

import contextlib
import importlib
import re

import pytest

from gpurf.golden.trace import Trace
from gpurf.hw.registry import get_block
from gpurf.sim.replay import record
from gpurf.sim.runner import CosimResult, build_model
from gpurf.sim.toolchain import activate, missing_simulator
from gpurf.sim.verilog import verilog_text
from gpurf.tb.harness import (
    BenchConfig,
    _full_inputs,
    _InputPort,
    _output_readers,
    _sample_all,
)

from .test_replay import flip_first_comparison

BLOCK = get_block("subcore.subcore_assigner")
CYCLES = 1500


class _RawHandle:
    """Stands in for cocotb's ``sim_obj``: records every write it is given."""

    def __init__(self):
        self.writes = []

    def set_signal_val_int(self, action, value):
        self.writes.append(("int", action, value))

    def set_signal_val_binstr(self, action, value):
        self.writes.append(("binstr", action, value))


class _Handle:
    def __init__(self, width):
        self._handle, self.width = _RawHandle(), width

    def __len__(self):
        return self.width


def _written(width: int, values) -> list:
    """The writes an input port of ``width`` bits makes when driven ``values``, a cycle each."""
    handle = _Handle(width)
    port = _InputPort("warp", handle)
    for value in values:
        if port.changed(value):
            port.write()
    return handle._handle.writes


def test_only_changed_inputs_are_written():
    assert _written(4, [0, 3, 3, 0, 0, 15]) == [("int", 0, 3), ("int", 0, 0), ("int", 0, 15)]


def test_wide_inputs_are_written_as_binary_strings_of_their_width():
    value = (1 << 39) | 5
    assert _written(40, [value, value]) == [("binstr", 0, f"{value:040b}")]


@pytest.mark.parametrize("value", [16, -1, 1 << 40])
def test_an_input_too_wide_for_its_port_is_an_error(value):
    port = _InputPort("warp", _Handle(4))
    with pytest.raises(ValueError, match=r"^input warp: .* does not fit 4 bits$"):
        port.changed(value)


def test_outputs_are_read_as_unsigned_ints():
    readers = [("grant", lambda: "0101", None), ("wide", lambda: "1" + "0" * 70, None),
               ("word", lambda: -1, 0xFFFFFFFF), ("flag", lambda: 1, 1)]
    assert _sample_all(readers, 3) == {"grant": 5, "wide": 1 << 70, "word": 0xFFFFFFFF,
                                       "flag": 1}


class _Dut:
    """Output handles of 4, 32 and 33 bits with both of the simulator's reads."""

    def __init__(self):
        for name, width in (("narrow", 4), ("word", 32), ("wide", 33)):
            handle = _Handle(width)
            handle._handle.get_signal_val_long = lambda: -1
            handle._handle.get_signal_val_binstr = lambda width=width: "1" * width
            setattr(self, name, handle)


@pytest.mark.parametrize("two_state", [False, True])
def test_a_two_state_simulator_reads_ports_of_up_to_32_bits_as_integers(two_state):
    readers = _output_readers(_Dut(), ["narrow", "word", "wide"], two_state=two_state)
    integer = [name for name, read, mask in readers if mask is not None]
    assert integer == (["narrow", "word"] if two_state else [])
    assert _sample_all(readers, 0) == {"narrow": 15, "word": (1 << 32) - 1,
                                       "wide": (1 << 33) - 1}


@pytest.mark.parametrize("bits", ["01x1", "z000", "X"])
def test_an_x_or_z_output_names_its_port_and_cycle(bits):
    with pytest.raises(ValueError, match=rf"^cycle 7: output grant is {bits} \(X or Z bits\)$"):
        _sample_all([("grant", lambda: bits, None)], 7)


def test_inputs_left_out_read_0_and_unknown_inputs_are_an_error():
    order = dict.fromkeys(["a", "b", "c"])
    assert _full_inputs({"b": 2}, order) == {"a": 0, "b": 2, "c": 0}
    with pytest.raises(KeyError, match="d"):
        _full_inputs({"d": 1}, order)


def _lock_step_failure(sim: str, mutant, folder, seed: int) -> tuple[int, str, int, int]:
    """``(cycle, port, RTL value, golden value)`` of the first mismatch of the harness's
    cosimulation of ``mutant`` on ``sim``."""
    from cocotb_tools.runner import get_runner

    activate()
    params = BLOCK.resolve()
    model = build_model(BLOCK, params, sim=sim, waves=False, source=mutant, root=folder)
    stimulus = importlib.import_module(BLOCK.tb_module).STIMULI[0]
    config = BenchConfig(BLOCK.qualname, params, seed, CYCLES)
    results = folder / f"results-{sim}.xml"
    with contextlib.suppress(SystemExit):       # cocotb's runner exits on a failed test
        get_runner(sim).test(test_module=BLOCK.tb_module, hdl_toplevel=BLOCK.toplevel,
                             hdl_toplevel_lang="verilog",
                             build_dir=model, test_dir=folder, seed=seed,
                             testcase=f"test_{stimulus.__name__}", extra_env=config.to_env(),
                             results_xml=str(results), log_file=folder / f"test-{sim}.log")
    (failure,) = CosimResult(BLOCK.qualname, sim, 1, 1, results).failures
    found = re.search(r"cycle (\d+), port (\w+): RTL (0x[0-9a-f]+), golden (0x[0-9a-f]+)",
                      failure)
    assert found, f"the mutant passed lock-step cosimulation on {sim}: {failure}"
    return int(found.group(1)), found.group(2), int(found.group(3), 16), int(found.group(4), 16)


@pytest.mark.skipif(bool(missing_simulator("verilator") or missing_simulator("icarus")),
                    reason="needs Verilator and Icarus")
def test_a_mutant_fails_at_the_same_cycle_and_port_on_both_simulators(tmp_path, seed):
    mutant = tmp_path / f"{BLOCK.toplevel}.v"
    mutant.write_text(flip_first_comparison(verilog_text(BLOCK)))
    failures = {}
    for sim in ("icarus", "verilator"):
        (tmp_path / sim).mkdir()
        failures[sim] = _lock_step_failure(sim, mutant, tmp_path / sim, seed)
    assert failures["icarus"] == failures["verilator"]
    cycle, port, actual, expected = failures["verilator"]
    trace = Trace(record(BLOCK, seed=seed, cycles=CYCLES, folder=tmp_path / "trace").path)
    assert trace.rows(cycle, cycle + 1)[0][2][port] == expected != actual
