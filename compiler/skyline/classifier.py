"""Budget index training: ``frugalml train skyline`` (PolyDom and Greedy skylines).

:class:`SkylineClassifier` trains base models on many feature sets, keeps
those on the accuracy/cost skyline at some item size, and indexes them by
size range so that, per call, the most accurate model whose cost fits the
call's budget for that item's size is found by two binary searches
(pyruntime/skyline/index.py, runtime_c/src/skyline/fm_skyline.c).

Methods: ``polydom`` (exact under its accuracy assumption, see
compiler/skyline/search.py), ``greedy-acc`` and ``greedy-cost`` (forward
selection for a range of trade-off weights; cheap to precompute, possibly
sub-optimal). ``brute`` evaluates every feature set (a reference).
"""

from __future__ import annotations

import importlib
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.model_selection import train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_consistent_length, check_is_fitted, check_X_y, column_or_1d, validate_data

from compiler.blas_threads import one_blas_thread
from compiler.costs import FeatureCosts
from compiler.estimators import check_eval_set, check_float32_range, check_split_classes, encode_classes
from compiler.options import CV_FOLDS
from compiler.params import check_flag, check_n_jobs, check_number, check_text
from compiler.skyline import SKYLINE_CV_BELOW
from compiler.skyline.auto import auto_search
from compiler.skyline.index import build_size_index, tie_keys
from compiler.skyline.search import (
    PATIENCE,
    AccuracyOracle,
    SearchResult,
    brute_force_search,
    greedy_search,
    mask_features,
    polydom_search,
    prune_candidates,
    set_coef,
)
from pyruntime.numtext import is_number
from pyruntime.skyline.index import NO_MODEL, SkylineIndex

METHODS = ("auto", "polydom", "greedy-acc", "greedy-cost", "brute")


def make_base(spec: Any = None, random_state: int | None = 0) -> Any:
    """A base classifier from a name (nb, linear, trees), a dotted class path or an estimator (cloned)."""
    if spec is None or spec == "nb":
        from sklearn.naive_bayes import GaussianNB

        return GaussianNB()
    if spec == "linear":
        from compiler.skyline.linear_base import StandardLogistic

        return StandardLogistic()
    if spec == "trees":
        from sklearn.tree import DecisionTreeClassifier

        return DecisionTreeClassifier(max_depth=6, random_state=random_state)
    if isinstance(spec, str):
        module, _, name = spec.rpartition(".")
        if not module:
            raise ValueError(f"unknown base model {spec!r}: use nb, linear, trees or a dotted class path")
        try:
            cls = getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError) as exc:
            raise ValueError(f"cannot import base model {spec!r}: {exc}") from None
        return cls()
    if hasattr(spec, "fit") and hasattr(spec, "predict"):
        return clone(spec)
    raise ValueError(f"base model must be a name or an sklearn estimator, got {type(spec).__name__}")


def per_row(name: str, value: Any, n: int) -> np.ndarray:
    """``value`` (a number, or one per row) as float64 [n]; ValueError naming ``name`` for None, text or a count
    of values other than 1 or n (numpy's broadcast message named neither)."""
    try:
        if value is None or isinstance(value, str):
            raise TypeError
        arr = np.asarray(value, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or one number per row, got {value!r}") from None
    if arr.ndim > 1 or (arr.ndim == 1 and arr.size not in (1, n)):
        raise ValueError(f"{name} has {arr.size} values for {n} rows: give one number or one per row")
    return np.broadcast_to(arr.reshape(-1) if arr.ndim else arr, (n,))


def parse_sizes(sizes: Any) -> tuple[float, float]:
    """The indexed size range [lo, hi] from a list of sizes (or "n1,n2,..."); None means [0, inf)."""
    if sizes is None:
        return 0.0, float("inf")
    if isinstance(sizes, str):
        parts = [s.strip() for s in sizes.split(",") if s.strip()]
        bad = [s for s in parts if not is_number(s)]
        if bad:
            raise ValueError(f"sizes (--sizes) must be comma-separated numbers; {bad[0]!r} is not one")
        sizes = [float(s) for s in parts]
    arr = np.atleast_1d(np.asarray(sizes, dtype=np.float64))
    if arr.size == 0 or not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError("sizes must be finite and >= 0")
    return float(arr.min()), float(arr.max())


@dataclass
class SkylinePrediction:
    """Per-row outcome: labels (undefined where nothing fits), chosen model, its cost, fits mask."""

    labels: np.ndarray
    model: np.ndarray  # int64, NO_MODEL (-1) where nothing fits
    cost: np.ndarray  # float64, 0 where nothing fits
    fits: np.ndarray  # bool

    def __iter__(self):  # unpack as labels, model, cost, fits
        return iter((self.labels, self.model, self.cost, self.fits))


class SkylineClassifier(ClassifierMixin, BaseEstimator):
    """The most accurate model whose feature cost fits each call's budget, for each item size.

    Training: the rows are split into a training and a validation part (``validation_fraction``,
    or ``fit(..., eval_set=...)``); the search scores each feature set by the accuracy of a base model
    trained on the training part and measured on the validation part (the paper's method). When the
    validation part has fewer than ``cv_below`` rows (default 1000, ``SKYLINE_CV_BELOW``), that estimate is
    too noisy to rank feature sets: the search keeps the best of hundreds of scores, so the kept sets are
    those whose validation rows happened to favour them (on sklearn:digits, 360 validation rows, the linear
    base's best set read 20 features at 0.939 test accuracy on split seed 1, 50 at 0.961 cross-validated).
    Each set is then scored by ``cv``-fold cross-validated accuracy over both parts pooled instead (``cv``
    times the training; ``cv_below=0`` or ``cv < 2`` keeps the validation score at every size; until round 58
    the threshold was the sweeps' 200 rows). ``refit``: refit the
    indexed models on both parts after the search (None, the default: only when the sets were scored by
    cross-validation, whose estimates are of models trained on both parts; on the validation path the
    models stay those the validation part scored). The index's accuracies stay the search's estimates.
    On sklearn:wine (36 validation rows; benchmarks/multiclass.py, 5 split seeds) the unbudgeted index
    went from 0.846 to 0.954 test accuracy with cv=5 and the refit. ``patience``: a greedy run (greedy-acc,
    greedy-cost, and auto's greedy part) stops after this many additions in a row that did not raise the
    accuracy (default 3); None runs each to every feature (or ``max_sets``): more sets trained, and on sets
    whose validation accuracy wanders as features are added the best model is found further on (docs/skyline.md).
    """

    def __init__(self, base: Any = "nb", method: str = "polydom", epsilon: float = 0.0,
                 max_sets: int | None = None, sizes: Any = None, costs: Any = None,
                 validation_fraction: float = 0.3, allow_empty: bool = True, random_state: int | None = 0,
                 n_jobs: int | None = None, scheduler: str | None = None, approx: float = 0.0,
                 cv: int = CV_FOLDS, cv_below: int = SKYLINE_CV_BELOW, refit: bool | None = None,
                 patience: int | None = PATIENCE):
        self.base = base
        self.method = method
        self.epsilon = epsilon
        self.max_sets = max_sets
        self.sizes = sizes
        self.costs = costs
        self.validation_fraction = validation_fraction
        self.allow_empty = allow_empty
        self.random_state = random_state
        self.n_jobs = n_jobs  # feature sets trained in parallel (compiler.parallel.run_map); same result
        self.scheduler = scheduler
        self.approx = approx
        self.cv = cv
        self.cv_below = cv_below
        self.refit = refit
        self.patience = patience

    # -- training ------------------------------------------------------------------------
    def _feature_coef(self, d: int) -> np.ndarray:
        costs = self.costs
        if costs is None:
            return FeatureCosts.uniform(d).coef.copy()
        if isinstance(costs, FeatureCosts):
            coef = costs.coef
        else:
            coef = np.asarray(costs, dtype=np.float64)
            if coef.ndim == 1:
                coef = np.column_stack([coef, np.zeros_like(coef), np.zeros_like(coef)])
        coef = np.asarray(coef, dtype=np.float64)
        if coef.shape != (d, 3):
            raise ValueError(f"costs must give one (c0, c1, c2) per feature: expected ({d}, 3), "
                             f"got {coef.shape}")
        if not np.all(np.isfinite(coef)) or np.any(coef < 0):
            raise ValueError("costs must be finite and >= 0")
        return coef

    @one_blas_thread
    def fit(self, X: Any, y: Any, eval_set: tuple[Any, Any] | None = None) -> SkylineClassifier:
        """Search feature sets on a train/validation split (or on eval_set=(X_val, y_val)), build the index.

        The search runs with one BLAS thread: its many small fits (the linear base's L-BFGS-B steps on
        matrices of tens of columns) only contend for a multi-threaded BLAS. Measured through the CLI on
        sklearn:digits, 300 linear sets with three other training runs beside it: 56.9 s with OpenBLAS's 2
        threads, 4.1 s with one, the same model (docs/skyline.md)."""
        if self.method not in METHODS:
            raise ValueError(f"method must be one of {', '.join(METHODS)}, got {self.method!r}")
        check_number("epsilon", self.epsilon, low=0)
        check_number("approx", self.approx, low=0)
        check_number("max_sets", self.max_sets, low=1, integer=True, none_ok=True)
        check_number("patience", self.patience, low=1, integer=True, none_ok=True)
        check_number("cv", self.cv, low=0, integer=True)
        check_number("cv_below", self.cv_below, low=0, integer=True)
        check_flag("refit", self.refit, none_ok=True)
        check_flag("allow_empty", self.allow_empty)
        check_text("scheduler", self.scheduler, none_ok=True)
        if eval_set is None:
            check_number("validation_fraction", self.validation_fraction, low=0, high=1, low_open=True,
                         high_open=True)
        check_n_jobs(self.n_jobs)
        X, y = validate_data(self, X, y, ensure_min_samples=2)  # as fit_classes (X keeps its numeric dtype)
        check_float32_range(X)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError("training data has a single class: nothing to learn (needs 2 classes)")
        if not self.__sklearn_tags__().classifier_tags.multi_class and self.classes_.size > 2:
            raise ValueError(f"Only binary classification is supported with base {self.base!r} "
                             f"({self.classes_.size} classes; use --positive LABEL for one-vs-rest).")
        d = X.shape[1]
        self.feature_coef_ = self._feature_coef(d)
        self.size_range_ = parse_sizes(self.sizes)
        if eval_set is None:
            stratify = np.min(np.unique(y, return_counts=True)[1]) >= 2  # else a plain split (a class of one row)
            if stratify:  # each part needs a row of every class: said here, not as train_test_split's test_size
                check_split_classes(y, "eval_set=(X_val, y_val) avoids that split", float(self.validation_fraction))
            X_tr, X_va, y_tr, y_va = train_test_split(
                X, y, test_size=self.validation_fraction, random_state=self.random_state,
                stratify=y if stratify else None)
        else:
            X_tr, y_tr = X, y
            X_va, y_va = check_eval_set(eval_set)
            X_va, y_va = check_X_y(validate_data(self, X_va, reset=False), y_va)
            check_float32_range(X_va)
            encode_classes(self, y_va, "validation data")  # labels only checked: the base models take them as given
        base = make_base(self.base, self.random_state)
        self.cv_used_ = int(self.cv) if int(self.cv) >= 2 and len(y_va) < int(self.cv_below) else 0
        oracle = AccuracyOracle(base, X_tr, y_tr, X_va, y_va, cv=self.cv_used_, random_state=self.random_state)
        t0 = time.perf_counter()
        result = self._search(oracle, d)
        lo, hi = self.size_range_
        prune_candidates(result.accuracy, self.feature_coef_, lo, hi, result)
        cands = [m for m in result.candidates if self.allow_empty or m != 0]
        self._build(cands, result.accuracy, lo, hi)
        self.precompute_seconds_ = time.perf_counter() - t0
        self.search_ = result
        self.expanded_nodes_ = result.n_evaluated
        self.brute_force_nodes_ = result.n_lattice
        self.refit_used_ = bool(self.cv_used_) if self.refit is None else bool(self.refit)
        fitter = (AccuracyOracle(base, np.concatenate([X_tr, X_va]), np.concatenate([y_tr, y_va]), X_va, y_va)
                  if self.refit_used_ else oracle)
        self.models_ = [fitter.fit_model(m) for m in self.masks_]
        self.majority_ = fitter.majority
        return self

    def _search(self, oracle: AccuracyOracle, d: int) -> SearchResult:
        lo, hi = self.size_range_
        par = {"jobs": self.n_jobs, "scheduler": self.scheduler}
        ref = lo if not np.isfinite(hi) else 0.5 * (lo + hi)
        self.method_ = str(self.method)
        if self.method == "auto":
            res, self.method_ = auto_search(oracle, d, self.feature_coef_, ref, epsilon=float(self.epsilon),
                                            approx=float(self.approx), max_sets=self.max_sets,
                                            patience=self.patience, **par)
            return res
        if self.method == "polydom":
            return polydom_search(oracle, d, float(self.epsilon), self.max_sets, approx=float(self.approx), **par)
        if self.method == "brute":
            return brute_force_search(oracle, d, **par)
        return greedy_search(oracle, self.feature_coef_, ref, self.method, max_sets=self.max_sets,
                             patience=self.patience, **par)

    def _build(self, cands: list[int], accuracy: dict[int, float], lo: float, hi: float) -> None:
        coef = np.array([set_coef(self.feature_coef_, m) for m in cands]).reshape(-1, 3)
        acc = np.array([accuracy[m] for m in cands], dtype=np.float64)
        sized = build_size_index(coef, acc, tie_keys(cands), lo, hi)
        used = sorted({k for sky in sized.skylines for k in sky}, key=lambda k: (coef[k].tolist(), k))
        remap = {k: i for i, k in enumerate(used)}
        self.masks_ = [cands[k] for k in used]
        feats = [mask_features(m) for m in self.masks_]
        ptr = np.zeros(len(feats) + 1, dtype=np.uint32)
        ptr[1:] = np.cumsum([len(f) for f in feats])
        sky_ptr = np.zeros(len(sized.skylines) + 1, dtype=np.uint32)
        sky_ptr[1:] = np.cumsum([len(s) for s in sized.skylines])
        self.index_ = SkylineIndex(
            n_features=int(self.feature_coef_.shape[0]),
            model_coef=coef[used].reshape(-1, 3),
            model_acc=acc[used],
            feat_ptr=ptr,
            feat_idx=np.array([j for f in feats for j in f], dtype=np.uint32),
            breaks=np.array(sized.breaks, dtype=np.float64),
            sky_ptr=sky_ptr,
            sky_model=np.array([remap[k] for s in sized.skylines for k in s], dtype=np.uint32),
            method=self.method_,
        )
        self.n_crossings_ = sized.n_crossings
        self.n_interesting_ = sized.n_interesting

    # -- prediction ----------------------------------------------------------------------
    def lookup(self, budget: Any, size: Any = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Chosen model (NO_MODEL where nothing fits) and its cost, per (budget, size)."""
        check_is_fitted(self, "index_")
        return self.index_.lookup_many(budget, size)

    def predict_budgeted(self, X: Any, budget: Any = np.inf, size: Any = 0.0) -> SkylinePrediction:
        """Labels, chosen model, its cost and whether anything fits, for each row at its budget and
        size (scalars or one per row)."""
        check_is_fitted(self, "index_")
        X = validate_data(self, X, reset=False)
        check_float32_range(X)  # as at fit
        n = X.shape[0]
        b = per_row("budget", budget, n)
        s = per_row("size", size, n)
        if np.any(np.isnan(b)):
            raise ValueError("budget must be a number (inf: no limit), got NaN")
        if not np.all(np.isfinite(s) & (s >= 0)):
            raise ValueError("size must be a finite number >= 0 (the item size the costs are taken at)")
        model, cost = self.index_.lookup_many(b, s)
        labels = np.full(n, self.classes_[0], dtype=self.classes_.dtype)
        for k in np.unique(model):
            rows = model == k
            if k == NO_MODEL:
                continue
            est = self.models_[k]
            if est is None:
                labels[rows] = self.majority_
            else:
                labels[rows] = est.predict(X[rows][:, mask_features(self.masks_[k])])
        return SkylinePrediction(labels, model, cost, model != NO_MODEL)

    def predict(self, X: Any, budget: Any = np.inf, size: Any = 0.0) -> np.ndarray:
        """Labels of the models each row's budget and size select (the most accurate one by default);
        where nothing fits, the first class (see predict_budgeted for which rows)."""
        return self.predict_budgeted(X, budget, size).labels

    def predict_proba(self, X: Any, budget: Any = np.inf, size: Any = 0.0) -> np.ndarray:
        """Class probabilities of the selected models (one-hot for the empty model's majority class and
        where a model has no predict_proba; uniform where nothing fits)."""
        pred = self.predict_budgeted(X, budget, size)
        X = validate_data(self, X, reset=False)
        proba = np.full((X.shape[0], self.classes_.size), 1.0 / self.classes_.size)
        for k in np.unique(pred.model):
            if k == NO_MODEL:
                continue
            rows = pred.model == k
            est = self.models_[k]
            if est is None or not hasattr(est, "predict_proba"):
                onehot = (pred.labels[rows][:, None] == self.classes_[None, :]).astype(np.float64)
                proba[rows] = onehot
                continue
            p = est.predict_proba(X[rows][:, mask_features(self.masks_[k])])
            proba[rows] = 0.0
            for j, c in enumerate(est.classes_):
                proba[rows, int(np.searchsorted(self.classes_, c))] = p[:, j]
        return proba

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.classifier_tags.multi_class = True  # every base predicts K classes (GaussianNB for "nb")
        return tags

    def score(self, X: Any, y: Any, sample_weight: Any = None, budget: Any = np.inf,
              size: Any = 0.0) -> float:
        """Accuracy at a budget; rows where nothing fits count as wrong."""
        y = column_or_1d(y, warn=True)  # a column of labels, as scikit-learn's score takes it
        pred = self.predict_budgeted(X, budget, size)
        check_consistent_length(pred.labels, y, sample_weight)
        ok = (pred.labels == y) & pred.fits
        w = np.ones(len(ok)) if sample_weight is None else np.asarray(sample_weight, dtype=np.float64)
        return float(np.sum(w * ok) / np.sum(w))

    def skyline_accuracy(self, budget: float, size: float = 0.0) -> float:
        """Validation accuracy of the model a budget selects (nan when nothing fits)."""
        model, _ = self.lookup(budget, size)
        return float(self.index_.model_acc[model[0]]) if model[0] != NO_MODEL else float("nan")


def budget_report(clf: SkylineClassifier, X: Any, y: Any, budget: Any, size: Any = 0.0) -> dict[str, Any]:
    """The skyline fields of ``frugalml eval --budget B [--size n] --json``.

    accuracy (rows where nothing fits count as wrong), mean_cost and max_cost
    over the rows (never above the budget), the fraction of rows where nothing
    fits, and how often each model was chosen (by model index, with its features).
    """
    pred = clf.predict_budgeted(X, budget, size)
    y = np.asarray(y)
    fits = pred.fits
    counts = {int(k): int(np.count_nonzero(pred.model == k)) for k in np.unique(pred.model[fits])}
    return {
        "accuracy": float(np.mean((pred.labels == y) & fits)) if len(y) else float("nan"),
        "mean_cost": float(np.mean(pred.cost[fits])) if fits.any() else 0.0,
        "max_cost": float(np.max(pred.cost[fits])) if fits.any() else 0.0,
        "nothing_fits": float(np.mean(~fits)) if len(y) else 0.0,
        "models_chosen": {str(k): {"count": c, "features": mask_features(clf.masks_[k])}
                          for k, c in counts.items()},
    }


def budget_sweep(clf: SkylineClassifier, X: Any, y: Any, budgets: Any, size: Any = 0.0) -> np.ndarray:
    """Test accuracy at each budget (the accuracy-vs-budget curve), rows where nothing fits counted wrong."""
    return np.array([budget_report(clf, X, y, b, size)["accuracy"] for b in np.atleast_1d(budgets)])


def plot_budget_sweep(budgets: Any, curves: dict[str, Any], path: str, title: str = "accuracy vs budget") -> None:
    """Write the accuracy-vs-budget curves (one line per method) as a PNG."""
    plot_curves({name: (budgets, acc) for name, acc in curves.items()}, path, title, "budget")


def plot_curves(curves: dict[str, tuple[Any, Any]], path: str, title: str, xlabel: str,
                ylabel: str = "accuracy") -> None:
    """Write curves (name -> (x, accuracy)) as a PNG, one line each."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for name, (x, acc) in curves.items():
        ax.plot(np.asarray(x), np.asarray(acc), marker="o", ms=3, label=name)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    from compiler.report_plot import save_figure  # noqa: PLC0415 - with matplotlib

    try:
        save_figure(fig, path, dpi=120)
    finally:
        plt.close(fig)
