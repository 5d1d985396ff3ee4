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


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def run_profile(target: str, channels: int | None, plan_spec: str, lengths: str, numeric: str, n_windows: int,
                at_length: int | None, output: str) -> None:
    if channels is None:
        _fail("--on needs --channels N (the channels of the windows)")
    try:
        sizes = [int(v) for v in lengths.split(",") if v.strip()]
    except ValueError:
        _fail(f"--lengths {lengths!r}: comma-separated integers")
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
    click.echo(f"instructions on {target} ({numeric}), worst of {n_windows} windows per length")
    click.echo(f"{'window length':<28}" + "".join(f"{n:>10}" for n in prof.lengths))
    for name, rows in kinds.items():
        click.echo(f"{'group ' + name + ' (mean)':<28}" + "".join(f"{sum(r[i] for r in rows) / len(rows):>10.0f}"
                                                                   for i in range(len(prof.lengths))))
    click.echo(f"{'window start (once)':<28}" + "".join(f"{v:>10.0f}" for v in prof.start))
    click.echo(f"{'own part of a feature (mean)':<28}" + "".join(
        f"{sum(o[i] for o in prof.own) / len(prof.own):>10.0f}" for i in range(len(prof.lengths))))
    click.echo(f"{'every feature once (model)':<28}" + "".join(f"{v:>10.0f}" for v in prof.eager()))
    click.echo(f"{'every feature once (counted)':<28}" + "".join(f"{v:>10.0f}" for v in prof.measured_eager))
    write_costs(Path(output), prof, at_length)
    click.echo(f"wrote {output}: {len(prof.groups)} groups and the window start, {len(plan.features)} features",
               err=True)
