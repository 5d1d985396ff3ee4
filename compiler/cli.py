"""The ``frugalml`` command line.

Exit codes: 0 success, 2 bad usage or bad input (one line on stderr).
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np

from compiler import tasks
from compiler.costs import CostsError
from compiler.header import TARGETS, c_tables, numeric_for, render_header
from compiler.kinds import BUDGET_EVAL, EXTRA_COMMANDS, FILE_METRICS, load_kind_modules
from compiler.train_cli import train_group
from pyruntime import format as fmt
from pyruntime.data import load_dataset
from pyruntime.errors import FrugalmlError
from pyruntime.evaluators import c_evaluator


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the documented error types into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except (FrugalmlError, CostsError, ValueError, OSError) as exc:
            fail(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)

    return wrapper


def numeric_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--numeric", type=click.Choice(["float32", "q15"]), default=None,
                      help="Numeric type of the tables (default: from --target, else float32).")(fn)
    fn = click.option("--target", "target_name", type=click.Choice(sorted(TARGETS)), default=None,
                      help="Device the tables are for: picks the numeric type (cortex-m0/m3: q15).")(fn)
    return fn


class OneLineErrors(click.Group):
    """Usage errors as one line on stderr ("error: ..."), exit code 2."""

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
        sys.exit(rv if isinstance(rv, int) else 0)


@click.group(cls=OneLineErrors, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option("0.1.0", prog_name="frugalml")
def cli() -> None:
    """frugalml: train budget-aware classifiers, compile them to const C tables,
    evaluate them in the C runtime, measure their energy.

    \b
    Typical flow:
      frugalml train nb-stop sklearn:breast_cancer -o m.msgpack
      frugalml eval m.msgpack sklearn:breast_cancer --json
      frugalml export-c m.msgpack -o model.h --target cortex-m4f
    """


# ------------------------------------------------------------------ train ----
KINDS = load_kind_modules()


@click.pass_context
@friendly
def _train(ctx: click.Context, kind: str, data: str, output: str, positive: str | None, target_column: str | None,
           seed: int, costs_path: str | None, **opts: Any) -> None:
    given = {k: v for k, v in opts.items() if v is not None and ctx.get_parameter_source(k).name != "DEFAULT"}
    task = tasks.prepare(data, positive, target_column, seed)
    costs = tasks.task_costs(task, costs_path)
    click.echo(f"training {kind} on {data}: {task.train.size} train / {task.validation.size} validation rows, "
               f"{task.data.X.shape[1]} features", err=True)
    model = KINDS[kind].train(kind, task, given, costs)
    size = fmt.save(model, output)
    tr = model.meta.get("training", {})
    extras = ", ".join(f"{k.replace('validation_', 'validation ')}={v:.4g}" if isinstance(v, float)
                       else f"{k}={v}" for k, v in tr.items()
                       if k.startswith("validation_") or k == "budget_chosen")
    click.echo(f"wrote {output} ({size} bytes){': ' + extras if extras else ''}", err=True)


TRAIN_DESCRIPTION = (
    "DATA is a CSV (with header), libsvm, ARFF or NPZ path, or a bundled name: sklearn:digits, "
    "sklearn:breast_cancer, keel:NAME, gen:sparse:ROWS:FEATURES. The data is split (60/20/20, "
    "stratified, by --seed) into train, validation and test; the model file records the split so "
    "`eval` reports on the test part."
)
TRAIN_COMMON: list[click.Parameter] = [
    click.Argument(["data"]),
    click.Option(["-o", "--output"], required=True, type=click.Path(dir_okay=False), help="Model file to write."),
    click.Option(["--positive"], default=None, help="Label of the positive class (one-vs-rest for multi-class data)."),
    click.Option(["--target-column"], default=None,
                 help="Name of the target column (CSV/ARFF; default: a column named target/class/label/y, "
                 "else the last)."),
    click.Option(["--seed"], default=0, show_default=True, type=int, help="Seed of the train/validation/test split."),
    click.Option(["--costs", "costs_path"], default=None, type=click.Path(dir_okay=False),
                 help="CSV feature,cost (or feature,c0,c1,c2) of feature acquisition costs."),
]
cli.add_command(train_group(KINDS, TRAIN_COMMON, _train, TRAIN_DESCRIPTION))


# --------------------------------------------------------------- export-c ----
@cli.command("export-c")
@click.argument("model_path", metavar="MODEL")
@click.option("-o", "--output", required=True, type=click.Path(dir_okay=False), help="Header file to write.")
@click.option("--name", default="model", show_default=True, help="C identifier prefix of the tables.")
@numeric_options
@click.option("--embed", default=None, help="DATA whose first --rows rows are embedded as const test inputs.")
@click.option("--rows", type=click.IntRange(min=1), default=None, help="Rows to embed (default 20).")
@friendly
def export_c(model_path: str, output: str, name: str, numeric: str | None, target_name: str | None,
             embed: str | None, rows: int | None) -> None:
    """Write MODEL as a self-contained C header of const tables."""
    model = fmt.load(model_path)
    num = numeric_for(target_name, numeric)
    X = None
    if rows is not None and embed is None:
        raise click.UsageError("--rows needs --embed DATA")
    if embed is not None:
        data = load_dataset(embed, model.meta.get("target_column"))
        if data.X.shape[1] != int(model.tables.n_features):
            raise ValueError(f"{embed} has {data.X.shape[1]} features, the model expects {model.tables.n_features}")
        X = data.X[: rows or 20]
    text = render_header(model, num, name, X, target_name)
    Path(output).write_text(text)
    click.echo(f"wrote {output}: {model.kind}, {num} tables, {c_tables(model, num, name).table_bytes} bytes", err=True)


# ------------------------------------------------------------------- eval ----
@cli.command("eval")
@click.argument("model_path", metavar="MODEL")
@click.argument("data")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@numeric_options
@click.option("--budget", type=float, default=None, help="Per-call budget (models with a budget index).")
@click.option("--size", type=click.FloatRange(min=0), default=None, help="Item size (models with a budget index).")
@click.option("--budget-sweep", is_flag=True, help="Accuracy-vs-budget curve (models with a budget index).")
@click.option("--plot", type=click.Path(dir_okay=False), default=None, help="PNG of the --budget-sweep curve.")
@friendly
def eval_cmd(model_path: str, data: str, as_json: bool, numeric: str | None, target_name: str | None,
             budget: float | None, size: float | None, budget_sweep: bool, plot: str | None) -> None:
    """Evaluate MODEL on DATA with the C runtime.

    On the data set the model was trained on, reports on its held-out test
    part; on any other data, on every row.
    """
    model = fmt.load(model_path)
    num = numeric_for(target_name, numeric)
    ds, y, idx, part = tasks.rows_for_eval(model, data)
    X = ds.X[idx]
    ev = c_evaluator(model, num)
    pred = ev.predict(X)
    report = tasks.summarize(model, y[idx], pred)
    report.update({"runtime": "c", "numeric": num, "rows": part,
                   "ns_per_prediction": ev.ns_per_prediction(X) if X.shape[0] else 0.0})
    metrics = FILE_METRICS.get(model.kind)
    if metrics is not None:
        report.update(metrics(model, X, y[idx], pred, num))
    if budget is not None or size is not None or budget_sweep:
        budgeted = BUDGET_EVAL.get(model.kind)
        if budgeted is None:
            kinds = " or ".join(sorted(BUDGET_EVAL)) or "budget-indexed"
            raise click.UsageError(f"--budget/--size/--budget-sweep need a {kinds} model (one with a per-call "
                                   f"budget index), not {model.kind}")
        report.update(budgeted(model, X, y[idx], budget, size, budget_sweep, plot, num))
    if as_json:
        click.echo(json.dumps(report))
        return
    for key, value in report.items():
        click.echo(f"{key:>18}: {value:.4f}" if isinstance(value, float) else f"{key:>18}: {value}")


# ---------------------------------------------------------------- predict ----
@cli.command()
@click.argument("model_path", metavar="MODEL")
@click.argument("data")
@click.option("--rows", type=click.IntRange(min=1), default=None, help="Only the first N rows.")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="Write CSV (label,features_read,cost) here instead of printing.")
@numeric_options
@friendly
def predict(model_path: str, data: str, rows: int | None, output: str | None, numeric: str | None,
            target_name: str | None) -> None:
    """Run the C runtime on every row of DATA as given (no split).

    Prints one line per row: LABEL FEATURES_READ, and for kinds with
    feature costs the COST spent, where LABEL is the class index (1 = positive
    class, see `inspect`; -1 = deferred), exactly as the firmware examples
    print it.
    """
    model = fmt.load(model_path)
    num = numeric_for(target_name, numeric)
    ds = load_dataset(data, model.meta.get("target_column"))
    X = ds.X[:rows] if rows else ds.X
    pred = c_evaluator(model, num).predict(X)
    if not getattr(model.tables, "reports_cost", True):
        lines = [f"{int(lab)} {int(k)}" for lab, k in zip(pred.label, pred.n_read)]
    else:  # kinds with feature costs append the cost spent
        lines = [f"{int(lab)} {int(k)} {float(c):.9g}" for lab, k, c in zip(pred.label, pred.n_read, pred.cost)]
    if output:
        with open(output, "w") as fh:
            fh.write("label,features_read,cost\n")
            for lab, k, c in zip(pred.label, pred.n_read, pred.cost):
                fh.write(f"{int(lab)},{int(k)},{float(c):.9g}\n")
        click.echo(f"wrote {len(lines)} predictions to {output}", err=True)
    else:
        click.echo("\n".join(lines))


# ---------------------------------------------------------------- inspect ----
@cli.command()
@click.argument("model_path", metavar="MODEL")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@numeric_options
@friendly
def inspect(model_path: str, as_json: bool, numeric: str | None, target_name: str | None) -> None:
    """Describe MODEL: kind, features, budget, stop points, sizes."""
    model = fmt.load(model_path)
    num = numeric_for(target_name, numeric)
    t = model.tables
    info: dict[str, Any] = {
        "kind": model.kind,
        "n_features": int(t.n_features),
        "budget": int(getattr(t, "n_used", t.n_features)),
        "n_stop_points": int(getattr(t, "n_stops", 0)),
        "numeric": num,
        "target": target_name,
        "msgpack_bytes": Path(model_path).stat().st_size,
        "table_bytes": c_tables(model, num).table_bytes,
        "classes": model.classes,
        "positive_class_index": 1,
    }
    if hasattr(t, "order"):
        names = model.feature_names
        info["reading_order"] = [names[int(j)] for j in t.order]
    if getattr(t, "n_stops", 0):
        info["stop_points"] = [
            {"after": int(a), "upper": float(u), "lower": float(lo)}
            for a, u, lo in zip(t.stop_at, t.stop_hi, t.stop_lo)
        ]
    info["training"] = model.meta.get("training", {})
    if as_json:
        click.echo(json.dumps(info, default=lambda o: o.tolist() if isinstance(o, np.ndarray) else str(o)))
        return
    for key in ("kind", "n_features", "budget", "n_stop_points", "numeric", "msgpack_bytes", "table_bytes",
                "classes"):
        click.echo(f"{key:>14}: {info[key]}")
    if "reading_order" in info:
        order = info["reading_order"]
        click.echo(f"{'reading order':>14}: {', '.join(order[:10])}{' ...' if len(order) > 10 else ''}")
    for sp in info.get("stop_points", [])[:20]:
        click.echo(f"{'stop':>14}: after {sp['after']:>4} features: 1 if score > {sp['upper']:.6g}, "
                   f"0 if score < {sp['lower']:.6g}")


# ------------------------------------------------------------------ bench ----
@cli.command()
@click.argument("model_paths", metavar="MODEL...", nargs=-1, required=True)
@click.option("--data", required=True, help="DATA whose rows are predicted (test part for the training set).")
@numeric_options
@friendly
def bench(model_paths: tuple[str, ...], data: str, numeric: str | None, target_name: str | None) -> None:
    """Time the C runtime on one or more models, side by side (ns per prediction)."""
    num = numeric_for(target_name, numeric)
    rows = []
    for path in model_paths:
        model = fmt.load(path)
        ds, y, idx, _ = tasks.rows_for_eval(model, data)
        ev = c_evaluator(model, num)
        pred = ev.predict(ds.X[idx])
        s = tasks.summarize(model, y[idx], pred)
        rows.append((path, s["weighted_accuracy"], s["mean_features"], ev.ns_per_prediction(ds.X[idx])))
    base = rows[0][3]
    click.echo(f"{'model':<30} {'w.acc':>7} {'features':>9} {'ns/pred':>9} {'speedup':>8}")
    for path, acc, feats, ns in rows:
        click.echo(f"{Path(path).name:<30} {acc:>7.4f} {feats:>9.2f} {ns:>9.1f} {base / ns:>7.2f}x")


def _add_family_commands() -> None:
    """Commands a model family adds besides train (e.g. the skyline's profile-costs)."""
    import importlib

    for ref in EXTRA_COMMANDS:
        module, _, attr = ref.partition(":")
        cli.add_command(getattr(importlib.import_module(module), attr))


_add_family_commands()


def _add_power() -> None:
    try:
        from power_bench.cli import power
    except ImportError:
        return
    cli.add_command(power)


_add_power()


def main() -> None:
    cli(prog_name="frugalml")


if __name__ == "__main__":
    main()
