"""The command-line error contract shared by the ``frugalml`` CLI (compiler) and ``python -m
power_bench``: usage errors as one line on stderr (``error: ...``) with exit code 2,
NoArgsIsHelp printing the help, and usage lines that name the required options. Imported by the
CLIs only."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

NBSP = "\u00a0"  # joins an option to its metavar while the usage line is wrapped (textwrap does not break it)


class RequiredInUsage(click.Command):
    """A command whose usage line names its required options after its arguments
    (``Usage: frugalml export-c [OPTIONS] MODEL -o FILE``); click's shows them only under [OPTIONS]."""

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        pieces = super().collect_usage_pieces(ctx)
        for param in self.get_params(ctx):
            if isinstance(param, click.Option) and param.required and not param.is_flag:
                try:
                    metavar = param.make_metavar(ctx)
                except TypeError:  # click < 8.2: make_metavar() takes no context
                    metavar = param.make_metavar()  # type: ignore[call-arg]
                pieces.append(f"{param.opts[0]} {metavar}")
        return pieces

    def format_usage(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """click's usage line, never wrapped between an option and its metavar (``-o`` / ``RUN_DIR``)."""
        start = len(formatter.buffer)
        formatter.write_usage(ctx.command_path, " ".join(p.replace(" ", NBSP) for p in self.collect_usage_pieces(ctx)))
        formatter.buffer[start:] = [text.replace(NBSP, " ") for text in formatter.buffer[start:]]


class OneLineErrors(click.Group):
    """A click group whose usage errors are one line on stderr ("error: ..."), exit code 2; its commands
    name their required options in their usage line (RequiredInUsage)."""

    command_class = RequiredInUsage

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
