"""Worker processes for the main job, each in its own session, and what stops them.

Each worker (:mod:`.worker`) is started with ``start_new_session``: it leads a process group
that everything it starts — make, Verilator, the compiled simulator, yosys — joins. Ctrl-C
(SIGINT, sent by the terminal to the foreground group only) and SIGTERM therefore reach the
job's own process only, which kills every worker's group (SIGTERM, then SIGKILL for what is left
after a grace period) before it exits: nothing it started outlives it. A worker that dies on
its own fails the task it held; a new worker takes the remaining tasks.
"""

import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path

__all__ = ["StoppedError", "WorkerPool", "group_members"]

GRACE_SECONDS = 5.0
"""How long a process group has between SIGTERM and SIGKILL."""


class _Worker:
    def __init__(self, log: Path, env: dict[str, str] | None):
        self.log = log
        self.task: dict | None = None
        self.process = subprocess.Popen(
            [sys.executable, "-m", "gpurf.sim.flow.worker", str(log)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1,
            start_new_session=True, env=env)

    def send(self, task: dict) -> None:
        self.task = task
        self.process.stdin.write(json.dumps(task) + "\n")
        self.process.stdin.flush()

    def close(self) -> None:
        """Wait for the process to end and close its pipes."""
        self.process.wait()
        self.process.stdout.close()
        if not self.process.stdin.closed:
            self.process.stdin.close()

    def died(self) -> dict:
        """The record of the task a worker held when it died."""
        code = self.process.returncode
        return {"status": "error", "error": f"worker died (exit status {code})",
                "message": f"the worker running this task died (exit status {code}); "
                           f"see {self.log}", "seconds": None}


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
"""The signals that stop the job."""


class WorkerPool:
    """``workers`` worker processes that run tasks (dicts with ``kind`` and arguments); a
    context manager, whose exit stops every worker.

    While it is open, SIGINT and SIGTERM are noted by a handler that only wakes the pool's
    select loop (through a pipe), which then raises :class:`StoppedError`: the job stops at
    one known point, never in the middle of starting a worker or reading its line, as an
    exception raised by the signal itself could."""

    def __init__(self, workers: int, logs: Path, env: dict[str, str] | None = None):
        self.size, self.logs, self.env = workers, logs, env
        self.workers: list[_Worker] = []
        self.started = 0
        self._previous_handlers: dict = {}
        self._signals: list[int] = []
        self._wake = (-1, -1)

    def __enter__(self) -> "WorkerPool":
        self._wake = os.pipe()
        os.set_blocking(self._wake[1], False)
        self._previous_handlers = {number: signal.signal(number, self._note_signal)
                                   for number in STOP_SIGNALS}
        return self

    def __exit__(self, *exc) -> None:
        try:
            self.stop()
        finally:
            for number, handler in self._previous_handlers.items():
                signal.signal(number, handler)
            for end in self._wake:
                os.close(end)

    def _note_signal(self, number, _frame) -> None:
        self._signals.append(number)
        with suppress(OSError):
            os.write(self._wake[1], b"!")

    def _check_signals(self) -> None:
        if self._signals:
            raise StoppedError(self._signals[0])

    def run(self, tasks: list[dict]) -> Iterator[tuple[dict, dict]]:
        """``(task, record)`` for every task, in the order they finish."""
        pending = [{**task, "id": n} for n, task in enumerate(tasks)]
        pending.reverse()
        self.logs.mkdir(parents=True, exist_ok=True)
        with selectors.DefaultSelector() as selector:
            selector.register(self._wake[0], selectors.EVENT_READ, None)
            yield from self._serve(pending, selector)

    def _serve(self, pending: list[dict], selector) -> Iterator[tuple[dict, dict]]:
        busy = 0
        while pending or busy:
            self._check_signals()
            while pending and (idle := self._idle_worker(selector)) is not None:
                idle.send(pending.pop())
                busy += 1
            for key, _ in selector.select():
                worker = key.data
                if worker is None:
                    os.read(self._wake[0], 64)
                    self._check_signals()
                line = worker.process.stdout.readline()
                task, worker.task = worker.task, None
                if not line:
                    selector.unregister(worker.process.stdout)
                    self.workers.remove(worker)
                    worker.close()
                if task is None:
                    continue
                busy -= 1
                record = json.loads(line)["record"] if line else worker.died()
                yield _public(task), record

    def _idle_worker(self, selector) -> _Worker | None:
        for worker in self.workers:
            if worker.task is None:
                return worker
        if len(self.workers) >= self.size:
            return None
        worker = _Worker(self.logs / f"worker-{self.started}.log", self.env)
        self.started += 1
        self.workers.append(worker)
        selector.register(worker.process.stdout, selectors.EVENT_READ, worker)
        return worker

    def stop(self) -> None:
        """End every worker: idle ones by closing their input, and then every process
        group still alive by SIGTERM and, after :data:`GRACE_SECONDS`, SIGKILL."""
        for worker in self.workers:
            if worker.task is None:
                worker.process.stdin.close()
        deadline = time.monotonic() + GRACE_SECONDS
        groups = [w.process.pid for w in self.workers]
        for worker in self.workers:
            if worker.task is not None:
                _signal_group(worker.process.pid, signal.SIGTERM)
        while any(group_members(g) for g in groups) and time.monotonic() < deadline:
            time.sleep(0.05)
        for group in groups:
            _signal_group(group, signal.SIGKILL)
        for worker in self.workers:
            worker.close()
        self.workers = []


def _public(task: dict) -> dict:
    return {k: v for k, v in task.items() if k != "id"}


def _signal_group(group: int, number: int) -> None:
    with suppress(ProcessLookupError):
        os.killpg(group, number)


def group_members(group: int) -> list[int]:
    """Processes of process group ``group`` that are still running (read from ``/proc``;
    zombies, which have ended and only wait to be reaped, do not count)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        # The command name (in parentheses) may hold spaces; the fields after it do not.
        state, _parent, process_group = text[text.rindex(")") + 2:].split()[:3]
        if int(process_group) == group and state != "Z":
            members.append(int(stat.parent.name))
    return members


class StoppedError(Exception):
    """The job was stopped by a signal (``signal`` its number)."""

    def __init__(self, number: int):
        super().__init__(f"stopped by {signal.Signals(number).name}")
        self.signal = number

