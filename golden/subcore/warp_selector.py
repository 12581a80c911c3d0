"""Golden model of ``subcore.warp_selector``: a plain function and a port adapter."""

from gpurf.golden.model import PortModel
from gpurf.hw.subcore.configs import WarpSelectorConfig

__all__ = ["WarpSelector", "pick_warp", "select_warp"]


def select_warp(slots, *, policy, greedy=None, rba_greedy=False):
    """The slot index the scheduler issues from, or ``None`` when no slot is ready.

    ``slots`` is a sequence of mappings with ``valid``, ``ready``, ``age`` (larger =
    older) and ``score``; the choice is :func:`pick_warp`'s among the valid ready slots.
    """
    ready = [i for i, s in enumerate(slots) if s["valid"] and s["ready"]]
    return pick_warp(ready, [s["age"] for s in slots], [s["score"] for s in slots],
                     policy=policy, greedy=greedy, rba_greedy=rba_greedy)


def pick_warp(ready, age, score, *, policy, greedy=None, rba_greedy=False):
    """The slot the scheduler issues from among the slot indices ``ready`` (ascending),
    or ``None`` when there are none; ``age[i]`` (larger = older) and ``score[i]`` are slot
    ``i``'s (``score`` is only read by RBA).

    GTO: the greedy slot if ready, else the oldest ready slot. RBA: the ready slot with
    the lowest score, ties to the oldest (and, with ``rba_greedy``, the greedy slot
    first). Equal keys go to the lower index (the first in ``ready``: ``min`` and ``max``
    return the first extreme element).
    """
    if not ready:
        return None
    if greedy is not None and (policy == "gto" or rba_greedy) and greedy in ready:
        return greedy
    if policy == "rba":
        return min(ready, key=lambda i: (score[i], -age[i]))
    return max(ready, key=age.__getitem__)


class WarpSelector(PortModel, config=WarpSelectorConfig):
    """Port-level model: ``step(inputs)`` returns the outputs for those inputs."""

    def reset(self):
        self._last = None

    def step(self, inputs):
        config = self.config
        slots = self.ports["slot"].unpack(inputs["slot"])
        ready = [i for i, s in enumerate(slots) if s.valid and s.ready]
        choice = pick_warp(ready, [s.age for s in slots], [s.score for s in slots],
                           policy=config.policy,
                           greedy=inputs["greedy"] if inputs["greedy_valid"] else None,
                           rba_greedy=config.rba_greedy)
        self._last = (choice,)
        return {"grant_valid": int(choice is not None), "grant": choice or 0}

    def line_trace(self):
        if self._last is None:
            return "warp_selector: -"
        choice = self._last[0]
        return f"warp_selector: grant={'-' if choice is None else choice}"
