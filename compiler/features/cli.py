"""``frugalml features``: the catalog of the C feature library, tiered by cost, with tsfresh-style names, or the
expanded feature plan of a number of channels (``--channels N [--plan SPEC]``) with the groups each feature
uses (a group's cost is paid once per prediction)."""

from __future__ import annotations

import sys

import click

from pyruntime.errors import DataError
from pyruntime.features import catalog as cat
from pyruntime.features.plan import NAMED_SETS, resolve
from pyruntime.jsontext import json_text

PLACEHOLDER = {"lag": "L", "band": "B", "bands": "N"}


def _pattern(kind: cat.FeatureKind) -> str:
    chans = {1: "cC", 2: "cC_cD", 3: "cC_cC+1_cC+2"}[kind.channels]
    params = "".join(f"__{p}_{PLACEHOLDER[p]}" for p in kind.params)
    optional = "[__decimate_D]" if kind.id in cat.SPECTRAL_IDS else ""
    return f"{chans}__{kind.name}{params}{optional}"


def catalog_rows() -> list[dict[str, object]]:
    return [{"name": k.name, "pattern": _pattern(k), "tier": k.tier, "params": list(k.params),
             "channels": k.channels, "description": k.what,
             "optional_params": ["decimate"] if k.id in cat.SPECTRAL_IDS else [],
             "groups": sorted({cat.GROUP_NAMES[g] for g, _ in cat.FeatureSpec(k.id, 0, 1, 1, 2).groups()})}
            for k in cat.KINDS]


@click.command("features")
@click.option("--channels", type=click.IntRange(1, cat.MAX_CHANNELS), default=None,
              help="List the plan's features for data with this many channels instead of the catalog.")
@click.option("--plan", "plan_spec", default="default", show_default=True, metavar="SPEC",
              help=f"With --channels: a named set ({', '.join(NAMED_SETS)}) or a file of feature names. The "
                   "default set is listed for windows of 40 to 1,024 samples; for shorter windows it leaves out the "
                   "spectra of block means the window cannot afford (D = 8 under 40 samples, 4 under 20, 2 under 10; "
                   "under 6 samples also the window's own features it is too short for, e.g. lag-4 autocorrelation), "
                   "for longer ones the spectra over 1,024 points (the window's own over 1,024 samples, of block "
                   "means of 2 over 2,049). --length N lists it for windows of N samples.")
@click.option("--length", type=click.IntRange(1, cat.MAX_LEN), default=None, metavar="N",
              help="With --channels: the windows' length in samples (the default set as `train` picks it for "
                   "windows of N samples).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def features_command(channels: int | None, plan_spec: str, length: int | None, as_json: bool) -> None:
    """List the features the C runtime computes on raw windows (float32 and q15), tiered by cost:
    tier 1 one pass over a channel, tier 2 a second pass or a product loop, tier 3 an FFT. Names are
    tsfresh-style: CHANNELS__FEATURE[__PARAM_VALUE...], e.g. c0__autocorrelation__lag_4; the spectral features
    take an optional __decimate_D (D = 2, 4, 8): the spectrum of the window's block means of D samples, which
    resolves the low frequencies as finely for about 1/D of the FFT's work. `train --features FILE` takes such
    names, one per line."""
    given = click.get_current_context().get_parameter_source("plan_spec") is not click.core.ParameterSource.DEFAULT
    if channels is None and (length is not None or given):
        click.echo(f"error: {'--length N' if length is not None else '--plan'} lists a plan: give --channels too",
                   err=True)
        sys.exit(2)
    if channels is None:
        rows = catalog_rows()
        if as_json:
            click.echo(json_text({"features": rows, "named_sets": list(NAMED_SETS), "max_fft": cat.MAX_FFT,
                                   "max_len": cat.MAX_LEN}))
            return
        for tier, text in cat.TIER_TEXT.items():
            click.echo(f"tier {tier}: {text}")
            for r in rows:
                if r["tier"] == tier:
                    click.echo(f"  {r['pattern']:<44} {r['description']}")
        click.echo(f"named sets: {', '.join(NAMED_SETS)} (`frugalml features --channels N` lists one)")
        return
    try:
        plan = resolve(plan_spec, channels, length, length)
    except DataError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if length is not None and not plan.min_len <= length <= plan.max_len:  # a named set or a file: it does not adapt
        click.echo(f"error: --plan {plan_spec} needs windows of {plan.min_len} to {plan.max_len} samples, not "
                   f"{length} (`train` refuses such data with it; the default plan adapts to the length)", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json_text({"n_channels": plan.n_channels, "features": plan.names,
                               "groups": plan.group_names(),
                               "feature_groups": [[cat.group_name(g) for g in f.groups()] for f in plan.features]}))
        return
    for f in plan.features:
        click.echo(f"{f.name:<44} {' '.join(cat.group_name(g) for g in f.groups())}")
    click.echo(f"{len(plan.features)} features, {len(plan.groups())} groups", err=True)
