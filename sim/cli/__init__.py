"""The ``gpurf`` command line; its grammar is ``docs/cli.md``.

One module per family of commands, each registering on :data:`~.common.cli`: ``blocks``
(list, generate, synth, test, replay, trace, bench), ``sm`` (the golden SM and compiler
passes), ``run`` (the main job and cost reports), ``reproduce`` (the papers' results) and
``sweep`` (design-space sweeps and their statistics).
"""

import sys

import click

from gpurf.hw.registry import BlockError

from . import blocks, reproduce, run, sm, sweep
from .common import BadInput, cli

__all__ = ["cli", "main"]

_COMMANDS = (blocks, reproduce, run, sm, sweep)
"""The modules whose import registers the commands (named so the import is used)."""


def main(argv=None):
    """Entry point: every bad input is one line on stderr and exit 2, a failed check exit 1;
    ``--debug`` lets the traceback through instead."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if "--debug" in argv:
        sys.exit(cli.main(args=argv, prog_name="gpurf", standalone_mode=False) or 0)
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
    except OSError as error:
        click.echo(f"gpurf: {_os_error(error)}", err=True)
        sys.exit(2)
    except (UnicodeDecodeError, ValueError, MemoryError, RecursionError) as error:
        click.echo(f"gpurf: {type(error).__name__}: {error} (gpurf --debug ... shows where)",
                   err=True)
        sys.exit(2)
    except click.ClickException as error:
        click.echo(f"gpurf: {error.format_message()}", err=True)
        sys.exit(2 if isinstance(error, click.UsageError | BadInput) else error.exit_code)
    sys.exit(0)


def _os_error(error: OSError) -> str:
    """``FILE: reason`` of an operating-system error, as one line."""
    reason = error.strerror or str(error)
    return f"{error.filename}: {reason}" if error.filename is not None else reason
