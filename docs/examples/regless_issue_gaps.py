"""The longest stretch of cycles in which a RegLess SM issues no instruction, beside the
watchdog's bound :data:`gpurf.sim.sm.regless.STALL` (docs/regless.md, "Deadlock at a
barrier").

``python docs/examples/regless_issue_gaps.py [--size test|paper] [--capacity 256 --capacity
512] [KERNEL ...]`` runs each kernel (default: the register-bound suite) on the fast RegLess
model at each OSU capacity, every operand read checked, and prints one markdown row per run:
the longest gap between an instruction's issue and the next one's (or a launch's start and
its first issue), the cycle that gap ended in, the run's cycles and whether the outputs
equal numpy. The gaps are taken from :meth:`ReglessSM.issued
<gpurf.sim.sm.regless.ReglessSM.issued>`, the same ``last_issue`` the watchdog reads, by
wrapping it for the script's runs only.
"""

import contextlib

import click

from gpurf.sim.sm import regless
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.recording import shared_functional_runs
from gpurf.sim.sm.regless import CAPACITIES, STALL, ReglessConfig, run_regless
from gpurf.sim.sm.suite import SUITE


@contextlib.contextmanager
def longest_gap():
    """Within the block, every issue of a RegLess SM updates the yielded
    ``{"gap": cycles, "at": cycle}`` if it ends a longer gap than seen so far."""
    seen = {"gap": 0, "at": 0}
    issued = regless.ReglessSM.issued

    def measured(self, sub, warp, pc, now):
        if now - self.last_issue > seen["gap"]:
            seen.update(gap=now - self.last_issue, at=now)
        return issued(self, sub, warp, pc, now)

    regless.ReglessSM.issued = measured
    try:
        yield seen
    finally:
        regless.ReglessSM.issued = issued


@click.command()
@click.option("--size", type=click.Choice(["test", "paper"]), default="test",
              show_default=True)
@click.option("--capacity", "chosen", multiple=True, default=("256", "512"),
              show_default=True, type=click.Choice([str(c) for c in CAPACITIES]),
              help="OSU entries per SM; repeat for more.")
@click.argument("kernels", nargs=-1, type=click.Choice(list(SUITE)), metavar="[KERNEL]...")
def main(size: str, chosen: str, kernels: tuple[str, ...]) -> None:
    """The longest issue gap of KERNELS (default: the suite) per OSU capacity."""
    sm = load_config(preset="gtx980")
    click.echo("| kernel | capacity | longest gap (cycles) | ended at cycle | run cycles | "
               "outputs |")
    click.echo("|---|---|---|---|---|---|")
    worst = 0
    for kernel in kernels or SUITE:
        with shared_functional_runs():
            for capacity in map(int, chosen):
                with longest_gap() as seen:
                    out = run_regless(kernel, size, ReglessConfig(capacity=capacity), sm=sm,
                                      baseline=False)
                worst = max(worst, seen["gap"])
                click.echo(f"| {kernel} | {capacity} | {seen['gap']:,} | {seen['at']:,} | "
                           f"{out['cycles']:,} | {'equal' if out['passed'] else 'DIFFER'} |")
    click.echo(f"longest: {worst:,} cycles, {worst / STALL:.2%} of STALL ({STALL:,})")


if __name__ == "__main__":
    main()
