"""ADAPT-GBRT: a gate g and a low-cost model f1 in front of a high-cost model f0.

Nan and Saligrama, "Adaptive Classification for Prediction Under a Budget",
NIPS 2017. A high-accuracy model f0 is trained first, regardless of cost. For
each training input a latent z in {0: use f1, 1: use f0} has a distribution
q_i = q(z_i = 1); the problem

    min_{g, f1, q}  1/N sum_i [ (1 - q_i) A_i + q_i B_i - H(q_i) ] + gamma * cost(g, f1)
    s.t.            1/N sum_i q_i <= P_full

with
    A_i = loss(y_i, f1(x_i)) - log p_g(z=0 | x_i) = loss(y_i, f1(x_i)) + log(1 + e^{g(x_i)})
    B_i = eta * (-log p_f0(y_i | x_i))  - log p_g(z=1 | x_i) = eta * l0_i + log(1 + e^{-g(x_i)})

(H the binary entropy, p_g(z=1|x) = sigmoid(g(x))) is solved by alternating:

- q step, closed form: q_i = 1 / (1 + exp(B_i - A_i + beta)), with beta >= 0 the
  smallest value making mean(q) <= P_full (bisection; q decreases with beta);
- (g, f1) step for fixed q: g is boosted towards the soft labels q (logistic
  loss, i.e. the KL term), f1 is boosted on the labels with weights 1 - q
  (logistic or multinomial loss). Both are limited-depth regression trees on
  the negative gradient whose CART impurity adds gamma * c_a for every feature
  a that neither g nor f1 has used yet (u_a = 0 once used by any tree).

f1's loss in A_i is cross-fitted (``f1_cv`` folds, default 3; the paper uses f1's training loss, ``f1_cv`` 0):
beside f1, one booster per fold is grown on the other folds' rows, with the same weights 1 - q, trees and
feature charges, and A_i takes the loss of the booster that did not see row i. f1 fits its own training rows
far better than new ones, while B_i is f0's out-of-fold loss; with the in-sample loss A_i < B_i on nearly every
row, q stays near 0 and P_full does not bind. On wine (143 pooled rows, 5 split seeds) the in-sample form kept
sweep points 6.3 points under f0 on test, the cross-fitted one 1.1 (docs/gated.md). The deployed g and f1 are
fitted as before, on every row; the fold boosters only score the q step (training about twice as long).

K > 2 classes: f1 is boosted on the multinomial log-loss; ``class_trees`` "shared" (the default) grows
one split structure per iteration with K leaf values (the shared trees of compiler.trees.miser), "separate"
K trees per iteration. With separate trees f1 fits its training rows so closely that its in-sample loss
A_i stays below f0's out-of-fold loss B_i on nearly every row, q is near 0 everywhere and P_full never
binds: on digits the gate sent 0-3% of the rows to f0 at every P_full up to 0.7, and f1 read 25-47
features. Shared trees have a tenth of the leaves per iteration and a row reads one path per iteration:
at gamma 1, P_full 0.3, f1 reads about 18 features and the gate sends 12% of the rows to f0 (probe,
docs/gated.md). Two classes: one output, the forms are the same model.

The gate for K > 2 classes (``gate`` "auto", the default, or "margin") is f1's own confidence, as ADAPT-LIN's:
no gate trees are grown (the alternation is the paper's without g: its two KL terms are constants and drop out of
the q step), and an input goes to f0 iff f1's largest class score minus its second largest is not above a
threshold that sends the share mean(q) of the training rows with the smallest out-of-fold margins there (the
fold boosters' scores: f1's margins on its own rows are larger than on new ones; with ``f1_cv`` below 2, or a class
of fewer rows than the folds, f1's own training scores). ``gate_rule`` and ``gate_step`` concern the gate trees
only. With gate trees the two
boosters shared the feature charge and the rows: on digits (gamma 1, P 0.2) f1 came out 0.853 accurate alone;
without them 0.972 (docs/gated.md, round 44). ``gate`` "trees" keeps the paper's g for K classes too; two
classes always use it.

f1's leaves (and its fold boosters') are -G / (H + ``l2``), default 1 (F1_L2): with the unregularised Newton step
f1's margins did not order new rows by confidence, and the margin gate's share on new rows strayed from mean(q).

At test time g is evaluated first; an input goes to f0 iff sigma(g(x)) > 1/2,
i.e. g(x) > 0 (the paper's gate), else f1 answers. As in the paper's Algorithm 2,
q is updated once per ``trees_per_step`` (T, default 1) boosting iterations of g and f1;
g's trees take ``gate_step`` (default 1: full Newton steps) instead of f1's shrinkage ``step``.
Why: g only fits q; the sharpening comes from the alternation itself. With g ~ logit(q) after a
g step, the next q step gives logit q' = g + xi (l1 - l0) - beta, so after t q steps logit q ~
logit P_full + t xi (l1 - l0) - sum(beta): q becomes near-binary (and the share with sigma(g) > 1/2
approaches mean q = P_full) only after many q steps with g following q closely. With T = 10 and g
shrunk by 0.1 (5 q steps for 50 trees) q stayed soft, mean sigma(g) = P_full held but no row
crossed 1/2 for P_full < 1/2 and all rows did for P_full > 1/2 (Letters: shares 0.00, 0.00, 0.53,
1.00 at P_full 0.1, 0.3, 0.5, 0.7; now about 0.09, 0.28, 0.50, 0.69: benchmarks/adapt_letters.py);
``xi`` weights both prediction losses against the gate's KL term. ``gamma`` uses the same scale as
the miser ``lam``: a feature's cost is divided by the summed cost of all
features. Default 0.1 (the CLI's): the split gain it is charged against is the drop of the mean
squared logistic gradient, at most 1/4 (times the weights 1 - q of f1), so with gamma = 1 (the old
default) on two features (penalty 1/2 each) no split could ever pay and f1 and g came out constant
(scikit-learn's check_classifiers_train on 2-D blobs: accuracy 0.5).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin, clone
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.exceptions import NotFittedError
from sklearn.model_selection import StratifiedKFold, cross_val_predict, train_test_split
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import check_is_fitted, validate_data

from compiler.boosting.binning import MAX_BINS_LIMIT
from compiler.boosting.booster import CLASS_TREES
from compiler.costs import FeatureCosts, cost_vector
from compiler.gated.common import f0_reads, make_f0
from compiler.gated.f0_spec import F0_KINDS, f0_spec
from compiler.options import GATED_TREE_DEFAULTS
from compiler.parallel import run_map
from compiler.params import check_number
from compiler.trees.cost_tree import as_float32_matrix, ensemble_to_ir, ir_staged_scores, ir_tree_features
from compiler.trees.miser import Booster, encode_targets, make_booster, penalty_scale
from pyruntime.progress import track

# The gate's full Newton steps fit the soft labels q, which the alternation drives to exactly 0 or 1 for many
# rows: there the logistic hessian vanishes and a leaf's step -G/H grew without bound (wine, gamma 0.3, P 0.1: a
# leaf of 10,865; digits, 100 trees, gamma 1, P 0.6: float32 overflow and "thresholds and values must be finite").
# f1's trees meet the same where the weights 1 - q leave a class's leaf with rows f1 misfits confidently (its
# probability of their class near 0, so their hessian near 0): digits' default sweep grew f1 Newton steps of 612
# and 1,417 and one of float32 infinity at P 0.6-0.7 (round 41), and 300 trees at gamma 1 were refused. Each leaf
# of the gate, of f1 and of f1's fold boosters moves a score by at most this much per iteration before the
# shrinkage (max_delta_step); the largest leaf of digits', wine's and breast cancer's default fits that did not
# diverge was 7.8 for the gate (round 24) and 7.1 for miser's shared trees on digits.
MAX_DELTA_STEP = 10.0
# f1's (and its fold boosters') leaf values are -G / (H + l2), as XGBoost's lambda (default 1). Unregularised (l2 0), a
# leaf of a few rows, or of rows f1 already classifies confidently, still takes a full Newton step (for the multinomial
# loss -G/H tends to 1/p, not to 0, as p -> 1), so the top-2 margins grow by the size of the leaves a row falls in,
# not by how sure f1 is of it, and the margin gate's threshold (a quantile of the fold boosters' margins) carried over
# badly to f1's margins on new rows: on wine's 5 splits (P 0.2, gamma 1) f1 sent 0.11-0.47 of the test rows to f0
# (mean 0.28 for a share of 0.2), and the cross-validated sweep's refit of seed 0 sent 42% of its rows where its folds
# had sent 17%. With l2 1: 0.08-0.31 (mean 0.16); benchmarks/multiclass.py's wine 5 splits read 6.71 features, not
# 9.12, at the same test accuracy, and digits' seed 0 0.9778 at 22.5 features, not 0.9722 at 16.8 (docs/gated.md,
# round 47). The gate's own trees (two classes, --gate trees) stay unregularised.
F1_L2 = GATED_TREE_DEFAULTS["l2"]


def make_hpc(name: str, random_state: int | None = 0) -> BaseEstimator:
    """An unfitted high-accuracy model f0 by name: the same f0 as every gated trainer
    (compiler.gated.common.make_f0)."""
    if f0_spec(name) is None:
        raise ValueError(f"hpc must be one of {F0_KINDS} (rf and gbrt sized as NAME:TREES[:DEPTH]) or a "
                         f"scikit-learn classifier, got {name!r}")
    return make_f0(name, random_state)


def solve_q(A: np.ndarray, B: np.ndarray, p_full: float, iters: int = 100) -> tuple[np.ndarray, float]:
    """q_i = 1/(1+exp(B_i - A_i + beta)) with the smallest beta >= 0 such that mean(q) <= p_full."""

    def q_of(beta: float) -> np.ndarray:
        return 0.5 * (1.0 + np.tanh(0.5 * (A - B - beta)))  # stable logistic

    q = q_of(0.0)
    if q.mean() <= p_full:
        return q, 0.0
    lo, hi = 0.0, 1.0
    while q_of(hi).mean() > p_full:
        hi *= 2.0
        if hi > 1e6:
            break
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        if q_of(mid).mean() > p_full:
            lo = mid
        else:
            hi = mid
    return q_of(hi), hi


def top2_margin(F: np.ndarray) -> np.ndarray:
    """Largest minus second largest class score of every row, in the scores' own type (float32 scores: the
    float32 subtraction the runtime's margin gate makes)."""
    s = np.sort(np.asarray(F), axis=1)
    return s[:, -1] - s[:, -2]


def margin_threshold(margin: np.ndarray, share: float) -> np.float32:
    """The float32 margin threshold sending the ``share`` of rows with the smallest margins to f0 (hard iff
    margin <= threshold): the k-th smallest margin, k = round(share * n), or the smallest float32 above it; below
    every margin (none hard) when k is 0."""
    m = np.sort(np.asarray(margin, dtype=np.float64))
    k = int(round(float(share) * m.size))
    if k <= 0 or m.size == 0:
        return np.float32(-1.0)  # margins are >= 0: every row easy
    kth = m[min(k, m.size) - 1]
    t = np.float32(kth)
    # float64 margins (callers' own): the k-th stays hard, rounded up to the next float32 if need be
    return np.nextafter(t, np.float32(np.inf)) if float(t) < kth else t


def _softplus(z: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, z)


def _pointwise_loss(Y: np.ndarray, F: np.ndarray, loss: str) -> np.ndarray:
    F64 = F.astype(np.float64)
    if loss == "logistic":
        return _softplus(F64[:, 0]) - Y[:, 0] * F64[:, 0]
    z = F64 - F64.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.sum(Y * logp, axis=1)


def _out_of_fold(f1: Booster, aux: list[Booster], fold: np.ndarray) -> np.ndarray:
    """f1's training scores, or with fold boosters each row's scores from the booster grown without its fold."""
    assert f1.F is not None
    if not aux:
        return f1.F
    F = np.empty_like(f1.F)
    for j, b in enumerate(aux):
        assert b.F is not None
        F[fold == j] = b.F[fold == j]
    return F


def sklearn_features_used(est: BaseEstimator, n_features: int) -> np.ndarray:
    """Bool mask of the features a fitted scikit-learn model reads (all, unless it is made of trees)."""
    trees = []
    if hasattr(est, "tree_"):
        trees = [est]
    elif hasattr(est, "estimators_"):
        trees = [t for t in np.ravel(np.asarray(est.estimators_, dtype=object)) if hasattr(t, "tree_")]
    if not trees:
        return np.ones(n_features, dtype=bool)
    mask = np.zeros(n_features, dtype=bool)
    for t in trees:
        f = t.tree_.feature
        mask[f[f >= 0]] = True
    return mask


def _f32_floor(thr: np.ndarray) -> np.ndarray:
    """Largest float32 <= thr: for float32 x, x <= thr (float64) iff x <= result."""
    t = thr.astype(np.float32)
    over = t.astype(np.float64) > thr
    t[over] = np.nextafter(t[over], np.float32(-np.inf))
    return t


def sklearn_to_tree_ensemble(est: BaseEstimator, costs: np.ndarray) -> dict | None:
    """Model IR for a fitted RandomForest/ExtraTrees, GradientBoosting or DecisionTree classifier; None otherwise.

    Forests: one output per class (one output for two classes, decision
    threshold 0.5), leaf values = class fraction / n_trees. Gradient boosting:
    the raw scores (log-odds), decision threshold 0. Float32 sums may differ
    from scikit-learn's float64 only at exact ties.
    """
    from compiler.trees.cost_tree import CostTree

    d = int(getattr(est, "n_features_in_", len(costs)))
    trees, outputs = [], []

    def convert(sk_tree: object, leaf: np.ndarray) -> CostTree:
        tr = sk_tree.tree_
        inner = tr.feature >= 0
        return CostTree(
            feature=np.where(inner, tr.feature, -1).astype(np.int32),
            threshold=np.where(inner, _f32_floor(tr.threshold), 0).astype(np.float32),
            left=np.where(inner, tr.children_left, -1).astype(np.int32),
            right=np.where(inner, tr.children_right, -1).astype(np.int32),
            value=np.where(inner, 0.0, leaf).astype(np.float32).astype(np.float64),
        )

    if isinstance(est, GradientBoostingClassifier):
        K = est.estimators_.shape[1]
        base = np.asarray(est._raw_predict_init(np.zeros((1, d), dtype=np.float32))[0], dtype=np.float32)
        for m in range(est.estimators_.shape[0]):
            for k in range(K):
                t = est.estimators_[m, k]
                trees.append(convert(t, est.learning_rate * t.tree_.value[:, 0, 0]))
                outputs.append(k)
        return ensemble_to_ir(trees, outputs, base, d, costs, 0.0)
    members = [est] if hasattr(est, "tree_") else getattr(est, "estimators_", None)  # one tree: a forest of one
    if members is not None and all(hasattr(t, "tree_") for t in members) \
            and hasattr(est, "n_classes_") and np.ndim(est.n_classes_) == 0:
        n_t = len(members)
        K = int(est.n_classes_)
        for t in members:
            v = t.tree_.value[:, 0, :]
            frac = v / np.maximum(v.sum(axis=1, keepdims=True), 1e-300)
            ks = [1] if K == 2 else list(range(K))
            for out, k in enumerate(ks):
                trees.append(convert(t, frac[:, k] / n_t))
                outputs.append(out)
        n_out = 1 if K == 2 else K
        return ensemble_to_ir(trees, outputs, np.zeros(n_out), d, costs, 0.5 if K == 2 else 0.0)
    return None


@dataclass
class AdaptState:
    """Per outer iteration diagnostics."""

    beta: float
    mean_q: float
    objective: float


class AdaptGbrtClassifier(ClassifierMixin, BaseEstimator):
    """ADAPT-GBRT gated classifier: gate g and low-cost f1 (cost-aware boosted trees), high-cost f0."""

    def __init__(
        self,
        hpc: str | BaseEstimator = "rf",
        p_full: float = 0.3,
        gamma: float = 0.1,
        n_trees: int = 100,
        max_depth: int = 3,
        step: float = 0.1,
        costs: FeatureCosts | np.ndarray | None = None,
        trees_per_step: int = 1,
        gate_rule: str = "sigmoid",
        eta: float = 1.0,
        xi: float = 1.0,
        hpc_cv: int = 3,
        max_bins: int = 64,
        gate_step: float | None = 1.0,
        class_trees: str = "shared",
        f1_cv: int = 3,
        gate: str = "auto",
        l2: float = F1_L2,
        random_state: int | None = 0,
    ) -> None:
        self.hpc = hpc
        self.p_full = p_full
        self.gamma = gamma
        self.n_trees = n_trees
        self.max_depth = max_depth
        self.step = step
        self.costs = costs
        self.trees_per_step = trees_per_step
        self.gate_rule = gate_rule
        self.eta = eta
        self.xi = xi
        self.hpc_cv = hpc_cv
        self.max_bins = max_bins
        self.gate_step = gate_step
        self.class_trees = class_trees
        self.f1_cv = f1_cv
        self.gate = gate
        self.l2 = l2
        self.random_state = random_state

    def _check_params(self) -> None:
        check_number("p_full", self.p_full, low=0, high=1)
        check_number("gamma", self.gamma, low=0)
        check_number("n_trees", self.n_trees, low=1, integer=True)
        check_number("trees_per_step", self.trees_per_step, low=1, integer=True)
        check_number("max_depth", self.max_depth, low=1, integer=True)
        check_number("max_bins", self.max_bins, low=2, high=MAX_BINS_LIMIT, integer=True)
        check_number("step", self.step, low=0, high=1, low_open=True)
        check_number("eta", self.eta, low=0)
        check_number("xi", self.xi, low=0)
        check_number("hpc_cv", self.hpc_cv, low=0, integer=True)
        check_number("gate_step", self.gate_step, low=0, high=1, low_open=True, none_ok=True)
        if self.gate_rule not in ("sigmoid", "quantile"):
            raise ValueError("gate_rule must be 'sigmoid' (the paper's) or 'quantile'")
        if self.class_trees not in CLASS_TREES:
            raise ValueError(f"class_trees must be one of {CLASS_TREES}, got {self.class_trees!r}")
        if self.gate not in ("auto", "trees", "margin"):
            raise ValueError("gate must be 'auto', 'trees' (the paper's g) or 'margin' (f1's own top-2 margin)")
        check_number("l2", self.l2, low=0)
        check_number("f1_cv", self.f1_cv, low=0, integer=True)

    def _gate_step(self) -> float:
        return float(self.step if self.gate_step is None else self.gate_step)

    def _n_outer(self) -> int:
        """Outer (q-update) iterations: one per ``trees_per_step`` boosting iterations."""
        return -(-int(self.n_trees) // int(self.trees_per_step))

    def _fit_f0(self, X: np.ndarray, y: np.ndarray) -> tuple[BaseEstimator, np.ndarray]:
        """Fitted f0 and its class probabilities on the training rows, columns in classes_ order.

        A model trained here is scored out of fold (``hpc_cv`` folds) so that its
        training-set losses are honest, when every class has ``hpc_cv`` rows (each fold then holds every class;
        else in sample, as fit_f0_k does); a prefit model is scored as it is.
        """
        est = self.hpc
        if isinstance(est, str):
            est = make_hpc(est, self.random_state)
        else:
            try:
                check_is_fitted(est)
            except NotFittedError:
                est = clone(est)
            else:
                return est, self._aligned_proba(est, X)
        if self.hpc_cv and int(self.hpc_cv) > 1 and np.unique(y, return_counts=True)[1].min() >= int(self.hpc_cv):
            # out of fold when every class has a row in each fold (as fit_f0_k); else in sample, as a prefit f0
            cv = StratifiedKFold(int(self.hpc_cv), shuffle=True, random_state=self.random_state)
            proba = cross_val_predict(clone(est), X, y, cv=cv, method="predict_proba")
            est.fit(X, y)
            return est, proba  # columns follow np.unique(y) == classes_
        est.fit(X, y)
        return est, self._aligned_proba(est, X)

    def _aligned_proba(self, est: BaseEstimator, X: np.ndarray) -> np.ndarray:
        proba = est.predict_proba(X)
        cols = np.searchsorted(self.classes_, est.classes_)
        full = np.zeros((X.shape[0], self.classes_.size))
        full[:, cols] = proba
        return full

    def fit(self, X: np.ndarray, y: np.ndarray, f0_proba: np.ndarray | None = None) -> AdaptGbrtClassifier:
        """Fit g and f1 (and f0 unless ``hpc`` is a fitted model).

        ``f0_proba`` (n, n_classes), optional: f0's class probabilities on these
        rows (e.g. out of fold), used instead of scoring a prefit f0 in sample.
        """
        self._check_params()
        X32, y = validate_data(self, X, y, dtype=np.float32, ensure_min_samples=2)
        check_classification_targets(y)
        self.classes_ = np.unique(y)
        K = self.classes_.size
        if K < 2:
            raise ValueError("need at least two classes (1 class in y)")
        if self.gate == "margin" and K == 2:
            raise ValueError("gate 'margin' needs K > 2 classes (f1 of K class scores); two classes use 'trees'")
        self.gate_kind_ = ("margin" if K > 2 else "trees") if self.gate == "auto" else str(self.gate)
        y_idx = np.searchsorted(self.classes_, y)
        self.costs_ = cost_vector(self.costs, self.n_features_in_)
        if f0_proba is not None:
            if isinstance(self.hpc, str):
                raise ValueError("f0_proba needs a fitted model as hpc")
            check_is_fitted(self.hpc)
            P0 = np.asarray(f0_proba, dtype=np.float64)
            if P0.shape != (len(y), K):
                raise ValueError(f"f0_proba must have shape ({len(y)}, {K})")
            self.f0_ = self.hpc
        else:
            self.f0_, P0 = self._fit_f0(X32, y)
        self.f0_proba_ = P0
        self.f0_features_ = sklearn_features_used(self.f0_, self.n_features_in_)
        l0 = -np.log(np.clip(P0[np.arange(len(y)), y_idx], 1e-6, 1.0))

        loss = "logistic" if K == 2 else "multiclass-log"
        n = len(y)
        f1 = make_booster(X32, y_idx, np.ones(n), K, loss, self.costs_, self.step, self.max_depth,
                          self.max_bins, class_trees=self.class_trees, max_delta_step=MAX_DELTA_STEP,
                          l2=float(self.l2))
        Y1 = encode_targets(y_idx, loss, K)
        penalty = self.gamma * penalty_scale(self.costs_)
        per_iter = int(self.trees_per_step)
        gate: Booster | None = None
        G = np.zeros(n, dtype=np.float32)
        self.history_: list[AdaptState] = []
        done = 0
        fold, aux = self._fold_boosters(f1, Y1, y_idx, loss)
        for _ in track(range(self._n_outer()), "ADAPT-GBRT boosting", unit="round"):
            A = self.xi * _pointwise_loss(Y1, _out_of_fold(f1, aux, fold), loss) + _softplus(G.astype(np.float64))
            B = self.xi * self.eta * l0 + _softplus(-G.astype(np.float64))
            q, beta = solve_q(A, B, self.p_full)
            ent = -(np.where(q > 0, q * np.log(np.maximum(q, 1e-300)), 0.0)
                    + np.where(q < 1, (1 - q) * np.log(np.maximum(1 - q, 1e-300)), 0.0))
            self.history_.append(AdaptState(beta, float(q.mean()), float(np.mean((1 - q) * A + q * B - ent))))
            if self.gate_kind_ == "trees" and gate is None:
                gate = Booster(fitter=f1.fitter, Y=q[:, None].copy(), weight=np.ones(n), loss="logistic",
                               costs=self.costs_, step=self._gate_step(), max_depth=self.max_depth, used=f1.used,
                               max_delta_step=MAX_DELTA_STEP)
            if gate is not None:
                gate.Y = q[:, None].copy()
            f1.weight = np.maximum(1.0 - q, 1e-12)
            for j, b in enumerate(aux):  # the fold boosters: f1's weights on the other folds' rows
                b.weight = np.where(fold != j, f1.weight, 0.0)
            for _ in range(min(per_iter, int(self.n_trees) - done)):
                if gate is not None:
                    gate.iterate(penalty)
                f1.iterate(penalty)
                for b in aux:  # features f1 (or the gate) bought are free for them too
                    np.logical_or(b.used, f1.used, out=b.used)
                    b.iterate(penalty)
                done += 1
            if gate is not None:
                G = gate.F[:, 0]
        self.q_ = q
        self.f1_ir_ = ensemble_to_ir(f1.trees, f1.tree_output, f1.base_score, self.n_features_in_,
                                     self.costs_, 0.0)
        if gate is None:  # f1's own margin: its threshold sends the share mean(q) of the training rows to f0
            self.gate_ir_ = None
            self.margin_threshold_ = margin_threshold(top2_margin(_out_of_fold(f1, aux, fold)), float(q.mean()))
            self.train_route_fraction_ = float(np.mean(self.route(X32)))
            return self
        self.gate_ir_ = ensemble_to_ir(gate.trees, gate.tree_output, gate.base_score, self.n_features_in_,
                                       self.costs_, 0.0)
        self.margin_threshold_ = None
        if self.gate_rule == "sigmoid":  # the paper's gate: f0 iff sigma(g(x)) > 1/2
            self.gate_threshold_ = np.float32(0.0)
        else:  # "quantile": route the top mean(q) share of the training inputs (by gate score) to f0
            k = int(np.floor(float(q.mean()) * n))
            Gs = np.sort(G)[::-1]
            thr = np.float32(0.0) if k <= 0 else Gs[k] if k < n else np.nextafter(Gs[-1], np.float32(-np.inf))
            self.gate_threshold_ = np.float32(thr)
        self.gate_ir_["decision_threshold"] = float(self.gate_threshold_)
        self.train_route_fraction_ = float(np.mean(G > self.gate_threshold_))
        return self

    def _fold_boosters(self, f1: Booster, Y1: np.ndarray, y_idx: np.ndarray,
                       loss: str) -> tuple[np.ndarray, list[Booster]]:
        """The fold of every row and one booster per fold (f1's data, trees and charges, grown on the other
        folds' rows) for the cross-fitted f1 loss; no folds (f1's training loss) when ``f1_cv`` < 2 or a class
        has fewer rows than the folds (then at most that many folds)."""
        n = y_idx.size
        k = min(int(self.f1_cv), int(np.bincount(y_idx).min()))
        if k < 2:
            return np.zeros(n, dtype=np.int64), []
        fold = np.empty(n, dtype=np.int64)
        cv = StratifiedKFold(k, shuffle=True, random_state=self.random_state)
        for j, (_, te) in enumerate(cv.split(np.zeros(n), y_idx)):
            fold[te] = j
        assert f1.used is not None
        aux = [Booster(fitter=f1.fitter, Y=Y1, weight=(fold != j).astype(np.float64), loss=loss, costs=self.costs_,
                       step=self.step, max_depth=self.max_depth, class_trees=self.class_trees, used=f1.used.copy(),
                       max_delta_step=MAX_DELTA_STEP, l2=float(self.l2))
               for j in range(k)]
        return fold, aux

    # -- prediction ------------------------------------------------------
    def route(self, X: np.ndarray) -> np.ndarray:
        """True for the inputs the gate sends to the high-cost model f0."""
        X = self._input(X)
        if self.gate_ir_ is None:  # the margin gate: hard iff f1's top-2 margin is not above the threshold
            return ~(top2_margin(ir_staged_scores(self.f1_ir_, X)[0].astype(np.float32)) > self.margin_threshold_)
        return ir_staged_scores(self.gate_ir_, X)[0][:, 0] > self.gate_threshold_

    def _f1_labels(self, X: np.ndarray) -> np.ndarray:
        s = ir_staged_scores(self.f1_ir_, X)[0]
        idx = (s[:, 0] > 0).astype(np.int64) if s.shape[1] == 1 else np.argmax(s, axis=1)
        return self.classes_[idx]

    def _input(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "gate_ir_")
        return validate_data(self, X, dtype=np.float32, reset=False)

    def predict(self, X: np.ndarray) -> np.ndarray:
        X32 = self._input(X)
        hard = self.route(X32)
        out = self._f1_labels(X32)
        if hard.any():
            out[hard] = self.f0_.predict(X32[hard])
        return out

    def predict_proba(self, X: np.ndarray) -> np.ndarray:
        """Class probabilities of the part that answers each row: f1's (sigmoid / softmax of its
        scores) for the rows the gate keeps, f0's for the rows it routes to f0."""
        X32 = self._input(X)
        hard = self.route(X32)
        s = ir_staged_scores(self.f1_ir_, X32)[0].astype(np.float64)
        if s.shape[1] == 1:
            p1 = 1.0 / (1.0 + np.exp(-s[:, 0]))
            proba = np.column_stack([1 - p1, p1])
        else:
            e = np.exp(s - s.max(axis=1, keepdims=True))
            proba = e / e.sum(axis=1, keepdims=True)
        if hard.any():
            p0 = np.asarray(self.f0_.predict_proba(X32[hard]), dtype=np.float64)
            cls0 = getattr(self.f0_, "classes_", self.classes_)
            full = np.zeros((p0.shape[0], self.classes_.size))
            for j, c in enumerate(cls0):
                full[:, int(np.searchsorted(self.classes_, c))] = p0[:, j]
            proba[hard] = full
        return proba

    def predict_f0(self, X: np.ndarray) -> np.ndarray:
        return self.f0_.predict(self._input(X))

    def features_read(self, X: np.ndarray) -> np.ndarray:
        """Bool (n, d): features read per input, as the runtime reads them: the tree gate's path, then f1's paths
        or f0's (a tree ensemble's paths; any other f0 all of its features); with the margin gate f1's paths on
        every input, and f0's too on the inputs it sends there."""
        X32 = self._input(X)
        hard = self.route(X32)
        read = np.zeros(X32.shape, dtype=bool)
        for r in ir_tree_features(self.gate_ir_, X32) if self.gate_ir_ is not None else ():
            read |= r
        low = np.zeros(X32.shape, dtype=bool)
        for r in ir_tree_features(self.f1_ir_, X32):
            low |= r
        if self.gate_ir_ is None:  # f1 decides the route: its paths are read before f0's
            read |= low
        read[~hard] |= low[~hard]
        # f0's rows: the features on their paths through f0, as the runtime reads them (round 68: all of f0's)
        read[hard] |= f0_reads(self.f0_, X32[hard], self.f0_features_, self.costs_)
        return read

    def cost(self, X: np.ndarray) -> np.ndarray:
        return self.features_read(X) @ self.costs_

    def mean_cost(self, X: np.ndarray) -> float:
        return float(np.mean(self.cost(X)))

    def hpc_cost(self, X: np.ndarray | None = None) -> float:
        """Cost of one prediction by f0 alone: without X every feature f0 uses (the paper's charge, an upper
        bound); with X the mean over its rows of the features on their paths, as the runtime reads them."""
        check_is_fitted(self, "f0_")
        if X is None:
            return float(self.f0_features_ @ self.costs_)
        return float(np.mean(f0_reads(self.f0_, self._input(X), self.f0_features_, self.costs_) @ self.costs_))

    def to_tree_ensemble(self) -> dict:
        """IR of the gated model: {"gate": IR or None, "f1": IR, "f0": IR or None, "f0_features": int32[...],
        "margin_threshold": float or None}.

        The gate sends an input to f0 iff its score > gate["decision_threshold"]; with the margin gate ("gate"
        None) iff f1's largest class score minus its second largest is not above "margin_threshold".
        "f0" is None when f0 is not a tree ensemble (e.g. an RBF-SVM).
        """
        check_is_fitted(self, "gate_ir_")
        return {
            "gate": None if self.gate_ir_ is None else {
                k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.gate_ir_.items()},
            "margin_threshold": None if self.margin_threshold_ is None else float(self.margin_threshold_),
            "f1": {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in self.f1_ir_.items()},
            "f0": sklearn_to_tree_ensemble(self.f0_, self.costs_),
            "f0_features": np.flatnonzero(self.f0_features_).astype(np.int32),
            "classes": self.classes_.copy(),
        }


@dataclass
class AdaptSweepPoint:
    p_full: float
    gamma: float
    validation_accuracy: float
    validation_cost: float
    hpc_fraction: float
    model: AdaptGbrtClassifier


@dataclass
class AdaptSweepResult:
    points: list[AdaptSweepPoint]
    chosen: AdaptSweepPoint
    hpc_accuracy: float
    hpc_cost: float


def _adapt_point(first: AdaptGbrtClassifier, Xtr: np.ndarray, ytr: np.ndarray, Xva: np.ndarray, yva: np.ndarray,
                 random_state: int | None, params: dict, pg: tuple[float, float]) -> AdaptSweepPoint:
    """One grid point of adapt_sweep: the first point's model itself, else a model sharing its f0."""
    p, g = pg
    m = first if (p, g) == (first.p_full, first.gamma) else AdaptGbrtClassifier(
        hpc=first.f0_, p_full=p, gamma=g, random_state=random_state, **params
    ).fit(Xtr, ytr, f0_proba=first.f0_proba_)
    acc = float(np.mean(m.predict(Xva) == yva))
    share = float(np.mean(m.route(Xva)))
    return AdaptSweepPoint(p, g, acc, m.mean_cost(Xva), share, m)


def adapt_sweep(
    X: np.ndarray,
    y: np.ndarray,
    p_fulls: list[float],
    gammas: list[float],
    hpc: str | BaseEstimator = "rf",
    tolerance: float = 0.01,
    budget: float | None = None,
    validation_fraction: float = 0.2,
    random_state: int | None = 0,
    jobs: int | None = None,
    scheduler: str | None = None,
    **params: object,
) -> AdaptSweepResult:
    """Grid over (P_full, gamma) on one split with one shared f0.

    With ``budget``: keep the most accurate model whose mean validation cost fits
    it; otherwise the cheapest whose validation accuracy is within ``tolerance``
    (absolute) of f0's. Falls back to the most accurate model if none qualifies.
    ``jobs``/``scheduler``: fit the grid in parallel (compiler.parallel.run_map), same results.
    """
    X32 = as_float32_matrix(X)
    y = np.asarray(y)
    _, y_idx = np.unique(y, return_inverse=True)
    tr, va = train_test_split(np.arange(len(y)), test_size=validation_fraction, random_state=random_state,
                              stratify=y_idx)
    first = AdaptGbrtClassifier(hpc=hpc, p_full=p_fulls[0], gamma=gammas[0], random_state=random_state,
                                **params)
    first.fit(X32[tr], y[tr])
    f0 = first.f0_
    hpc_acc = float(np.mean(f0.predict(X32[va]) == y[va]))
    grid = [(p, g) for p in p_fulls for g in gammas]
    fit = partial(_adapt_point, first, X32[tr], y[tr], X32[va], y[va], random_state, params)
    points = run_map(fit, grid, jobs, scheduler, desc="ADAPT-GBRT sweep")
    if budget is not None:
        ok = [pt for pt in points if pt.validation_cost <= budget]
        chosen = max(ok, key=lambda pt: (pt.validation_accuracy, -pt.validation_cost)) if ok else None
    else:
        ok = [pt for pt in points if pt.validation_accuracy >= hpc_acc - tolerance]
        chosen = min(ok, key=lambda pt: (pt.validation_cost, -pt.validation_accuracy)) if ok else None
    if chosen is None:
        chosen = max(points, key=lambda pt: (pt.validation_accuracy, -pt.validation_cost))
    return AdaptSweepResult(points=points, chosen=chosen, hpc_accuracy=hpc_acc, hpc_cost=first.hpc_cost())
