"""Watching the timing model's sub-cores: a hook after each of their cycles, on the fast path
and the generic one alike (the fast-path equivalence tests record state through it)."""

from collections.abc import Callable
from contextlib import contextmanager

from gpurf.sim.sm import timing as timing_module


@contextmanager
def after_each_subcore_cycle(monkeypatch, observe: Callable):
    """Within the block, ``observe(sub_core, now, acted)`` runs after every sub-core cycle,
    whichever of ``_SubCore.cycle`` / ``_SubCore.fast_cycle`` the SM takes."""

    def watched(method):
        def cycle(sub, now):
            acted = method(sub, now)
            observe(sub, now, acted)
            return acted
        return cycle

    with monkeypatch.context() as patch:
        for name in ("cycle", "fast_cycle"):
            patch.setattr(timing_module._SubCore, name,
                          watched(getattr(timing_module._SubCore, name)))
        yield
