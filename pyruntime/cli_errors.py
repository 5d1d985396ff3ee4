"""The command-line error contract shared by the ``frugalml`` CLI (compiler) and ``python -m
power_bench``: usage errors as one line on stderr (``error: ...``) with exit code 2, and
NoArgsIsHelp printing the help. Imported by the CLIs only."""

from __future__ import annotations

import os
import sys
from typing import Any

import click


class OneLineErrors(click.Group):
    """A click group whose usage errors are one line on stderr ("error: ..."), exit code 2."""

    def main(self, *args: Any, **kwargs: Any) -> Any:  # type: ignore[override]
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc))
            sys.exit(2)
        except click.ClickException as exc:
            hint = f" (see '{exc.ctx.command_path} --help')" if getattr(exc, "ctx", None) else ""
            click.echo(f"error: {' '.join(exc.format_message().split())}{hint}", err=True)
            sys.exit(exc.exit_code)
        except click.exceptions.Abort:
            click.echo("aborted", err=True)
            sys.exit(1)
        except BrokenPipeError:
            quiet_broken_pipe()
        sys.exit(rv if isinstance(rv, int) else 0)


def quiet_broken_pipe() -> None:
    """The reader of stdout went away (``frugalml inspect m | head``): no traceback and no error line, exit 1
    as Python does; stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(1)
