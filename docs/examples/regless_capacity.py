"""Where a RegLess shard's OSU lines go, per configuration (docs/regless.md, "Why srad is
not monotonic in capacity").

``python docs/examples/regless_capacity.py KERNEL CONFIG ...`` runs ``KERNEL`` at test size
on the fast RegLess model once per ``CONFIG`` (as in ``--mechanism regless:CONFIG``, e.g.
``384``, ``512``, ``512+admit384``), every operand read checked, and prints one markdown row
each: the means over the shards' cycles of the regions the capacity manager holds (active,
preloading or draining), its lines not reserved by any region, and the OSU's lines by
place (used by a region, dirty or clean: cached for an inactive warp, free); preloads served
by the OSU; preloads from L2; evictions. Then, per configuration, the cycle each warp slot of
shard 0 took its first region. ``--regions N`` (first) makes the compiler pass form the
regions of an OSU of ``N`` entries per SM whatever the configuration (the pass's inputs for
``N``: its lines per bank and a quarter of a shard's lines as live registers). The counts
come from probes wrapped around :meth:`~gpurf.sim.sm.regless_ports.ShardPortTiming.step`
and ``ReglessSM._activate``; the model's decisions are unchanged.
"""

import sys
from collections import Counter

from gpurf.sim.sm import regless
from gpurf.sim.sm.regless_ports import ShardPortTiming

COLUMNS = ("config", "cycles", "active regions", "lines not reserved", "used", "dirty",
           "clean", "free", "preloads from OSU (%)", "preloads from L2", "evictions")


def probe(counts: Counter, starts: dict) -> None:
    """Wrap the ports' step (per-cycle occupancy into ``counts``) and the CM's activation
    (shard 0's first region per slot into ``starts``)."""
    step, activate = ShardPortTiming.step, regless.ReglessSM._activate

    def counted_step(ports, now):
        shard = ports.shard
        counts["cycles"] += 1
        counts["active"] += shard.active
        counts["unreserved"] += sum(shard.free)
        counts.update(line.place for bank in ports.lines for line in bank)
        return step(ports, now)

    def logged_activate(model, shard, state, cycle):
        if shard.index == 0:
            starts.setdefault(state.warp.slot, cycle)
        return activate(model, shard, state, cycle)

    ShardPortTiming.step = counted_step
    regless.ReglessSM._activate = logged_activate


def force_regions(capacity: int) -> None:
    """The pass forms the regions of ``capacity`` entries per SM (4 shards of 8 banks)."""
    form, lines = regless.regless_pass, capacity // 4

    def formed(kernel, *, lines_per_bank, max_live_registers):
        return form(kernel, lines_per_bank=lines // regless.BANKS,
                    max_live_registers=lines // 4)

    regless.regless_pass = formed


def row(text: str, out: dict, counts: Counter) -> str:
    """One configuration's markdown row."""
    n = counts["cycles"]
    means = [counts[k] / n for k in ("active", "unreserved", "used", "dirty", "clean", "free")]
    cells = [text, f"{out['cycles']:,}", f"{means[0]:.2f}", *(f"{m:.1f}" for m in means[1:]),
             f"{100 * out['preloads_osu'] / out['preloads']:.1f}",
             f"{out['preloads_l2']:,}", f"{out['evictions']:,}"]
    return "| " + " | ".join(cells) + " |"


def main(argv: list[str]) -> int:
    if argv[0] == "--regions":
        force_regions(int(argv[1]))
        argv = argv[2:]
    kernel, configs = argv[0], argv[1:]
    counts, starts = Counter(), {}
    probe(counts, starts)
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS))
    firsts = []
    for text in configs:
        counts.clear()
        starts.clear()
        out = regless.run_regless(kernel, "test", regless.ReglessConfig.parse(text),
                                  baseline=False)
        if not out["passed"]:
            print(f"{kernel} ({text}): outputs differ from numpy", file=sys.stderr)
            return 1
        print(row(text, out, counts), flush=True)
        firsts.append(f"{text}: " + ", ".join(f"slot {s} {c}" for s, c in sorted(starts.items())))
    print("\nshard 0, first region of each slot (cycle):")
    print("\n".join(firsts))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
