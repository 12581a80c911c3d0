"""What values through timing cost (:mod:`gpurf.sim.sm.values`): memory per dynamic warp
instruction and the slowdown of a timing run.

``python -m gpurf.sim.sm.value_cost [KERNEL ...] [--size test|paper] [--repeat N]`` prints a
markdown table (default: saxpy and sobel at test size); ``docs/sm.md`` ("Values through
timing") quotes it. Times are process CPU seconds, the fastest of ``repeat`` runs each way.
"""

import time

import click

from .config import SMConfig
from .run import run_kernel

__all__ = ["measure", "table"]


def _cpu_seconds(name: str, size: str, config: SMConfig, values: bool):
    start = time.process_time()
    run = run_kernel(name, size, timing=config, values=values)
    if not run.passed:
        raise RuntimeError(f"{name} ({size}): outputs differ from the numpy reference")
    return time.process_time() - start, run.stats["timing"]


def measure(name: str, size: str = "test", repeat: int = 5,
            config: SMConfig | None = None) -> dict:
    """Memory and time of values through timing on ``name``: ``dynamic_instructions``,
    ``recorded_bytes``, ``bytes_per_instruction``, ``seconds_off`` / ``seconds_on`` (CPU,
    fastest of ``repeat`` timing runs without / with values) and ``slowdown``."""
    config = config or SMConfig()
    off = min(_cpu_seconds(name, size, config, False)[0] for _ in range(repeat))
    runs = [_cpu_seconds(name, size, config, True) for _ in range(repeat)]
    on = min(seconds for seconds, _ in runs)
    values = runs[0][1].values
    dynamic = values["dynamic_instructions"]
    return {"kernel": name, "size": size, "dynamic_instructions": dynamic,
            "recorded_bytes": values["recorded_bytes"],
            "bytes_per_instruction": values["recorded_bytes"] / max(1, dynamic),
            "reads_checked": values["reads"], "seconds_off": off, "seconds_on": on,
            "slowdown": on / off}


def table(rows: list[dict]) -> str:
    """The rows of :func:`measure` as a markdown table."""
    lines = ["| kernel | size | dynamic warp instructions | recorded bytes | bytes per "
             "instruction | reads checked | CPU s, values off | CPU s, values on | slowdown |",
             "|---|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['kernel']} | {r['size']} | {r['dynamic_instructions']:,} | "
              f"{r['recorded_bytes']:,} | {r['bytes_per_instruction']:.0f} | "
              f"{r['reads_checked']:,} | {r['seconds_off']:.3f} | {r['seconds_on']:.3f} | "
              f"{r['slowdown']:.2f}x |" for r in rows]
    return "\n".join(lines)


@click.command()
@click.argument("kernels", nargs=-1)
@click.option("--size", type=click.Choice(["test", "paper"]), default="test", show_default=True)
@click.option("--repeat", type=click.IntRange(1, 100), default=5, show_default=True)
def main(kernels, size, repeat):
    """Print the cost of values through timing on KERNELS (default: saxpy sobel)."""
    click.echo(table([measure(k, size, repeat) for k in kernels or ("saxpy", "sobel")]))


if __name__ == "__main__":
    main()
