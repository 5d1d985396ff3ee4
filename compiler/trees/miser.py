"""Greedy Miser: cost-aware stage-wise regression with limited-depth trees.

Xu, Weinberger and Chapelle, "The Greedy Miser: Learning under Test-time
Budgets", ICML 2012. Each boosting iteration fits a depth-limited CART tree to
the negative gradient of the loss; the split rule charges ``lam`` times
the acquisition cost of every feature that no earlier tree used
(:mod:`compiler.trees.cost_tree`). ``lam = 0`` is plain stage-wise regression.
The number of trees is chosen on a validation split.

Scale of ``lam``: the split gain is the reduction of the *mean* (per unit
of training weight) squared loss to the gradient, and the charged cost of a
feature is its cost divided by the summed cost of all features. With
``lam = 1`` a new feature of average cost must cut the mean loss by
``1/n_features``; the scale does not depend on the number of samples or the
unit of the costs.

``charge="row"`` (an option, not the paper's): a split is charged its feature's cost times the share of
the node's training rows whose path has not read the feature yet, instead of once per model. The runtime
reads features lazily (only those on a row's path), so this is the expected cost per prediction the
runtime pays; at the root of the first tree both charges are equal, so ``lam`` keeps its scale.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from compiler.boosting.binning import MAX_BINS_LIMIT
from compiler.boosting.booster import Booster, check_charge, make_booster, penalty_scale
from compiler.boosting.losses import encode_targets, mean_loss, n_outputs_for
from compiler.boosting.losses import sigmoid as _sigmoid
from compiler.boosting.losses import softmax as _softmax
from compiler.boosting.penalty import GroupedCosts
from compiler.costs import FeatureCosts, cost_vector
from compiler.estimators import check_eval_set, check_split_classes, encode_classes
from compiler.options import LOSSES, MISER_DEFAULTS  # noqa: E402,F401 - one list of losses, one of defaults
from compiler.parallel import run_map
from compiler.params import check_number
from compiler.trees.cost_tree import (
    as_float32_matrix,
    ensemble_to_ir,
    ir_decide,
    ir_staged_scores,
    ir_tree_features,
)
from pyruntime.progress import track

__all__ = ["Booster", "GreedyMiserClassifier", "encode_targets", "make_booster", "n_outputs_for",
           "penalty_scale", "sweep"]


def decide(scores: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    if scores.shape[1] == 1:
        return (scores[:, 0] > np.float32(threshold)).astype(np.int64)
    return np.argmax(scores, axis=1).astype(np.int64)


def proba_of_scores(scores: np.ndarray, loss: str, threshold: float = 0.0) -> np.ndarray:
    """Class probabilities (n, K) of the ensemble scores (n, K outputs): the logistic loss's sigmoid of the score
    less the decision threshold (two classes), the multi-class log-loss's softmax; the squared loss's targets
    -1 / +1 clipped to [0, 1] and normalised. The largest probability is the predicted class."""
    s = np.asarray(scores, dtype=np.float64)
    if s.shape[1] == 1:
        z = s[:, 0] - float(np.float32(threshold))
        p1 = _sigmoid(z) if loss == "logistic" else np.clip((z + 1) / 2, 0, 1)
        proba = np.column_stack([1 - p1, p1])
    elif loss == "multiclass-log":
        proba = _softmax(s)
    else:
        e = np.clip((s + 1) / 2, 0, None) + 1e-12
        proba = e / e.sum(axis=1, keepdims=True)
    return _agreeing(proba, decide(np.asarray(scores), threshold))


def _agreeing(proba: np.ndarray, decided: np.ndarray) -> np.ndarray:
    """``proba`` whose first largest entry of each row is the ``decided`` class: scores that differ by less than
    the probabilities can show (1e-17 apart: a sigmoid of 0.5, a softmax of equal thirds) would otherwise give
    argmax(predict_proba) another class than predict; the decided class is raised by one ulp there."""
    rows = np.flatnonzero(np.argmax(proba, axis=1) != decided)
    if rows.size:
        proba[rows, decided[rows]] = np.nextafter(proba[rows].max(axis=1), np.inf)
    return proba


def resolve_loss(loss: str, n_classes: int) -> str:
    """``auto``: the logistic loss for two classes, the multi-class log-loss beyond."""
    if loss != "auto":
        return loss
    return "logistic" if n_classes == 2 else "multiclass-log"


def tree_shape(max_depth: int | None, max_leaves: int | None) -> tuple[int, int | None]:
    """(depth cap, leaf cap) of the trees: neither given -> leaf-wise with DEFAULT_LEAVES leaves (LightGBM's
    growth); only max_depth -> depth-wise trees of that depth (the paper's); max_leaves -> leaf-wise, capped
    at max_depth (default MAX_LEAFWISE_DEPTH)."""
    if max_leaves is None and max_depth is not None:
        return int(max_depth), None
    leaves = DEFAULT_LEAVES if max_leaves is None else int(max_leaves)
    return (MAX_LEAFWISE_DEPTH if max_depth is None else int(max_depth)), leaves


DEFAULT_LEAVES = MISER_DEFAULTS["leaves"]


def leaf_rows(min_samples_leaf: int, n_rows: int) -> int:
    """Rows a leaf needs: ``min_samples_leaf``, but at most one eighth of the training rows, so that a
    small training set (a few dozen windows) can still be split instead of giving a constant model."""
    return max(1, min(int(min_samples_leaf), n_rows // 8))
MAX_LEAFWISE_DEPTH = 16


class GreedyMiserClassifier(ClassifierMixin, BaseEstimator):
    """Greedy Miser classifier (cost-aware gradient-boosted trees) on the histogram Newton booster
    (:mod:`compiler.boosting`).

    Defaults follow LightGBM's (8 leaves grown best-first, 255 bins, at least 20 rows per leaf -- fewer on
    small training sets, see ``leaf_rows`` -- Newton
    steps on the log-loss, at most ``n_trees`` iterations with early stopping after ``n_iter_no_change``
    iterations without a lower validation loss). ``loss="squared"`` with ``max_depth`` alone gives the
    paper's stage-wise regression with depth-limited trees. ``charge``: "model" (the paper: a feature's cost
    once, when the first tree splits on it) or "row" (per training row whose path newly reads it; no
    feature groups). ``class_trees`` (K > 2 classes): "separate" (the paper: K trees per iteration, each with its
    own splits) or "shared" (one split structure per iteration for the K classes, the sum of their Newton gains,
    K leaf values; a row reads at most one path's features per iteration)."""

    def __init__(
        self,
        lam: float = MISER_DEFAULTS["lambda"],
        n_trees: int = MISER_DEFAULTS["trees"],
        max_depth: int | None = None,
        step: float = MISER_DEFAULTS["step"],
        loss: str = "auto",
        costs: FeatureCosts | np.ndarray | None = None,
        tree_eval_cost: float = MISER_DEFAULTS["tree_cost"],
        validation_fraction: float = 0.2,
        max_bins: int = 255,
        min_samples_leaf: int = 20,
        random_state: int | None = 0,
        max_leaves: int | None = None,
        l2: float = 0.0,
        min_child_weight: float = 1e-3,
        subsample: float = 1.0,
        colsample: float = 1.0,
        n_iter_no_change: int | None = 50,
        charge: str = MISER_DEFAULTS["charge"],
        first_lam: float | None = None,
        first_iters: int = 0,
        class_trees: str = MISER_DEFAULTS["class_trees"],
    ) -> None:
        self.lam = lam
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.step = step
        self.loss = loss
        self.costs = costs
        self.tree_eval_cost = tree_eval_cost
        self.validation_fraction = validation_fraction
        self.max_bins = max_bins
        self.min_samples_leaf = min_samples_leaf
        self.random_state = random_state
        self.max_leaves = max_leaves
        self.l2 = l2
        self.min_child_weight = min_child_weight
        self.subsample = subsample
        self.colsample = colsample
        self.n_iter_no_change = n_iter_no_change
        self.charge = charge
        self.first_lam = first_lam
        self.first_iters = first_iters
        self.class_trees = class_trees

    # -- fitting ---------------------------------------------------------
    def _check_params(self) -> None:
        if self.loss not in (*LOSSES, "auto"):
            raise ValueError(f"loss must be one of {(*LOSSES, 'auto')}, got {self.loss!r}")
        check_number("lam", self.lam, low=0)
        check_number("n_trees", self.n_trees, low=1, integer=True)
        check_number("max_depth", self.max_depth, low=1, integer=True, none_ok=True)
        check_number("min_samples_leaf", self.min_samples_leaf, low=1, integer=True)
        check_number("max_leaves", self.max_leaves, low=2, integer=True, none_ok=True)
        check_number("n_iter_no_change", self.n_iter_no_change, low=1, integer=True, none_ok=True)
        check_number("max_bins", self.max_bins, low=2, high=MAX_BINS_LIMIT, integer=True)
        check_number("step", self.step, low=0, high=1, low_open=True)
        check_number("validation_fraction", self.validation_fraction, low=0, high=1, high_open=True)
        check_number("l2", self.l2, low=0)
        check_number("min_child_weight", self.min_child_weight, low=0)
        check_number("subsample", self.subsample, low=0, high=1, low_open=True)
        check_number("colsample", self.colsample, low=0, high=1, low_open=True)
        check_number("tree_eval_cost", self.tree_eval_cost, low=0)
        check_charge(self.charge, self.class_trees)
        check_number("first_iters", self.first_iters, low=0, integer=True)
        check_number("first_lam", self.first_lam, low=0, none_ok=True)

    def fit(
        self,
        X: np.ndarray,
        y: np.ndarray,
        sample_weight: np.ndarray | None = None,
        eval_set: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> GreedyMiserClassifier:
        """Fit on (X, y); the number of trees is chosen on ``eval_set`` or an internal split."""
        self._check_params()
        X32, y = validate_data(self, X, y, dtype=np.float32, ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        if self.classes_.size < 2:
            raise ValueError("need at least two classes (1 class in y)")
        y_idx = np.searchsorted(self.classes_, y)
        self.loss_ = resolve_loss(self.loss, self.classes_.size)
        w = _check_sample_weight(sample_weight, X32, dtype=np.float64)
        if np.any(w < 0):
            raise ValueError("sample_weight must be >= 0 (a negative weight is not a row's importance)")
        if eval_set is not None:
            Xtr, ytr, wtr = X32, y_idx, w
            Xva, yva = check_eval_set(eval_set)
            Xva = as_float32_matrix(validate_data(self, Xva, dtype=np.float32, reset=False))
            yva = encode_classes(self, yva, "validation data")
        elif self.validation_fraction > 0:
            check_split_classes(y, "eval_set=(X_val, y_val) or validation_fraction=0 avoids that split "
                                   "(validation_fraction=0: no validation part, all n_trees trees are kept, "
                                   "no early stopping)", float(self.validation_fraction))
            idx = np.arange(len(y))
            tr, va = train_test_split(idx, test_size=self.validation_fraction, random_state=self.random_state,
                                      stratify=y_idx)
            Xtr, ytr, wtr, Xva, yva = X32[tr], y_idx[tr], w[tr], X32[va], y_idx[va]
        else:
            Xtr, ytr, wtr, Xva, yva = X32, y_idx, w, None, None
        self.costs_ = cost_vector(self.costs, self.n_features_in_)
        fc = self.costs
        self.groups_ = GroupedCosts.from_costs(fc) if isinstance(fc, FeatureCosts) and fc.has_groups else None
        depth, leaves = tree_shape(self.max_depth, self.max_leaves)
        booster = make_booster(Xtr, ytr, wtr, self.classes_.size, self.loss_, self.costs_, self.step,
                               depth, self.max_bins, leaf_rows(self.min_samples_leaf, len(ytr)), X_val=Xva,
                               max_leaves=leaves,
                               l2=self.l2, min_child_weight=self.min_child_weight,
                               subsample=self.subsample, colsample=self.colsample, seed=self.random_state,
                               groups=self.groups_, charge=self.charge, class_trees=self.class_trees)
        # the booster holds the targets and weights it needs (unit weights as one broadcast value): the label and
        # weight arrays' bytes go back before it grows
        del y, y_idx, ytr, w, wtr
        scale = penalty_scale(self.costs_ if self.groups_ is None else self.groups_)
        penalty = self.lam * scale
        first = (self.lam if self.first_lam is None else self.first_lam) * scale
        K = booster.n_outputs
        val_acc, val_loss = [], []
        Yva = encode_targets(yva, self.loss_, self.classes_.size) if Xva is not None else None
        patience = None if self.n_iter_no_change is None else int(self.n_iter_no_change)
        for i in track(range(int(self.n_trees)), "miser boosting", unit="tree"):
            booster.iterate(first if i < int(self.first_iters) else penalty)
            if Xva is not None:
                val_acc.append(float(np.mean(decide(booster.F_val) == yva)))
                val_loss.append(mean_loss(Yva, booster.F_val, self.loss_))
                if patience and len(val_loss) - 1 - int(np.argmin(val_loss)) >= patience:
                    break  # early stopping: no lower validation loss for n_iter_no_change iterations
        if Xva is not None:
            best = int(np.argmin(val_loss))  # fewest trees among the lowest validation loss
            self.n_iter_ = best + 1
            self.validation_accuracy_ = val_acc[best]
            self.validation_curve_ = np.asarray(val_acc)
        else:
            self.n_iter_ = int(self.n_trees)
            self.validation_accuracy_ = None
            self.validation_curve_ = None
        n_keep = self.n_iter_ * K
        self.trees_ = booster.trees[:n_keep]
        self.tree_output_ = booster.tree_output[:n_keep]
        self.base_score_ = booster.base_score
        self.ir_ = ensemble_to_ir(self.trees_, self.tree_output_, self.base_score_, self.n_features_in_,
                                  self.costs_, 0.0)
        self.features_used_ = np.unique(self.ir_["feature"][self.ir_["feature"] >= 0])
        self._val = (Xva, yva)
        return self

    # -- prediction ------------------------------------------------------
    def to_tree_ensemble(self) -> dict:
        """The model IR (flat arrays) that pyruntime / the C runtime evaluate."""
        check_is_fitted(self, "ir_")
        return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.ir_.items()}

    @property
    def n_trees_(self) -> int:
        return int(self.ir_["roots"].size)

    def _input(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "ir_")
        return validate_data(self, X, dtype=np.float32, reset=False)

    def decision_function(self, X: np.ndarray) -> np.ndarray:
        X = self._input(X)
        s = ir_staged_scores(self.ir_, X)[0]
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X: np.ndarray) -> np.ndarray:
        X = self._input(X)
        s = ir_staged_scores(self.ir_, X)[0]
        return self.classes_[ir_decide(self.ir_, s)]

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        X = self._input(X)
        return proba_of_scores(ir_staged_scores(self.ir_, X)[0], self.loss_)

    def features_read(self, X: np.ndarray) -> np.ndarray:
        """Bool (n, d): the distinct features each row reads (lazy evaluation)."""
        X = self._input(X)
        per_tree = ir_tree_features(self.ir_, X)
        read = np.zeros((np.asarray(X).shape[0], self.n_features_in_), dtype=bool)
        for r in per_tree:
            read |= r
        return read

    @property
    def trees_per_iteration_(self) -> int:
        """K trees a boosting iteration (one per output: 1 for the binary losses, one per class otherwise)."""
        return int(self.ir_["n_outputs"])

    def truncated(self, n_iter: int) -> GreedyMiserClassifier:
        """A copy that keeps the first ``n_iter`` boosting iterations (n_iter * K trees): what fitting with
        ``n_trees=n_iter`` and no early stopping would give, without refitting."""
        check_is_fitted(self, "ir_")
        if not 1 <= int(n_iter) <= self.n_iter_:
            raise ValueError(f"n_iter must be in 1..{self.n_iter_}, got {n_iter}")
        out = copy.copy(self)
        K = self.trees_per_iteration_
        out.n_iter_ = int(n_iter)
        out.trees_ = self.trees_[: out.n_iter_ * K]
        out.tree_output_ = self.tree_output_[: out.n_iter_ * K]
        out.ir_ = ensemble_to_ir(out.trees_, out.tree_output_, self.base_score_, self.n_features_in_, self.costs_, 0.0)
        out.features_used_ = np.unique(out.ir_["feature"][out.ir_["feature"] >= 0])
        if self.validation_curve_ is not None:
            out.validation_accuracy_ = float(self.validation_curve_[out.n_iter_ - 1])
        return out

    def features_used_at(self, n_iter: int) -> np.ndarray:
        """The distinct features the first ``n_iter`` boosting iterations split on (``truncated(n_iter)``'s
        ``features_used_``, without building the copy)."""
        check_is_fitted(self, "ir_")
        if not 1 <= int(n_iter) <= self.n_iter_:
            raise ValueError(f"n_iter must be in 1..{self.n_iter_}, got {n_iter}")
        feats = [t.feature[t.feature >= 0] for t in self.trees_[: int(n_iter) * self.trees_per_iteration_]]
        return np.unique(np.concatenate([np.zeros(0, dtype=np.int64), *feats])).astype(np.int64)

    def staged_points(self, X: np.ndarray, y: np.ndarray, n_iters: list[int]) -> list[tuple[float, float]]:
        """(accuracy, mean test-time cost) on (X, y) of the model truncated to each of ``n_iters`` iterations
        (each in 1..n_iter_): one pass over the trees, features read accumulated in tree order."""
        X = self._input(X)
        K = self.trees_per_iteration_
        stops = [int(t) * K for t in n_iters]
        scores = ir_staged_scores(self.ir_, X, stops)
        y_idx = np.searchsorted(self.classes_, np.asarray(y))
        per_tree = ir_tree_features(self.ir_, X)
        read = np.zeros((X.shape[0], self.n_features_in_), dtype=bool)
        at: dict[int, np.ndarray] = {}
        for t, r in enumerate(per_tree, start=1):
            read |= r
            if t in stops:
                at[t] = read.copy()
        out = []
        for s, sc in zip(stops, scores):
            r = at.get(s, read)
            feat = r @ self.costs_ if self.groups_ is None else self.groups_.cost_of_rows(r)
            acc = float(np.mean(ir_decide(self.ir_, sc) == y_idx))
            out.append((acc, float(np.mean(feat + self.tree_eval_cost * s))))
        return out

    def test_time_cost(self, X: np.ndarray) -> np.ndarray:
        """Per row: cost of the distinct features read (with feature groups: each group once) +
        tree_eval_cost * number of trees."""
        read = self.features_read(X)
        feat = read @ self.costs_ if self.groups_ is None else self.groups_.cost_of_rows(read)
        return feat + self.tree_eval_cost * self.n_trees_


@dataclass
class SweepPoint:
    lam: float
    validation_accuracy: float
    validation_cost: float
    model: GreedyMiserClassifier


@dataclass
class SweepResult:
    points: list[SweepPoint]
    chosen: SweepPoint
    reference: SweepPoint  # the lambda = 0 model


@dataclass
class _SweepFit:
    """One lambda of :func:`sweep` (sent to the workers of a parallel sweep)."""

    Xtr: np.ndarray
    ytr: np.ndarray
    Xva: np.ndarray
    yva: np.ndarray
    random_state: int | None
    params: dict

    def __call__(self, lam: float) -> SweepPoint:
        m = GreedyMiserClassifier(lam=lam, random_state=self.random_state, **self.params)
        m.fit(self.Xtr, self.ytr, eval_set=(self.Xva, self.yva))
        cost = float(np.mean(m.test_time_cost(self.Xva)))
        return SweepPoint(lam, float(m.validation_accuracy_), cost, m)


def sweep(
    X: np.ndarray,
    y: np.ndarray,
    lambdas: list[float],
    tolerance: float = 0.01,
    validation_fraction: float = 0.2,
    random_state: int | None = 0,
    jobs: int | None = None,
    scheduler: str | None = None,
    **params: object,
) -> SweepResult:
    """Fit miser models for a grid of lam on one split; keep the cheapest whose
    validation accuracy is within ``tolerance`` (absolute) of the lam = 0 model's.

    ``jobs``/``scheduler``: fit the grid in parallel (compiler.parallel.run_map), same results."""
    y = np.asarray(y)
    X32 = as_float32_matrix(X)
    _, y_idx = np.unique(y, return_inverse=True)
    tr, va = train_test_split(np.arange(len(y)), test_size=validation_fraction, random_state=random_state,
                              stratify=y_idx)
    grid = sorted({0.0, *[float(v) for v in lambdas]})
    fit = _SweepFit(X32[tr], y[tr], X32[va], y[va], random_state, params)
    points = run_map(fit, grid, jobs, scheduler, desc="miser lambda sweep")
    ref = points[0]
    ok = [p for p in points if p.validation_accuracy >= ref.validation_accuracy - tolerance]
    chosen = min(ok, key=lambda p: (p.validation_cost, -p.validation_accuracy))
    return SweepResult(points=points, chosen=chosen, reference=ref)
