"""Block commands: ``list``, ``generate``, ``synth``, ``test``, ``replay``, ``trace show``,
``bench`` and ``soak``."""

import json
import sys
from pathlib import Path

import click

from gpurf.hw.registry import all_blocks, get_block

from .common import (
    PARAM,
    BadInput,
    block_named,
    block_params,
    cli,
    echo_json,
    heartbeat,
    known_kernel,
    progress,
    with_provenance,
)
from .sm import bench_kernels

__all__ = []

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

    block = block_named(name)
    params = block_params(block, pairs)
    with heartbeat(f"elaborating {block.qualname}"):
        text = verilog_text(block, params)
    if output is None:
        click.echo(text, nl=False)
    else:
        try:
            output.write_text(text)
        except OSError as error:
            raise BadInput(f"-o {output}: {error.strerror}") from None
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
        block = block_named(name)
        targets = [(block, block_params(block, pairs))]
    with heartbeat(f"synthesizing {name}"):
        reports = [synthesize(block, params) for block, params in progress(targets, "synth")]
    if as_json:
        echo_json([with_provenance(r.as_dict()) for r in reports])
    else:
        click.echo(markdown_table(reports))


@cli.command()
@click.argument("name")
@PARAM
@click.option("--sim", type=click.Choice(["icarus", "verilator"]), default=None,
              help="Simulator (default: icarus if installed, else verilator; verilator with "
                   "--replay).")
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
    block = block_named(name)
    params = block_params(block, pairs)
    if replay or record_dir is not None:
        if waves and not replay:
            raise BadInput("--waves needs a simulation: add --replay to --record")
        if sim is not None and not replay:
            raise BadInput("--sim needs a simulation: add --replay to --record")
        _record_and_replay(block, params, sim or "verilator", cycles, seed, waves, replay,
                           record_dir)
        return
    from gpurf.sim.runner import SimulatorMissingError, run_bench

    sim = sim or _installed_simulator()
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


def _installed_simulator() -> str:
    """The first installed simulator (Icarus, then Verilator); none is bad input."""
    from gpurf.sim.runner import available_simulators
    from gpurf.sim.toolchain import SIMULATORS, missing_simulator

    installed = available_simulators()
    if not installed:
        raise BadInput("no simulator installed: " +
                       "; ".join(missing_simulator(sim) for sim in SIMULATORS))
    return installed[0]


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
@click.argument("names", nargs=-1)
@click.option("--cycles", type=click.IntRange(100), default=20000, show_default=True,
              help="Cycles of the measured random stimulus.")
@click.option("--seed", type=click.IntRange(0), default=1, show_default=True)
@click.option("--kernel", "kernels", multiple=True, metavar="KERNEL",
              help="Old form of `gpurf sm bench KERNEL` (kept for one release).")
@click.option("--size", type=click.Choice(["test", "paper"]), default=None,
              help="With --kernel: launch size (default: test).")
@click.option("--golden", "golden_only", is_flag=True,
              help="Measure the golden model and its stimulus alone, at every test "
                   "configuration of each block.")
@click.option("--replay", "replay_dir", type=click.Path(path_type=Path), metavar="DIR",
              help="Replay the traces in DIR (or the trace DIR) of blocks NAMES (default: "
                   "all) on Verilator; their rate beside the golden-only and per-cycle cocotb "
                   "rates over --cycles cycles, and the block's cells.")
@click.option("--per-cycle", is_flag=True,
              help="The per-cycle lock-step path's cost on Verilator in CPU time: whole loop, "
                   "golden model and stimulus alone, and the cocotb side (docs/traces.md).")
@click.option("--sets", type=click.Choice(["defaults", "test", "all"]), default=None,
              help="With --per-cycle: measure each block's defaults (default), its registered "
                   "test configurations, or both.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def bench(names, cycles, seed, kernels, size, golden_only, replay_dir, per_cycle, sets,
          as_json):
    """Measure cosimulation throughput (cycles/s) of blocks NAMES (default: all) per simulator,
    with --golden the golden models' own rate, with --replay the replay rate of recorded
    traces. (--kernel is the old form of `gpurf sm bench`.)"""
    from gpurf.sim.bench import measure, measure_golden

    if kernels:
        if names or replay_dir is not None or golden_only:
            raise BadInput("--kernel measures kernels, not blocks: give it alone")
        for kernel in kernels:
            if kernel != "all":
                known_kernel(kernel)
        click.echo("note: `gpurf bench --kernel K` is now `gpurf sm bench K`", err=True)
        bench_kernels(kernels, size or "test", as_json)
        return
    if size is not None:
        raise BadInput("--size applies to --kernel (now `gpurf sm bench K --size S`)")
    if sum((golden_only, replay_dir is not None, per_cycle)) > 1:
        raise BadInput("--golden, --replay and --per-cycle are separate measurements; give one")
    if sets is not None and not per_cycle:
        raise BadInput("--sets applies to --per-cycle")
    if replay_dir is not None:
        _bench_replay(replay_dir, names, cycles, as_json)
        return
    if per_cycle:
        _bench_per_cycle(names, cycles, seed, sets or "defaults", as_json)
        return
    blocks = [block_named(name) for name in names] or all_blocks()
    measure_block = measure_golden if golden_only else measure
    runs = [run for block in progress(blocks, "bench")
            for run in measure_block(block, cycles=cycles, seed=seed)]
    if as_json:
        echo_json([with_provenance({**vars(r), "cycles_per_second": r.cycles_per_second})
                   for r in runs])
        return
    click.echo("| block | simulator | cycles | seconds | cycles/s |\n|---|---|---|---|---|")
    for r in runs:
        click.echo(f"| {r.block} | {r.simulator} | {r.cycles:,} | {r.seconds:.2f} | "
                   f"{r.cycles_per_second:,.0f} |")


def _bench_per_cycle(names, cycles, seed, sets, as_json):
    """``gpurf bench --per-cycle``: where a lock-step cycle's CPU time goes, per block and
    parameter set."""
    from gpurf.sim.bench import measure_per_cycle, parameter_sets
    from gpurf.sim.toolchain import missing_simulator

    blocks = [block_named(name) for name in names] or all_blocks()
    if missing_simulator("verilator"):
        raise BadInput(missing_simulator("verilator"))
    configs = [(block, label, params) for block in blocks
               for label, params in parameter_sets(block, sets)]
    costs, unmeasured = [], []
    for block, label, params in progress(configs, "bench", "configuration"):
        try:
            costs.append(measure_per_cycle(block, cycles=cycles, seed=seed, params=params,
                                           cells=True, label=label))
        except ValueError as error:
            unmeasured.append(str(error))
    if len(unmeasured) == len(configs):
        raise BadInput("; ".join(unmeasured))
    for reason in unmeasured:
        click.echo(f"gpurf: not measured: {reason}", err=True)
    if as_json:
        echo_json([with_provenance(c.as_dict()) for c in costs])
        return
    click.echo("| block | set | cycles | CPU s | wall cycles/s | cycles per CPU s | golden + "
               "stimulus per CPU s | cocotb side per CPU s | cells |\n"
               "|---|---|---|---|---|---|---|---|---|")
    for c in costs:
        click.echo(f"| {c.block} | {c.label} | {c.cycles:,} | {c.cosim_cpu_seconds:.2f} | "
                   f"{c.wall:,.0f} | "
                   f"{c.cpu:,.0f} | {c.golden:,.0f} | {c.cocotb_side:,.0f} | {c.cells:,} |")


def _bench_replay(path, names, cycles, as_json):
    from gpurf.sim.bench import measure_replay
    from gpurf.sim.toolchain import missing_simulator

    for name in names:
        block_named(name)
    traces = _open_traces(path, set(names) if names else None)
    if not traces:
        raise BadInput(f"{path}: no trace of {', '.join(names)}")
    if missing_simulator("verilator"):
        raise BadInput(missing_simulator("verilator"))
    runs = [measure_replay(t, cycles=cycles) for t in progress(traces, "bench", "trace")]
    if as_json:
        echo_json([with_provenance(r.as_dict()) for r in runs])
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



@cli.command()
@click.argument("names", nargs=-1, metavar="[BLOCK]...")
@click.option("--cycles", type=click.IntRange(1), default=1_000_000, show_default=True,
              help="Random cycles per block (segments of 200,000 with fresh seeds).")
@click.option("--seed", type=click.IntRange(1), default=None,
              help="First seed (default: a fresh one, printed).")
@click.option("--config", type=click.Choice(["test", "default"]), default="test",
              show_default=True, help="Each block's first test configuration, or its defaults.")
@click.option("--sim", type=click.Choice(["verilator", "icarus"]), default="verilator",
              show_default=True, help="Simulator the traces replay on.")
@click.option("--keep", "folder", type=click.Path(file_okay=False, path_type=Path),
              default=Path("gpurf-soak"), show_default=True,
              help="Folder for the traces (a divergent one stays there).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def soak(names, cycles, seed, config, sim, folder, as_json):
    """Record --cycles random cycles of each stateful block on its golden model and replay
    them on its RTL (every stateful block, or BLOCK...); exit 1 at a divergence."""
    from gpurf.sim.soak import fresh_seed, soak_block, soak_params, stateful_blocks
    from gpurf.sim.toolchain import missing_simulator

    if missing_simulator(sim):
        raise BadInput(missing_simulator(sim))
    blocks = [block_named(name) for name in names] or stateful_blocks(config)
    seed = seed if seed is not None else fresh_seed()
    click.echo(f"soak: {len(blocks)} blocks x {cycles:,} cycles on {sim}, seed {seed} "
               f"(rerun with --seed {seed})", err=True)
    results = []
    for block in progress(blocks, "soak"):
        with heartbeat(f"soaking {block.qualname}"):
            result = soak_block(block, soak_params(block, config), cycles=cycles, seed=seed,
                                folder=folder, sim=sim)
        results.append(result)
        if not as_json:
            click.echo(_soak_line(result))
    if as_json:
        echo_json(with_provenance({"seed": seed, "sim": sim, "config": config,
                                   "blocks": [r.as_dict() for r in results]}))
    sys.exit(0 if all(r.passed for r in results) else 1)


def _soak_line(result) -> str:
    verdict = "PASS" if result.passed else "FAIL"
    line = (f"{verdict} {result.block:30} {result.cycles:>10,} cycles  record "
            f"{result.record_seconds:7.1f} s  replay {result.replay_seconds:6.2f} s  build "
            f"{result.build_seconds:5.1f} s")
    return line if result.passed else f"{line}\n{result.failure.summary()}"
