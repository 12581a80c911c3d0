"""RegLess with and without a barrier holding a drained warp off the warp stack (docs/regless.md,
"Deadlock at a barrier").

``python docs/examples/regless_barriers.py [--size test|paper] [--capacities 256,512]
KERNEL ...`` runs each kernel on the fast RegLess model at each OSU capacity twice, with the
capacity manager of sessions 11-22 (a warp waiting at a barrier may take its next region) and
with ``holdbar`` (:attr:`gpurf.sim.sm.regless.ReglessConfig.hold_barriers`), every operand
read checked, and prints one markdown row per kernel and capacity: the run time over the
register file's for both, whether the outputs equal numpy, and the CPU seconds of each run.
A run that deadlocks (:data:`gpurf.sim.sm.regless.STALL`) shows as ``deadlock at cycle N``.
"""

import re
import time

import click

from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.recording import shared_functional_runs
from gpurf.sim.sm.regless import CAPACITIES, ReglessConfig, ReglessError, run_regless
from gpurf.sim.sm.run import run_kernel
from gpurf.sim.sm.suite import SUITE

RULES = {"no hold": False, "holdbar": True}
"""The capacity manager of sessions 11-22 (a warp waiting at a barrier may take its next
region), and with ``holdbar``."""


def capacities(text: str) -> list[int]:
    """``"256,512"`` -> ``[256, 512]``, each one of :data:`CAPACITIES`."""
    values = [int(part) for part in text.split(",") if part.strip().isdigit()]
    if not values or len(values) != len(text.split(",")) or set(values) - set(CAPACITIES):
        raise click.BadParameter(f"expected capacities from {CAPACITIES}, comma-separated")
    return values


def cell(kernel: str, size: str, config: ReglessConfig, sm, baseline: int) -> list[str]:
    """One run's run time (or where it deadlocked), outputs check and CPU seconds."""
    start = time.process_time()
    try:
        out = run_regless(kernel, size, config, sm=sm, baseline=False)
    except ReglessError as error:
        if "deadlocked" not in str(error):
            raise
        found = re.search(r"since cycle (\d+)", str(error))
        return [f"deadlock at cycle {int(found.group(1)):,}", "-",
                f"{time.process_time() - start:.1f}"]
    return [f"{out['cycles'] / baseline:.3f}", "equal" if out["passed"] else "DIFFER",
            f"{time.process_time() - start:.1f}"]


@click.command()
@click.option("--size", type=click.Choice(["test", "paper"]), default="test",
              show_default=True)
@click.option("--capacities", "chosen", default="256,384,512,768,1024", show_default=True,
              help="OSU entries per SM, comma-separated.")
@click.argument("kernels", nargs=-1, required=True, type=click.Choice(list(SUITE)),
                metavar="KERNEL...")
def main(size: str, chosen: str, kernels: tuple[str, ...]) -> None:
    """Run time of KERNELS on RegLess with and without holdbar, per capacity."""
    sm = load_config(preset="gtx980")
    heads = [f"{rule} {what}" if what == "(x)" else what
             for rule in RULES for what in ("(x)", "outputs", "CPU s")]
    click.echo("| kernel | capacity | " + " | ".join(heads) + " |")
    click.echo("|---" * (2 + len(heads)) + "|")
    for kernel in kernels:
        with shared_functional_runs():
            baseline = run_kernel(kernel, size, timing=sm, values=True).stats["timing"].cycles
            for capacity in capacities(chosen):
                cells = [value for hold in RULES.values() for value in cell(
                    kernel, size, ReglessConfig(capacity=capacity, hold_barriers=hold), sm,
                    baseline)]
                click.echo(f"| {kernel} | {capacity} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
