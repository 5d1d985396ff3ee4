"""``frugalml bench MODEL --data DATA --on TARGET [--json]``: the command's side of compiler/features/bench.py
(the bench command of compiler/cli.py calls pipeline_bench when --on is given)."""

from __future__ import annotations

import sys

import click

from compiler.features.bench import bench
from compiler.features.profile import TARGETS, ProfileError
from pyruntime.errors import DataError
from pyruntime.jsontext import json_text

LABELS = {
    "instructions_per_prediction": "lazy pipeline (instructions per prediction)",
    "extraction_instructions": "  extraction (features the model read)",
    "model_instructions": "  model",
    "eager_instructions_per_prediction": "eager pipeline (every planned feature)",
    "eager_extraction_instructions": "  eager extraction",
    "eager_over_lazy": "eager / lazy",
    "profiled_extraction_instructions": "  extraction by the cost model (--costs)",
    "profiled_error": "  cost model vs counted, mean |error|",
}


def pipeline_bench(model_path: str, data: str, target: str, rows: int, as_json: bool,
                   costs: str | None = None) -> None:
    """`frugalml bench MODEL --data DATA --on TARGET [--rows N] [--json]`: every problem one line, exit 2."""
    if target not in TARGETS:
        _fail(f"--on {target!r}: unknown target (use {', '.join(TARGETS)})")
    try:
        report = bench(model_path, data, target, rows, costs).report()
    except (DataError, ProfileError, ValueError, OSError) as exc:
        _fail(str(exc))
    if as_json:
        click.echo(json_text(report))
        return
    click.echo(f"{target} ({report['numeric']}), mean over {report['windows']} windows of {_samples(report)} samples")
    for key, label in LABELS.items():
        if key in report:
            click.echo(f"{label:<46}{report[key]:>12}")


def _samples(report: dict[str, object]) -> str:
    """The windows' length, or the range of their lengths ("48 to 80") when they differ."""
    lengths = report.get("window_lengths")
    if isinstance(lengths, list) and lengths:
        return f"{lengths[0]} to {lengths[-1]}"
    return str(report["window_len"])


def _fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)
