"""The leakage comparison of ``sim/greener.py``: the oracle power states follow Table 1 on
a hand-made stream, and a real kernel's stream replays through the golden controller
without an OFF read under every policy."""

import pytest

from gpurf.sim.greener import OFF, ON, SLEEP, WarpInstruction, compare_policies, oracle_states


def test_oracle_states_follow_table_1():
    """r1 written, read 2 later (ON), then read 5 later (SLEEP: live, beyond W = 3), then
    dead (OFF); r2 read and overwritten by the next instruction (ON: Table 1 keeps a
    register ON whenever its next access is within W, live or not); a source its own
    instruction writes stays ON; a third source is not encoded (SLEEP)."""
    stream = [WarpInstruction([], [1]),            # 0: r1 =
              WarpInstruction([2], [3]),           # 1: r3 = f(r2)
              WarpInstruction([1], [2]),           # 2: r2 = f(r1)
              WarpInstruction([4, 4, 4], [4]),     # 3: r4 = f(r4, r4, r4)
              WarpInstruction([], [5]), WarpInstruction([], [6]), WarpInstruction([], [6]),
              WarpInstruction([1, 3], [])]         # 7: reads r1, r3 for the last time
    oracle_states(stream, threshold=3)
    assert stream[0].dst_states == [ON]
    assert stream[1].src_states == [ON]            # overwritten next: Dist <= W wins
    assert stream[1].dst_states == [SLEEP]         # r3 read 6 instructions later
    assert stream[2].src_states == [SLEEP]         # r1 read 5 instructions later
    assert stream[3].src_states == [ON, ON, SLEEP]  # its own write follows the read
    assert stream[3].dst_states == [OFF]
    assert stream[7].src_states == [OFF, OFF]


@pytest.mark.parametrize(("warps", "states"), [(1, "compiler"), (4, "compiler"), (4, "oracle")])
def test_kernel_stream_replays_under_every_policy(warps, states):
    """No OFF register is read under either source of states (the replay raises), the
    counters add up, and both policies leak less than always-ON."""
    result = compare_policies("vecadd", "test", warps=warps, states=states)
    runs = result["runs"]
    registers = max(2, result["warps"]) * result["regs"]  # the controller has >= 2 warps
    assert set(runs) == {"always_on", "greener", "sleep_reg"}
    instructions = {run["instructions"] for run in runs.values()}
    assert len(instructions) == 1 and instructions.pop() > 0
    for policy in ("greener", "sleep_reg"):
        run = runs[policy]
        counted = sum(run["counters"][f"cycles_{s}"] for s in ("on", "sleep", "off"))
        assert counted == registers * run["cycles"]
        assert run["leakage_best"] <= run["leakage_worst"] < runs["always_on"]["leakage_best"]
        assert run["transition_joules"] > 0
    assert runs["sleep_reg"]["counters"]["on_off"] == 0  # Sleep-Reg never turns a register OFF


def test_bad_arguments():
    with pytest.raises(ValueError, match=r"^warps must be an integer in 1\.\.64, not 0$"):
        compare_policies("vecadd", warps=0)
    with pytest.raises(ValueError, match=r"^states must be one of compiler, oracle, not 'x'$"):
        compare_policies("vecadd", states="x")
