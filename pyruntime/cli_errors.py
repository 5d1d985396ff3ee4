"""The command-line error contract shared by the ``frugalml`` CLI (compiler) and ``python -m
power_bench``: usage errors as one line on stderr (``error: ...``) with exit code 2,
NoArgsIsHelp printing the help, and usage lines that name the required options. Imported by the
CLIs only."""

from __future__ import annotations

import math
import os
import sys
from typing import Any

import click

from pyruntime.errors import FrugalmlError

NBSP = "\u00a0"  # joins an option to its metavar while the usage line is wrapped (textwrap does not break it)


class NumberRange(click.FloatRange):
    """click's FloatRange (and plain float: no bounds) without NaN: NaN passes every range comparison, so `--lambda
    nan` reached the trainer and came back as "lam must be >= 0"; a usage error naming the option instead. With
    ``finite=True`` infinities are refused too (power_bench: --volts nan measured "nan J" and said ok)."""

    def __init__(self, *args: Any, finite: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.finite = finite
        if self.min is None and self.max is None:
            self.name = "float"  # the help shows FLOAT, as for type=float, and no range

    def _describe_range(self) -> str:
        return "" if self.min is None and self.max is None else super()._describe_range()

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        rv = super().convert(value, param, ctx)
        if math.isnan(rv):
            self.fail(f"{value!r} is not a number", param, ctx)
        if self.finite and not math.isfinite(rv):
            self.fail(f"{value!r} is not a finite number", param, ctx)
        return rv


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
        except FrugalmlError as exc:  # a command that did not catch its own (e.g. a file it cannot write)
            click.echo(f"error: {first_line(exc)}", err=True)
            sys.exit(2)
        except BrokenPipeError:
            quiet_broken_pipe()
        sys.exit(rv if isinstance(rv, int) else 0)


def first_line(exc: BaseException) -> str:
    """The first non-blank line of an error's message (a library's may start with a newline), else its type."""
    return next((line.strip() for line in str(exc).splitlines() if line.strip()), type(exc).__name__)


def quiet_broken_pipe() -> None:
    """The reader of stdout went away (``frugalml inspect m | head``): no traceback and no error line, exit 1
    as Python does; stdout is pointed at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    sys.exit(1)
