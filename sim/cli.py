"""The ``gpurf`` command line."""

import json
import sys
from pathlib import Path

import click

from gpurf.hw.registry import Block, BlockError, all_blocks, get_block

__all__ = ["main"]


class BadInput(click.ClickException):
    """Bad input from the user: one line on stderr, exit status 2."""

    exit_code = 2


def _block(name: str) -> Block:
    try:
        return get_block(name)
    except BlockError as error:
        raise BadInput(str(error)) from None


def _params(block: Block, pairs: tuple[str, ...]) -> dict:
    """``KEY=VALUE`` options as typed parameters, validated by building the component."""
    try:
        params = dict(block.parse_param(pair) for pair in pairs)
    except BlockError as error:
        raise BadInput(str(error)) from None
    try:
        block.build(params)
    except (TypeError, ValueError) as error:
        raise BadInput(f"{block.qualname}: {error}") from None
    return params


PARAM = click.option("--param", "-p", "pairs", multiple=True, metavar="KEY=VALUE",
                     help="Set a block parameter (repeatable); see `gpurf list`.")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def cli():
    """gpurf: verified RTL of GPU register-file mechanisms."""


@cli.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def list_blocks(as_json):
    """List every block as <mechanism>.<block> with its parameters, defaults and ranges."""
    entries = [{"name": b.qualname, "summary": b.summary, "params": b.defaults,
                "allowed": {name: spec.allowed if spec else None
                            for name, (_, spec) in b.declared.items()}}
               for b in all_blocks()]
    if as_json:
        click.echo(json.dumps(entries, indent=1))
        return
    for entry in entries:
        params = " ".join(f"{k}={v}" + (f" ({entry['allowed'][k]})" if entry["allowed"][k]
                                        else "") for k, v in entry["params"].items())
        click.echo(f"{entry['name']:32} {entry['summary']}\n{'':32} {params}")


@cli.command()
@click.argument("name")
@PARAM
@click.option("-o", "--output", type=click.Path(dir_okay=False, writable=True, path_type=Path),
              help="Write the Verilog here instead of standard output.")
def generate(name, pairs, output):
    """Print (or write) the Verilog of block NAME."""
    from gpurf.sim.verilog import verilog_text

    block = _block(name)
    text = verilog_text(block, _params(block, pairs))
    if output is None:
        click.echo(text, nl=False)
    else:
        output.write_text(text)
        click.echo(f"wrote {output}", err=True)


@cli.command()
@click.argument("name")
@PARAM
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def synth(name, pairs, as_json):
    """Synthesize block NAME (or `all`) and report cells, transistors, storage and depth."""
    from gpurf.synth.flow import synthesize
    from gpurf.synth.report import markdown_table

    if name == "all":
        if pairs:
            raise BadInput("--param applies to one block, not to `all`")
        targets = [(block, block.synth_params or {}) for block in all_blocks()]
    else:
        block = _block(name)
        targets = [(block, _params(block, pairs))]
    reports = [synthesize(block, params) for block, params in _progress(targets, "synth")]
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in reports], indent=1))
    else:
        click.echo(markdown_table(reports))


@cli.command()
@click.argument("name")
@PARAM
@click.option("--sim", type=click.Choice(["icarus", "verilator"]), default=None,
              help="Simulator (default: icarus; verilator with --replay).")
@click.option("--cycles", type=click.IntRange(1), default=2000, show_default=True,
              help="Cycles of each randomized stimulus.")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True,
              help="Seed of the randomized stimuli.")
@click.option("--waves", is_flag=True, help="Dump waves into the build folder (with "
              "--replay: around the first divergence).")
@click.option("--replay", is_flag=True, help="Record the random stimulus against the golden "
              "model alone, then replay the trace inside the simulator (docs/traces.md).")
@click.option("--record", "record_dir", type=click.Path(file_okay=False, path_type=Path),
              help="Write the golden run's trace into DIR (alone: record only, no simulator).")
def test(name, pairs, sim, cycles, seed, waves, replay, record_dir):
    """Run the cocotb bench of block NAME against its golden model; exit 0 on pass.

    With --replay or --record, the block's first stimulus (its random stream) runs for
    --cycles cycles on the golden model alone and is recorded as a trace; --replay then
    drives the RTL with it and compares every output every cycle inside the simulator."""
    block = _block(name)
    params = _params(block, pairs)
    if replay or record_dir is not None:
        if waves and not replay:
            raise BadInput("--waves needs a simulation: add --replay to --record")
        if sim is not None and not replay:
            raise BadInput("--sim needs a simulation: add --replay to --record")
        _record_and_replay(block, params, sim or "verilator", cycles, seed, waves, replay,
                           record_dir)
        return
    from gpurf.sim.runner import SimulatorMissingError, run_bench

    sim = sim or "icarus"
    try:
        result = run_bench(block, params, sim=sim, cycles=cycles, seed=seed, waves=waves)
    except SimulatorMissingError as error:
        raise BadInput(str(error)) from None
    if not result.passed:
        click.echo(result.log.read_text()[-6000:], err=True)
    verdict = "PASS" if result.passed else "FAIL"
    click.echo(f"{verdict} {block.qualname} on {sim}: {result.tests - result.failed}/"
               f"{result.tests} tests passed (seed {seed}); log: {result.log}")
    for dump in result.waves:
        click.echo(f"waves: {dump}")
    sys.exit(0 if result.passed else 1)


def _record_and_replay(block, params, sim, cycles, seed, waves, replay, record_dir):
    """``gpurf test --record DIR`` / ``--replay``: record, then (with ``replay``) replay."""
    from gpurf.sim.replay import record
    from gpurf.sim.toolchain import missing_simulator

    if replay and missing_simulator(sim):
        raise BadInput(missing_simulator(sim))
    recording = record(block, params, seed=seed, cycles=cycles, folder=record_dir)
    click.echo(f"recorded {recording.cycles:,} cycles of {block.qualname} (seed {seed}) in "
               f"{recording.seconds:.2f} s ({recording.cycles_per_second:,.0f} cycles/s): "
               f"{recording.path}")
    if replay:
        result = _replay_one(recording.path, sim, waves)
        sys.exit(0 if result.passed else 1)


def _replay_one(path, sim, waves, trace=None):
    from gpurf.golden.trace import TraceError
    from gpurf.sim.replay import replay

    try:
        result = replay(trace or path, sim=sim, waves=waves)
    except TraceError as error:
        raise BadInput(str(error)) from None
    click.echo(result.summary())
    return result


@cli.command("replay")
@click.argument("path", metavar="TRACE|DIR", type=click.Path(path_type=Path))
@click.option("--sim", type=click.Choice(["verilator", "icarus"]), default="verilator",
              show_default=True, help="Simulator.")
@click.option("--waves", is_flag=True,
              help="On a divergence, write a wave file around it (FST on Verilator).")
def replay_command(path, sim, waves):
    """Replay the trace TRACE (or every *.trace in DIR) on its block's RTL: recorded inputs
    in, recorded outputs compared under their masks every cycle; exit 1 at a divergence."""
    from gpurf.sim.toolchain import missing_simulator

    traces = _open_traces(path)
    if missing_simulator(sim):
        raise BadInput(missing_simulator(sim))
    results = [_replay_one(trace.path, sim, waves, trace) for trace in traces]
    sys.exit(0 if all(r.passed for r in results) else 1)


def _open_traces(path: Path, blocks=None) -> list:
    """The traces at ``path`` (a file or a folder of ``*.trace``), each opened and checked
    against its block before any is replayed; bad input raises :class:`BadInput`."""
    from gpurf.golden.trace import Trace, TraceError
    from gpurf.sim.replay import trace_files

    if not path.exists():
        raise BadInput(f"{path}: no such file or folder")
    files = trace_files(path)
    if not files:
        raise BadInput(f"{path}: no *.trace files in the folder")
    traces = []
    try:
        for file in files:
            trace = Trace(file)
            if blocks is None or trace.block in blocks:
                trace.check_block()
                traces.append(trace)
    except TraceError as error:
        raise BadInput(str(error)) from None
    return traces


@cli.group()
def trace():
    """Inspect trace files (docs/traces.md)."""


@trace.command("show")
@click.argument("path", metavar="FILE", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--cycles", "span", default="0:10", show_default=True, metavar="A:B",
              help="Cycles A (included) to B (excluded); A: or :B leave an end open, A alone "
                   "is one cycle.")
def trace_show(path, span):
    """Print the header of trace FILE and its cycles A:B (outputs not compared shown as -)."""
    from gpurf.golden.trace import Trace, TraceError, format_row

    try:
        opened = Trace(path)
    except TraceError as error:
        raise BadInput(str(error)) from None
    start, stop = _span(span, opened.cycles)
    click.echo(opened.describe())
    try:
        opened.check_block()
    except TraceError as error:
        click.echo(f"warning: {error}", err=True)
    for row in opened.rows(start, stop):
        click.echo(format_row(*row))


def _span(text: str, cycles: int) -> tuple[int, int]:
    first, sep, last = text.partition(":")
    try:
        start = int(first) if first else 0
        stop = (int(last) if last else cycles) if sep else start + 1
    except ValueError:
        raise BadInput(f"--cycles takes A:B (cycle numbers), not {text!r}") from None
    if start < 0 or stop < start:
        raise BadInput(f"--cycles {text}: need 0 <= A <= B")
    return start, min(stop, cycles)


@cli.command()
@click.argument("mechanism", required=False, metavar="[MECHANISM|KERNEL]")
@click.option("--cycles", type=click.IntRange(1), default=1000, show_default=True,
              help="Cycles of each randomized stimulus.")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True,
              help="Seed of the randomized stimuli.")
@click.option("--size", type=click.Choice(["test", "paper"]), default=None,
              help="KERNEL only: launch size (default: test).")
@click.option("--json", "as_json", is_flag=True, help="KERNEL only: print JSON.")
@click.option("--timing/--no-timing", default=None,
              help="KERNEL only: run on the timing model (default) or functionally only.")
@click.option("--config", "config_file", type=click.Path(dir_okay=False, path_type=Path),
              help="KERNEL only: a TOML file of timing parameters (see docs/sm.md).")
@click.option("--param", "-p", "pairs", multiple=True, metavar="KEY=VALUE",
              help="KERNEL only: set a timing parameter (repeatable).")
@click.option("--assign", type=click.Choice(["rr", "srr", "shuffle"]), default=None,
              help="KERNEL only: sub-core assignment policy.")
@click.option("--scheduler", type=click.Choice(["gto", "lrr", "two_level", "rba"]),
              default=None, help="KERNEL only: warp scheduler.")
def run(mechanism, cycles, seed, size, as_json, timing, config_file, pairs, assign,
        scheduler):
    """The main job: generate, cosimulate and synthesize every block (of MECHANISM), then
    print the report and the papers' hardware-cost comparisons.

    With KERNEL (a workload of sim/kernels, e.g. saxpy or fma_subcore/unbalanced), run it
    on the functional SM model and check its outputs against its numpy reference."""
    from gpurf.sim.kernels import workload_names

    timing_options = (timing, config_file, pairs or None, assign, scheduler)
    if mechanism in workload_names():
        config = None
        if timing is not False:
            config = _timing_config(config_file, pairs, assign=assign, scheduler=scheduler)
        elif any(o is not None for o in timing_options[1:]):
            raise BadInput("--config, --param, --assign and --scheduler need --timing")
        _run_kernel(mechanism, size or "test", as_json, config)
        return
    if size is not None or as_json:
        raise BadInput("--size and --json apply to a KERNEL, not to the main job")
    if any(o is not None for o in timing_options):
        raise BadInput("--timing, --config, --param, --assign and --scheduler apply to a "
                       "KERNEL, not to the main job")
    from gpurf.sim.flow import run_all

    blocks = [b for b in all_blocks() if mechanism in (None, b.mechanism)]
    if not blocks:
        known = sorted({b.mechanism for b in all_blocks()})
        raise BadInput(f"unknown mechanism {mechanism!r}; known: {', '.join(known)}; "
                       f"or a kernel: {', '.join(workload_names())}")
    ok = run_all(blocks, cycles=cycles, seed=seed, progress=_progress, echo=click.echo)
    sys.exit(0 if ok else 1)


def _timing_config(config_file, pairs, **overrides):
    from gpurf.sim.sm.config import ConfigError, load_config

    try:
        return load_config(config_file, pairs, **overrides)
    except ConfigError as error:
        raise BadInput(str(error)) from None


def _run_kernel(name, size, as_json, config=None):
    """``gpurf run KERNEL``: functional (and with ``config`` timing) run, reference check,
    table or JSON; exit 1 on a mismatch."""
    from gpurf.sim.ptx import PtxError
    from gpurf.sim.sm import run_kernel
    from gpurf.sim.sm.launch import LaunchError

    try:
        result = run_kernel(name, size, progress=lambda blocks: _progress(blocks, name, "block"),
                            timing=config)
    except (LaunchError, PtxError) as error:
        raise BadInput(str(error)) from None
    mismatches = result.mismatches()
    stats = {**result.stats, "warp_instructions_per_second":
             result.stats["warp_instructions"] / max(result.stats["seconds"], 1e-9)}
    timing = stats.pop("timing", None)
    if timing is not None:
        stats["timing"] = timing.as_dict()
    if as_json:
        click.echo(json.dumps({"kernel": name, "size": size, "passed": result.passed,
                               "outputs": {k: {"elements": int(v.size),
                                               "mismatches": mismatches[k]}
                                           for k, v in result.outputs.items()},
                               "stats": stats}, indent=1))
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
@click.argument("mechanism")
def cost(mechanism):
    """Synthesize the paper's hardware-cost comparison of MECHANISM and print it."""
    from gpurf.synth.costs import cost_report

    try:
        click.echo(cost_report(mechanism))
    except LookupError as error:
        raise BadInput(str(error)) from None


@cli.command()
@click.argument("kernel", default="hotspot")
@click.option("--size", type=click.Choice(["test", "paper"]), default="test", show_default=True)
@click.option("--warps", type=click.IntRange(1, 64), default=64, show_default=True,
              help="Warps of the kernel replayed (the first blocks').")
@click.option("--threshold", type=click.IntRange(1), default=3, show_default=True,
              help="GReEneR's W: an access within W instructions keeps a register ON.")
@click.option("--states", type=click.Choice(["compiler", "oracle"]), default="compiler",
              show_default=True, help="GReEneR states from the compiler pass or an oracle.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def energy(kernel, size, warps, threshold, states, as_json):
    """GReEneR vs Sleep-Reg vs always-ON: leakage of KERNEL's register stream through the
    golden power controller (see sim/greener.py for the stream and the pipeline)."""
    from gpurf.sim.greener import compare_policies, energy_table

    try:
        result = compare_policies(kernel, size, threshold=threshold, warps=warps,
                                  states=states)
    except LookupError as error:
        raise BadInput(str(error).strip("'\"")) from None
    click.echo(json.dumps(result, indent=2) if as_json else energy_table(result))


@cli.command("compile")
@click.argument("kernel", required=False)
@click.option("--pass", "pass_name", type=click.Choice(["regless", "greener", "compression"]),
              required=True, help="The paper whose compiler pass to run.")
@click.option("--threshold", type=click.IntRange(1), default=3, show_default=True,
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
                       "give a KERNEL (see `gpurf run --help` for the names) or --table")
    try:
        if table:
            rows = pass_table(pass_name, threshold=threshold,
                              progress=lambda items: _progress(items, "compile", "kernel"))
            click.echo(json.dumps(rows, indent=1) if as_json else table_markdown(rows))
            return
        result = compile_workload(kernel, pass_name, threshold=threshold)
    except LookupError as error:
        raise BadInput(str(error).strip("'\"")) from None
    click.echo(result.to_json() if as_json else result.listing())


@cli.command()
@click.argument("names", nargs=-1)
@click.option("--cycles", type=click.IntRange(100), default=20000, show_default=True,
              help="Cycles of the measured random stimulus.")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True)
@click.option("--kernel", "kernels", multiple=True, metavar="KERNEL",
              help="Measure the SM model (functional, then timing) on KERNEL (repeatable; "
                   "`all` for every workload) instead of the blocks.")
@click.option("--size", type=click.Choice(["test", "paper"]), default="test", show_default=True,
              help="Launch size of --kernel runs.")
@click.option("--golden", "golden_only", is_flag=True,
              help="Measure the golden model and its stimulus alone, at every test "
                   "configuration of each block.")
@click.option("--replay", "replay_dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Replay the traces in DIR (or the trace DIR) of blocks NAMES (default: "
                   "all) on Verilator; their rate beside the golden-only and per-cycle cocotb "
                   "rates over --cycles cycles, and the block's cells.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def bench(names, cycles, seed, kernels, size, golden_only, replay_dir, as_json):
    """Measure cosimulation throughput (cycles/s) of blocks NAMES (default: all) per simulator,
    with --golden the golden models' own rate, with --replay the replay rate of recorded
    traces, or with --kernel the SM model's warp-instructions/s, functional only and with
    timing."""
    from gpurf.sim.bench import measure, measure_golden

    if kernels:
        if replay_dir is not None:
            raise BadInput("give --kernel or --replay, not both")
        _bench_kernels(names, kernels, size, as_json)
        return
    if replay_dir is not None:
        if golden_only:
            raise BadInput("--golden and --replay are separate measurements; give one")
        _bench_replay(replay_dir, names, cycles, as_json)
        return
    blocks = [_block(name) for name in names] or all_blocks()
    measure_block = measure_golden if golden_only else measure
    runs = [run for block in _progress(blocks, "bench")
            for run in measure_block(block, cycles=cycles, seed=seed)]
    if as_json:
        click.echo(json.dumps([{**vars(r), "cycles_per_second": r.cycles_per_second}
                               for r in runs], indent=1))
        return
    click.echo("| block | simulator | cycles | seconds | cycles/s |\n|---|---|---|---|---|")
    for r in runs:
        click.echo(f"| {r.block} | {r.simulator} | {r.cycles:,} | {r.seconds:.2f} | "
                   f"{r.cycles_per_second:,.0f} |")


def _bench_replay(path, names, cycles, as_json):
    from gpurf.sim.bench import measure_replay
    from gpurf.sim.toolchain import missing_simulator

    for name in names:
        _block(name)
    traces = _open_traces(path, set(names) if names else None)
    if not traces:
        raise BadInput(f"{path}: no trace of {', '.join(names)}")
    if missing_simulator("verilator"):
        raise BadInput(missing_simulator("verilator"))
    runs = [measure_replay(t, cycles=cycles) for t in _progress(traces, "bench", "trace")]
    if as_json:
        click.echo(json.dumps([r.as_dict() for r in runs], indent=1))
    else:
        click.echo("| block | parameters | replay cycles | replay cycles/s | golden cycles/s | "
                   "cocotb (Verilator) cycles/s | replay / cocotb | cells |\n"
                   "|---|---|---|---|---|---|---|---|")
        for r in runs:
            overrides = _overrides(r.block, r.params)
            click.echo(f"| {r.block} | {overrides} | {r.replay.cycles:,} | "
                       f"{r.replay.cycles_per_second:,.0f} | "
                       f"{r.golden.cycles_per_second:,.0f} | "
                       f"{r.cocotb.cycles_per_second:,.0f} | {r.speedup:,.0f}x | "
                       f"{r.cells:,} |")
    failed = [r.trace for r in runs if not r.passed]
    for trace in failed:
        click.echo(f"FAIL: the replay of {trace} diverged (see `gpurf replay {trace}`)",
                   err=True)
    if failed:
        sys.exit(1)


def _overrides(name, params) -> str:
    defaults = get_block(name).defaults
    changed = {k: v for k, v in params.items() if defaults.get(k) != v}
    return " ".join(f"{k}={v}" for k, v in changed.items()) or "defaults"


def _bench_kernels(names, kernels, size, as_json):
    from gpurf.sim.bench import measure_kernel
    from gpurf.sim.kernels import workload_names

    if names:
        raise BadInput("give blocks or --kernel, not both")
    known = workload_names()
    kernels = known if "all" in kernels else list(kernels)
    for name in kernels:
        if name not in known:
            raise BadInput(f"unknown kernel {name!r}; known: {', '.join(known)}")
    runs = [measure_kernel(k, size=size) for k in _progress(kernels, "bench", "kernel")]
    if as_json:
        click.echo(json.dumps([{**vars(r), "warp_instructions_per_second":
                                r.warp_instructions_per_second,
                                "timing_warp_instructions_per_second":
                                r.timing_warp_instructions_per_second} for r in runs], indent=1))
        return
    click.echo("| kernel | size | warp instructions | seconds | warp-instructions/s | "
               "timing seconds (CPU) | timing warp-instructions/s (per CPU s) | cycles | "
               "reference |\n|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        click.echo(f"| {r.kernel} | {r.size} | {r.warp_instructions:,} | {r.seconds:.2f} | "
                   f"{r.warp_instructions_per_second:,.0f} | {r.timing_seconds:.2f} "
                   f"({r.timing_cpu_seconds:.2f}) | {r.timing_warp_instructions_per_second:,.0f} "
                   f"({r.warp_instructions / r.timing_cpu_seconds:,.0f}) | {r.cycles:,} | "
                   f"{'PASS' if r.passed else 'FAIL'} |")


def _progress(items, label, unit="block"):
    from tqdm import tqdm

    return tqdm(items, desc=label, unit=unit, file=sys.stderr, leave=False,
                disable=not sys.stderr.isatty())


def main(argv=None):
    """Entry point: click in non-standalone mode, so every bad input is one line, exit 2."""
    try:
        cli.main(args=argv, prog_name="gpurf", standalone_mode=False)
    except click.exceptions.Exit as done:
        sys.exit(done.exit_code)
    except click.Abort:
        click.echo("gpurf: aborted", err=True)
        sys.exit(130)
    except BlockError as error:
        click.echo(f"gpurf: {error}", err=True)
        sys.exit(2)
    except RuntimeError as error:
        click.echo(f"gpurf: {error}", err=True)
        sys.exit(1)
    except click.ClickException as error:
        click.echo(f"gpurf: {error.format_message()}", err=True)
        sys.exit(2 if isinstance(error, click.UsageError | BadInput) else error.exit_code)
    sys.exit(0)
