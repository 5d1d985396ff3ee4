"""The ``frugalml train`` group: one subcommand per kind, each showing only that kind's
options with that kind's defaults. A subcommand is built when it is used, from its kind's
module alone (compiler.kinds.KIND_MODULES); listing the kinds (``train --help``) imports
them all.

Kind modules may write per-kind notes at the end of an option's help, in brackets:
``"Feature-cost penalty [miser: default 1; cascade: default 10]"`` or
``"Tree depth [miser, cascade; default 3]"``. A segment ``K1, K2: text`` applies to the
kinds named; a segment of kind names alone selects kinds for the segments after it; any
other segment applies to the kinds selected last (all, if none). ``nb-*`` patterns match
kind names. Each kind's help keeps only its own notes.
"""

from __future__ import annotations

import copy
import difflib
import fnmatch
import re
from collections.abc import Callable
from typing import Any

import click

from compiler.kinds import KIND_MODULES, KindSpec, kind_spec, load_kind_modules
from pyruntime.cli_errors import RequiredInUsage

BRACKET = re.compile(r"\s*\[([^\[\]]*)\]\.?\s*$")


def _kinds_in(text: str, all_kinds: list[str]) -> tuple[list[str], str] | None:
    """(kinds, qualifier) if text is a comma-separated list of kind names/patterns, a qualifier
    such as "--early-exit-every" allowed after a name; else None."""
    kinds: list[str] = []
    qualifier = ""
    for part in (p.strip() for p in text.split(",")):
        name, _, rest = part.partition(" ")
        matched = [k for k in all_kinds if fnmatch.fnmatchcase(k, name)]
        if not matched:
            return None
        kinds += matched
        qualifier = rest.strip() or qualifier
    return kinds, qualifier


def help_for_kind(help_text: str, kind: str, all_kinds: list[str]) -> str:
    """The option help as kind sees it: bracket notes of other kinds removed."""
    m = BRACKET.search(help_text or "")
    if not m:
        return help_text
    main = help_text[: m.start()].rstrip().rstrip(".")
    selected: list[str] = list(all_kinds)
    notes: list[str] = []
    for seg in (s.strip() for s in m.group(1).split(";")):
        head, colon, body = seg.partition(":")
        named = _kinds_in(head, all_kinds) if colon else None
        if named is not None:
            kinds, qualifier = named
            if kind in kinds:
                notes.append(f"with {qualifier}: {body.strip()}" if qualifier else body.strip())
            continue
        alone = _kinds_in(seg, all_kinds)
        if alone is not None:
            selected = alone[0]
            continue
        if kind in selected:
            notes.append(seg)
    return f"{main}." + (f" [{'; '.join(notes)}]" if notes else "")


def foreign_options(spec: KindSpec, all_specs: dict[str, KindSpec]) -> set[str]:
    """The option strings (--trees, ...) other kinds declare and this one does not."""
    own = {o.name for o in spec.options}
    return {d for s in all_specs.values() for o in s.options if o.name not in own for d in o.opts}


class KindCommand(RequiredInUsage):
    """One kind's train command (usage ``frugalml train KIND [OPTIONS] DATA -o MODEL``); an option of another
    kind is reported as not applying (the other kinds' modules are imported then, on that error only)."""

    def __init__(self, *args: Any, spec: KindSpec, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.spec = spec

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        try:
            return super().parse_args(ctx, args)
        except click.NoSuchOption as exc:
            if exc.option_name in foreign_options(self.spec, load_kind_modules()):
                raise click.UsageError(f"{exc.option_name} does not apply to kind {self.name}", ctx) from None
            raise


def kind_command(spec: KindSpec, all_kinds: list[str], common: list[click.Parameter],
                 callback: Callable[..., Any], description: str) -> click.Command:
    params: list[click.Parameter] = []
    for opt in spec.options:
        o = copy.copy(opt)
        o.help = help_for_kind(opt.help or "", spec.name, all_kinds)
        params.append(o)

    def run(**kwargs: Any) -> Any:
        return callback(kind=spec.name, **kwargs)

    return KindCommand(spec.name, callback=run, params=[*common, *params], spec=spec,
                       help=f"{spec.help}.\n\n{description}", short_help=spec.help)


class KindGroup(click.Group):
    """The train group: one subcommand per kind of KIND_MODULES, built (its module imported) when used; listed
    as kinds."""

    def __init__(self, *args: Any, common: list[click.Parameter], callback: Callable[..., Any], description: str,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.kind_common, self.kind_callback, self.kind_description = common, callback, description

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(KIND_MODULES)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in KIND_MODULES:
            self.add_command(kind_command(kind_spec(cmd_name), sorted(KIND_MODULES), self.kind_common,
                                          self.kind_callback, self.kind_description))
        return self.commands.get(cmd_name)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                             list[str]]:
        if args and args[0] not in KIND_MODULES and not args[0].startswith("-"):
            close = difflib.get_close_matches(args[0], list(KIND_MODULES), n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise click.UsageError(f"unknown kind {args[0]!r} ({hint}choose from {', '.join(sorted(KIND_MODULES))})",
                                   ctx)
        return super().resolve_command(ctx, args)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = []
        for name in self.list_commands(ctx):
            cmd = self.get_command(ctx, name)
            if cmd is not None:
                rows.append((name, cmd.get_short_help_str(limit=formatter.width)))
        if rows:
            with formatter.section("Kinds"):
                formatter.write_dl(rows)


def train_group(common: list[click.Parameter], callback: Callable[..., Any], description: str) -> click.Group:
    return KindGroup("train", subcommand_metavar="KIND DATA -o MODEL [OPTIONS]", no_args_is_help=True,
                     help=f"Train a model of KIND on DATA and write it to a model file.\n\n{description}"
                     "\n\nSee `frugalml train KIND --help` for the options of one kind.",
                     common=common, callback=callback, description=description)
