"""Shared pieces of the gated low-cost / high-cost classifiers (Nan & Saligrama, NIPS 2017).

A gated model has three parts: a gate g, a low-cost model f1 and a high-cost model f0.
The gate decides per input whether f1 answers ("easy") or f0 does ("hard").

This module holds what ADAPT-LIN, ADAPT-GBRT and the L1 baseline have in common. Public API:

- ``make_f0(kind, random_state)`` -> an (unfitted, or a user's already fitted) high-accuracy estimator.
- ``fit_f0(kind_or_estimator, X, y, random_state)`` -> ``PrefitF0`` (fitted f0 + out-of-fold
  probability of the true label on the training rows, used by the q step).
- ``q_step(A, B, p_full)`` -> ``(q, beta)``: the closed-form q update with the budget on mean q.
- ``check_binary_Xy(X, y)`` / ``check_X(X, n_features)``: input validation with clear ValueErrors.
- ``SparseLinear`` + ``score_f32``: the sparse linear scorer and its exact float32 arithmetic,
  shared with the C runtime (score = bias, then score += w[k] * x[feature[k]] in stored order,
  every operation rounded to float32; label 1 iff score > threshold).
- ``sweep(factory, p_full_grid, gamma_grid, ...)``: fit a grid, report the accuracy/cost curve,
  choose a model (best within a budget, or cheapest within ``tolerance`` of f0's accuracy).

Notation. z = 1 means "sent to f0". For a training row i with gate logit s_i (log-odds of z = 1):
A_i = loss of answering with f1 plus -log P_g(z = 0 | x_i) and B_i = -log P_f0(y_i | x_i) plus
-log P_g(z = 1 | x_i). The q step minimises sum_i (1 - q_i) A_i + q_i B_i - H(q_i) subject to
mean(q) <= p_full, whose solution is q_i = 1 / (1 + exp(B_i - A_i + beta)), beta >= 0.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.base import clone
from sklearn.calibration import CalibratedClassifierCV
from sklearn.ensemble import GradientBoostingClassifier, RandomForestClassifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import StratifiedKFold
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC
from sklearn.utils.validation import check_is_fitted

from compiler.costs import FeatureCosts, cost_vector
from compiler.gated.f0_spec import F0_KINDS, F0Error, f0_spec
from compiler.parallel import run_map
from compiler.standardize import Standardizer

# ----------------------------------------------------------------------------------------------
# input validation


def check_X(X: Any, n_features: int | None = None) -> np.ndarray:
    """Return X as a 2-D float64 array; ValueError on wrong shape, NaN/inf or feature count."""
    try:
        arr = np.asarray(X, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"X must be a numeric 2-D array: {exc}") from None
    if arr.ndim != 2:
        raise ValueError(f"X must be a 2-D array (n_samples, n_features), got {arr.ndim}-D shape {arr.shape}")
    if arr.shape[0] == 0 or arr.shape[1] == 0:
        raise ValueError(f"X must have at least one sample and one feature, got shape {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError("X contains NaN or infinite values")
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(f"X has {arr.shape[1]} features, but the model was fitted with {n_features}")
    return arr


def check_binary_Xy(X: Any, y: Any, est: Any = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate training data of a binary task (through scikit-learn's validate_data when est, the
    estimator being fitted, is given: it then gets classes_ and n_features_in_).

    Returns (X float64, y01 int8 with 1 = classes[1], classes).
    """
    if est is not None and (hasattr(X, "tocsr") or hasattr(X, "__array_namespace__") and not hasattr(X, "dtype")):
        from compiler.estimators import fit_binary  # sparse input: scikit-learn's message

        fit_binary(est, X, y)
    if est is not None:  # scikit-learn's validation first: its messages, n_features_in_, classes_
        from compiler.estimators import fit_binary

        X, y01 = fit_binary(est, X, y)
        return X, y01.astype(np.int8), est.classes_
    Xa = check_X(X)
    ya = np.asarray(y)
    if ya.ndim != 1:
        raise ValueError(f"y must be a 1-D array of labels, got shape {ya.shape}")
    if ya.shape[0] != Xa.shape[0]:
        raise ValueError(f"X and y have different numbers of samples: {Xa.shape[0]} and {ya.shape[0]}")
    if ya.dtype.kind == "f" and not np.all(np.isfinite(ya)):
        raise ValueError("y contains NaN or infinite values")
    classes = np.unique(ya)
    if classes.size < 2:
        raise ValueError(f"y has a single class ({classes[0]!r}); need two classes")
    if classes.size > 2:
        raise ValueError(f"y has {classes.size} classes; this classifier is binary (use one-vs-rest)")
    y01 = (ya == classes[1]).astype(np.int8)
    return Xa, y01, classes


def check_Xy(X: Any, y: Any, est: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """check_binary_Xy for K >= 2 classes (scikit-learn's validation; est gets classes_ and
    n_features_in_): (X float64, y as the index into classes (int8 0/1 for two classes), classes)."""
    from compiler.estimators import fit_classes  # noqa: PLC0415

    Xa, yidx = fit_classes(est, X, y)
    return Xa, (yidx.astype(np.int8) if est.classes_.size == 2 else yidx), est.classes_


@dataclass
class GatedInputs:
    """What both linear gated trainers start from: the checked data, the costs, f0 and the
    standardisation (``Xs = std.transform(X)``) their L1 fits run on."""

    X: np.ndarray
    y: np.ndarray
    classes: np.ndarray
    costs: np.ndarray
    f0: PrefitF0
    std: Standardizer
    Xs: np.ndarray


def prepare_gated(est: Any, X: Any, y: Any) -> GatedInputs:
    """check_Xy, the cost vector and f0 (fitted, or the caller's PrefitF0 for the same rows)
    for a linear gated estimator ``est`` (with ``costs``, ``hpc`` and ``random_state``)."""
    Xa, y01, classes = check_Xy(X, y, est)
    n, d = Xa.shape
    costs = cost_vector(est.costs, d)
    f0 = fit_f0(est.hpc, Xa, y01, classes, est.random_state)
    if f0.label_proba.shape[0] != n:
        raise ValueError(f"prefit hpc has probabilities for {f0.label_proba.shape[0]} rows, X has {n}")
    std = Standardizer(Xa)
    return GatedInputs(Xa, y01, classes, costs, f0, std, std.transform(Xa))


# ----------------------------------------------------------------------------------------------
# the high-cost model f0


def make_f0(kind: Any = "rf", random_state: int | None = 0, n_estimators: int = 100) -> Any:
    """The high-accuracy model f0, trained for accuracy regardless of cost.

    kind: "rf" (random forest: 100 trees of unbounded depth), "gbrt" (gradient boosting: 100 trees of
    depth 3), either sized as NAME:TREES[:DEPTH] (f0_spec), "svm-rbf" (standardised RBF SVM with Platt
    probabilities), a path to a pickled scikit-learn estimator, or an estimator instance. A pickled
    estimator may be fitted already (then it is used as is) or not (then it is fitted).
    """
    if not isinstance(kind, (str, Path)):
        _check_estimator(kind, "hpc")
        return kind
    spec = f0_spec(kind)
    if spec is not None and spec[0] == "rf":
        return RandomForestClassifier(n_estimators=spec[1] or n_estimators, max_depth=spec[2],
                                      random_state=random_state, n_jobs=1)
    if spec is not None and spec[0] == "gbrt":
        return GradientBoostingClassifier(n_estimators=spec[1] or n_estimators, max_depth=spec[2] or 3,
                                          random_state=random_state)
    if kind == "svm-rbf":
        # Platt probabilities from 5-fold sigmoid calibration of one SVC refitted on all rows: what
        # SVC(probability=True) did, whose parameter scikit-learn 1.9 deprecated (removed in 1.11)
        svc = SVC(kernel="rbf", random_state=random_state)
        return make_pipeline(StandardScaler(), CalibratedClassifierCV(svc, method="sigmoid", cv=5, ensemble=False))
    path = Path(kind)
    if not path.is_file():
        raise F0Error(f"hpc must be one of {', '.join(F0_KINDS)} (rf and gbrt sized as NAME:TREES[:DEPTH]) or a "
                      f"pickled estimator file; {str(kind)!r} "
                      "is neither (file not found)")
    try:
        with path.open("rb") as fh:
            est = pickle.load(fh)  # noqa: S301 - the user's own model file
    except Exception as exc:  # noqa: BLE001 - any unpickling failure is a bad file
        raise F0Error(f"cannot load pickled hpc model {str(path)!r}: {exc}") from None
    _check_estimator(est, f"pickled hpc model {str(path)!r}")
    return est


def _check_estimator(est: Any, what: str) -> None:
    missing = [m for m in ("fit", "predict", "predict_proba") if not callable(getattr(est, m, None))]
    if missing:
        raise F0Error(f"{what} is not a classifier estimator (no {', '.join(missing)}): {type(est).__name__}")


def is_fitted(est: Any) -> bool:
    try:
        check_is_fitted(est)
    except (NotFittedError, TypeError):
        return False
    return True


@dataclass
class PrefitF0:
    """A fitted f0 and, for each training row, the probability f0 gives to the true label.

    ``label_proba`` is out-of-fold when f0 was fitted here (k-fold clones), so that the q step does
    not trust f0's training-set overconfidence. ``kind`` is the descriptor string ("rf", "gbrt",
    "svm-rbf", "pickle" or the estimator's class name).
    """

    estimator: Any
    label_proba: np.ndarray
    kind: str
    features: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int32))


def _positive_proba(est: Any, X: np.ndarray, positive: Any) -> np.ndarray:
    proba = np.asarray(est.predict_proba(X), dtype=np.float64)
    classes = list(getattr(est, "classes_", [0, 1]))
    if positive not in classes:
        raise F0Error(f"hpc model does not know class {positive!r} (its classes: {classes})")
    return proba[:, classes.index(positive)]


def fit_f0(kind: Any, X: np.ndarray, y01: np.ndarray, classes: np.ndarray, random_state: int | None = 0,
           oof_folds: int = 3) -> PrefitF0:
    """Build and fit f0 on (X, labels classes[y01]); compute P_f0(true label) for each row.

    A user's estimator that is already fitted is used as is (its in-sample probabilities are used).
    Otherwise f0 is fitted on all rows and ``oof_folds`` clones give out-of-fold probabilities
    (oof_folds < 2 uses in-sample probabilities).
    """
    if isinstance(kind, PrefitF0):
        return kind
    if classes.size > 2:
        return fit_f0_k(kind, X, y01, classes, random_state, oof_folds)
    est = make_f0(kind, random_state)
    desc = kind if f0_spec(kind) is not None else (
        "pickle" if isinstance(kind, (str, Path)) else type(est).__name__)
    labels = classes[y01]
    n_features = X.shape[1]
    if is_fitted(est):
        n_in = getattr(est, "n_features_in_", n_features)
        if n_in != n_features:
            raise F0Error(f"fitted hpc model expects {n_in} features, the data has {n_features}")
        p_pos = _positive_proba(est, X, classes[1])
    else:
        est = clone(est)  # never fit the caller's estimator in place (scikit-learn: parameters stay as given)
        est.fit(X, labels)
        p_pos = np.empty(X.shape[0])
        counts = np.bincount(y01, minlength=2)
        if oof_folds >= 2 and counts.min() >= oof_folds:
            skf = StratifiedKFold(n_splits=oof_folds, shuffle=True, random_state=random_state)
            for tr, te in skf.split(X, y01):
                part = clone(est).fit(X[tr], labels[tr])
                p_pos[te] = _positive_proba(part, X[te], classes[1])
        else:
            p_pos = _positive_proba(est, X, classes[1])
    p_true = np.where(y01 == 1, p_pos, 1.0 - p_pos)
    return PrefitF0(est, p_true, desc, np.arange(n_features, dtype=np.int32))


def _true_proba(est: Any, X: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """P_est(labels[i] | X[i]) for each row (0 for a label est never saw)."""
    proba = np.asarray(est.predict_proba(X), dtype=np.float64)
    known = list(getattr(est, "classes_", []))
    col = np.array([known.index(v) if v in known else -1 for v in labels.tolist()])
    out = proba[np.arange(len(labels)), np.maximum(col, 0)]
    return np.where(col >= 0, out, 0.0)


def fit_f0_k(kind: Any, X: np.ndarray, yidx: np.ndarray, classes: np.ndarray, random_state: int | None = 0,
             oof_folds: int = 3) -> PrefitF0:
    """fit_f0 for K > 2 classes (yidx: indices into classes): P_f0(true label), out-of-fold."""
    est = make_f0(kind, random_state)
    desc = kind if f0_spec(kind) is not None else (
        "pickle" if isinstance(kind, (str, Path)) else type(est).__name__)
    labels = classes[yidx]
    if is_fitted(est):
        n_in = getattr(est, "n_features_in_", X.shape[1])
        if n_in != X.shape[1]:
            raise F0Error(f"fitted hpc model expects {n_in} features, the data has {X.shape[1]}")
        p_true = _true_proba(est, X, labels)
    else:
        est = clone(est).fit(X, labels)
        counts = np.bincount(yidx, minlength=classes.size)
        if oof_folds >= 2 and counts.min() >= oof_folds:
            p_true = np.empty(X.shape[0])
            skf = StratifiedKFold(n_splits=oof_folds, shuffle=True, random_state=random_state)
            for tr, te in skf.split(X, yidx):
                p_true[te] = _true_proba(clone(est).fit(X[tr], labels[tr]), X[te], labels[te])
        else:
            p_true = _true_proba(est, X, labels)
    return PrefitF0(est, p_true, desc, np.arange(X.shape[1], dtype=np.int32))


# ----------------------------------------------------------------------------------------------
# the q step


def softplus(z: np.ndarray) -> np.ndarray:
    """log(1 + exp(z)), stable."""
    return np.logaddexp(0.0, z)


def sigmoid(z: np.ndarray) -> np.ndarray:
    """1 / (1 + exp(-z)), stable."""
    out = np.empty_like(z, dtype=np.float64)
    pos = z >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-z[pos]))
    e = np.exp(z[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def q_step(A: np.ndarray, B: np.ndarray, p_full: float, tol: float = 1e-12,
           max_iter: int = 200) -> tuple[np.ndarray, float]:
    """Closed-form q: q_i = 1 / (1 + exp(B_i - A_i + beta)), beta >= 0 smallest with mean q <= p_full.

    A_i is the cost of answering row i with f1 (z = 0), B_i with f0 (z = 1). If the unconstrained
    solution (beta = 0) already has mean q <= p_full, beta = 0. Otherwise beta is found by bisection
    and the returned q satisfies mean(q) <= p_full and p_full - mean(q) <= tol (up to floating point).
    p_full = 0 gives q = 0 and beta = inf.
    """
    A = np.asarray(A, dtype=np.float64)
    B = np.asarray(B, dtype=np.float64)
    if A.shape != B.shape or A.ndim != 1:
        raise ValueError("A and B must be 1-D arrays of the same length")
    if not 0.0 <= p_full <= 1.0:
        raise ValueError(f"p_full must be in [0, 1], got {p_full}")
    d = A - B

    def q_of(beta: float) -> np.ndarray:
        return sigmoid(d - beta)

    q = q_of(0.0)
    if q.mean() <= p_full:
        return q, 0.0
    if p_full == 0.0:
        return np.zeros_like(q), float("inf")
    lo, hi = 0.0, 1.0
    while q_of(hi).mean() > p_full:
        lo, hi = hi, hi * 2.0
        if hi > 1e6:
            break
    for _ in range(max_iter):
        mid = 0.5 * (lo + hi)
        if q_of(mid).mean() > p_full:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * max(1.0, hi) or p_full - q_of(hi).mean() <= tol:
            break
    return q_of(hi), hi


# ----------------------------------------------------------------------------------------------
# the sparse linear scorer shared with the runtime


@dataclass(frozen=True)
class SparseLinear:
    """score(x) = bias + sum_k weight[k] * x[feature[k]], accumulated in float32 in this order."""

    feature: np.ndarray  # int32[nnz]
    weight: np.ndarray  # float32[nnz]
    bias: np.float32
    threshold: np.float32 = np.float32(0.0)

    @classmethod
    def from_dense(cls, w: np.ndarray, b: float, threshold: float = 0.0) -> SparseLinear:
        """From a dense float64 weight vector: keep the nonzero entries, by increasing feature index."""
        w = np.asarray(w, dtype=np.float64)
        idx = np.flatnonzero(w != 0.0)
        w32 = w[idx].astype(np.float32)
        keep = w32 != 0.0
        return cls(idx[keep].astype(np.int32), w32[keep], np.float32(b), np.float32(threshold))

    def score(self, X: np.ndarray) -> np.ndarray:
        return score_f32(X, self.feature, self.weight, self.bias)

    def decide(self, X: np.ndarray) -> np.ndarray:
        """True iff score > threshold."""
        return self.score(X) > self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {
            "feature": self.feature.astype(np.int32),
            "weight": self.weight.astype(np.float32),
            "bias": np.float32(self.bias),
            "decision_threshold": np.float32(self.threshold),
        }


def score_f32(X: np.ndarray, feature: np.ndarray, weight: np.ndarray, bias: np.float32) -> np.ndarray:
    """Exact float32 sparse linear scores of the rows of X (X is cast to float32 first).

    acc = bias; for k in stored order: acc = fl32(acc + fl32(weight[k] * fl32(x[feature[k]]))).
    No fused multiply-add: a C evaluator must compute the product and the sum as separate float32 ops.
    """
    X32 = np.asarray(X, dtype=np.float32)
    acc = np.full(X32.shape[0], np.float32(bias), dtype=np.float32)
    for f, w in zip(feature.tolist(), weight.astype(np.float32)):
        prod = np.multiply(X32[:, f], w, dtype=np.float32)
        acc = np.add(acc, prod, dtype=np.float32)
    return acc


# ----------------------------------------------------------------------------------------------
# gated-model costs


def f0_reads(f0: Any, X: np.ndarray, features: np.ndarray, costs: np.ndarray) -> np.ndarray:
    """Bool (n, d): the features f0 reads on each row of X as the runtime evaluates it. A tree ensemble (what
    convert compiles to C, walked lazily) reads the features on each row's paths; any other f0 (remote, or a
    black box) every feature it uses, ``features`` (indices or a bool mask). Until round 68 the estimators charged
    every f0 row with all of f0's features, above what `frugalml eval` then measured on the same rows."""
    from compiler.gated.adapt_gbrt import sklearn_to_tree_ensemble  # noqa: PLC0415 - adapt_gbrt imports this module
    from compiler.trees.cost_tree import ir_tree_features  # noqa: PLC0415

    X32 = np.asarray(X, dtype=np.float32)
    read = np.zeros(X32.shape, dtype=bool)
    if not X32.shape[0]:
        return read
    if _forest_paths(f0, X32, read):
        return read
    ir = sklearn_to_tree_ensemble(f0, costs)
    if ir is None:
        read[:, np.asarray(features)] = True
        return read
    for r in ir_tree_features(ir, X32):
        read |= r
    return read


def _forest_paths(f0: Any, X32: np.ndarray, read: np.ndarray) -> bool:
    """Mark in ``read`` the split features on each row's paths through a fitted scikit-learn decision tree or
    forest, from its own decision_path (one sparse pass in C: the IR walk of a K-class forest, K trees per forest
    tree, took tens of seconds on a sweep's validation rows); False for any other estimator. The split decisions
    are the C tables' (the converter keeps them on float32 inputs: tests/test_gated_cost_runtime.py)."""
    trees = ([f0] if hasattr(f0, "tree_") else list(getattr(f0, "estimators_", [])))
    if not hasattr(f0, "decision_path") or not trees or not all(hasattr(t, "tree_") for t in trees):
        return False
    paths = f0.decision_path(X32)
    indicator = (paths[0] if isinstance(paths, tuple) else paths).tocoo()
    feature = np.concatenate([t.tree_.feature for t in trees])
    split = feature[indicator.col] >= 0  # leaves hold -2
    read[indicator.row[split], feature[indicator.col[split]]] = True
    return True


def gated_costs(route_f0: np.ndarray, cheap_features: np.ndarray, f0_features: np.ndarray,
                costs: np.ndarray) -> np.ndarray:
    """Per-row cost of the distinct features read by a gated model.

    Rows answered by f1 read ``cheap_features`` (gate and f1); rows sent to f0 read the union of
    ``cheap_features`` (the gate was evaluated) and ``f0_features``.
    """
    cheap = np.zeros(costs.shape[0], dtype=bool)
    cheap[np.asarray(cheap_features, dtype=np.int64)] = True
    full = cheap.copy()
    full[np.asarray(f0_features, dtype=np.int64)] = True
    return np.where(route_f0, costs[full].sum(), costs[cheap].sum())


# ----------------------------------------------------------------------------------------------
# sweeps


@dataclass
class SweepPoint:
    p_full: float
    gamma: float
    val_accuracy: float
    val_mean_cost: float
    val_hpc_fraction: float
    model: Any = field(repr=False, default=None)


@dataclass
class SweepResult:
    """The accuracy/cost curve over the grid and the chosen point (None if nothing qualifies)."""

    points: list[SweepPoint]
    hpc_accuracy: float
    hpc_mean_cost: float
    chosen: SweepPoint | None
    budget: float | None
    tolerance: float

    def curve(self) -> list[tuple[float, float, float, float, float]]:
        """(p_full, gamma, val_accuracy, val_mean_cost, val_hpc_fraction), sorted by cost."""
        rows = [(p.p_full, p.gamma, p.val_accuracy, p.val_mean_cost, p.val_hpc_fraction) for p in self.points]
        return sorted(rows, key=lambda r: (r[3], -r[2]))


def choose_point(points: Sequence[SweepPoint], hpc_accuracy: float, budget: float | None,
                 tolerance: float = 0.01) -> SweepPoint | None:
    """With a budget: the most accurate point with mean cost <= budget (ties: cheaper, then grid order).
    Without: the cheapest point with accuracy >= hpc_accuracy - tolerance (ties: more accurate)."""
    if budget is not None:
        ok = [p for p in points if p.val_mean_cost <= budget + 1e-12]
        if not ok:
            return None
        return min(ok, key=lambda p: (-p.val_accuracy, p.val_mean_cost))
    ok = [p for p in points if p.val_accuracy >= hpc_accuracy - tolerance - 1e-12]
    if not ok:
        return None
    return min(ok, key=lambda p: (p.val_mean_cost, -p.val_accuracy))


@dataclass
class _GridFit:
    """Fits and scores one (p_full, gamma) of :func:`sweep` (sent to the workers of a parallel sweep)."""

    factory: Callable[[float, float, PrefitF0], Any]
    f0: PrefitF0
    X: np.ndarray
    labels: np.ndarray
    Xv: np.ndarray
    yv: np.ndarray

    def __call__(self, pg: tuple[float, float]) -> SweepPoint:
        p, g = pg
        model = self.factory(p, g, self.f0)
        model.fit(self.X, self.labels)
        acc = float(np.mean(model.predict(self.Xv) == self.yv))
        return SweepPoint(p, g, acc, float(model.mean_cost(self.Xv)), float(model.hpc_fraction(self.Xv)), model)


def sweep(factory: Callable[[float, float, PrefitF0], Any], p_full_grid: Sequence[float],
          gamma_grid: Sequence[float], X_train: Any, y_train: Any, X_val: Any, y_val: Any, *,
          hpc: Any = "rf", costs: FeatureCosts | Sequence[float] | np.ndarray | None = None,
          budget: float | None = None, tolerance: float = 0.01, random_state: int | None = 0,
          jobs: int | None = None, scheduler: str | None = None) -> SweepResult:
    """Fit factory(p_full, gamma, f0) for every grid pair and choose one on the validation set.

    f0 is fitted once (``fit_f0``) and shared by every model. ``jobs``/``scheduler`` fit the grid in
    parallel (compiler.parallel.run_map: the factory, f0 and the data go to the workers). The factory
    returns an unfitted gated estimator (with ``fit``, ``predict``, ``mean_cost``, ``hpc_fraction``) that uses the given
    ``PrefitF0`` as its hpc. See ``choose_point`` for the choice rule.
    """
    Xtr, ytr01, classes = check_binary_Xy(X_train, y_train)
    Xv = check_X(X_val, Xtr.shape[1])
    yv = np.asarray(y_val)
    if yv.shape != (Xv.shape[0],):
        raise ValueError(f"y_val must have shape ({Xv.shape[0]},), got {yv.shape}")
    f0 = fit_f0(hpc, Xtr, ytr01, classes, random_state)
    c = cost_vector(costs, Xtr.shape[1])
    hpc_acc = float(np.mean(f0.estimator.predict(Xv) == yv))
    hpc_cost = float(np.mean(f0_reads(f0.estimator, Xv, f0.features, c) @ c))  # as the runtime reads f0
    grid = [(float(p), float(g)) for p in p_full_grid for g in gamma_grid]
    points = run_map(_GridFit(factory, f0, Xtr, classes[ytr01], Xv, yv), grid, jobs, scheduler,
                     desc="ADAPT sweep")
    chosen = choose_point(points, hpc_acc, budget, tolerance)
    return SweepResult(points, hpc_acc, hpc_cost, chosen, budget, tolerance)
