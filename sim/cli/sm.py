"""The golden SM's commands: ``sm list``, ``sm run``, ``sm bench``, ``compile``, and
``energy`` (an alias of ``reproduce greener``)."""

import dataclasses
import json
import sys
from pathlib import Path

import click

from gpurf.sim.passes.greener.power_pass import MAX_THRESHOLD

from .common import (
    BadInput,
    cli,
    echo_json,
    errors_as,
    known_kernel,
    progress,
    with_provenance,
)

__all__ = ["MECHANISMS", "bench_kernels", "sm_run"]

SIZE = click.option("--size", type=click.Choice(["test", "paper"]), default="test",
                    show_default=True, help="Launch size (launch.toml).")


def kernel_errors():
    """A context in which a kernel's errors (unknown name, launch file, PTX) are bad input."""
    from gpurf.sim.ptx import PtxError
    from gpurf.sim.sm.launch import LaunchError

    return errors_as(LookupError, LaunchError, PtxError)


@cli.group()
def sm():
    """The golden SM: shipped kernels, runs checked against numpy, throughput."""


@sm.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def sm_list(as_json):
    """The kernels that ship with gpurf (``kernel/variant`` for launch variants)."""
    from gpurf.sim.kernels import kernel_dir, workload_names

    entries = []
    for name in workload_names():
        kernel, _, variant = name.partition("/")
        lines = (kernel_dir(kernel) / "launch.toml").read_text().splitlines()
        summary = lines[0].lstrip("# ") if lines and lines[0].startswith("#") else ""
        entries.append({"name": name, "kernel": kernel, "variant": variant or None,
                        "summary": summary})
    if as_json:
        echo_json(entries)
        return
    for entry in entries:
        click.echo(f"{entry['name']:28} {entry['summary']}")


def _timing_options(command):
    """The timing model's options of ``sm run``."""
    options = [
        click.option("--timing/--no-timing", default=True, show_default=True,
                     help="Run on the timing model or functionally only."),
        click.option("--preset", default=None, help="Timing preset (docs/sm.md), e.g. v100."),
        click.option("--config", "config_file",
                     type=click.Path(dir_okay=False, path_type=Path),
                     help="A TOML file of timing parameters (see docs/sm.md)."),
        click.option("--param", "-p", "pairs", multiple=True, metavar="KEY=VALUE",
                     help="Set a timing parameter (repeatable)."),
        click.option("--assign", type=click.Choice(["rr", "srr", "shuffle"]), default=None,
                     help="Sub-core assignment policy."),
        click.option("--scheduler", type=click.Choice(["gto", "lrr", "two_level", "rba"]),
                     default=None, help="Warp scheduler."),
    ]
    for option in reversed(options):
        command = option(command)
    return command


@sm.command("run")
@click.argument("kernel", metavar="KERNEL")
@SIZE
@_timing_options
@click.option("--check-values", is_flag=True,
              help="Carry register values through timing and check every operand read and "
                   "result against the functional run (docs/sm.md); exit 1 at the first "
                   "wrong value.")
@click.option("--mechanism", default=None, metavar="M[:CONFIG]",
              help="Run with a register-file mechanism in the SM: greener[:POLICY] (policies "
                   "greener, compiler, runtime, sleep_reg, oracle; on the paper's k20x "
                   "configuration), wir[:CONFIG] (R, RL, RLP, RLPV, RPV, RLPVc) or "
                   "compression[:QUALITY] (perfect, high); wir and compression on fermi "
                   "unless the timing options say otherwise; regless[:CONFIG] (OSU entries "
                   "per SM 256-1024, nocomp, nometa, sharedl1, reads<N> L1 requests per "
                   "shard, nohold: a warp at a barrier may take its next region, as "
                   "before session 23; e.g. regless:384+nocomp) on gtx980; "
                   "beside the baseline.")
@click.option("--wake-at", type=click.Choice(["issue", "decode"]), default=None,
              help="--mechanism greener: where a warp wakes its registers (Fig. 5: issue) "
                   "[default: issue].")
@click.option("--wake-latency", type=click.IntRange(1, 4), default=None, metavar="X",
              help="--mechanism greener: wake-up cycles, SLEEP->ON X and OFF->ON 2X "
                   "(Section 5.7) [default: 1].")
@click.option("--record", "record_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write one port trace per block instance the SM runs into DIR "
                   "(docs/traces.md; replay with gpurf replay DIR).")
@click.option("--rtl", default=None, metavar="BLOCK[,BLOCK...]",
              help="Put these sub-core blocks' RTL in the loop (operand_collector, "
                   "rba_scorer, warp_selector, subcore_assigner; docs/traces.md) and compare "
                   "the run with the all-golden one; exit 1 if they differ.")
@click.option("--sim", type=click.Choice(["icarus", "verilator"]), default=None,
              help="Simulator of --rtl [default: icarus].")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def sm_run(kernel, size, timing, preset, config_file, pairs, assign, scheduler, check_values,
           mechanism, wake_at, wake_latency, record_dir, rtl, sim, as_json):
    """Run KERNEL on the golden SM (timing model unless --no-timing) and check its outputs
    against its numpy reference; exit 1 on a mismatch."""
    kernel = known_kernel(kernel)
    greener = mechanism is not None and mechanism.partition(":")[0] == "greener"
    wake = {k: v for k, v in (("wake_at", wake_at), ("latency", wake_latency)) if v is not None}
    if wake and not greener:
        raise BadInput("--wake-at and --wake-latency apply to --mechanism greener only")
    if wake and record_dir is not None:
        raise BadInput("--record runs GReEneR at the default wake-up point and latency; drop "
                       "--wake-at and --wake-latency")
    exact = mechanism is not None and _is_regless_exact(mechanism)
    if record_dir is not None and (not timing or (mechanism is not None and not exact and
                                                  mechanism.partition(":")[0] not in RECORDED)):
        raise BadInput(f"--record needs --timing; of the mechanisms, {', '.join(RECORDED)} "
                       "and regless:exact are recorded")
    if sim is not None and rtl is None:
        raise BadInput("--sim needs --rtl")
    if rtl is not None and (mechanism is not None or not timing or check_values
                            or record_dir is not None):
        raise BadInput("--rtl needs --timing and no --mechanism, --check-values or --record")
    if greener and record_dir is not None:
        if any((preset, config_file, pairs, assign, scheduler, check_values)):
            raise BadInput("--mechanism greener --record runs on the paper's k20x "
                           "configuration; drop the timing options and --check-values")
        _record_greener(kernel, size, mechanism.partition(":")[2] or "greener", record_dir)
        return
    if mechanism is not None:
        options = {"--preset": preset, "--config": config_file, "--param": pairs,
                   "--assign": assign, "--scheduler": scheduler}
        if exact:
            _run_regless_exact(kernel, size, mechanism.partition(":")[2], check_values, options,
                               as_json, record_dir)
            return
        _run_mechanism(kernel, size, mechanism, timing, check_values, options, as_json, wake,
                       record_dir)
        return
    config = None
    if timing:
        overrides = {"preset": preset} if preset is not None else {}
        config = _timing_config(config_file, pairs, assign=assign, scheduler=scheduler,
                                **overrides)
    elif any(o for o in (preset, config_file, pairs, assign, scheduler, check_values)):
        raise BadInput("--preset, --config, --param, --assign, --scheduler and --check-values "
                       "need --timing")
    if rtl is not None:
        _run_rtl(kernel, size, config, rtl, sim or "icarus", as_json)
        return
    _run_kernel(kernel, size, as_json, config, values=check_values, record_dir=record_dir)


def _record_greener(kernel, size, policy, record_dir):
    """``sm run --mechanism greener[:POLICY] --record DIR``: the sub-core blocks and
    GReEneR's blocks of every sub-core recorded (:func:`gpurf.sim.sm.record.record_greener`)."""
    from gpurf.sim.sm.power import POLICIES
    from gpurf.sim.sm.record import record_greener

    if policy not in POLICIES:
        raise BadInput(f"unknown GReEneR policy {policy!r}; known: {', '.join(POLICIES)}")
    try:
        with kernel_errors():
            run, paths = record_greener(record_dir, kernel, size, policy)
    except (FileExistsError, OSError) as error:
        raise BadInput(str(error)) from None
    verdict = "PASS" if run.passed else "FAIL"
    click.echo(f"recorded {len(paths)} traces into {record_dir}\n{verdict} {kernel} ({size}, "
               f"greener:{policy}): outputs {'equal' if run.passed else 'differ from'} the "
               f"numpy reference")
    sys.exit(0 if run.passed else 1)


def _run_rtl(kernel, size, config, rtl, sim, as_json):
    """``sm run --rtl``: the run with RTL blocks beside the all-golden run; exit 1 if they
    differ."""
    from gpurf.sim.rtl_loop import run_with_rtl
    from gpurf.sim.sm.rtl import RTL_BLOCKS, instances

    names = [name.strip() for name in rtl.split(",") if name.strip()]
    unknown = [name for name in names if name not in RTL_BLOCKS]
    if unknown or not names:
        raise BadInput(f"unknown --rtl block {', '.join(unknown) or repr(rtl)}; known: "
                       f"{', '.join(RTL_BLOCKS)}")
    absent = [name for name in names if not instances(config, name)]
    if absent:
        raise BadInput(f"the {config.scheduler} scheduler has no {', '.join(absent)}")
    try:
        result = run_with_rtl(kernel, size, config, names, sim=sim)
    except RuntimeError as error:
        click.echo(f"gpurf: {error}", err=True)
        sys.exit(2)
    if as_json:
        echo_json(with_provenance(dataclasses.asdict(result)))
    else:
        click.echo(result.summary())
    sys.exit(0 if result.passed else 1)


@sm.command("bench")
@click.argument("kernels", nargs=-1, required=True, metavar="KERNEL... | all")
@SIZE
@click.option("--scheduler", "schedulers", multiple=True,
              type=click.Choice(["gto", "lrr", "two_level", "rba"]),
              help="Warp scheduler of the timing runs (repeatable) [default: the default "
                   "configuration's, GTO].")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def sm_bench(kernels, size, schedulers, as_json):
    """SM throughput of KERNELs: warp-instructions/s functional only and on the timing model
    (wall and CPU seconds), per scheduler."""
    bench_kernels(kernels, size, as_json, schedulers)


MECHANISMS = ("compression", "greener", "regless", "wir")
"""Mechanisms ``sm run --mechanism`` puts in the SM."""

RECORDED = ("compression", "greener", "wir")
"""Mechanisms ``sm run --mechanism M --record DIR`` records (docs/traces.md)."""


def _run_mechanism(kernel, size, mechanism, timing, check_values, options, as_json,
                   wake=None, record_dir=None):
    """``sm run --mechanism M[:CONFIG]``: the mechanism's run beside the baseline; exit 1 on
    an output mismatch."""
    name, _, variant = mechanism.partition(":")
    if "," in mechanism:
        raise BadInput("--mechanism takes one mechanism at a time")
    if name not in MECHANISMS:
        raise BadInput(f"unknown mechanism {name!r} for --mechanism; known: "
                       f"{', '.join(MECHANISMS)}")
    if not timing:
        raise BadInput("--mechanism needs --timing (mechanisms act on the timing model)")
    if check_values:
        raise BadInput("--check-values is implied by --mechanism wir, compression and regless "
                       "and does "
                       "not apply to greener; drop it")
    given = [flag for flag, value in options.items() if value]
    if name == "greener":
        if given:
            raise BadInput(f"--mechanism greener runs on the paper's k20x configuration; "
                           f"{', '.join(given)} do not apply")
        _run_greener(kernel, size, variant or "greener", as_json, **(wake or {}))
        return
    config = None
    if given:
        config = _timing_config(options["--config"], options["--param"],
                                **{k: options[f"--{k}"] for k in ("assign", "scheduler")},
                                preset=options["--preset"] or
                                ("gtx980" if name == "regless" else "fermi"))
    if name == "regless":
        _run_regless(kernel, size, variant, config, as_json)
    elif name == "wir":
        _run_wir(kernel, size, variant or "RLPV", config, as_json, record_dir)
    else:
        _run_compression(kernel, size, variant or "perfect", config, as_json, record_dir)


def _is_regless_exact(mechanism: str) -> bool:
    name, _, variant = mechanism.partition(":")
    return name == "regless" and "exact" in variant.split("+")


def _run_regless_exact(kernel, size, variant, check_values, options, as_json, record_dir):
    """``sm run --mechanism regless:exact[+CONFIG]``: the golden shards in the SM
    (:func:`gpurf.sim.sm.regless_exact.run_regless_exact`), recorded with ``--record``."""
    from gpurf.sim.sm.regless_exact import run_regless_exact

    given = [flag for flag, value in options.items() if value]
    if given or check_values:
        raise BadInput("--mechanism regless:exact runs on gtx980 with every read checked; "
                       f"drop {', '.join(given) or '--check-values'}")
    config = _regless_config("+".join(p for p in variant.split("+") if p != "exact"), variant)
    if record_dir is not None and record_dir.is_dir() and any(record_dir.glob("*.trace")):
        raise BadInput(f"{record_dir} already holds traces; give an empty or new folder")
    result = _regless_outcome(kernel, size, variant, lambda: run_regless_exact(
        kernel, size, config, record=record_dir))
    for key in ("log", "decisions"):
        result.pop(key)
    if as_json:
        echo_json(with_provenance(result))
    else:
        served = result["preloads_served"]
        click.echo(f"{kernel} ({size}), regless:{variant}: {result['cycles']:,} cycles "
                   f"(fast model {result['fast_cycles']:,}); preloads served OSU / "
                   f"compressor / L1 {served['osu']:,} / {served['compressor']:,} / "
                   f"{served['l1']:,}; evictions {result['evictions']:,}")
        if record_dir is not None:
            click.echo(f"recorded {len(result['traces'])} traces into {record_dir}")
        click.echo(f"{'PASS' if result['passed'] else 'FAIL'} {kernel} ({size}): outputs "
                   f"{'equal' if result['passed'] else 'differ from'} the numpy reference, "
                   "every operand read checked")
    sys.exit(0 if result["passed"] else 1)


def _regless_config(text, variant):
    from gpurf.sim.sm.regless import ReglessConfig

    try:
        return ReglessConfig.parse(text)
    except (TypeError, ValueError) as error:
        raise BadInput(f"--mechanism regless:{variant}: {error}") from None


def _regless_outcome(kernel, size, variant, run):
    from gpurf.sim.sm.regless import ReglessError
    from gpurf.sim.sm.values import ValueMismatchError

    try:
        with kernel_errors():
            return run()
    except (ValueMismatchError, ReglessError) as error:
        click.echo(f"FAIL {kernel} ({size}, regless:{variant}): {error}", err=True)
        sys.exit(1)


def _run_greener(kernel, size, policy, as_json, wake_at="issue", latency=1):
    from gpurf.sim.greener import OutputMismatchError, compare, sm_run_greener
    from gpurf.sim.sm.power import POLICIES

    if policy not in POLICIES:
        raise BadInput(f"unknown GReEneR policy {policy!r}; known: {', '.join(POLICIES)}")
    try:
        with kernel_errors():
            if as_json:
                echo_json(with_provenance(compare(kernel, size, policies=(policy,),
                                                  latencies=(latency,), wake_at=wake_at)))
            else:
                click.echo(sm_run_greener(kernel, size, policy=policy, wake_at=wake_at,
                                          latency=latency))
    except OutputMismatchError as error:
        click.echo(f"FAIL {error}", err=True)
        sys.exit(1)


def _run_wir(kernel, size, variant, config, as_json, record_dir=None):
    from gpurf.sim.sm.record_mechanisms import record_wir
    from gpurf.sim.sm.values import ValueMismatchError
    from gpurf.sim.sm.wir import CONFIGS, run_wir

    if variant not in CONFIGS:
        raise BadInput(f"unknown WIR configuration {variant!r}; known: {', '.join(CONFIGS)}")
    try:
        with kernel_errors(), errors_as(FileExistsError, OSError):
            if record_dir is None:
                result = run_wir(kernel, variant, size, sm=config)
            else:
                result, paths = record_wir(record_dir, kernel, size, variant, sm=config)
                click.echo(f"recorded {len(paths)} traces into {record_dir}", err=True)
    except ValueMismatchError as error:
        click.echo(f"FAIL {kernel} ({size}, wir:{variant}): {error}", err=True)
        sys.exit(1)
    if as_json:
        echo_json(with_provenance(result))
    else:
        click.echo(_wir_table(result))
    sys.exit(0 if result["passed"] else 1)


def _run_regless(kernel, size, variant, config, as_json):
    from gpurf.sim.sm.regless import run_regless

    regless = _regless_config(variant, variant)
    result = _regless_outcome(kernel, size, variant,
                              lambda: run_regless(kernel, size, regless, sm=config))
    if as_json:
        echo_json(with_provenance(result))
    else:
        preloads = max(1, result["preloads"])
        served = ", ".join(f"{s} {100 * result[f'preloads_{s}'] / preloads:.1f} %"
                           for s in ("osu", "compressor", "l1", "l2"))
        click.echo(f"{kernel} ({size}), regless:{variant or '512'}\n\n| | |\n|---|---|\n"
                   f"| cycles (baseline) | {result['cycles']:,} "
                   f"({result['baseline_cycles']:,}) |\n"
                   f"| run time over the register file | {result['runtime']:.3f}x |\n"
                   f"| preloads | {result['preloads']:,} ({served}) |\n"
                   f"| evictions (compressed) | {result['evictions']:,} "
                   f"({result['evictions_compressed']:,}) |\n")
        verdict = "PASS" if result["passed"] else "FAIL"
        click.echo(f"{verdict} {kernel} ({size}): outputs "
                   f"{'equal' if result['passed'] else 'differ from'} the numpy reference, "
                   "every operand read checked")
    sys.exit(0 if result["passed"] else 1)


def _run_compression(kernel, size, quality, config, as_json, record_dir=None):
    from gpurf.sim.reproduce.compression import fermi
    from gpurf.sim.sm.compression import QUALITY, TableOverflowError, run_compressed
    from gpurf.sim.sm.record_mechanisms import record_compression
    from gpurf.sim.sm.run import run_kernel
    from gpurf.sim.sm.values import ValueMismatchError

    if quality not in QUALITY:
        raise BadInput(f"unknown compression quality {quality!r}; known: {', '.join(QUALITY)}")
    config = config or fermi()
    try:
        with kernel_errors(), errors_as(TableOverflowError, FileExistsError, OSError):
            if record_dir is None:
                run, cp = run_compressed(kernel, size, config, level=quality)
            else:
                run, cp, _, paths = record_compression(record_dir, kernel, size, quality,
                                                       config=config)
                click.echo(f"recorded {len(paths)} traces into {record_dir}", err=True)
            base = run_kernel(kernel, size, timing=config)
    except ValueMismatchError as error:
        click.echo(f"FAIL {kernel} ({size}, compression:{quality}): {error}", err=True)
        sys.exit(1)
    result = {"kernel": kernel, "size": size, "quality": quality,
              "registers": {"before": cp.before, "after": cp.after},
              "cycles": run.stats["timing"].cycles, "baseline_cycles": base.stats["timing"].cycles,
              "within_quality": run.stats["quality"], "baseline_passed": base.passed}
    if as_json:
        echo_json(with_provenance(result))
    else:
        click.echo(f"{kernel} ({size}), compression:{quality}\n\n| | |\n|---|---|\n"
                   f"| registers per thread | {cp.before} -> {cp.after} |\n"
                   f"| cycles (baseline) | {result['cycles']:,} ({result['baseline_cycles']:,}) |\n"
                   f"| IPC gain | {result['baseline_cycles'] / result['cycles'] - 1:+.1%} |\n")
        verdict = "PASS" if run.stats["quality"] and base.passed else "FAIL"
        click.echo(f"{verdict} {kernel} ({size}): every operand read equals the narrowed run's; "
                   f"outputs {'meet' if run.stats['quality'] else 'miss'} quality {quality}")
    sys.exit(0 if run.stats["quality"] and base.passed else 1)


def _wir_table(result: dict) -> str:
    rows = [("cycles (baseline)", f"{result['cycles']:,} ({result['baseline_cycles']:,})"),
            ("speedup", f"{result['speedup']:.3f}x"),
            ("reused warp instructions", f"{result['reused']:,} of {result['issued']:,} "
                                         f"({result['reuse_rate']:.1%})"),
            ("VSB hit rate", f"{result['vsb_hit_rate']:.1%}"),
            ("pending-retry gain", f"{result['retry_gain']:.2%}"),
            ("physical registers in use (mean; without renaming)",
             f"{result['in_use_mean']:.1f} ({result['baseline_in_use_mean']:.1f})")]
    lines = [f"{result['kernel']} ({result['size']}), wir:{result['config']}", "",
             "| | |", "|---|---|", *(f"| {k} | {v} |" for k, v in rows), ""]
    verdict = "PASS" if result["passed"] else "FAIL"
    lines.append(f"{verdict} {result['kernel']} ({result['size']}): outputs "
                 f"{'equal' if result['passed'] else 'differ from'} the numpy reference, "
                 "every reused result and register read checked")
    return "\n".join(lines)


def _timing_config(config_file, pairs, **overrides):
    from gpurf.sim.sm.config import ConfigError, load_config

    try:
        return load_config(config_file, pairs, **overrides)
    except ConfigError as error:
        raise BadInput(str(error)) from None


def _run_kernel(name, size, as_json, config=None, values=False, record_dir=None):
    """``gpurf run KERNEL``: functional (and with ``config`` timing) run, reference check,
    table or JSON; exit 1 on a mismatch (or, with ``values``, a wrong register value);
    ``record_dir``: record the blocks' traces there (:mod:`gpurf.sim.sm.record`)."""
    from gpurf.sim.sm import run_kernel
    from gpurf.sim.sm.record import record_run
    from gpurf.sim.sm.values import ValueMismatchError

    traces, mechanism = None, None
    if record_dir is not None:
        try:
            traces, mechanism = record_run(record_dir, name, size, config)
        except (FileExistsError, OSError) as error:
            raise BadInput(str(error)) from None
    try:
        with kernel_errors():
            result = run_kernel(name, size, timing=config, values=values, mechanism=mechanism,
                                progress=lambda blocks: progress(blocks, name, "block"))
    except ValueMismatchError as error:
        click.echo(f"FAIL {name} ({size}): {error}", err=True)
        sys.exit(1)
    if traces is not None:
        paths = traces.close()
        click.echo(f"recorded {len(paths)} traces into {record_dir}", err=True)
    mismatches = result.mismatches()
    stats = {**result.stats, "warp_instructions_per_second":
             result.stats["warp_instructions"] / max(result.stats["seconds"], 1e-9)}
    timing = stats.pop("timing", None)
    if timing is not None:
        stats["timing"] = timing.as_dict()
    if as_json:
        outputs = {k: {"elements": int(v.size), "mismatches": mismatches[k]}
                   for k, v in result.outputs.items()}
        echo_json(with_provenance({"kernel": name, "size": size, "passed": result.passed,
                                   "outputs": outputs, "stats": stats}))
    else:
        click.echo("| output | dtype | elements | mismatches |\n|---|---|---|---|")
        for k, v in result.outputs.items():
            click.echo(f"| {k} | {v.dtype} | {v.size:,} | {mismatches[k]:,} |")
        click.echo(f"\n{stats['warp_instructions']:,} warp instructions, "
                   f"{stats['thread_instructions']:,} thread instructions "
                   f"(SIMD efficiency {stats['simd_efficiency']:.1%}), {stats['blocks']} blocks, "
                   f"{stats['warps']} warps, {stats['barriers']} barriers; "
                   f"{stats['seconds']:.2f} s, "
                   f"{stats['warp_instructions_per_second']:,.0f} warp-instructions/s")
        if timing is not None:
            click.echo(f"\n{timing.table()}\n")
        verdict = "PASS" if result.passed else "FAIL"
        click.echo(f"{verdict} {name} ({size}): outputs "
                   f"{'equal' if result.passed else 'differ from'} the numpy reference")
    sys.exit(0 if result.passed else 1)


@cli.command()
@click.argument("kernels", nargs=-1, metavar="[KERNEL]...")
@SIZE
@click.option("--threshold", type=click.IntRange(1, MAX_THRESHOLD), default=3, show_default=True,
              help="GReEneR's W: an access within W instructions keeps a register ON.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="Results folder [default: gpurf-results/reproduce/greener].")
def energy(kernels, size, threshold, as_json, out):
    """Alias of `gpurf reproduce greener`: GReEneR, its parts and Sleep-Reg against always-ON
    on the golden SM (KERNELs: only those)."""
    from gpurf.sim.sm.run import load_workload

    from .reproduce import reproduce_and_write

    names = [known_kernel(k) for k in kernels] or None
    with kernel_errors():
        for name in names or ():
            load_workload(name)  # a kernel that does not load fails before any run
        reproduce_and_write("greener", size, as_json, out, kernels=names, threshold=threshold)


@cli.command("compile")
@click.argument("kernel", required=False)
@click.option("--pass", "pass_name", type=click.Choice(["regless", "greener", "compression"]),
              required=True, help="The paper whose compiler pass to run.")
@click.option("--threshold", type=click.IntRange(1, MAX_THRESHOLD), default=3, show_default=True,
              help="GReEneR's W: an access within W instructions keeps a register ON.")
@click.option("--table", is_flag=True,
              help="The pass's per-kernel table (every kernel) instead of one listing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def compile_(kernel, pass_name, threshold, table, as_json):
    """Run a compiler pass on KERNEL and print its annotations (PTX listing or JSON), or
    with --table the pass's figures for every kernel."""
    from gpurf.sim.compile import compile_workload, pass_table, table_markdown

    if table == (kernel is not None):
        raise BadInput("give a KERNEL or --table, not both" if table else
                       "give a KERNEL (`gpurf sm list` names them) or --table")
    with kernel_errors():
        if table:
            rows = pass_table(pass_name, threshold=threshold,
                              progress=lambda items: progress(items, "compile", "kernel"))
            click.echo(json.dumps(rows, indent=1) if as_json else table_markdown(rows))
            for row in rows:
                if "error" in row:
                    click.echo(f"gpurf: {row['workload']}: {row['error']}", err=True)
            sys.exit(1 if any("error" in row for row in rows) else 0)
        result = compile_workload(kernel, pass_name, threshold=threshold)
    click.echo(result.to_json() if as_json else result.listing())


def bench_kernels(kernels, size, as_json, schedulers=()):
    """``gpurf sm bench``: every kernel checked, then measured (per scheduler); a table or
    JSON."""
    from gpurf.sim.bench import measure_kernels
    from gpurf.sim.kernels import workload_names

    kernels = workload_names() if "all" in kernels else [known_kernel(k) for k in kernels]
    with kernel_errors():
        runs = [r for k in progress(kernels, "bench", "kernel")
                for r in measure_kernels(k, size=size, schedulers=schedulers or (None,))]
    if as_json:
        echo_json([with_provenance({**vars(r), "warp_instructions_per_second":
                                    r.warp_instructions_per_second,
                                    "timing_warp_instructions_per_second":
                                    r.timing_warp_instructions_per_second}) for r in runs])
        return
    click.echo("| kernel | size | scheduler | warp instructions | seconds | warp-instructions/s | "
               "timing seconds (CPU) | timing warp-instructions/s (per CPU s) | cycles | "
               "reference |\n|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        click.echo(f"| {r.kernel} | {r.size} | {r.scheduler} | {r.warp_instructions:,} | "
                   f"{r.seconds:.2f} | "
                   f"{r.warp_instructions_per_second:,.0f} | {r.timing_seconds:.2f} "
                   f"({r.timing_cpu_seconds:.2f}) | {r.timing_warp_instructions_per_second:,.0f} "
                   f"({r.warp_instructions / r.timing_cpu_seconds:,.0f}) | {r.cycles:,} | "
                   f"{'PASS' if r.passed else 'FAIL'} |")
    click.echo(_timing_cores(runs))


def _timing_cores(runs) -> str:
    """One line: which timing loop the runs took (per scheduler where they differ)."""
    cores = {}
    for r in runs:
        cores.setdefault(r.timing_core, []).append(r.scheduler)
    if len(cores) == 1:
        return f"timing core: {next(iter(cores))}"
    return "timing core: " + "; ".join(f"{', '.join(dict.fromkeys(schedulers))}: {core}"
                                       for core, schedulers in cores.items())

