"""Greedy Miser: cost-aware stage-wise regression with limited-depth trees.

Xu, Weinberger and Chapelle, "The Greedy Miser: Learning under Test-time
Budgets", ICML 2012. Each boosting iteration fits a depth-limited CART tree to
the negative gradient of the loss; the split rule charges ``lam`` times
the acquisition cost of every feature that no earlier tree used
(:mod:`compiler.cost_tree`). ``lam = 0`` is plain stage-wise regression.
The number of trees is chosen on a validation split.

Scale of ``lam``: the split gain is the reduction of the *mean* (per unit
of training weight) squared loss to the gradient, and the charged cost of a
feature is its cost divided by the summed cost of all features. With
``lam = 1`` a new feature of average cost must cut the mean loss by
``1/n_features``; the scale does not depend on the number of samples or the
unit of the costs.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.model_selection import train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, validate_data

from compiler.costs import FeatureCosts, cost_vector
from compiler.parallel import run_map
from compiler.trees.cost_tree import (
    CostTree,
    CostTreeFitter,
    as_float32_matrix,
    ensemble_to_ir,
    ir_decide,
    ir_staged_scores,
    ir_tree_features,
    leaf_ratio,
)
from compiler.trees.options import LOSSES  # noqa: E402,F401 - one list of losses
from pyruntime.progress import track


def _sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _softmax(F: np.ndarray) -> np.ndarray:
    z = F - F.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def n_outputs_for(loss: str, n_classes: int) -> int:
    if loss == "multiclass-log":
        return n_classes
    if loss == "logistic":
        if n_classes != 2:
            raise ValueError("loss='logistic' needs exactly two classes; use 'multiclass-log'")
        return 1
    return 1 if n_classes == 2 else n_classes


def encode_targets(y_idx: np.ndarray, loss: str, n_classes: int) -> np.ndarray:
    """Target matrix (n, K): ±1 for squared loss, 0/1 for the log losses."""
    K = n_outputs_for(loss, n_classes)
    if K == 1:
        t = (y_idx == 1).astype(np.float64)[:, None]
    else:
        t = (y_idx[:, None] == np.arange(K)[None, :]).astype(np.float64)
    return 2.0 * t - 1.0 if loss == "squared" else t


def init_scores(Y: np.ndarray, w: np.ndarray, loss: str) -> np.ndarray:
    """Constant first guess (float32, K) minimising the weighted loss."""
    m = (w[:, None] * Y).sum(axis=0) / w.sum()
    if loss == "squared":
        base = m
    elif loss == "logistic":
        p = np.clip(m, 1e-6, 1 - 1e-6)
        base = np.log(p / (1 - p))
    else:
        p = np.clip(m, 1e-6, 1.0)
        base = np.log(p) - np.log(p).mean()
    return base.astype(np.float32)


def mean_loss(Y: np.ndarray, F: np.ndarray, loss: str) -> float:
    """Mean training loss of scores F against encoded targets Y."""
    F64 = F.astype(np.float64)
    if loss == "squared":
        return float(np.mean(np.sum((Y - F64) ** 2, axis=1)))
    if loss == "logistic":
        return float(np.mean(np.logaddexp(0.0, F64[:, 0]) - Y[:, 0] * F64[:, 0]))
    z = F64 - F64.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return float(-np.mean(np.sum(Y * logp, axis=1)))


def gradient_step(Y: np.ndarray, F: np.ndarray, loss: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Negative gradient (n, K) and the Newton denominator (None for squared loss)."""
    F64 = F.astype(np.float64)
    if loss == "squared":
        return Y - F64, None
    p = _sigmoid(F64) if loss == "logistic" else _softmax(F64)
    return Y - p, p * (1.0 - p)


@dataclass
class Booster:
    """Stage-wise cost-aware boosting state (shared by miser, cascades, ADAPT-GBRT).

    ``F`` holds the training scores in float32, updated with the same float32
    leaf values (learning rate folded in) that the model IR stores, so staged
    training and validation scores equal the runtime's scores exactly.
    """

    fitter: CostTreeFitter
    Y: np.ndarray  # (n, K) encoded targets
    weight: np.ndarray  # (n,)
    loss: str
    costs: np.ndarray
    step: float
    max_depth: int
    min_samples_leaf: int = 1
    base_score: np.ndarray | None = None
    used: np.ndarray | None = None
    trees: list[CostTree] = field(default_factory=list)
    tree_output: list[int] = field(default_factory=list)
    F: np.ndarray | None = None
    X_val: np.ndarray | None = None
    F_val: np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.base_score is None:
            self.base_score = init_scores(self.Y, self.weight, self.loss)
        n, K = self.Y.shape
        if self.F is None:
            self.F = np.tile(self.base_score, (n, 1)).astype(np.float32)
        if self.used is None:
            self.used = np.zeros(self.fitter.n_features, dtype=bool)
        if self.X_val is not None and self.F_val is None:
            self.F_val = np.tile(self.base_score, (self.X_val.shape[0], 1)).astype(np.float32)

    @property
    def n_outputs(self) -> int:
        return int(self.Y.shape[1])

    def iterate(self, penalty: float, target_weight: np.ndarray | None = None) -> None:
        """One boosting iteration: one tree per output."""
        w = self.weight if target_weight is None else target_weight
        R, Hs = gradient_step(self.Y, self.F, self.loss)
        K = self.n_outputs
        newton_scale = (K - 1) / K if self.loss == "multiclass-log" else 1.0
        for k in range(K):
            fit = self.fitter.fit(
                R[:, k], w, max_depth=self.max_depth, penalty=penalty, costs=self.costs,
                used=self.used, min_samples_leaf=self.min_samples_leaf,
            )
            tree = fit.tree
            if Hs is None:
                raw = tree.value
            else:
                raw = newton_scale * leaf_ratio(fit.leaf_of_sample, w * R[:, k], w * Hs[:, k], tree.n_nodes)
            leaf32 = np.where(tree.feature >= 0, 0.0, self.step * raw).astype(np.float32)
            tree.value = leaf32.astype(np.float64)  # exactly representable in float32
            self.used[fit.new_features] = True
            self.F[:, k] = self.F[:, k] + leaf32[fit.leaf_of_sample]
            if self.X_val is not None:
                self.F_val[:, k] = self.F_val[:, k] + leaf32[tree.apply(self.X_val)]
            self.trees.append(tree)
            self.tree_output.append(k)


def decide(scores: np.ndarray, threshold: float = 0.0) -> np.ndarray:
    if scores.shape[1] == 1:
        return (scores[:, 0] > np.float32(threshold)).astype(np.int64)
    return np.argmax(scores, axis=1).astype(np.int64)


class GreedyMiserClassifier(ClassifierMixin, BaseEstimator):
    """Greedy Miser classifier (cost-aware gradient-boosted trees)."""

    def __init__(
        self,
        lam: float = 1.0,
        n_trees: int = 100,
        max_depth: int = 3,
        step: float = 0.1,
        loss: str = "squared",
        costs: FeatureCosts | np.ndarray | None = None,
        tree_eval_cost: float = 0.0,
        validation_fraction: float = 0.2,
        max_bins: int = 64,
        min_samples_leaf: int = 1,
        random_state: int | None = 0,
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

    # -- fitting ---------------------------------------------------------
    def _check_params(self) -> None:
        if self.loss not in LOSSES:
            raise ValueError(f"loss must be one of {LOSSES}, got {self.loss!r}")
        if not self.lam >= 0:
            raise ValueError("lam must be >= 0")
        if int(self.n_trees) < 1 or int(self.max_depth) < 1:
            raise ValueError("n_trees and max_depth must be >= 1")
        if not 0 < self.step <= 1:
            raise ValueError("step must be in (0, 1]")
        if not 0 <= self.validation_fraction < 1:
            raise ValueError("validation_fraction must be in [0, 1)")
        if self.tree_eval_cost < 0:
            raise ValueError("tree_eval_cost must be >= 0")

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
        w = _check_sample_weight(sample_weight, X32, dtype=np.float64)
        if eval_set is not None:
            Xtr, ytr, wtr = X32, y_idx, w
            Xva = as_float32_matrix(eval_set[0])
            yva = np.searchsorted(self.classes_, np.asarray(eval_set[1]))
        elif self.validation_fraction > 0:
            idx = np.arange(len(y))
            tr, va = train_test_split(idx, test_size=self.validation_fraction, random_state=self.random_state,
                                      stratify=y_idx)
            Xtr, ytr, wtr, Xva, yva = X32[tr], y_idx[tr], w[tr], X32[va], y_idx[va]
        else:
            Xtr, ytr, wtr, Xva, yva = X32, y_idx, w, None, None
        self.costs_ = cost_vector(self.costs, self.n_features_in_)
        booster = make_booster(Xtr, ytr, wtr, self.classes_.size, self.loss, self.costs_, self.step,
                               self.max_depth, self.max_bins, self.min_samples_leaf, X_val=Xva)
        penalty = self.lam * penalty_scale(self.costs_)
        K = booster.n_outputs
        val_acc, val_loss = [], []
        Yva = encode_targets(yva, self.loss, self.classes_.size) if Xva is not None else None
        for _ in track(range(int(self.n_trees)), "miser boosting", unit="tree"):
            booster.iterate(penalty)
            if Xva is not None:
                val_acc.append(float(np.mean(decide(booster.F_val) == yva)))
                val_loss.append(mean_loss(Yva, booster.F_val, self.loss))
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
        s = ir_staged_scores(self.ir_, X)[0].astype(np.float64)
        if s.shape[1] == 1:
            p1 = _sigmoid(s[:, 0]) if self.loss == "logistic" else np.clip((s[:, 0] + 1) / 2, 0, 1)
            return np.column_stack([1 - p1, p1])
        if self.loss == "multiclass-log":
            return _softmax(s)
        e = np.clip((s + 1) / 2, 0, None) + 1e-12
        return e / e.sum(axis=1, keepdims=True)

    def features_read(self, X: np.ndarray) -> np.ndarray:
        """Bool (n, d): the distinct features each row reads (lazy evaluation)."""
        check_is_fitted(self, "ir_")
        per_tree = ir_tree_features(self.ir_, X)
        read = np.zeros((np.asarray(X).shape[0], self.n_features_in_), dtype=bool)
        for r in per_tree:
            read |= r
        return read

    def test_time_cost(self, X: np.ndarray) -> np.ndarray:
        """Per row: cost of the distinct features read + tree_eval_cost * number of trees."""
        read = self.features_read(X)
        return read @ self.costs_ + self.tree_eval_cost * self.n_trees_


def penalty_scale(costs: np.ndarray) -> np.ndarray:
    """Factor turning lam into the fitter's penalty: 1 / (summed cost of all features)."""
    total = float(np.sum(costs))
    return 1.0 / total if total > 0 else 0.0


def make_booster(
    X: np.ndarray, y_idx: np.ndarray, w: np.ndarray, n_classes: int, loss: str, costs: np.ndarray,
    step: float, max_depth: int, max_bins: int = 64, min_samples_leaf: int = 1,
    X_val: np.ndarray | None = None,
) -> Booster:
    fitter = CostTreeFitter.from_data(X, max_bins)
    Y = encode_targets(y_idx, loss, n_classes)
    return Booster(fitter=fitter, Y=Y, weight=w, loss=loss, costs=costs, step=step, max_depth=max_depth,
                   min_samples_leaf=min_samples_leaf, X_val=X_val)


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
