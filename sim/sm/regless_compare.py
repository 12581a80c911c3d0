"""Fast RegLess model vs the port-exact golden shard, on the same kernel.

``python -m gpurf.sim.sm.regless_compare KERNEL [KERNEL ...] [--size test] [--capacity N]``
runs a kernel
with :class:`gpurf.sim.sm.regless.ReglessSM` (the fast model) and with
:class:`gpurf.sim.sm.regless_exact.ReglessExactSM` (a golden ``regless.shard`` per
scheduler) and prints, per kernel, the decisions each made: per warp and region entered, the
cycle its capacity was taken (activation) and the first cycle the warp could issue (staged);
where preloads were served (OSU / compressor / L1 and beyond); evictions; the run's cycles;
and the first divergence (the earliest decision that differs, with both sides).
:func:`compare` returns the same as a dict (:mod:`tests.test_sm_regless_exact` checks it).
"""

import argparse
import json
from collections import defaultdict
from dataclasses import replace

from .regless import CAPACITIES, ReglessConfig, ReglessSM, run_on
from .regless_exact import DEFAULT, Decision, run_regless_exact

__all__ = ["DecisionLog", "compare", "first_divergence", "main", "run_fast"]


class DecisionLog(ReglessSM):
    """The fast model, also recording its :class:`~gpurf.sim.sm.regless_exact.Decision` s
    (the activation cycle and the cycle the warp may issue) and evictions."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.decisions: list[Decision] = []

    def _activate(self, shard, state, cycle):
        start = state.warp.pcs[state.warp.pos]
        state.decision = Decision((self.counts["launches"], *state.key), start, cycle, None)
        self.decisions.append(state.decision)
        super()._activate(shard, state, cycle)

    def _staged(self, state, cycle):
        super()._staged(state, cycle)
        state.decision.staged = int(cycle)


def run_fast(kernel: str, size: str = "test", config: ReglessConfig = DEFAULT,
             *, sm=None) -> dict:
    """The fast model's run of ``kernel`` with its decisions (as :func:`run_exact`)."""
    from .config import load_config
    from .run import load_workload

    sm = sm or load_config(preset="gtx980")
    _, program, _ = load_workload(kernel)
    regless = DecisionLog(program, config, subcores=sm.subcores)
    run = run_on(regless, kernel, size, sm)
    counts = regless.summary()
    return {"cycles": run.stats["timing"].cycles, "passed": run.passed,
            "decisions": regless.decisions,
            "preloads_served": {"osu": counts["preloads_osu"],
                                "compressor": counts["preloads_compressor"],
                                "l1": counts["preloads_l1"] + counts["preloads_l2"]},
            "evictions": counts["evictions"],
            "invalidations_to_l1": counts.get("invalidations_l1", 0)}


def _by_warp(decisions) -> dict:
    out = defaultdict(list)
    for decision in decisions:
        out[decision.warp].append(decision)
    return out


def first_divergence(fast: list[Decision], exact: list[Decision]) -> dict | None:
    """The earliest decision (by the earlier of the two sides' cycles) in which the two
    logs differ: a warp's k-th region entered at a different pc, activated or staged in a
    different cycle, or present on one side only. ``None`` if they agree."""
    fast_by, exact_by = _by_warp(fast), _by_warp(exact)
    found = None
    for warp in sorted(set(fast_by) | set(exact_by)):
        a, b = fast_by.get(warp, []), exact_by.get(warp, [])
        for k in range(max(len(a), len(b))):
            one = a[k] if k < len(a) else None
            two = b[k] if k < len(b) else None
            if one is not None and two is not None and (
                    one.start, one.activated, one.staged) == (two.start, two.activated,
                                                               two.staged):
                continue
            cycle = min(d.activated for d in (one, two) if d is not None)
            if found is None or cycle < found["cycle"]:
                found = {"cycle": cycle, "warp": warp, "region": k,
                         "fast": None if one is None else _row(one),
                         "exact": None if two is None else _row(two)}
            break
    return found


def _row(decision: Decision) -> dict:
    return {"start": decision.start, "activated": decision.activated,
            "staged": decision.staged}


def compare(kernel: str, size: str = "test", config: ReglessConfig = DEFAULT, *,
            exact: dict | None = None) -> dict:
    """Both models on ``kernel``: cycles, preload sources, evictions, decisions agreeing
    and the first divergence. ``exact``: the golden shards' run of ``kernel`` already made
    (:func:`~gpurf.sim.sm.regless_exact.run_regless_exact`'s result)."""
    fast = run_fast(kernel, size, config)
    if exact is None:
        exact = run_regless_exact(kernel, size, config, fast=False)
    same = sum(1 for a, b in zip(sorted(fast["decisions"], key=_key),
                                 sorted(exact["decisions"], key=_key), strict=False)
               if _row(a) == _row(b) and a.warp == b.warp)
    delays = [b.staged - b.activated for b in exact["decisions"] if b.staged is not None]
    fast_delays = [a.staged - a.activated for a in fast["decisions"]]
    return {
        "kernel": kernel, "size": size,
        "cycles": {"fast": fast["cycles"], "exact": exact["cycles"]},
        "passed": {"fast": fast["passed"], "exact": exact["passed"]},
        "regions": {"fast": len(fast["decisions"]), "exact": len(exact["decisions"])},
        "same_decisions": same,
        "staging_cycles_mean": {"fast": _mean(fast_delays), "exact": _mean(delays)},
        "preloads_served": {"fast": fast["preloads_served"],
                            "exact": exact["preloads_served"]},
        "evictions": {"fast": fast["evictions"], "exact": exact["evictions"]},
        "invalidations_to_l1": {"fast": fast["invalidations_to_l1"],
                                "exact": exact.get("l1_invalidate", 0)},
        "first_divergence": first_divergence(fast["decisions"], exact["decisions"]),
    }


def _key(decision: Decision):
    return (decision.warp, decision.activated)


def _mean(values) -> float:
    return round(sum(values) / len(values), 2) if values else 0.0


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("kernels", nargs="+")
    parser.add_argument("--size", default="test", choices=("test", "paper"))
    parser.add_argument("--capacity", type=int, default=DEFAULT.capacity, choices=CAPACITIES,
                        help="OSU entries per SM (both models)")
    parser.add_argument("--nohold", action="store_true",
                        help="a warp at a barrier may take its next region (both models; "
                             "the rule before session 23)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    config = replace(DEFAULT, capacity=args.capacity, hold_barriers=not args.nohold)
    results = [compare(kernel, args.size, config) for kernel in args.kernels]
    if args.json:
        print(json.dumps(results, indent=1, default=str))
        return
    print("| kernel | cycles fast / exact | regions | same decisions | staging cycles "
          "(mean) fast / exact | preloads osu/comp/l1 fast | exact | evictions fast / exact "
          "| invalidations to L1 fast / exact | first divergence |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for r in results:
        d = r["first_divergence"]
        where = ("none" if d is None else
                 f"cycle {d['cycle']}, warp {d['warp']}, region {d['region']}: "
                 f"fast {d['fast']}, exact {d['exact']}")
        served = [r["preloads_served"][side] for side in ("fast", "exact")]
        print(f"| {r['kernel']} | {r['cycles']['fast']:,} / {r['cycles']['exact']:,} | "
              f"{r['regions']['exact']:,} | {r['same_decisions']:,} | "
              f"{r['staging_cycles_mean']['fast']} / {r['staging_cycles_mean']['exact']} | "
              + " | ".join("/".join(f"{s[k]:,}" for k in ("osu", "compressor", "l1"))
                           for s in served)
              + f" | {r['evictions']['fast']:,} / {r['evictions']['exact']:,} | "
              f"{r['invalidations_to_l1']['fast']:,} / {r['invalidations_to_l1']['exact']:,} "
              f"| {where} |")


if __name__ == "__main__":
    main()
