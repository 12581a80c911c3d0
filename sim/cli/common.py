"""What every command shares: the ``gpurf`` group, bad-input errors, block and parameter
parsing, progress bars and JSON output."""

import json
import sys
import threading
import time
from contextlib import contextmanager

import click

from gpurf.hw.registry import Block, BlockError, get_block

__all__ = ["PARAM", "BadInput", "block_named", "block_params", "cli", "echo_json", "errors_as",
           "heartbeat", "known_kernel", "progress", "with_provenance"]


class BadInput(click.ClickException):
    """Bad input from the user: one line on stderr, exit status 2."""

    exit_code = 2


@contextmanager
def errors_as(*kinds: type[BaseException]):
    """Turn ``kinds`` raised inside the block into :class:`BadInput` (the message only; a
    ``KeyError``'s without the quotes ``str`` adds)."""
    try:
        yield
    except kinds as error:
        keyed = isinstance(error, KeyError) and error.args
        raise BadInput(str(error.args[0]) if keyed else str(error)) from None


def block_named(name: str) -> Block:
    """The registered block ``name``; an unknown name is bad input."""
    with errors_as(BlockError):
        return get_block(name)


def block_params(block: Block, pairs: tuple[str, ...]) -> dict:
    """``KEY=VALUE`` options as typed parameters, validated by building the component."""
    with errors_as(BlockError):
        params = dict(block.parse_param(pair) for pair in pairs)
    try:
        block.build(params)
    except (TypeError, ValueError) as error:
        raise BadInput(f"{block.qualname}: {error}") from None
    return params


PARAM = click.option("--param", "-p", "pairs", multiple=True, metavar="KEY=VALUE",
                     help="Set a block parameter (repeatable); see `gpurf list`.")


def known_kernel(name: str) -> str:
    """``name`` if it is a shipped kernel or a kernel folder (``docs/cli.md``)."""
    from gpurf.sim.sm.workload import UnknownKernelError, find_workload

    with errors_as(UnknownKernelError):
        find_workload(name)
    return name


def progress(items, label, unit="block"):
    """A tqdm bar over ``items`` on stderr, shown only on a terminal."""
    from tqdm import tqdm

    return tqdm(items, desc=label, unit=unit, file=sys.stderr, leave=False,
                disable=not sys.stderr.isatty())


@contextmanager
def heartbeat(what: str, every: float = 30.0):
    """Say on stderr every ``every`` seconds that ``what`` is still running, so that a long
    elaboration (a large configuration can take minutes) is never silent."""
    start, done = time.monotonic(), threading.Event()

    def beat():
        while not done.wait(every):
            click.echo(f"gpurf: still {what} ({time.monotonic() - start:.0f} s)", err=True)

    thread = threading.Thread(target=beat, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def with_provenance(record: dict) -> dict:
    """``record`` with the provenance every JSON result carries (``sim/provenance.py``)."""
    from gpurf.sim.provenance import provenance

    return {**record, "provenance": provenance()}


def echo_json(value) -> None:
    """Print ``value`` as indented JSON."""
    click.echo(json.dumps(value, indent=1))


def _print_version(ctx, _param, value):
    if not value or ctx.resilient_parsing:
        return
    from gpurf.sim.provenance import tool_versions

    for name, version in tool_versions().items():
        click.echo(f"{name} {version or 'not installed'}")
    ctx.exit()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--version", is_flag=True, expose_value=False, is_eager=True,
              callback=_print_version, help="Print the versions of gpurf and its tools.")
@click.option("--debug", is_flag=True, expose_value=False,
              help="On an error, show the traceback instead of one line.")
def cli():
    """gpurf: verified RTL of GPU register-file mechanisms (grammar: docs/cli.md)."""
