"""CPU cost per warp instruction of WIR in the golden SM, measured over a bounded window
(docs/wir.md, "Speed"): a paper-size run takes minutes to hours, so the first ``seconds`` of
CPU time of one stand for the run's rate.

``python -m gpurf.sim.sm.wir_speed KERNEL CONFIG SIZE SECONDS`` prints the CPU seconds, the
warp instructions issued in them and the milliseconds per warp instruction.
"""

import signal
import sys
import time
from dataclasses import replace

from .config import load_config
from .run import load_workload, run_kernel
from .wir import CONFIGS, WirStorage, _registers_per_warp, wir_sm_config

__all__ = ["window"]


_REFIRE = 0.01
"""Seconds between the timer's repeated signals once the window is spent: a raise that lands
in a garbage-collector callback is swallowed there, so the next one ends the run."""


class _WindowSpentError(BaseException):
    """The window's CPU time is spent (a ``BaseException``, so that no ``except Exception``
    in the model catches it)."""


def _until_spent(run, seconds: float) -> bool:
    """Call ``run()`` for at most ``seconds`` of process CPU time (``ITIMER_PROF``); whether
    it finished."""
    running = [True]

    def stop(*_):
        if running[0]:
            raise _WindowSpentError

    previous = signal.signal(signal.SIGPROF, stop)
    signal.setitimer(signal.ITIMER_PROF, seconds, _REFIRE)
    try:
        try:
            run()
        finally:
            running[0] = False
    except _WindowSpentError:
        return False
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)
    return True


def window(kernel: str, config: str, size: str, seconds: float) -> dict:
    """Run ``kernel`` under WIR ``config`` at ``size`` for at most ``seconds`` of process CPU
    time (``ITIMER_PROF``); ``{cpu, issued, ms_per_instruction, finished}``."""
    wir = replace(CONFIGS[config])
    _, program, _ = load_workload(kernel)
    storage = WirStorage(program, wir, registers_per_warp=_registers_per_warp(program))
    timing = wir_sm_config(load_config(preset="fermi"), wir)
    start = time.process_time()
    finished = _until_spent(lambda: run_kernel(kernel, size, timing=timing, values=storage),
                            seconds)
    cpu = time.process_time() - start
    issued = storage.stats["issued"]
    return {"cpu": cpu, "issued": issued, "finished": finished,
            "ms_per_instruction": 1000 * cpu / max(issued, 1)}


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] not in CONFIGS:
        print("usage: python -m gpurf.sim.sm.wir_speed KERNEL CONFIG SIZE SECONDS "
              f"(CONFIG one of {', '.join(CONFIGS)})", file=sys.stderr)
        return 2
    kernel, config, size, seconds = argv
    out = window(kernel, config, size, float(seconds))
    state = "finished" if out["finished"] else "stopped"
    print(f"{kernel} {config} {size}: {out['cpu']:.1f} s CPU ({state}), {out['issued']} warp "
          f"instructions issued, {out['ms_per_instruction']:.4f} ms per warp instruction")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
