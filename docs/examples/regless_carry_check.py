"""Whether a committed paper-size RegLess part still holds at these sources with ``holdbar``
(docs/measured/regless-paper/README.md, "Next: moving the pin").

``python docs/examples/regless_carry_check.py KERNEL [RUN]`` reads ``KERNEL``'s part from
``docs/measured/regless-paper`` (measured at its pinned revision), runs configuration ``RUN``
(default ``512``; a label of the part, e.g. ``256`` or ``512 no compressor``) at paper size
with these sources and :attr:`~gpurf.sim.sm.regless.ReglessConfig.hold_barriers` on, every
operand read checked, and prints each counter that differs, then one line: equal or not,
and the run's CPU seconds. A kernel without barriers should be equal (the hold changes no
decision there); exit status 1 if not.
"""

import json
import sys
import time
from dataclasses import replace
from pathlib import Path

import click

from gpurf.sim.reproduce.regless import CONFIGS, _label
from gpurf.sim.sm.config import load_config
from gpurf.sim.sm.regless import run_regless

FOLDER = Path(__file__).resolve().parent.parent / "measured" / "regless-paper"


@click.command()
@click.argument("kernel")
@click.argument("run", default="512")
def main(kernel: str, run: str) -> None:
    """Compare KERNEL's kept RUN with a run at these sources, holdbar on."""
    path = FOLDER / f"regless-paper-{kernel}.json"
    if not path.exists():
        raise click.BadParameter(f"{path}: no such part", param_hint="KERNEL")
    configs = {_label(config): config for config in CONFIGS}
    if run not in configs:
        raise click.BadParameter(f"expected one of {', '.join(configs)}", param_hint="RUN")
    part = json.loads(path.read_text())
    kept = part["value"]["runs"][run]
    start = time.process_time()
    out = run_regless(kernel, "paper", replace(configs[run], hold_barriers=True),
                      sm=load_config(preset="gtx980"), baseline=False)
    cpu = time.process_time() - start
    differ = {name: (kept.get(name), out.get(name)) for name in sorted({*kept, *out} - {"runtime"})
              if kept.get(name) != out.get(name)}
    for name, (old, new) in differ.items():
        click.echo(f"{name}: {old} at {part['revision']}, {new} here")
    verdict = "equal" if not differ else f"{len(differ)} counters differ"
    click.echo(f"{kernel} {run}: {verdict} to the part of {part['revision']} "
               f"({cpu:.1f} CPU s, holdbar on)")
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
