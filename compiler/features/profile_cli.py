"""``frugalml profile-costs --on TARGET``: the command's side of compiler/features/profile.py (parse, run, report,
write the costs CSV; every problem one line, exit 2, nothing written)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from compiler.features.profile import ProfileError, profile, write_costs
from pyruntime.errors import DataError
from pyruntime.features import catalog as cat
from pyruntime.features.plan import resolve
from pyruntime.numtext import parse_index


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def run_profile(target: str, channels: int | None, plan_spec: str, lengths: str, numeric: str, n_windows: int,
                at_length: int | None, output: str) -> None:
    if channels is None:
        _fail("--on needs --channels N (the channels of the windows)")
    try:
        sizes = [parse_index(v) for v in lengths.split(",")]
    except ValueError:
        sizes = []
    if not sizes or min(sizes) < 1:  # an empty item ("64,,"), a word, 0 or a negative length
        _fail(f"--lengths {lengths!r}: comma-separated window lengths of at least 1 sample (e.g. 64,256,1024)")
    if at_length is not None and sizes and not min(sizes) <= at_length <= max(sizes):
        _fail(f"--at-length {at_length}: costs are written at a counted length or between two (the fit "
              f"interpolates; it is not read beyond the lengths counted, {min(sizes)}..{max(sizes)}): add "
              f"{at_length} to --lengths")
    try:
        plan = resolve(plan_spec, channels, min(sizes) if sizes else None,  # type: ignore[arg-type]
                       max(sizes) if sizes else None)
        prof = profile(plan, target, sizes, numeric, n_windows)
    except (DataError, ProfileError) as exc:
        _fail(str(exc))
    kinds: dict[str, list[list[float]]] = {}
    for g, counts in prof.groups.items():
        kinds.setdefault(cat.GROUP_NAMES[g[0]], []).append(counts)
    n = range(len(prof.lengths))
    table: list[tuple[str, list[float]]] = [("window length", [float(v) for v in prof.lengths])]
    table += [(f"group {name} (mean)", [sum(r[i] for r in rows) / len(rows) for i in n])
              for name, rows in kinds.items()]
    table += [("window start (once)", list(prof.start)),
              ("own part of a feature (mean)", [sum(o[i] for o in prof.own) / len(prof.own) for i in n]),
              ("every feature once (model)", list(prof.eager())),
              ("every feature once (counted)", list(prof.measured_eager))]
    width = max(len(label) for label, _ in table) + 2  # the longest label: group spectrum__decimate_8 (mean)
    click.echo(f"instructions on {target} ({numeric}), worst of {n_windows} windows per length")
    for label, values in table:
        click.echo(f"{label:<{width}}" + "".join(f"{v:>10.0f}" for v in values))
    write_costs(Path(output), prof, at_length)
    click.echo(f"wrote {output}: {len(prof.groups)} groups and the window start, {len(plan.features)} features",
               err=True)
