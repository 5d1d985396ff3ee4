"""``frugalml bench MODEL --data DATA --on TARGET [--json]``: the command's side of compiler/features/bench.py."""

from __future__ import annotations

import json
import sys

import click

from compiler.features.bench import bench
from compiler.features.profile import TARGETS, ProfileError
from pyruntime.errors import DataError

LABELS = {
    "instructions_per_prediction": "lazy pipeline (instructions per prediction)",
    "extraction_instructions": "  extraction (features the model read)",
    "model_instructions": "  model",
    "eager_instructions_per_prediction": "eager pipeline (every planned feature)",
    "eager_extraction_instructions": "  eager extraction",
    "eager_over_lazy": "eager / lazy",
}


@click.command("bench")
@click.argument("model_path", metavar="MODEL")
@click.option("--data", required=True, help="Raw windows (.ts, 3-D NPZ, uea:NAME); the first --rows of one length.")
@click.option("--on", "target", type=click.Choice(TARGETS), default="cortex-m4f", show_default=True,
              help="Count under QEMU (cortex-m*, pi) or callgrind (host).")
@click.option("--rows", type=click.IntRange(min=1, max=200), default=20, show_default=True,
              help="Windows to run.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
def bench_command(model_path: str, data: str, target: str, rows: int, as_json: bool) -> None:
    """Instructions per prediction of the whole pipeline, raw window to label, lazy and eager."""
    try:
        report = bench(model_path, data, target, rows).report()
    except (DataError, ProfileError, ValueError, OSError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    if as_json:
        click.echo(json.dumps(report))
        return
    click.echo(f"{target} ({report['numeric']}), mean over {report['windows']} windows of {report['window_len']} "
               "samples")
    for key, label in LABELS.items():
        click.echo(f"{label:<46}{report[key]:>12}")
