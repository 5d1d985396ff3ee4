"""Kind ``skyline``: a budget index over models on different feature sets
(PolyDom / Greedy skylines, compiler/skyline/classifier.py), compiled with each indexed
model's own runtime tables (pyruntime/skyline/model.py, fm_skymodel.h).

``--base nb`` trains every feature set's model as a static naive Bayes
(compiler.nb.train.NaiveBayesBudget over all the set's features, no early
stopping: the accuracies the search sees are those of the deployed tables);
``--base linear`` a logistic regression (compiler.skyline.linear_base, fitted on standardised columns)
exported as a sparse linear scorer.
With K > 2 classes every feature set's model is a K-class static naive Bayes
(base ``nb``: fm_nbk tables, argmax of the K class sums) or a multinomial
logistic regression (base ``linear``: K linear scorers, argmax, FM_SKY_LINEARK;
the paper's multi-class black box is a linear scorer per class too); the
index, the costs and the budget rule are those of two classes.
Other bases (``trees``, dotted sklearn classes) can be searched with
compiler.skyline.classifier.SkylineClassifier but have no runtime tables: training this
kind with them is a usage error.

Per call the runtime picks the most accurate model whose cost polynomial at
the item's size fits the call's budget; ``predict(X)`` without a budget uses
the stored ``--default-budget`` (default +inf: the best model) and
``--default-size``.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import click
import numpy as np

from compiler.costs import FeatureCosts
from compiler.header import register_emitter
from compiler.kinds import BudgetEval, KindSpec, register, register_budget_eval
from compiler.nb.kind import NB_TABLE_OPTIONS, table_forms_line
from compiler.options import CV_FOLDS
from compiler.parallel import PARALLEL_OPTIONS, check_jobs, recorded
from compiler.skyline import SKYLINE_CV_BELOW
from compiler.skyline.header import skyline_tables
from compiler.tasks import TrivialModelError, check_not_trivial
from pyruntime.cli_errors import NumberRange
from pyruntime.evaluators import c_evaluator, reference_evaluator
from pyruntime.format import ModelFile
from pyruntime.linear import LinearScorer
from pyruntime.multilinear import MultiLinear
from pyruntime.nb.model import NBModel
from pyruntime.nb.multi import NBMultiModel
from pyruntime.result import Predictions
from pyruntime.skyline.index import poly_cost
from pyruntime.skyline.model import SkylineModel

EXPORTABLE = ("nb", "linear")
ALWAYS = 1 << 62  # --folds K >= 2: a cv_below above any validation part


class MethodChoice(click.Choice):
    """``auto`` or a search method of compiler.skyline.classifier.METHODS (but brute), looked up on first use:
    the classifier imports scikit-learn, which the CLI does not load at start-up."""

    def __init__(self) -> None:
        super().__init__(["auto"])

    @property  # type: ignore[override]
    def choices(self) -> list[str]:
        from compiler.skyline.classifier import METHODS  # noqa: PLC0415 - scikit-learn

        return [m for m in METHODS if m != "brute"]

    @choices.setter
    def choices(self, value: list[str]) -> None:
        pass

SKYLINE_OPTIONS = [
    click.Option(["--base"], default=None,
                 help="Model trained on each feature set: nb or linear (exportable); trees or a dotted "
                      "sklearn class are rejected (no runtime tables) [skyline; default nb]."),
    click.Option(["--method"], type=MethodChoice(), default=None,
                 help="Feature-set search: polydom (exact, at most 24 features), greedy-acc or greedy-cost; auto: "
                      "picked by the problem's size within about a minute (one model is timed: exact polydom "
                      "when the lattice fits, else polydom capped, then greedy-acc) [skyline; default auto]."),
    click.Option(["--epsilon"], type=NumberRange(min=0, finite=True), default=None,
                 help="PolyDom anti-monotonicity tolerance: exact search when more features can hurt accuracy "
                      "by up to this much (trains more sets) [skyline; default 0]."),
    click.Option(["--approx"], type=NumberRange(min=0, finite=True), default=None,
                 help="PolyDom approximate mode: prune with a(F) >= a(H) - APPROX, losing at most APPROX of "
                      "validation accuracy against the exact skyline (trains fewer sets) [skyline; default 0]."),
    click.Option(["--max-sets"], type=click.IntRange(min=1), default=None,
                 help="Cap on the feature sets the search trains [skyline]."),
    click.Option(["--patience"], type=click.IntRange(min=0), default=None,
                 help="Greedy searches (greedy-acc, greedy-cost, auto's greedy part): stop a run after N added "
                      "features in a row that did not raise validation accuracy; 0: run every feature in (d (d + 1) "
                      "/ 2 sets a run: slower, and the best model may lie further on) [skyline; default 3]."),
    click.Option(["--folds"], type=click.IntRange(min=1), default=None,
                 help="Score each feature set by stratified K-fold cross-validation on the train and validation "
                      "parts pooled (the indexed models then refitted on both) instead of on the validation part "
                      "alone: the search keeps the best of many scores, and on a small validation part those are the "
                      f"sets its rows happen to favour. K times the fits; 1: the validation part alone [skyline; "
                      f"default {CV_FOLDS} when the validation part has fewer than {SKYLINE_CV_BELOW} rows, else 1]."),
    click.Option(["--sizes"], default=None,
                 help="Comma-separated item sizes; the index covers their range [skyline; default 0 .. inf]."),
    click.Option(["--default-budget"], type=NumberRange(), default=None,
                 help="Budget of predict(X) / FM_PREDICT_VEC [skyline; default +inf = the best model]."),
    click.Option(["--default-size"], type=NumberRange(min=0), default=None,
                 help="Item size of predict(X) / FM_PREDICT_VEC [skyline; default: the smallest --sizes, or 0]."),
    click.Option(["--no-empty-model"], is_flag=True, default=False,
                 help="Do not index the empty feature set (majority class, cost 0) [skyline]."),
]


def folds_settings(folds: int | None) -> dict[str, int]:
    """SkylineClassifier's cv and cv_below for --folds: None, the size rule (CV_FOLDS folds under
    SKYLINE_CV_BELOW validation rows); 1, the validation part at every size; K >= 2, K folds at every size."""
    if folds is None:
        return {"cv": CV_FOLDS, "cv_below": SKYLINE_CV_BELOW}
    return {"cv": int(folds), "cv_below": ALWAYS} if int(folds) >= 2 else {"cv": 0, "cv_below": 0}


def base_estimator(base: str, d: int, seed: int, opts: dict[str, Any] | None = None) -> Any:
    """The sklearn-style estimator trained on each feature set, for an exportable base (``opts``: the CLI's,
    --bins and --likelihood for nb)."""
    opts = opts or {}
    if base != "nb" and ("bins" in opts or "likelihood" in opts):
        raise click.UsageError("--bins and --likelihood apply to --base nb only")
    if base == "nb":
        from compiler.nb.train import NaiveBayesBudget  # noqa: PLC0415 - scikit-learn

        # every feature of the set: the order only sets the summation order, ig the cheapest to find
        return NaiveBayesBudget(budget=max(int(d), 1), ordering="ig", early_stopping=False, random_state=seed,
                                bins=opts.get("bins", "mean-std"), likelihood=opts.get("likelihood", "counts"))
    if base == "linear":
        from compiler.skyline.linear_base import StandardLogistic  # noqa: PLC0415 - scikit-learn

        return StandardLogistic()
    raise click.UsageError(f"--base {base} has no runtime tables and cannot be exported as a skyline model "
                           f"(use --base {' or '.join(EXPORTABLE)}; other bases: "
                           "compiler.skyline.classifier.SkylineClassifier)")


def runtime_tables(base: str, est: Any, cols: list[int], d: int, majority: int, n_classes: int = 2,
                   classes: Sequence[Any] | None = None) -> NBModel | NBMultiModel | LinearScorer | MultiLinear:
    """One indexed model's runtime tables over the full input vector (reads only ``cols``); K > 2 classes:
    K-class NB tables or K class scorers (the empty set: no features, the majority class's prior or bias
    1, 0 for the others). ``majority`` is a class index; ``classes`` the labels the models were fitted on
    (default 0 .. K-1, the CLI's class indices)."""
    sign = 1.0 if int(majority) == 1 else -1.0
    if base == "nb" and n_classes > 2:
        if est is None:
            z = np.zeros(0)
            return NBMultiModel(n_features=d, n_classes=n_classes, order=z, zero_bin=z, edge_start=[0], edges=z,
                                table_start=[0], d=np.zeros((0, n_classes)),
                                d0=(np.arange(n_classes) == int(majority)).astype(np.float32))
        mk: NBMultiModel = est.model_
        return NBMultiModel(**{**mk.to_dict(), "n_features": d, "order": np.asarray(cols)[mk.order], "costs": None})
    if base == "nb":
        if est is None:
            z = np.zeros(0)
            return NBModel(n_features=d, order=z, zero_bin=z, edge_start=[0], edges=z, table_start=[0], d=z,
                           d0=sign, threshold=0.0)
        m: NBModel = est.model_
        return NBModel(**{**m.to_dict(), "n_features": d, "order": np.asarray(cols)[m.order], "costs": None})
    if n_classes > 2:
        return linear_k_tables(est, cols, d, majority, n_classes, classes)
    if est is None:
        return LinearScorer(n_features=d, feature=np.zeros(0), weight=np.zeros(0), bias=sign)
    require_binary(est, classes)
    return LinearScorer(n_features=d, feature=np.asarray(cols), weight=est.coef_[0], bias=float(est.intercept_[0]))


def linear_k_tables(est: Any, cols: list[int], d: int, majority: int, n_classes: int,
                    classes: Sequence[Any] | None = None) -> MultiLinear:
    """K class scorers of one feature set's multinomial logistic regression (``classes``, default 0 .. K-1)."""
    if est is None:
        z = np.zeros(0)
        return MultiLinear(tuple(LinearScorer(n_features=d, feature=z, weight=z, bias=float(c == int(majority)))
                                 for c in range(n_classes)))
    if list(getattr(est, "classes_", [])) != list(range(n_classes) if classes is None else classes):
        raise ValueError(f"skyline: every feature set's training part must hold all {n_classes} classes")
    return MultiLinear(tuple(LinearScorer(n_features=d, feature=np.asarray(cols), weight=est.coef_[c],
                                          bias=float(est.intercept_[c])) for c in range(n_classes)))


def require_binary(est: Any, classes: Sequence[Any] | None = None) -> None:
    expected = [0, 1] if classes is None else list(classes)
    if list(getattr(est, "classes_", expected)) != expected:
        raise ValueError(f"skyline: every feature set's training part must hold both classes {expected[0]!r} and "
                         f"{expected[1]!r}")


def _msgpack_count(n: int) -> int | float:
    """2^d feature sets: an int while msgpack can store it, else a float (d > 63), inf beyond float's range
    (d >= 1024, where float() overflows)."""
    if n < 2**63:
        return int(n)
    try:
        return float(n)
    except OverflowError:
        return math.inf


def nb_form(task: Any, opts: dict[str, Any], seed: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """--base nb's table form: (the options every feature set's NB is fitted with, what the model file records).
    --bins as given; auto (the default for K > 2 classes, as nb-static's) is judged once, by NB on every feature
    (compiler.nb.table_form: the paper's mean-std bins with counts unless quantile:8 with counts or quantile:32 with
    Gaussian entries beats it by more than a standard error, 5-fold cross-validated on the train and validation
    parts pooled), and that form is used for every set. Until round 48 the K-class skyline kept the paper's four
    bins: on keel:vowel (11 classes) its best model read 9 features at 0.43 test accuracy where GaussianNB gets
    0.71 (docs/skyline.md)."""
    from compiler.nb.train import default_bins  # noqa: PLC0415 - scikit-learn

    if (opts.get("bins") or default_bins(task.n_classes)) != "auto":
        return opts, {}
    from compiler.nb.table_form import choose_table_form  # noqa: PLC0415

    X, y = task.data.X, task.y
    bins, likelihood, forms = choose_table_form(X[task.train], y[task.train], X[task.validation], y[task.validation],
                                                task.n_classes, seed, likelihood=opts.get("likelihood"))
    click.echo(table_forms_line("skyline base nb", forms), err=True)
    return ({**opts, "bins": bins, "likelihood": likelihood},
            {"bins_chosen": bins, "likelihood_chosen": likelihood, "table_forms": forms})


def train_skyline(kind: str, task: Any, opts: dict[str, Any], costs: FeatureCosts | None) -> ModelFile:
    from compiler.skyline.classifier import SkylineClassifier  # noqa: PLC0415 - scikit-learn
    from compiler.skyline.search import MAX_LATTICE_FEATURES, PATIENCE, mask_features  # noqa: PLC0415

    X, y = task.data.X, task.y
    d = int(X.shape[1])
    method = str(opts.get("method", "auto"))
    if method == "polydom" and d > MAX_LATTICE_FEATURES:
        raise click.UsageError(f"--method polydom walks all 2^d feature sets and takes at most {MAX_LATTICE_FEATURES} "
                               f"features; the data has {d}: use --method greedy-acc or greedy-cost (or auto)")
    if "patience" in opts and method == "polydom":
        raise click.UsageError("--patience applies to the greedy searches (greedy-acc, greedy-cost, auto's greedy "
                               "part); --method polydom has no runs to stop")
    base = str(opts.get("base", "nb"))
    seed = int(task.split.seed)
    est_opts, form = nb_form(task, opts, seed) if base == "nb" else (opts, {})
    est = base_estimator(base, d, seed, est_opts)
    coef = (costs.coef if costs is not None else FeatureCosts.uniform(d).coef).astype(np.float64)
    clf = SkylineClassifier(base=est, method=method, epsilon=float(opts.get("epsilon", 0.0)),
                            max_sets=opts.get("max_sets"), sizes=opts.get("sizes"), costs=coef,
                            allow_empty=not opts.get("no_empty_model", False), random_state=seed,
                            n_jobs=check_jobs(opts.get("jobs")), scheduler=opts.get("scheduler"),
                            approx=float(opts.get("approx", 0.0)),
                            patience=(opts["patience"] or None) if "patience" in opts else PATIENCE,
                            **folds_settings(opts.get("folds")))
    clf.fit(X[task.train], y[task.train], eval_set=(X[task.validation], y[task.validation]))
    models = [runtime_tables(base, m, mask_features(mask), d, clf.majority_, task.n_classes)
              for m, mask in zip(clf.models_, clf.masks_, strict=True)]
    lo, _ = clf.size_range_
    tables = SkylineModel(index=clf.index_, base=base, models=models,
                          default_budget=float(opts.get("default_budget", math.inf)),
                          default_size=float(opts.get("default_size", lo)),
                          input_absmax=float(np.max(np.abs(X[task.train]), initial=0.0)))
    record: dict[str, Any] = {"kind": kind, **recorded(opts)}
    record.update({
        "base": base, "method": clf.method_, "expanded_nodes": int(clf.expanded_nodes_),
        "brute_force_nodes": _msgpack_count(clf.brute_force_nodes_),
        "precompute_seconds": float(clf.precompute_seconds_),
        "cv_folds": int(clf.cv_used_), "refit": bool(clf.refit_used_),
        **({"refit_folds": int(clf.cv_used_)} if clf.refit_used_ and clf.cv_used_ else {}),
        **form,
        "n_models": tables.n_models, "n_ranges": tables.index.n_ranges, "index_bytes": tables.index.nbytes(),
        "models": [{"features": mask_features(mask), "validation_accuracy": float(a),
                    "cost_coef": [float(c) for c in cf]}
                   for mask, a, cf in zip(clf.masks_, clf.index_.model_acc, clf.index_.model_coef, strict=True)],
    })
    best = reference_evaluator(ModelFile(kind=kind, tables=tables, meta={}), "float32").predict(
        X[task.validation], math.inf, tables.default_size)
    record.update(check_not_trivial(kind, y[task.validation], best.label, best.n_read, opts,
                                    "its most accurate model is no better than a constant: check the data and "
                                    "the --base model"))
    Xva, yva = X[task.validation], y[task.validation]
    val = tables.predict_reference(Xva)  # at the stored default budget and size: what predict(X) answers
    if bool(np.all(val.label < 0)) and not opts.get("allow_trivial"):  # every call of predict would answer "none"
        cheapest = float(np.min(poly_cost(tables.index.model_coef, tables.default_size), initial=math.inf))
        raise TrivialModelError(f"{kind}: no model fits the default budget {tables.default_budget:g} at size "
                                f"{tables.default_size:g} (the cheapest costs {cheapest:g} there), so every "
                                "prediction would be \"nothing fits\": raise --default-budget, drop "
                                "--no-empty-model, or give --allow-trivial to write it anyway")
    record.update({"validation_accuracy": float(np.mean(val.label == yva)),
                   "validation_mean_cost": float(np.mean(val.cost)),
                   "validation_mean_features": float(np.mean(val.n_read))})
    click.echo(f"skyline ({clf.method_}, base {base}): {tables.n_models} models over {tables.index.n_ranges} size "
               f"range(s); trained {clf.expanded_nodes_} of 2^{d} feature sets", err=True)
    return task.model_file(kind, tables, record)


# -- evaluation -----------------------------------------------------------------------------

def _evaluator(model: ModelFile, numeric: str) -> Any:
    try:
        return c_evaluator(model, numeric)
    except ImportError:  # no compiled binding: the numpy reference gives the same answers
        return reference_evaluator(model, numeric)


def _report(tables: SkylineModel, y: np.ndarray, pred: Predictions, budget: float) -> dict[str, Any]:
    fits = pred.stage < tables.n_models
    n = int(y.size)
    cost = np.asarray(pred.cost, np.float64)
    max_cost = float(cost[fits].max()) if fits.any() else 0.0
    if fits.any() and max_cost > budget:  # the runtime guarantees this; a violation is a bug, never a figure
        raise RuntimeError(f"skyline runtime spent {max_cost} above the budget {budget}")
    counts = np.bincount(pred.stage[fits].astype(np.int64), minlength=tables.n_models)
    return {
        "budget": budget,
        "accuracy": float(np.mean((pred.label == y) & fits)) if n else 0.0,
        "mean_cost": float(cost[fits].mean()) if fits.any() else 0.0,
        "max_cost": max_cost,
        "nothing_fits": float(np.mean(~fits)) if n else 0.0,
        "models_chosen": {str(k): {"count": int(c), "features": tables.index.features_of(k).tolist()}
                          for k, c in enumerate(counts) if c},
    }


def sweep_budgets(tables: SkylineModel, size: float) -> np.ndarray:
    """Budgets where the choice can change: every model's cost at ``size`` (and 0), ascending."""
    costs = poly_cost(tables.index.model_coef, size) if tables.n_models else np.zeros(0)
    return np.unique(np.concatenate([[0.0], np.asarray(costs, np.float64)]))


def skyline_eval(model: ModelFile, X: np.ndarray, y: np.ndarray, budget: float | None = None,
                 size: float | None = None, sweep: bool | Sequence[float] = False,
                 plot_path: str | None = None, numeric: str = "float32") -> dict[str, Any]:
    """The skyline fields of ``frugalml eval MODEL DATA --budget B [--size n] [--budget-sweep] --json``.

    budget/size default to the model's stored defaults. Returns accuracy (rows where nothing fits count
    as wrong), mean_cost and max_cost (<= budget) of the rows a model answered, nothing_fits (fraction),
    models_chosen (model index -> count and features). With ``sweep`` (True: every model's cost at the
    size; or explicit budgets) adds ``budget_sweep``: one such record per budget, ascending; with
    ``plot_path`` the accuracy-vs-budget curve is also written as a PNG there.
    """
    if model.kind != "skyline":
        raise ValueError(f"budget evaluation needs a skyline model, not {model.kind!r}")
    tables: SkylineModel = model.tables
    b = tables.default_budget if budget is None else float(budget)
    s = tables.default_size if size is None else float(size)
    if math.isnan(b) or not math.isfinite(s) or s < 0:
        raise ValueError("--budget must be a number and --size a finite number >= 0")
    ev = _evaluator(model, numeric)
    y = np.asarray(y)
    out = _report(tables, y, ev.predict(X, b, s), b)
    out["size"] = s
    if sweep is not False and sweep is not None:
        budgets = sweep_budgets(tables, s) if sweep is True else np.unique(np.asarray(sweep, np.float64))
        curve = [{k: v for k, v in _report(tables, y, ev.predict(X, float(bb), s), float(bb)).items()
                  if k != "models_chosen"} for bb in budgets]
        out["budget_sweep"] = curve
        if plot_path:
            from compiler.skyline.classifier import plot_budget_sweep  # noqa: PLC0415 - matplotlib

            plot_budget_sweep([c["budget"] for c in curve], {"skyline": [c["accuracy"] for c in curve]},
                              plot_path, title=f"accuracy vs budget (size {s:g})")
            out["plot"] = str(plot_path)
    return out


def skyline_at(model: ModelFile, budget: float | None, size: float | None) -> ModelFile:
    """The model with default budget/size replaced (None keeps the stored one), for `eval --budget/--size`:
    every figure of the report then describes the predictions at that budget. A budget must be a number
    >= 0 (+inf: the most accurate model) and a size a finite number >= 0."""
    if model.kind != "skyline":
        raise ValueError(f"budget evaluation needs a skyline model, not {model.kind!r}")
    t: SkylineModel = model.tables
    if budget is not None and (math.isnan(budget) or budget < 0):
        raise ValueError(f"--budget must be a number >= 0 (the cost one prediction may spend), got {budget:g}")
    if size is not None and (not math.isfinite(size) or size < 0):
        raise ValueError(f"--size must be a finite number >= 0, got {size:g}")
    tables = dataclasses.replace(t, default_budget=t.default_budget if budget is None else float(budget),
                                 default_size=t.default_size if size is None else float(size))
    return dataclasses.replace(model, tables=tables)


def skyline_sweep(model: ModelFile, X: np.ndarray, y: np.ndarray, sweep: bool, plot_path: str | None,
                  numeric: str) -> dict[str, Any]:
    """`eval --budget-sweep [--plot PNG]` of a skyline model at its (possibly replaced) default size."""
    if not sweep:
        if plot_path:
            raise ValueError("--plot needs --budget-sweep")
        return {}
    t: SkylineModel = model.tables
    rep = skyline_eval(model, X, y, budget=t.default_budget, size=t.default_size, sweep=True, plot_path=plot_path,
                       numeric=numeric)
    return {k: rep[k] for k in ("budget_sweep", "plot") if k in rep}


def skyline_metrics(model: ModelFile, X: np.ndarray, y: np.ndarray, pred: Predictions,
                    numeric: str) -> dict[str, Any]:
    """eval --json extras at the stored default budget (null when +inf) and size."""
    tables: SkylineModel = model.tables
    r = _report(tables, np.asarray(y), pred, tables.default_budget)
    budget = r["budget"] if math.isfinite(r["budget"]) else None  # strict JSON: +inf is reported as null
    return {"budget": budget, "size": tables.default_size, "max_cost": r["max_cost"],
            "nothing_fits": r["nothing_fits"], "models_chosen": r["models_chosen"],
            "n_models": tables.n_models, "n_ranges": tables.index.n_ranges}


register_emitter("skyline", skyline_tables)
register_budget_eval("skyline", BudgetEval(skyline_at, skyline_sweep))
register(KindSpec("skyline", "Budget index (PolyDom / Greedy skylines): per call, the most accurate model "
                             "whose feature cost fits the budget at the item's size",
                  train_skyline, SKYLINE_OPTIONS + NB_TABLE_OPTIONS + PARALLEL_OPTIONS, skyline_metrics,
                  multiclass=True))
