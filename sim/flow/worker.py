"""A main-job worker: ``python -m gpurf.sim.flow.worker LOG``.

Reads one task per line on stdin (JSON: ``id``, ``kind`` and the task's arguments, see
:data:`~.tasks.TASKS`) and answers each with one line (JSON: ``id`` and the task's record,
with ``seconds``) on the stdout it was started with. Everything else that it or the tools it
starts print (cocotb, make, Verilator, yosys) goes to ``LOG``, so it never mixes with the
answers. An exception in a task is the task's ``error`` record, its traceback in ``LOG``;
the worker goes on with the next task.
"""

import json
import os
import sys
import time
import traceback

from ..toolchain import activate
from .tasks import TASKS


def run_task(task: dict) -> dict:
    """The record of one task, with its wall time in ``seconds``."""
    start = time.monotonic()
    arguments = {k: v for k, v in task.items() if k not in ("id", "kind")}
    try:
        record = TASKS[task["kind"]](**arguments)
    except Exception as error:  # a task's failure is its record, never the worker's end
        traceback.print_exc()
        first = (str(error).strip().splitlines() or [""])[0]
        record = {"status": "error", "error": f"{type(error).__name__}: {first}",
                  "message": str(error)}
    return {**record, "seconds": round(time.monotonic() - start, 3)}


def serve(answers, log_path: str) -> None:
    """Answer the tasks read from stdin on ``answers``, with stdout and stderr sent to
    ``log_path``."""
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    activate()
    for line in sys.stdin:
        task = json.loads(line)
        print(f"--- task {task}", flush=True)
        record = run_task(task)
        answers.write(json.dumps({"id": task["id"], "record": record}) + "\n")
        answers.flush()


if __name__ == "__main__":
    serve(os.fdopen(os.dup(1), "w"), sys.argv[1])
