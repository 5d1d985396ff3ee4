"""ADAPT-LIN: linear gate g and linear low-cost model f1 with a cost-weighted group-sparse penalty.

Nan & Saligrama, "Adaptive Classification for Prediction Under a Budget", NIPS 2017. The model
alternates two steps on the training set (z = 1 means "sent to the high-cost model f0"):

1. q step (closed form, ``gated_common.q_step``) with
   A_i = log(1 + exp(-y_i f1(x_i))) + log(1 + exp(g(x_i)))   (answer with f1),
   B_i = -log P_f0(y_i | x_i)       + log(1 + exp(-g(x_i)))  (answer with f0),
   where g(x) is the gate's log-odds of "send to f0".
2. g, f1 step for fixed q:
   min (1/N) sum_i [q_i log(1 + e^{-g(x_i)}) + (1 - q_i)(log(1 + e^{g(x_i)}) + log(1 + e^{-y_i f1(x_i)}))]
       + gamma * sum_j c_j * ||(g_j, f1_j)||_2 + (l2 / 2) * (||g||^2 + ||f1||^2),
   solved by accelerated proximal gradient (FISTA) with group soft-thresholding. Group j ties the
   gate's and f1's weight of feature j, so both read the same features; c_j is feature j's cost.

Features are standardised for training (compiler.standardize); the exported scorers work on raw features.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted, validate_data

from compiler.blas_threads import one_blas_thread
from compiler.costs import FeatureCosts
from compiler.estimators import check_float32_range
from compiler.gated.common import SparseLinear, f0_reads, gated_costs, prepare_gated, q_step, sigmoid, softplus
from compiler.params import check_flag, check_number
from compiler.standardize import Standardizer

CostsLike = FeatureCosts | Sequence[float] | np.ndarray | None


def group_soft_threshold(V: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """Proximal operator of sum_j t_j * ||V[j, :]||_2: each row j shrunk towards 0 by t_j in norm.

    Row j becomes V[j] * max(0, 1 - t_j / ||V[j]||); a row whose norm is <= t_j becomes exactly 0.
    With one column this is the ordinary soft-thresholding of the lasso.
    """
    return _shrink(np.asarray(V, dtype=np.float64), np.asarray(thresholds, dtype=np.float64).reshape(-1))


_TINY = float(np.finfo(np.float64).tiny)


def _shrink(V: np.ndarray, t: np.ndarray) -> np.ndarray:
    """group_soft_threshold on float64 V and 1-D t, no conversions (FISTA's inner loop)."""
    norms = np.sqrt((V * V).sum(axis=1))
    # scale 1 - t/norm, 0 where norm <= t (exactly: a row of norm 0 with t = 0 multiplies zeros)
    scale = 1.0 - t / np.maximum(norms, _TINY)
    scale[norms <= t] = 0.0
    return V * scale[:, None]


def quantile_threshold(easy_score: np.ndarray, share: float) -> np.float32:
    """float32 t such that the rows with easy_score <= t (those sent to f0) are the floor(share * n)
    lowest-scoring rows (more only at ties)."""
    s = np.sort(np.asarray(easy_score, dtype=np.float32))
    k = int(np.floor(share * s.size + 1e-9))
    if k <= 0:
        return np.float32(np.nextafter(s[0], np.float32(-np.inf)))
    return np.float32(s[min(k, s.size) - 1])


def lipschitz_logistic(Xs: np.ndarray) -> float:
    """Upper bound of the gradient's Lipschitz constant of the mean logistic loss (with an intercept)."""
    n = Xs.shape[0]
    Xa = np.hstack([Xs, np.ones((n, 1))])
    return 0.25 * float(np.linalg.eigvalsh(Xa.T @ Xa / n)[-1])


def fit_gate_f1(Xs: np.ndarray, ys: np.ndarray, q: np.ndarray, penalty: np.ndarray, l2: float,
                W: np.ndarray, b: np.ndarray, n_iter: int, lipschitz: float,
                tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
    """FISTA for the g, f1 step. W[:, 0] = g, W[:, 1] = f1 (standardised space), b = (g0, f1_0).

    penalty[j] = gamma * c_j. ys in {-1, +1}. Returns the last proximal iterate (exact zeros kept).
    """
    n = Xs.shape[0]
    # the gradient with respect to the scores S = (g, f1): column 0 (sigmoid(g) - q) / n, column 1
    # -(1 - q) y sigmoid(-y f1) / n; one sigmoid over both columns: sigmoid(S * sign) * scale - shift
    sign = np.column_stack([np.ones(n), -ys])
    scale = np.column_stack([np.full(n, 1.0 / n), -(1.0 - q) * ys / n])
    shift = np.column_stack([q / n, np.zeros(n)])

    def residuals(S: np.ndarray) -> np.ndarray:
        return expit(S * sign) * scale - shift

    return fista_group(Xs, residuals, penalty, l2, W, b, n_iter, lipschitz, tol)


def fista_group(Xs: np.ndarray, residuals: Callable[[np.ndarray], np.ndarray], penalty: np.ndarray,
                l2: float, W: np.ndarray, b: np.ndarray, n_iter: int, lipschitz: float,
                tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
    """FISTA with adaptive restart for a smooth loss + sum_j penalty_j ||W[j, :]|| + l2/2 ||W||^2 over
    the columns of W (standardised space) and the intercepts b; ``residuals(S)`` is the loss's
    gradient with respect to the scores S = Xs @ W + b (n x columns of W).

    Each iteration is a handful of whole-array numpy calls (no per-column work): the sweeps fit
    thousands of these on small folds, where the calls' overhead is the time (round 61: a 5-fold
    adapt-lin --sweep on 20 rows took 73 s, mostly here).
    """
    step = 1.0 / (lipschitz + l2)
    thresholds = step * np.asarray(penalty, dtype=np.float64).reshape(-1)
    keep = 1.0 - step * l2  # y - step * (X'R + l2 y) = keep * y - step * X'R
    XsT = np.ascontiguousarray(Xs.T)
    x_w, x_b = W.copy(), b.copy()
    y_w, y_b = W.copy(), b.copy()
    t = 1.0
    for _ in range(n_iter):
        R = residuals(Xs @ y_w + y_b)
        new_w = _shrink(keep * y_w - step * (XsT @ R), thresholds)
        new_b = y_b - step * R.sum(axis=0)
        d_w, d_b = new_w - x_w, new_b - x_b
        # gradient-based adaptive restart keeps FISTA monotone-ish on this smooth + prox problem
        if np.vdot(y_w - new_w, d_w) + np.vdot(y_b - new_b, d_b) > 0:
            t = 1.0
        t_next = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * t * t))
        mom = (t - 1.0) / t_next
        delta = max(np.abs(d_w).max(initial=0.0), np.abs(d_b).max())
        y_w = new_w + mom * d_w
        y_b = new_b + mom * d_b
        x_w, x_b, t = new_w, new_b, t_next
        if delta < tol:
            break
    return x_w, x_b


class GatedLinearBase(ClassifierMixin, BaseEstimator):
    """Prediction, routing, costs and export shared by the linear gated models.

    Subclasses set in ``fit``: classes_, n_features_in_, f0_ (PrefitF0), gate_ and f1_
    (SparseLinear: the gate's score > threshold means "easy, answer with f1"), costs_; for K > 2
    classes f1_k_, one SparseLinear per class (f1 answers the largest score's class; f1_ is then
    f1_k_[0]), else f1_k_ is empty (compiler.gated.linear_k); margin_threshold_: None for the linear
    gate, else the margin gate's float32 threshold (easy iff f1's top-2 score margin > it; gate_ is then
    an empty scorer).
    """

    margin_threshold_: float | None = None

    algorithm = "gated-linear"

    def _check(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "gate_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        check_float32_range(X)  # as at fit: the device reads float32
        return X

    @property
    def used_features_(self) -> np.ndarray:
        """Sorted indices of the features read by the gate or f1 (int32)."""
        check_is_fitted(self, "gate_")
        used = [self.gate_.feature, self.f1_.feature, *(s.feature for s in self.f1_k_)]
        return np.unique(np.concatenate(used)).astype(np.int32)

    def route(self, X: Any) -> np.ndarray:
        """Boolean array: True where the input is sent to f0 (the gate did not say "easy")."""
        return self._route(self._check(X))

    def _route(self, Xa: np.ndarray) -> np.ndarray:
        if self.margin_threshold_ is not None:
            from compiler.gated.linear_k import margin_f32  # noqa: PLC0415

            return ~(margin_f32(self.f1_k_, Xa) > np.float32(self.margin_threshold_))
        return ~self.gate_.decide(Xa)

    def _margin_gate(self, Xa: np.ndarray, share: float) -> None:
        """The margin gate (K > 2): the threshold sending the share of training rows of smallest margin to f0;
        gate_ an empty scorer (the gate reads no feature)."""
        from compiler.gated.linear_k import margin_threshold  # noqa: PLC0415

        self.margin_threshold_ = margin_threshold(self.f1_k_, Xa, share)
        self.gate_ = SparseLinear(np.zeros(0, np.int32), np.zeros(0, np.float32), np.float32(0.0), np.float32(0.0))
        self.train_route_fraction_ = float(np.mean(self._route(Xa)))

    def predict(self, X: Any) -> np.ndarray:
        Xa = self._check(X)
        to_f0 = self._route(Xa)
        if self.f1_k_:
            from compiler.gated.linear_k import argmax_f32  # noqa: PLC0415

            out = self.classes_[argmax_f32(self.f1_k_, Xa)]
        else:
            out = self.classes_[self.f1_.decide(Xa).astype(np.int64)]
        if np.any(to_f0):
            out[to_f0] = self.f0_.estimator.predict(Xa[to_f0])
        return out

    def predict_proba(self, X: Any) -> np.ndarray:
        """f1 rows: logistic of f1's float32 score; f0 rows: f0's probabilities."""
        Xa = self._check(X)
        to_f0 = self._route(Xa)
        if self.f1_k_:
            return self._proba_k(Xa, to_f0)
        p1 = sigmoid(self.f1_.score(Xa).astype(np.float64) - float(self.f1_.threshold))
        if np.any(to_f0):
            est = self.f0_.estimator
            proba = np.asarray(est.predict_proba(Xa[to_f0]), dtype=np.float64)
            p1[to_f0] = proba[:, list(est.classes_).index(self.classes_[1])]
        return np.stack([1.0 - p1, p1], axis=1)

    def _proba_k(self, Xa: np.ndarray, to_f0: np.ndarray) -> np.ndarray:
        """f1 rows: softmax of f1's class scores; f0 rows: f0's probabilities in classes_ order."""
        from compiler.gated.linear_k import scores_f64, softmax  # noqa: PLC0415

        proba = softmax(scores_f64(self.f1_k_, Xa))
        if np.any(to_f0):
            est = self.f0_.estimator
            p0 = np.asarray(est.predict_proba(Xa[to_f0]), dtype=np.float64)
            full = np.zeros((p0.shape[0], self.classes_.size))
            for j, c in enumerate(est.classes_):
                full[:, int(np.searchsorted(self.classes_, c))] = p0[:, j]
            proba[to_f0] = full
        return proba

    def sample_costs(self, X: Any) -> np.ndarray:
        """Cost of the distinct features read for each row, as the runtime reads them: the gate's and f1's
        features, and on the rows sent to f0 also the features on their paths through f0 (a tree ensemble; any
        other f0: every feature it uses)."""
        to_f0 = self.route(X)
        out = gated_costs(np.zeros_like(to_f0), self.used_features_, self.f0_.features, self.costs_)
        if np.any(to_f0):
            Xa = self._check(X)
            cheap = np.zeros(self.costs_.shape[0], dtype=bool)
            cheap[np.asarray(self.used_features_, dtype=np.int64)] = True
            read = f0_reads(self.f0_.estimator, Xa[to_f0], self.f0_.features, self.costs_) | cheap
            out[to_f0] = read @ self.costs_
        return out

    def mean_cost(self, X: Any) -> float:
        return float(self.sample_costs(X).mean())

    def hpc_fraction(self, X: Any) -> float:
        """Share of the rows sent to f0."""
        return float(self.route(X).mean())

    def to_gated_dict(self) -> dict[str, Any]:
        """Plain-type description for the runtime.

        gate/f1: {feature int32[nnz], weight float32[nnz], bias float32, decision_threshold float32};
        score = bias + sum_k weight[k] * x[feature[k]] in float32, in stored order. The gate says
        "easy -> answer with f1" iff its score > its threshold; f1 answers classes[1] iff its score >
        its threshold, else classes[0]. f0 is described (kind, the features it reads); the fitted
        estimator itself is ``self.f0_.estimator``.
        """
        check_is_fitted(self, "gate_")
        return {
            "kind": "gated",
            "algorithm": self.algorithm,
            "n_features": int(self.n_features_in_),
            "classes": [c.item() if hasattr(c, "item") else c for c in self.classes_],
            "costs": self.costs_.astype(np.float32),
            "gate": {"type": "linear", **self.gate_.to_dict()},
            "f1": {"type": "linear", **self.f1_.to_dict()},
            "f0": {"kind": self.f0_.kind, "features": self.f0_.features.astype(np.int32), "remote": False},
        }


class AdaptLinClassifier(GatedLinearBase):
    """ADAPT-LIN gated classifier (binary).

    Parameters
    ----------
    hpc: the high-cost model f0: "rf", "gbrt", "svm-rbf", a pickle path, an estimator, or a PrefitF0.
    p_full: upper bound on the share of training rows sent to f0 (the q-step constraint).
    gamma: weight of the cost-weighted group-sparse penalty (larger -> fewer features).
    costs: per-feature costs (FeatureCosts, array, or None for 1 each).
    n_iter: alternations of the q step and the g, f1 step.
    inner_iter: FISTA iterations per g, f1 step.
    l2: small ridge on the weights (keeps separable problems bounded when gamma is 0).
    split_features: the objective is not convex, so the alternation starts from several points and
        keeps the one with the lowest objective: the paper's start (f1 = sparse logistic fit on all
        rows, g = 0) and, for each of the ``split_features`` features that the objective's gradient
        ranks first, the two hard assignments "the p_full share of rows with the largest (smallest)
        value of the feature goes to f0". 0 keeps the paper's start only.
    gate_rule: "quantile" (default): the gate's threshold is set after training so that the share of
        training rows sent to f0 equals mean(q) (<= p_full); "sigmoid": the paper's rule, f0 iff
        sigma(g(x)) > 1/2. A linear g fitted to soft q has mean sigma(g) = mean(q) = p_full but, unless
        it separates the rows, sigma(g) stays near p_full for most rows, so the sigmoid rule sends almost
        none (p_full < 1/2) or almost all (p_full > 1/2) rows to f0 (Letters: 0.00 at 0.1, 0.93 at 0.7).
        The quantile rule keeps the ranking the paper's g learns and makes the P_full budget hold.
    gate: "auto" (default: "margin" for K > 2 classes, "linear" for two), "linear" (the paper's g, exported
        by gate_rule) or "margin" (K > 2: the alternation trains f1 as the paper's, then the exported gate
        is f1's own top-2 score margin, its threshold sending the same share mean(q) of the training rows
        to f0; compiler.gated.linear_k).
    refit_f1: K > 2 classes: refit f1 on the features the alternation picked, without the L1 shrinkage (a multinomial
        logistic regression weighted by 1 - q, the rows f1 answers; the "relaxed lasso"). None (default): with
        the margin gate only, whose gate is f1's own confidence; the linear gate was fitted jointly with the
        shrunk f1 and keeps it. On digits (seed 0, gamma 0.125, P 0.2, 15 features) the refit f1 behind the
        margin gate gave 0.9694 validation accuracy where the shrunk one gave 0.9276 (docs/gated.md).
    random_state: seed of f0 and of its out-of-fold split.
    """

    algorithm = "adapt-lin"

    def __init__(self, hpc: Any = "rf", p_full: float = 0.3, gamma: float = 0.01, costs: CostsLike = None,
                 n_iter: int = 20, inner_iter: int = 300, l2: float = 1e-4, split_features: int = 4,
                 gate_rule: str = "quantile", gate: str = "auto", refit_f1: bool | None = None,
                 random_state: int | None = 0) -> None:
        self.hpc = hpc
        self.p_full = p_full
        self.gamma = gamma
        self.costs = costs
        self.n_iter = n_iter
        self.inner_iter = inner_iter
        self.l2 = l2
        self.split_features = split_features
        self.gate_rule = gate_rule
        self.gate = gate
        self.refit_f1 = refit_f1
        self.random_state = random_state

    def _validate_params(self) -> None:
        check_number("p_full", self.p_full, low=0, high=1)
        check_number("gamma", self.gamma, low=0)
        check_flag("refit_f1", self.refit_f1, none_ok=True)
        check_number("n_iter", self.n_iter, low=1, integer=True)
        check_number("inner_iter", self.inner_iter, low=1, integer=True)
        check_number("split_features", self.split_features, low=0, integer=True)
        check_number("l2", self.l2, low=0)
        if self.gate_rule not in ("sigmoid", "quantile"):
            raise ValueError(f"gate_rule must be 'sigmoid' (the paper's) or 'quantile', got {self.gate_rule!r}")

    @one_blas_thread
    def fit(self, X: Any, y: Any) -> AdaptLinClassifier:
        self._validate_params()
        inputs = prepare_gated(self, X, y)
        Xa, y01, costs, f0, std, Xs = inputs.X, inputs.y, inputs.costs, inputs.f0, inputs.std, inputs.Xs
        from compiler.gated.linear_k import gate_kind  # noqa: PLC0415 - linear_k imports this module

        self.gate_kind_ = gate_kind(self.gate, inputs.classes.size)
        self.margin_threshold_ = None
        n, d = Xa.shape
        self.f1_k_: list[SparseLinear] = []
        if inputs.classes.size > 2:
            return self._fit_k(Xa, Xs, std, y01, costs, f0)
        ys = 2.0 * y01.astype(np.float64) - 1.0
        lip = lipschitz_logistic(Xs)
        penalty = float(self.gamma) * costs
        neg_log_p0 = -np.log(np.clip(f0.label_proba, 1e-12, 1.0))

        starts = self._starts(Xs, ys, penalty, lip)
        # short alternation from every start, then finish the one with the lowest objective
        best: tuple[float, np.ndarray, np.ndarray] | None = None
        short = min(int(self.n_iter), 5)
        for W0, b0 in starts:
            W, b, _ = self._alternate(Xs, ys, neg_log_p0, penalty, lip, W0, b0, short)
            J = self._objective(Xs, ys, neg_log_p0, penalty, W, b)
            if best is None or J < best[0] - 1e-12:
                best = (J, W, b)
        assert best is not None
        W, b, n_done = self._alternate(Xs, ys, neg_log_p0, penalty, lip, best[1], best[2],
                                       int(self.n_iter) - short)
        self.n_iter_ = short + n_done
        self.objective_ = self._objective(Xs, ys, neg_log_p0, penalty, W, b)
        q, beta = self._q(Xs, ys, neg_log_p0, W, b)
        self.q_, self.beta_ = q, beta
        self.coef_std_, self.intercept_std_ = W, b

        self._set_gate(Xa, std, W, b, q)
        h_raw, h0_raw = std.to_raw(W[:, 1], b[1])
        self.f1_ = SparseLinear.from_dense(h_raw, h0_raw, 0.0)
        self.classes_ = inputs.classes
        self.n_features_in_ = d
        self.costs_ = costs
        self.f0_ = f0
        return self

    def _fit_k(self, Xa: np.ndarray, Xs: np.ndarray, std: Standardizer, yidx: np.ndarray, costs: np.ndarray,
               f0: Any) -> AdaptLinClassifier:
        """K > 2 classes: compiler.gated.linear_k's alternation, f1 K class scorers."""
        from compiler.gated.linear_k import adapt_lin_k, multinomial_on, scorers_k  # noqa: PLC0415

        K = int(self.classes_.size)
        neg_log_p0 = -np.log(np.clip(f0.label_proba, 1e-12, 1.0))
        W, b, q = adapt_lin_k(Xs, yidx, K, neg_log_p0, float(self.gamma) * costs, float(self.p_full),
                              float(self.l2), int(self.n_iter), int(self.inner_iter))
        self.q_, self.coef_std_, self.intercept_std_, self.n_iter_ = q, W, b, int(self.n_iter)
        refit = self.gate_kind_ == "margin" if self.refit_f1 is None else bool(self.refit_f1)
        if refit:  # f1 without the L1 shrinkage, on the alternation's features and its rows (weights 1 - q)
            support = np.flatnonzero(np.any(W[:, 1:] != 0.0, axis=1))
            weight = 1.0 - q
            W1, b1 = multinomial_on(Xs, yidx, K, support, 1.0, weight if weight.sum() >= 1.0 else None)
            W, b = W.copy(), b.copy()
            W[:, 1:], b[1:] = W1, b1
        self.f1_k_ = scorers_k(std, W[:, 1:], b[1:])
        self.f1_ = self.f1_k_[0]
        if self.gate_kind_ == "margin":
            self._margin_gate(Xa, float(q.mean()))
        else:
            self._set_gate(Xa, std, W, b, q)
        self.n_features_in_, self.costs_, self.f0_ = Xa.shape[1], costs, f0
        return self

    def _set_gate(self, Xa: np.ndarray, std: Standardizer, W: np.ndarray, b: np.ndarray, q: np.ndarray) -> None:
        """The exported gate from the standardized scorer 0 (W[:, 0], b[0]): its score is -g(x), "easy" (answer
        with f1) iff -g(x) > 0 (or above the quantile of the routed share q with gate_rule "quantile")."""
        g_raw, g0_raw = std.to_raw(W[:, 0], b[0])
        self.gate_ = SparseLinear.from_dense(-g_raw, -g0_raw, 0.0)
        if self.gate_rule == "quantile":
            self.gate_ = dataclasses.replace(self.gate_, threshold=quantile_threshold(self.gate_.score(Xa),
                                                                                       float(q.mean())))
        self.train_route_fraction_ = float(np.mean(~self.gate_.decide(Xa)))

    # -- the alternation ---------------------------------------------------------------------

    def _q(self, Xs: np.ndarray, ys: np.ndarray, neg_log_p0: np.ndarray, W: np.ndarray,
           b: np.ndarray) -> tuple[np.ndarray, float]:
        sg = Xs @ W[:, 0] + b[0]
        sh = Xs @ W[:, 1] + b[1]
        A = softplus(-ys * sh) + softplus(sg)
        B = neg_log_p0 + softplus(-sg)
        return q_step(A, B, float(self.p_full))

    def _objective(self, Xs: np.ndarray, ys: np.ndarray, neg_log_p0: np.ndarray, penalty: np.ndarray,
                   W: np.ndarray, b: np.ndarray) -> float:
        """min over q of mean[(1 - q) A + q B - H(q)] + sum_j penalty_j ||W_j|| + l2/2 ||W||^2."""
        sg = Xs @ W[:, 0] + b[0]
        sh = Xs @ W[:, 1] + b[1]
        A = softplus(-ys * sh) + softplus(sg)
        B = neg_log_p0 + softplus(-sg)
        q, _ = q_step(A, B, float(self.p_full))
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = -(np.where(q > 0, q * np.log(q), 0.0) + np.where(q < 1, (1 - q) * np.log1p(-q), 0.0))
        data = float(np.mean((1.0 - q) * A + q * B - ent))
        group = float(np.sum(penalty * np.sqrt(np.sum(W * W, axis=1))))
        return data + group + 0.5 * self.l2 * float(np.sum(W * W))

    def _alternate(self, Xs: np.ndarray, ys: np.ndarray, neg_log_p0: np.ndarray, penalty: np.ndarray,
                   lip: float, W: np.ndarray, b: np.ndarray,
                   n_iter: int) -> tuple[np.ndarray, np.ndarray, int]:
        done = 0
        for _ in range(n_iter):
            q, _ = self._q(Xs, ys, neg_log_p0, W, b)
            W_new, b_new = fit_gate_f1(Xs, ys, q, penalty, self.l2, W, b, int(self.inner_iter), lip)
            change = max(float(np.max(np.abs(W_new - W))), float(np.max(np.abs(b_new - b))))
            W, b = W_new, b_new
            done += 1
            if change < 1e-6:
                break
        return W, b, done

    def _starts(self, Xs: np.ndarray, ys: np.ndarray, penalty: np.ndarray,
                lip: float) -> list[tuple[np.ndarray, np.ndarray]]:
        n, d = Xs.shape
        inner = int(self.inner_iter)
        # the paper's start: f1 fitted on all rows (q = 0), gate undecided
        W, b = fit_gate_f1(Xs, ys, np.zeros(n), penalty, self.l2, np.zeros((d, 2)), np.zeros(2), inner, lip)
        W[:, 0] = 0.0
        b[0] = 0.0
        starts = [(W, b)]
        k = min(int(self.split_features), d)
        p = float(self.p_full)
        if k == 0 or p <= 0.0 or p >= 1.0:
            return starts
        # rank features by the norm of the objective's gradient for their group at the paper's start
        sg = np.zeros(n)
        sh = Xs @ W[:, 1] + b[1]
        r_g = sigmoid(sg) - p
        r_h = -ys * sigmoid(-ys * sh)
        grad = np.sqrt((Xs.T @ r_g) ** 2 + (Xs.T @ r_h) ** 2) / n
        score = grad / np.maximum(penalty, 1e-12) if np.any(penalty > 0) else grad
        order = np.argsort(-score, kind="stable")
        m = int(round(p * n))
        for j in order[:k]:
            for sign in (1.0, -1.0):
                rank = np.argsort(-sign * Xs[:, j], kind="stable")
                q0 = np.zeros(n)
                q0[rank[:m]] = 1.0
                Wj, bj = fit_gate_f1(Xs, ys, q0, penalty, self.l2, np.zeros((d, 2)), np.zeros(2), inner, lip)
                starts.append((Wj, bj))
        return starts
