"""Kinds nb-static and nb-stop: naive Bayes over the top-k features of an
ordering, without or with early-stopping stop points."""

from __future__ import annotations

from typing import Any

import click
import numpy as np

from compiler.costs import FeatureCosts
from compiler.header import numeric_for, register_emitter
from compiler.kinds import KindSpec, register
from compiler.nb.discretize import parse_bins
from compiler.nb.header import nb_tables
from compiler.options import CV_BELOW, CV_FOLDS, numeric_option, target_option
from compiler.parallel import PARALLEL_OPTIONS, check_jobs, recorded
from compiler.tasks import Task, balanced_validation_accuracy, check_not_trivial
from pyruntime.cli_errors import NumberRange
from pyruntime.format import ModelFile
from pyruntime.nb.model import NB_KINDS


def bins_option(auto: bool, text: str | None = None) -> click.Option:
    """--bins, checked when the command line is parsed (before any data is read); ``auto`` offered by nb-* and
    skyline; ``text``: the help when not nb-*'s."""
    def check(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
        if value is None or (auto and value == "auto"):
            return value
        try:
            parse_bins(value)
        except ValueError:
            forms = "mean-std, quantile:N (2 <= N <= 64) or auto" if auto else "mean-std or quantile:N (2 <= N <= 64)"
            raise click.BadParameter(f"{value!r}: give {forms}") from None
        return value

    if text is None:
        text = ("Discretization: mean-std (the paper's four bins, and the runtime's fastest walk), quantile:N "
                "(N equal-mass bins, 2 <= N <= 64), or auto (the most accurate of mean-std with counts, quantile:8 "
                "with counts and quantile:32 with gaussian entries, judged by 5-fold cross-validation of NB on "
                "every feature on the train and validation parts pooled; mean-std kept unless another beats it by "
                "more than one standard error; often several points more accurate, docs/nb_stop.md, at more "
                "instructions per feature read when it keeps finer bins). [default: mean-std for two classes, "
                "auto for more]")
    return click.Option(["--bins"], default=None, callback=check, help=text)


def table_forms_line(who: str, forms: list[dict[str, Any]]) -> str:
    """The judged table forms (compiler.nb.table_form.choose_table_form's curve) as one stderr line."""
    return (f"{who}: table forms, accuracy of NB on every feature ({forms[0]['judged']}): " +
            ", ".join(f"{f['bins']}/{f['likelihood']} {f['accuracy']:.4f}{' <- kept' if f.get('kept') else ''}"
                      for f in forms) +
            (f" (another form must beat the first by more than {float(forms[0]['margin']):.4f})"
             if "margin" in forms[0] else ""))


LIKELIHOOD_HELP = ("What the table entries log P(bin | class) are estimated from: counts (default), the training "
                   "rows in each bin (the paper's); gaussian, a Gaussian per class and feature integrated over each "
                   "bin, zero-inflated with mean-std bins (with --bins quantile:32 or finer it approaches GaussianNB, "
                   "and fine bins need fewer rows per class than counts)")
NB_TABLE_OPTIONS = [  # skyline's with --base nb (each feature set's model is NB tables)
    bins_option(auto=True, text="Discretization of every feature set's NB tables: mean-std (the paper's four bins), "
                "quantile:N (N equal-mass bins, 2 <= N <= 64) or auto (judged once, as nb-static's --bins auto, by NB "
                "on every feature, and used for every set) [skyline --base nb; default: mean-std for two classes, "
                "auto for more]."),
    click.Option(["--likelihood"], type=click.Choice(["counts", "gaussian"]), default=None,
                 help=LIKELIHOOD_HELP + " [skyline --base nb]."),
]
NB_FORM_OPTIONS = [  # nb-static's and nb-stop's: --bins auto too
    bins_option(auto=True),
    click.Option(["--likelihood"], type=click.Choice(["counts", "gaussian"]), default=None,
                 help=LIKELIHOOD_HELP + "; with --bins auto, the kept form's unless given: then it fixes the "
                 "entries and auto judges the bins."),
]
NB_OPTIONS = [
    click.Option(["--ordering"], type=click.Choice(["auto", "ig", "chi2", "dcp", "greedy", "fcbf"]), default=None,
                 help="Feature ordering [nb-*; default auto: greedy for K > 2 classes (forward selection on the "
                      "validation rows' log-probability of their class; under 200 validation rows on out-of-fold "
                      "scores of the train and validation rows pooled), ig (information gain) for two classes or a "
                      "class of fewer than 5 rows]."),
    click.Option(["--cost-aware/--no-cost-aware"], default=None,
                 help="With --costs that differ, K > 2 classes and the greedy order: each step adds the feature with "
                      "the largest rise in log-probability per unit of what it adds to the cost (a feature group's "
                      "cost paid once) [nb-*; default on; off: the largest rise, the costs only reported]."),
    click.Option(["--budget"], type=click.IntRange(min=1), default=None,
                 help="Features the model may read, k [nb-*; default: chosen on validation, the fewest features "
                      "within --tolerance of the best static accuracy]."),
    click.Option(["--tolerance"], type=NumberRange(0, 1), default=None,
                 help="Validation accuracy the chosen --budget may give up against the best budget, absolute "
                      "[nb-*; default 0.01 for K > 2 classes with the greedy order (every budget up to 100 judged; "
                      "under 200 validation rows out of fold on the pooled rows), else 0 (the best budget of the "
                      "grid 5, 10, 25, 50, ...)]."),
    click.Option(["--folds"], type=click.IntRange(min=1), default=None,
                 help="The small-set rule: judge on stratified K-fold out-of-fold scores of the train and validation "
                      "parts pooled instead of on the validation part alone: nb-stop's stop cuts and threshold, and "
                      "for K > 2 classes the greedy order and the budget, whose final tables are then refitted on "
                      "both parts (two-class tables stay the train part's). For small sets, where one validation "
                      f"row is several points; 1: the validation part alone [nb-*; default {CV_FOLDS} when the "
                      f"validation part has fewer than {CV_BELOW} rows and every class has {CV_FOLDS} rows, else 1]."),
    *NB_FORM_OPTIONS,
]
STOP_OPTIONS = [
    click.Option(["--support"], type=NumberRange(0, 1, max_open=True), default=None,
                 help="Share of running validation rows a stop point must stop [nb-stop; default 0.05]."),
    click.Option(["--performance"], type=NumberRange(0, 1, max_open=True), default=None,
                 help="The paper's p in R2 / relative error margin [nb-stop; default 0.05]."),
    click.Option(["--criterion"], type=click.Choice(["safe", "agree", "paper", "relerr"]), default=None,
                 help="Stop point acceptance rule [nb-stop; default safe; paper = the IJCAI 2016 rule]."),
    click.Option(["--disagreement"], type=NumberRange(0, 1, min_open=True), default=None,
                 help="Bound on (disagreements+3)/stopped rows for --criterion safe [nb-stop; default 0.02 for two "
                      "classes, 0.01 for K > 2; models whose cuts are learned out of fold (--folds; under 200 "
                      "validation rows by default) leave it "
                      "out]."),
    click.Option(["--stop-cost"], type=NumberRange(min=0, finite=True), default=None,
                 help="What one stop check costs, in feature reads: a stop point is kept only if the reads it "
                 "saves on validation outweigh the check every running row pays [nb-stop; default: measured per "
                 "numeric type: 1.5, and 6 for q15 tables of two classes; 0: off]."),
    click.Option(["--numeric"], **numeric_option(
        "The numeric type the tables will be exported as: the stop points are kept for its walk, where a two-class "
        "q15 stop check costs more reads than a float32 one [nb-stop; default: from --target, else float32].")),
    click.Option(["--target"], **target_option(
        "The device the model is for: picks --numeric (cortex-m0/m3: q15) [nb-stop].")),
]


def no_stop_line(est: Any) -> str:
    """nb-stop's one stderr line when no stop point was kept: the model then reads its whole order, as nb-static
    does, and which of the fitted NaiveBayesBudget's rules would let stop points through."""
    bound = {"safe": "a larger --disagreement" if not est.cut_folds_ else "cuts judged on the validation part "
                     "(--folds 1)",
             "paper": "a larger --performance", "relerr": "a larger --performance"}.get(est.criterion)
    knobs = ", ".join(k for k in (bound, "a smaller --support", "a smaller --stop-cost (0: off)") if k)
    return (f"nb-stop: no stop point was kept, so the model reads all {int(est.budget_)} features of its order as "
            f"nb-static does: at no position did the rows a cut stops meet --criterion {est.criterion}, number at "
            f"least --support {est.support:g} of the running rows and skip more reads than the checks cost "
            f"(--stop-cost {est.stop_cost_:g}); {knobs} let more rows stop")


def train_nb(kind: str, task: Task, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415 - sklearn only when training

    budget = opts.get("budget")
    spread = [f"--{name}" for name in ("jobs", "scheduler") if opts.get(name) is not None]
    if spread and (budget is not None or task.n_classes > 2):
        # they spread the two-class budget search (NaiveBayesBudget._choose_budget); ignored here until round 68
        why = ("--budget fixes the budget" if budget is not None
               else f"the {task.n_classes}-class search runs in this process")
        raise click.UsageError(f"{' and '.join(spread)} spread nb's two-class budget search, and there is none to "
                               f"spread here: {why}")
    if budget is not None and budget > task.n_features:
        click.echo(f"warning: --budget {budget} is more than the {task.n_features} features of the data: "
                   f"using {task.n_features}", err=True)
        budget = task.n_features
    est = NaiveBayesBudget(
        budget=budget, ordering=opts.get("ordering", "auto"), tolerance=opts.get("tolerance"),
        bins=opts.get("bins"), likelihood=opts.get("likelihood"),
        early_stopping=kind == "nb-stop", support=opts.get("support", 0.05),
        performance=opts.get("performance", 0.05), criterion=opts.get("criterion", "safe"),
        disagreement=opts.get("disagreement"), stop_cost=opts.get("stop_cost"),
        numeric=numeric_for(opts.get("target"), opts.get("numeric")),
        random_state=task.split.seed, costs=costs, cost_aware=opts.get("cost_aware") is not False,
        folds=opts.get("folds"),
        n_jobs=check_jobs(opts.get("jobs")), scheduler=opts.get("scheduler"),
    )
    if opts.get("cost_aware") is True and costs is None:
        click.echo("warning: --cost-aware without --costs: every feature costs 1, so the greedy order is the plain "
                   "one", err=True)
    X, y = task.data.X, task.y
    est.fit(X[task.train], y[task.train], eval_set=(X[task.validation], y[task.validation]))
    if est.table_forms_:
        click.echo(table_forms_line("nb", est.table_forms_), err=True)
    model = est.model_
    if kind == "nb-stop" and model.n_stops == 0 and int(est.budget_) > 1:
        click.echo(no_stop_line(est), err=True)
    val = model.predict_reference(X[task.validation])
    yv = y[task.validation]
    meta = task.meta()
    meta["training"] = {
        "kind": kind, **recorded(opts),
        "budget_chosen": int(est.budget_), "static_threshold": est.static_threshold_,
        "bins_chosen": est.bins_, "likelihood_chosen": est.likelihood_,
        **({"table_forms": est.table_forms_} if est.table_forms_ else {}),
        "validation_weighted_accuracy": balanced_validation_accuracy(yv, val.label, task.n_classes),
        "validation_accuracy": float(np.mean(val.label == yv)),
        "validation_mean_features": float(val.n_read.mean()),
        "static_curve": {str(k): v for k, v in est.static_curve_.items()},
        # the small-set rule's folds (0: the validation part alone): refit_folds when the tables were refitted on
        # the train and validation parts (K classes; the CLI then calls the validation figures in-sample),
        # cut_folds when the stop cuts were judged out of fold on them
        "refit_folds": int(est.refit_folds_), "cut_folds": int(est.cut_folds_),
        # the numeric type the stop points were kept for and the pay rule's check cost (export-c warns when the
        # tables go out as the other type)
        **({"stop_points_kept": model.n_stops, "stop_numeric": est.numeric, "stop_cost_chosen": est.stop_cost_,
            "disagreement_chosen": est.disagreement_} if kind == "nb-stop" else {}),
        # share of exact zeros per reading position on the training rows: where the generated code
        # (export-c --form code) tests for zero (compiler/nb/code.py)
        "code_hints": {"zero_share": [round(float(v), 4) for v in
                                      (X[task.train][:, model.order.astype(np.intp)] == 0).mean(axis=0)]},
    }
    meta["training"].update(check_not_trivial(
        kind, y[task.validation], val.label, val.n_read, opts,
        "try another --ordering or --bins, or a larger --budget"))
    return ModelFile(kind=kind, tables=model, meta=meta)


for _kind in NB_KINDS:
    register_emitter(_kind, nb_tables)
register(KindSpec("nb-static", "naive Bayes on the top-k features of an ordering", train_nb,
                  NB_OPTIONS + PARALLEL_OPTIONS, multiclass=True))
register(KindSpec("nb-stop", "early-stopping naive Bayes (stop points)", train_nb,
                  NB_OPTIONS + STOP_OPTIONS + PARALLEL_OPTIONS, multiclass=True))
