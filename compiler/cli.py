"""The ``frugalml`` command line.

Exit codes: 0 success, 2 bad usage or bad input (one line on stderr).
"""

from __future__ import annotations

import csv
import functools
import io
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
import numpy as np

from compiler import report_text, tasks
from compiler.codegen import check_code_kind, render_code_header
from compiler.costs import CostsError
from compiler.header import (
    FLASH_BUDGETS,
    POINTER_BYTES,
    VEC_MAX_FEATURES,
    VEC_MAX_OUTPUTS,
    c_tables,
    flash_bytes,
    numeric_for,
    parse_bytes,
    render_header,
    vec_flags,
)
from compiler.kinds import BUDGET_EVAL, BUDGET_FILE_KINDS, EXTRA_COMMANDS, FILE_METRICS, kind_spec, load_file_kind
from compiler.nb.stop_cost import export_note
from compiler.options import OutputFile, numeric_option, refuse_overwriting_input, target_option
from compiler.pipeline_header import PIPELINE_KINDS, has_pipeline
from compiler.report_plot import plot_format
from compiler.train_cli import train_group
from pyruntime import format as fmt
from pyruntime.cli_errors import NumberRange, first_line
from pyruntime.cli_errors import OneLineErrors as SharedOneLineErrors
from pyruntime.costtext import CostedView, predict_fields, predict_lines
from pyruntime.data import Dataset, load_for_model
from pyruntime.errors import FrugalmlError
from pyruntime.evaluators import c_evaluator
from pyruntime.jsontext import json_text
from pyruntime.outfiles import write_file


def fail(message: str) -> None:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Turn the documented error types into one line on stderr and exit code 2."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except BrokenPipeError:
            raise  # the reader of stdout left: OneLineErrors ends quietly
        except (FrugalmlError, CostsError, ValueError, OSError) as exc:
            fail(first_line(exc))

    return wrapper


def numeric_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    fn = click.option("--numeric", **numeric_option())(fn)
    return click.option("--target", "target_name", **target_option())(fn)


class OneLineErrors(SharedOneLineErrors):
    """The frugalml group: one-line usage errors (pyruntime.cli_errors) and lazily loaded commands."""

    def resolve_command(self, ctx: click.Context, args: list[str]) -> tuple[str | None, click.Command | None,
                                                                             list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        if isinstance(cmd, LazyCommand):
            cmd = cmd.load()
        return name, cmd, rest


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
@click.pass_context
@friendly
def _train(ctx: click.Context, kind: str, data: str, output: str, positive: str | None, target_column: str | None,
           seed: int, costs_path: str | None, features: str | None, on_target: str | None, **opts: Any) -> None:
    given = {k: v for k, v in opts.items() if v is not None and ctx.get_parameter_source(k).name != "DEFAULT"}
    if on_target is not None and costs_path != "measured":
        raise click.UsageError("--on TARGET goes with --costs measured")
    refuse_overwriting_input(output, data_file=data, costs_file=costs_path, features_file=features)
    task = tasks.prepare(data, positive, target_column, seed, features)
    spec = kind_spec(kind)
    if task.n_classes > 2 and not spec.multiclass:
        raise FrugalmlError(f"{kind} trains two classes only so far and the target has {task.n_classes}: pass "
                            "--positive LABEL for one-vs-rest")
    measured: Path | None = None  # --costs measured: a temporary file, renamed to MODEL.costs.csv with the model
    if costs_path == "measured":
        from compiler.features.measured import costs_path_for, measured_costs  # noqa: PLC0415 (QEMU/valgrind only when asked)

        measured = measured_costs(task.data, on_target, output)
        costs_path = str(measured)
    try:
        costs = tasks.task_costs(task, costs_path)
        labels = (f", labels from column {task.data.label_column!r} (named like a label column; --target-column NAME "
                  "picks another)" if task.data.label_column else "")
        click.echo(f"training {kind} on {data}: {task.train.size} train / {task.validation.size} validation rows, "
                   f"{task.data.X.shape[1]} features{labels}", err=True)
        if task.test.size == 0:
            click.echo(f"warning: the test part of {data} is empty (too few rows a class for the split to hold one "
                       "out): `frugalml eval` will need other labelled data", err=True)
        model = spec.train(kind, task, given, costs)
        size = fmt.save(model, output)
        if measured is not None:
            final = costs_path_for(output)
            measured.replace(final)
            measured = None
            click.echo(f"profiled the plan's features on {on_target}: wrote {final}", err=True)
    finally:
        if measured is not None:  # training failed: leave nothing behind
            measured.unlink(missing_ok=True)
    tr = model.meta.get("training", {})
    # each kind records refit_folds when it chose by cross-validation and refitted on train + validation (a small
    # validation part, or --folds): its validation figures are then in-sample
    folds = int(tr.get("refit_folds") or 0)
    label = "in-sample " if folds > 1 else "validation "
    extras = ", ".join(f"{k.replace('validation_', label)}={report_text.figure_text(v)}" for k, v in tr.items()
                       if k.startswith("validation_") or k == "budget_chosen")
    if folds > 1 and extras:
        extras = (f"chosen by {folds}-fold cross-validation and refitted on the train and validation parts, so "
                  f"these figures are not held out (`frugalml eval` reports the test part): {extras}")
    click.echo(f"wrote {output} ({size} bytes){': ' + extras if extras else ''}", err=True)


TRAIN_DESCRIPTION = (
    "DATA is a CSV (with header), libsvm, ARFF or NPZ path, or a bundled name: sklearn:digits, "
    "sklearn:breast_cancer, sklearn:iris, sklearn:wine, keel:NAME, gen:sparse:ROWS:FEATURES; or raw sensor windows: "
    "a UEA/UCR .ts file, an NPZ with X of n x channels x length, or uea:BasicMotions, whose columns are the "
    "features of --features (the model keeps the plan, so eval/predict/export-c take the same windows). The data "
    "is split (60/20/20, "
    "stratified, by --seed) into train, validation and test; the model file records the split so "
    "`eval` reports on the test part."
)
TRAIN_COMMON: list[click.Parameter] = [
    click.Argument(["data"]),
    click.Option(["-o", "--output"], required=True, type=OutputFile(), metavar="MODEL", help="Model file to write."),
    click.Option(["--positive"], default=None, help="Label of the positive class (one-vs-rest for multi-class data)."),
    click.Option(["--target-column"], default=None,
                 help="Name of the target column (CSV/ARFF; default: a column named target/class/label/y, "
                 "else the last)."),
    click.Option(["--seed"], default=0, show_default=True, type=click.IntRange(0, 2**32 - 1),
                 help="Seed of the train/validation/test split (an integer from 0 to 2^32 - 1, numpy's range)."),
    click.Option(["--costs", "costs_path"], default=None, type=click.Path(dir_okay=False),
                 help="CSV feature,cost (or feature,c0,c1,c2) of feature acquisition costs; or `measured` (raw "
                 "windows, with --on): the plan's features profiled on the target first (MODEL.costs.csv)."),
    click.Option(["--on", "on_target"], default=None, metavar="TARGET",
                 help="With --costs measured: count on host, cortex-m0/m3/m4f/m33 or pi (see profile-costs)."),
    click.Option(["--features"], default=None, metavar="SPEC",
                 help="Raw windows only: the feature plan, a named set (default) or a file with one feature name "
                 "per line (`frugalml features` lists them). [default: default]"),
]
cli.add_command(train_group(TRAIN_COMMON, _train, TRAIN_DESCRIPTION))


# --------------------------------------------------------------- export-c ----
FLASH_REMEDY = {
    "gated": "train adapt-* with --hpc-remote (f0 stays off the device and the gate answers DEFER) or with a "
             "smaller f0 (fewer or shallower trees: --hpc rf:TREES:DEPTH, e.g. rf:30:8)",
}
FLASH_REMEDY_OTHER = "train a smaller model (fewer or shallower trees, fewer features or stop points)"


def say_note(ds: Dataset) -> None:
    """The data loader's note for the user (the columns read by position), on stderr."""
    if ds.note:
        click.echo(ds.note, err=True)


def flash_budget(target: str | None, given: str | None) -> int | None:
    """The flash budget in bytes: --flash-budget when given (0/none: no limit), else the target's default."""
    if given is not None:
        return parse_bytes(given)
    return FLASH_BUDGETS.get(target) if target else None


def trained_as(model: fmt.ModelFile) -> str:
    """The kind a model was trained as, as the user typed it (adapt-lin, cascade), with its file kind when they
    differ: "adapt-lin (gated tables)"."""
    kind = str(model.meta.get("training", {}).get("kind") or model.kind)
    return kind if kind == model.kind else f"{kind} ({model.kind} tables)"


@cli.command("export-c")
@click.argument("model_path", metavar="MODEL")
@click.option("-o", "--output", required=True, type=OutputFile(), help="Header file to write.")
@click.option("--name", default="model", show_default=True,
              help="C identifier prefix of the tables (not fm or fm_..., the runtime's prefix, in any case).")
@numeric_options
@click.option("--flash-budget", "flash_budget_text", default=None, metavar="BYTES",
              help="Refuse a model whose const data exceeds BYTES (K/M suffixes; 0 or none: no limit). "
              "[default: the target's flash: 256K for cortex-m*, none for pi/host]")
@click.option("--embed", default=None, help="DATA whose first --rows rows are embedded as const test inputs.")
@click.option("--rows", type=click.IntRange(min=1), default=None, help="Rows to embed (default 20).")
@click.option("--form", type=click.Choice(["tables", "code"]), default="tables", show_default=True,
              help="const tables (smallest; every kind) or generated C code (fastest; miser, cascade, nb-static, "
              "nb-stop, gated with tree parts), behind the same FM_PREDICT_VEC macros.")
@friendly
def export_c(model_path: str, output: str, name: str, numeric: str | None, target_name: str | None,
             flash_budget_text: str | None, embed: str | None, rows: int | None, form: str) -> None:
    """Write MODEL as a self-contained C header of const tables (or, with --form code, of C code).

    Reports the bytes of const model data (what the model puts in the
    device's flash; embedded test rows not included) and refuses a model
    over the flash budget (exit 2, nothing written). The code form is
    checked against the same count: its instructions hold every constant
    of the tables, so the tables' bytes are a lower bound of its size.
    """
    refuse_overwriting_input(output, model_file=model_path, embed_data=embed)
    budget = flash_budget(target_name, flash_budget_text)
    model = fmt.load(model_path)
    num = numeric_for(target_name, numeric)
    if form == "code":
        check_code_kind(model.kind)
    stop_numeric_note(model, num)
    tables = c_tables(model, num, name)
    flash = flash_bytes(model, tables, POINTER_BYTES.get(target_name or "host", 8))
    if budget is not None and flash > budget:
        where = f" of {target_name}" if flash_budget_text is None and target_name else ""
        remedy = FLASH_REMEDY.get(model.kind, FLASH_REMEDY_OTHER)
        what = f"{num} tables" if form == "tables" else f"its {num} tables; the code form needs at least as much"
        raise ValueError(f"{model_path}: the {model.kind} model needs {flash:,} bytes of flash ({what}), over "
                         f"the {budget:,}-byte budget{where}: {remedy}, or raise --flash-budget (0 or none: no limit)")
    X = None
    windows = None
    if rows is not None and embed is None:
        raise click.UsageError("--rows needs --embed DATA")
    if embed is not None:
        data = load_for_model(embed, model.meta)
        say_note(data)
        if data.X.shape[1] != int(model.tables.n_features):
            raise ValueError(f"{embed} has {data.X.shape[1]} features, the model expects {model.tables.n_features}")
        if rows is not None and rows > data.n_rows:
            click.echo(f"warning: --rows {rows} but {embed} has {data.n_rows} rows: embedding all {data.n_rows}",
                       err=True)
        X = data.X[: rows or 20]
        if num == "q15":  # the agreement warning of eval / predict, on every row of the data given
            q15_agreement(model, data.X, c_evaluator(model, "q15").predict(data.X))
        if data.windows is not None:
            series = data.windows.series[: rows or 20]
            lazy = has_pipeline(model.meta, tables)
            windows = series if len({s.shape for s in series}) == 1 and form == "tables" and lazy else None
            if windows is None:
                why = ("--form code has no on-device feature pipeline" if form == "code"
                       else f"the {trained_as(model)} model has no on-device feature pipeline (FM_PREDICT_WINDOW: "
                       f"{PIPELINE_KINDS} tables)" if not lazy
                       else "the embedded windows have unequal lengths (FM_PREDICT_WINDOW takes one length)")
                click.echo(f"warning: {why}: the header embeds the rows of features computed on the host "
                           "(FM_ROWS), not the raw windows", err=True)
    if form == "code":
        text = render_code_header(model, num, name, X, target_name)
        write_file(output, text)
        click.echo(f"wrote {output}: {model.kind}, {num} generated code, {text.count(chr(10))} lines, at least "
                   f"{flash:,} bytes of flash (its constants)", err=True)
        return
    text = render_header(model, num, name, X, target_name, windows)
    write_file(output, text)
    used = f" ({100 * flash / budget:.1f}% of the {budget:,}-byte flash budget)" if budget else ""
    click.echo(f"wrote {output}: {model.kind}, {num} tables, {tables.table_bytes:,} table bytes, {flash:,} bytes "
               f"of flash{used}", err=True)
    over = vec_bound_note(tables.vec_bounds)
    if over:
        click.echo(f"warning: {over}", err=True)


def vec_bound_note(bounds: tuple[int, int] | None) -> str:
    """What export-c says when a model is over the runtime's default stack bounds of FM_PREDICT_VEC: the header then
    stops compilation with an #error unless the runtime and the program are built with the -D flags named here."""
    flags = vec_flags(bounds)
    if not flags:
        return ""
    nf, no = bounds or (0, 0)
    return (f"the model has {nf} features and {no} score outputs, over the runtime's default FM_VEC_MAX_FEATURES "
            f"{VEC_MAX_FEATURES} / FM_VEC_MAX_OUTPUTS {VEC_MAX_OUTPUTS}: compile the runtime and your program with "
            f"{flags} (the header's #error says so too), or train on fewer features")


def stop_numeric_note(model: fmt.ModelFile, num: str) -> None:
    """export-c's note on an nb-stop model whose stop points were kept for the other numeric type's walk."""
    if model.kind == "nb-stop":
        note = export_note(model.meta.get("training", {}), len(model.classes), model.tables.n_stops, num)
        if note:
            click.echo(note, err=True)


# ------------------------------------------------------------------- eval ----
@cli.command("eval")
@click.argument("model_path", metavar="MODEL")
@click.argument("data")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@numeric_options
@click.option("--budget", type=NumberRange(), default=None, help="Per-call budget (models with a budget index).")
@click.option("--size", type=NumberRange(min=0), default=None, help="Item size (models with a budget index).")
@click.option("--budget-sweep", is_flag=True, help="Accuracy-vs-budget curve (models with a budget index).")
@click.option("--plot", type=OutputFile(), default=None,
              help="PNG of the confusion matrix (with --budget-sweep: of the accuracy-vs-budget curve); a .svg or "
              ".pdf name writes that format.")
@friendly
def eval_cmd(model_path: str, data: str, as_json: bool, numeric: str | None, target_name: str | None,
             budget: float | None, size: float | None, budget_sweep: bool, plot: str | None) -> None:
    """Evaluate MODEL on DATA with the C runtime.

    On the data set the model was trained on, reports on its held-out test
    part; on any other data, on every row.
    """
    refuse_overwriting_input(plot, "--plot", model_file=model_path, data_file=data)
    if plot is not None and plot_format(plot) is None:
        raise click.UsageError(f"--plot {plot}: name a .png (or .svg, .pdf) file; the format is the name's suffix")
    model = fmt.load(model_path)
    load_file_kind(model.kind)  # its eval figures and budget index
    num = numeric_for(target_name, numeric)
    budgeted = None
    if budget is not None or size is not None or budget_sweep:
        budgeted = BUDGET_EVAL.get(model.kind)
        if budgeted is None:
            kinds = " or ".join(BUDGET_FILE_KINDS)
            raise click.UsageError(f"--budget/--size/--budget-sweep need a {kinds} model (one with a "
                                   f"per-call budget index), not {model.kind}")
        model = budgeted.at(model, budget, size)  # every figure below is at this budget and size
    ds, y, idx, part = tasks.rows_for_eval(model, data)
    say_note(ds)
    X = ds.X[idx]
    ev = c_evaluator(model, num)
    pred = ev.predict(X)
    report = tasks.summarize(model, y[idx], pred)
    report.update({"runtime": "c", "numeric": num, "rows": part,
                   "ns_per_prediction": ev.ns_per_prediction(X) if X.shape[0] else 0.0})
    if num == "q15":
        report["q15_agreement"] = q15_agreement(model, X, pred)
    metrics = FILE_METRICS.get(model.kind)
    if metrics is not None:
        report.update(metrics(model, X, y[idx], pred, num))
    if budgeted is not None:
        report.update(budgeted.sweep(model, X, y[idx], budget_sweep, plot if budget_sweep else None, num))
    if plot is not None and not budget_sweep:
        from compiler.report_plot import plot_confusion  # noqa: PLC0415 - matplotlib only when asked

        report["plot"] = plot_confusion(report["confusion"], plot, f"{model.kind} on {data} ({part} rows)")
    if as_json:
        click.echo(json_text(report))
        return
    click.echo("\n".join(eval_text(report)))


def eval_text(report: dict[str, Any]) -> list[str]:
    """`eval` without --json: one line per figure; the per-class figures and the confusion matrix as tables."""
    lines = []
    tables = {key: value for key, value in report.items()
              if isinstance(value, list) and value and all(isinstance(v, dict) for v in value)}
    for key, value in report.items():
        if key in ("per_class", "confusion") or key in tables:
            continue
        lines.append(f"{key:>18}: {value:.4f}" if isinstance(value, float)
                     else f"{key:>18}: {report_text.figure_text(value)}")
    for key, records in tables.items():  # budget_sweep: a table, not a line of Python reprs
        lines += ["", f"{key.replace('_', ' ')}:", *report_text.records_lines(records)]
    lines += ["", "per true class:", *report_text.per_class_lines(report["per_class"])]
    conf = report["confusion"]
    lines += ["", "confusion matrix (rows: true class, columns: predicted):",
              *report_text.confusion_lines(conf["labels"], conf["matrix"], conf["none"])]
    return lines


# ---------------------------------------------------------------- predict ----
@cli.command()
@click.argument("model_path", metavar="MODEL")
@click.argument("data")
@click.option("--rows", type=click.IntRange(min=1), default=None, help="Only the first N rows.")
@click.option("-o", "--output", type=OutputFile(), default=None,
              help="Write CSV (label,features_read,cost) here instead of printing.")
@numeric_options
@friendly
def predict(model_path: str, data: str, rows: int | None, output: str | None, numeric: str | None,
            target_name: str | None) -> None:
    """Run the C runtime on every row of DATA as given (no split).

    DATA needs no labels: a CSV of the model's feature columns only, an NPZ
    without y or a .ts file with @classLabel false will do; the columns of a
    table are matched to the model's features by name.

    Prints one line per row, exactly as the firmware examples print it:
    LABEL FEATURES_READ for naive Bayes kinds, LABEL FEATURES_READ COST for
    the others. LABEL is the class's label text as in the training data (see
    `inspect`; -1 = deferred or nothing fits the budget, `none` when a class
    is named -1), FEATURES_READ the distinct features read, COST their summed
    cost (q15: integer cost units times the header's FM_COST_UNIT), rounded to
    6 decimals without trailing zeros.
    """
    refuse_overwriting_input(output, model_file=model_path, data_file=data)
    model = fmt.load(model_path)
    num = numeric_for(target_name, numeric)
    ds = load_for_model(data, model.meta)
    say_note(ds)
    X = ds.X[:rows] if rows else ds.X
    ev = c_evaluator(model, num)
    pred = ev.predict(X)
    q15 = num == "q15"
    if q15:
        q15_agreement(model, X, pred)
    lines = predict_lines(model.tables, pred, q15, ev.cost_unit, classes=model.classes)
    if output:
        fh = io.StringIO()
        out = csv.writer(fh, lineterminator="\n")  # csv quotes a label holding a comma or a quote
        out.writerow(["label", "features_read", "cost"])
        out.writerows(predict_fields(CostedView(), pred, q15, ev.cost_unit, classes=model.classes))
        write_file(output, fh.getvalue())
        click.echo(f"wrote {len(lines)} predictions to {output}", err=True)
    else:
        click.echo("\n".join(lines))


Q15_AGREEMENT_WARN = 0.95  # rounding alone moves a few near ties (26 classes: 98%); lost features move many


def q15_agreement(model: fmt.ModelFile, X: np.ndarray, pred: Any) -> float:
    """Share of rows where the q15 tables give the float32 tables' label; below 95%, one warning line: features
    of large magnitude, with a large offset against their spread (100000 +- 5), or far smaller than the others
    (cstc's q15 inputs share one scale), lose their resolution in 16-bit fixed point, and the device answers
    something else than the model that was validated."""
    if X.shape[0] == 0:
        return 1.0
    agree = float(np.mean(c_evaluator(model, "float32").predict(X).label == pred.label))
    if agree < Q15_AGREEMENT_WARN:
        remedy = ("they are computed from raw windows by the model's feature plan, so use float32 tables "
                  "(--numeric float32)" if "feature_plan" in model.meta
                  else "center and scale them before training, or use float32 tables")
        click.echo(f"warning: the q15 tables give the float32 tables' label on {100 * agree:.1f}% of these rows "
                   "only: features of large magnitude, with a large offset (e.g. 100000 +- 5), or far smaller than "
                   f"the others (1e-6 next to 1) lose their resolution in fixed point; {remedy}", err=True)
    return agree


# ---------------------------------------------------------------- inspect ----
@cli.command()
@click.argument("model_path", metavar="MODEL")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@numeric_options
@friendly
def inspect(model_path: str, as_json: bool, numeric: str | None, target_name: str | None) -> None:
    """Describe MODEL: the file-level facts (kind, features, numeric type, sizes, classes) and what
    matters for its kind (the tables' describe(): budget and stop points, trees and stages, gate and
    parts, indexed models and budgets; the features used and their costs)."""
    model = fmt.load(model_path)
    num = numeric_for(target_name, numeric)
    t = model.tables
    info: dict[str, Any] = {
        "kind": model.kind,
        "n_features": int(t.n_features),
        "numeric": num,
        "target": target_name,
        "msgpack_bytes": Path(model_path).stat().st_size,
        "table_bytes": c_tables(model, num).table_bytes,
        "n_classes": len(model.classes),
        "classes": model.classes,
        "positive_class_index": 1 if len(model.classes) == 2 else None,
    }
    info.update(t.describe(model.feature_names))
    trained = model.meta.get("training", {})
    # the training record is what the trainer wrote, not checked at load beyond its form: a field of another type or
    # a missing one (an edited or foreign file) leaves its line out rather than failing
    if "bins_chosen" in trained and "likelihood_chosen" in trained:  # NB: the form its tables were estimated with
        info["table_form"] = (f"{trained['bins_chosen']} bins, {trained['likelihood_chosen']} entries"
                              + (" (kept by --bins auto)" if trained.get("table_forms") else ""))
    price = trained.get("stop_cost_chosen")
    if "stop_numeric" in trained and isinstance(price, (int, float)):  # nb-stop: the walk its stop points were kept for
        info["stop_points_kept_for"] = (f"{trained['stop_numeric']} tables (a stop check priced "
                                        f"{float(price):g} feature reads)")
    info["training"] = trained
    if as_json:
        click.echo(json_text(info))
        return
    for key, value in info.items():
        if key != "training":
            for line in _text_lines(key, value):
                click.echo(line)


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_short(v)}" for k, v in value.items())
    if isinstance(value, list):
        if not value:
            return "none"
        items = [_short(v) for v in value[:10]]
        return ", ".join(items) + (f", ... ({len(value)} in all)" if len(value) > 10 else "")
    return "-" if value is None else str(value)


def _text_lines(key: str, value: Any, limit: int = 20) -> list[str]:
    """`inspect` text: one line per fact; a list of records one line each (at most limit)."""
    label = key.replace("_", " ")
    if key == "classes" and any("," in c or '"' in c or c != c.strip() or not c or not c.isprintable() for c in value):
        # quoted: a label "a,b" is one class, not two; an invisible character (a zero-width space) shown as \u200b
        value = ["".join(ch if ch.isprintable() else f"\\u{ord(ch):04x}" for ch in json.dumps(c, ensure_ascii=False))
                 for c in value]
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        lines = [f"{label:>22}: {_short(v)}" if i == 0 else f"{'':>22}  {_short(v)}"
                 for i, v in enumerate(value[:limit])]
        return lines + ([f"{'':>22}  ... ({len(value)} in all)"] if len(value) > limit else [])
    return [f"{label:>22}: {_short(value)}"]


# ------------------------------------------------------------------ bench ----
@cli.command()
@click.argument("model_paths", metavar="MODEL...", nargs=-1, required=True)
@click.option("--data", required=True, metavar="DATA",
              help="DATA whose rows are predicted (test part for the training set).")
@numeric_options
@click.option("--on", "on_target", default=None, metavar="TARGET",
              help="Instead: instructions per prediction of one raw-window model's whole pipeline (raw window to "
              "label, lazy and eager) on host (callgrind), cortex-m0/m3/m4f/m33 or pi (QEMU).")
@click.option("--rows", type=click.IntRange(min=1, max=200), default=20, show_default=True,
              help="With --on: the first windows of DATA to run.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object (the table's rows, or with --on the "
              "pipeline's counts).")
@click.option("--costs", "costs_path", default=None, metavar="FILE",
              help="With --on: also the extraction the costs CSV (profiled on the same target) predicts for the "
              "features each window read, and its mean error against the counted extraction.")
@friendly
def bench(model_paths: tuple[str, ...], data: str, numeric: str | None, target_name: str | None,
          on_target: str | None, rows: int, as_json: bool, costs_path: str | None) -> None:
    """Time the C runtime on one or more models, side by side (ns per prediction); with --on TARGET, count the
    whole pipeline's instructions of one model trained on raw windows (compiler/features/bench.py)."""
    if on_target is not None:
        if len(model_paths) != 1:
            raise click.UsageError("--on TARGET benches one model")
        from compiler.features.bench_cli import pipeline_bench  # noqa: PLC0415 (QEMU/valgrind only when asked)

        pipeline_bench(model_paths[0], data, on_target, rows, as_json, costs_path)
        return
    if costs_path is not None:
        raise click.UsageError("--costs goes with --on TARGET")
    if click.get_current_context().get_parameter_source("rows").name != "DEFAULT":
        raise click.UsageError("--rows goes with --on TARGET (the timing table runs every row of DATA's test part)")
    num = numeric_for(target_name, numeric)
    table = []
    said: set[str] = set()
    parts: list[tuple[str, np.ndarray]] = []
    for path in model_paths:
        model = fmt.load(path)
        ds, y, idx, part = tasks.rows_for_eval(model, data)
        if ds.note not in said:  # DATA is read once a model: each note once
            said.add(ds.note)
            say_note(ds)
        parts.append((part, idx))
        ev = c_evaluator(model, num)
        pred = ev.predict(ds.X[idx])
        s = tasks.summarize(model, y[idx], pred)
        table.append((path, s["weighted_accuracy"], s["mean_features"], ev.ns_per_prediction(ds.X[idx])))
    if any(p != parts[0][0] or not np.array_equal(i, parts[0][1]) for p, i in parts[1:]):
        rows = ", ".join(f"{len(i)} ({p})" for p, i in parts)
        click.echo(f"note: the models were not trained on the same split of {data}: each runs on its own rows (its "
                   f"test part, or all rows when DATA is not its training set): {rows}; the columns compare "
                   "different rows", err=True)
    base = table[0][3]
    names = [Path(path).name for path in model_paths]
    if len(set(names)) < len(names):  # the same file name in several folders: the paths as given tell them apart
        names = list(model_paths)
    if as_json:
        click.echo(json_text({"models": [{"model": name, "weighted_accuracy": acc, "mean_features": feats,
                                           "ns_per_prediction": ns, "speedup": base / ns, "rows": len(idx),
                                           "part": part}
                                          for name, (_, acc, feats, ns), (part, idx)
                                          in zip(names, table, parts, strict=True)]}))
        return
    click.echo(f"{'model':<30} {'w.acc':>7} {'features':>9} {'ns/pred':>9} {'speedup':>8}")
    for name, (_, acc, feats, ns) in zip(names, table, strict=True):
        click.echo(f"{name:<30} {acc:>7.4f} {feats:>9.2f} {ns:>9.1f} {base / ns:>7.2f}x")


class LazyCommand(click.Command):
    """Stands in for a family's command in `frugalml --help`; the group swaps in the real command
    (importing its module) only when it is invoked."""

    def __init__(self, name: str, ref: str, short_help: str) -> None:
        super().__init__(name, short_help=short_help, help=short_help)
        self.ref = ref

    def load(self) -> click.Command:
        import importlib  # noqa: PLC0415

        module, _, attr = self.ref.partition(":")
        return getattr(importlib.import_module(module), attr)


def _add_family_commands() -> None:
    """Commands a model family adds besides train (e.g. the skyline's profile-costs), imported when run."""
    for extra in EXTRA_COMMANDS:
        cli.add_command(LazyCommand(extra.name, extra.ref, extra.short_help))


_add_family_commands()
cli.add_command(LazyCommand("features", "compiler.features.cli:features_command",
                            "List the features the C runtime computes on raw windows (tiered by cost)."))


def _add_power() -> None:
    """`frugalml power ...` when power_bench is installed (imported when the command runs)."""
    import importlib.util  # noqa: PLC0415

    if importlib.util.find_spec("power_bench") is not None:
        cli.add_command(LazyCommand("power", "power_bench.cli:power",
                                    "Measure joules per prediction with a serial multimeter (list, read, run, ...)."))


_add_power()


SOURCES_DIR_ENV = "FRUGALML_SOURCES_DIR"  # set by benchmarks/common/figures.py while it writes a doc figure


def loaded_repo_modules() -> set[str]:
    """The repository's Python modules this process loaded (paths relative to the repository, none from a
    .venv): what a doc figure records as the code that made it (benchmarks/common/figures.py)."""
    root = Path(__file__).resolve().parents[1]
    files = set()
    for mod in list(sys.modules.values()):
        f = getattr(mod, "__file__", None)
        p = Path(f).resolve() if f else None
        if p is not None and root in p.parents and ".venv" not in p.parts and p.suffix == ".py":
            files.add(str(p.relative_to(root)))
    return files


def _log_loaded_sources(out_dir: str) -> None:
    """Write loaded_repo_modules() to OUT_DIR/<pid>.txt, one path a line: a doc figure whose benchmark runs the
    CLI in subprocesses records the code they ran (tools/check_figures.py)."""
    import os  # noqa: PLC0415

    try:
        (Path(out_dir) / f"{os.getpid()}.txt").write_text("".join(f"{f}\n" for f in sorted(loaded_repo_modules())))
    except OSError:
        pass  # a figure run's bookkeeping must never fail the command


def main() -> None:
    import os  # noqa: PLC0415

    out_dir = os.environ.get(SOURCES_DIR_ENV)
    if out_dir:
        import atexit  # noqa: PLC0415

        atexit.register(_log_loaded_sources, out_dir)
    cli(prog_name="frugalml")


if __name__ == "__main__":
    main()
