"""The L1 baseline of Nan & Saligrama (NIPS 2017) for gated prediction.

1. An L1 (lasso) logistic regression on all training rows picks the features: those with a nonzero
   weight at penalty strength ``gamma`` (weighted by feature cost: penalty gamma * sum_j c_j |w_j|).
2. The low-cost model f1 is a logistic regression on those features, fitted on all training rows.
3. The gate learns f1's correctness as pseudo-labels (1 = f1 right = "easy") by a logistic
   regression on the same features; its threshold is set on the training rows so that at most a
   share ``p_full`` of them is sent to f0 (the lowest gate scores).

Unlike ADAPT-LIN, the features and f1 are chosen before, and regardless of, the gate.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression

from compiler.blas_threads import one_blas_thread
from compiler.gated.adapt_lin import CostsLike, GatedLinearBase, fit_gate_f1, lipschitz_logistic
from compiler.gated.common import SparseLinear, check_Xy, prepare_gated
from compiler.gated.linear_k import gate_kind
from compiler.params import check_number
from compiler.standardize import Standardizer


def lasso_logistic_support(Xs: np.ndarray, ys: np.ndarray, penalty: np.ndarray,
                           n_iter: int = 2000) -> np.ndarray:
    """Indices of the nonzero weights of min mean logistic loss + sum_j penalty_j |w_j| (standardised X).

    Solved by FISTA with soft-thresholding (the one-column case of the group prox).
    """
    n, d = Xs.shape
    lip = lipschitz_logistic(Xs)
    # the two-column solver with q = 0: the gate column's weights get no gradient (standardised
    # columns have mean 0) and stay 0, so each group norm is |w_j| of the f1 column
    W, _ = fit_gate_f1(Xs, ys, np.zeros(n), penalty, 0.0, np.zeros((d, 2)), np.zeros(2), n_iter, lip,
                       tol=1e-9)
    return np.flatnonzero(W[:, 1] != 0.0)


# --sweep's default gamma grid: these shares of gamma_max (the smallest gamma at which f1 keeps no feature), the
# path of glmnet's lambda_max: scale-free, so one grid serves any costs file and any data set (round 24: the old
# absolute grid 0, 0.01, 0.1, 0.3 had no point between 0.1 = 0.4 gamma_max and 0.3 > gamma_max on digits).
GAMMA_SHARES = (0.0, 0.03, 0.1, 0.2, 0.35, 0.5, 0.7)


def gamma_max(X: np.ndarray, y: np.ndarray, costs: np.ndarray) -> float:
    """The smallest gamma at which the cost-weighted L1 fit of f1 (K > 2 classes: group lasso) keeps no feature.

    At w = 0 with the bias at the class priors p, w = 0 is optimal iff every standardised column j has
    ||X_j^T (p - Y)|| / n <= gamma c_j (the one-vector KKT condition; Y one-hot, the norm over the classes, one
    column for two classes): gamma_max = max_j ||X_j^T (p - Y)|| / (n c_j) over the features with c_j > 0 (0 when
    every feature is free: the penalty then never drops one). Free features (c_j = 0) move the optimum away from
    the priors, and with them the bound is the priors' one: an estimate of where the priced features go.
    """
    Xa = np.asarray(X, dtype=np.float64)
    _, yidx = np.unique(np.asarray(y), return_inverse=True)
    n, K = Xa.shape[0], int(yidx.max(initial=0)) + 1
    Xs = Standardizer(Xa).transform(Xa)
    if K <= 2:
        g = np.abs(Xs.T @ (yidx.mean() - yidx)) / n
    else:
        R = np.bincount(yidx, minlength=K)[None, :] / n - np.eye(K)[yidx]
        g = np.linalg.norm(Xs.T @ R, axis=1) / n
    c = np.asarray(costs, dtype=np.float64)
    priced = c > 0
    return float(np.max(g[priced] / c[priced])) if priced.any() else 0.0


def gamma_grid(X: np.ndarray, y: np.ndarray, costs: np.ndarray,
               shares: tuple[float, ...] = GAMMA_SHARES) -> list[float]:
    """--sweep's default gammas: the shares of :func:`gamma_max`, each rounded to 4 significant digits (so that
    ``--gamma`` with the printed value refits the same point), duplicates dropped, ascending."""
    top = gamma_max(X, y, costs)
    return sorted({float(f"{s * top:.4g}") for s in shares})


def quantile_threshold(scores: np.ndarray, p_full: float) -> np.float32:
    """Largest float32 threshold t such that mean(scores <= t) <= p_full (rows with score <= t go to f0)."""
    s = np.sort(np.asarray(scores, dtype=np.float32))
    n = s.shape[0]
    m = int(np.floor(p_full * n + 1e-9))
    if m >= n:
        return np.float32(np.inf)
    # rows with score <= t must number <= m: t < s[m]; the largest float32 below s[m]
    return np.nextafter(s[m], np.float32(-np.inf), dtype=np.float32)


class L1GateClassifier(GatedLinearBase):
    """L1 baseline gated classifier (K >= 2 classes; K > 2: compiler.gated.linear_k).

    Parameters
    ----------
    hpc: the high-cost model f0 ("rf", "gbrt", "svm-rbf", a pickle path, an estimator, a PrefitF0).
    p_full: at most this share of the training rows is sent to f0.
    gamma: strength of the cost-weighted L1 penalty that picks the features (larger -> fewer).
    costs: per-feature costs (FeatureCosts, array, or None for 1 each).
    C: inverse L2 strength of the logistic regressions of f1 and of the gate.
    gate: "auto" (default: "margin" for K > 2 classes, "linear" for two), "linear" (the correctness
        regression above) or "margin" (K > 2: f1's own top-2 score margin, its threshold sending the
        share p_full of the training rows with the smallest margins to f0; compiler.gated.linear_k).
    random_state: seed of f0.
    """

    algorithm = "l1-gate"

    def __init__(self, hpc: Any = "rf", p_full: float = 0.3, gamma: float = 0.01, costs: CostsLike = None,
                 C: float = 1.0, gate: str = "auto", random_state: int | None = 0) -> None:
        self.hpc = hpc
        self.p_full = p_full
        self.gamma = gamma
        self.costs = costs
        self.C = C
        self.gate = gate
        self.random_state = random_state

    @one_blas_thread
    def fit(self, X: Any, y: Any) -> L1GateClassifier:
        check_number("p_full", self.p_full, low=0, high=1)
        check_number("gamma", self.gamma, low=0)
        check_number("C", self.C, low=0, low_open=True)
        inputs = prepare_gated(self, X, y)
        Xa, y01, costs, std, Xs = inputs.X, inputs.y, inputs.costs, inputs.std, inputs.Xs
        self.gate_kind_ = gate_kind(self.gate, inputs.classes.size)
        self.margin_threshold_ = None
        n, d = Xa.shape
        self.f1_k_: list[SparseLinear] = []
        self.n_features_in_, self.costs_, self.f0_ = d, costs, inputs.f0
        if inputs.classes.size > 2:
            return self._fit_k(Xa, Xs, std, y01)
        ys = 2.0 * y01.astype(np.float64) - 1.0
        support = lasso_logistic_support(Xs, ys, float(self.gamma) * costs)
        self.support_ = support.astype(np.int32)

        h = np.zeros(d)
        h0 = 0.0
        if support.size:
            lr = LogisticRegression(C=float(self.C)).fit(Xs[:, support], y01)
            h[support] = lr.coef_[0]
            h0 = float(lr.intercept_[0])
        else:
            prior = float(np.clip(y01.mean(), 1e-6, 1 - 1e-6))
            h0 = float(np.log(prior / (1.0 - prior)))
        h_raw, h0_raw = std.to_raw(h, h0)
        self.f1_ = SparseLinear.from_dense(h_raw, h0_raw, 0.0)

        self._fit_gate(Xa, Xs, std, y01)
        return self

    @one_blas_thread  # as fit
    def with_p_full(self, X: Any, y: Any, p_full: float) -> L1GateClassifier:
        """This fitted model at another P, as ``fit(X, y)`` with ``p_full`` would give it: f0, the support and f1
        do not depend on P and are kept, the gate is refitted on (X, y), the rows this model was fitted on
        (--sweep fits f1 once per gamma)."""
        if not 0.0 <= float(p_full) <= 1.0:
            raise ValueError(f"p_full must be in [0, 1], got {p_full}")
        if not hasattr(self, "support_"):
            raise ValueError("with_p_full needs a fitted model")
        m = copy.copy(self)
        m.p_full = p_full
        Xa, yidx, _ = check_Xy(X, y, m)
        std = Standardizer(Xa)
        m._fit_gate(Xa, std.transform(Xa), std, yidx)
        return m

    def _fit_gate(self, Xa: np.ndarray, Xs: np.ndarray, std: Standardizer, yidx: np.ndarray) -> None:
        """The gate of the fitted f1 at ``p_full`` on the training rows: f1's margin (K > 2, gate "margin") or a
        logistic regression of f1's correctness on the support."""
        if self.gate_kind_ == "margin":
            self._margin_gate(Xa, float(self.p_full))
            return
        if self.f1_k_:
            from compiler.gated.linear_k import argmax_f32  # noqa: PLC0415

            pred = argmax_f32(self.f1_k_, Xa)
        else:
            pred = self.f1_.decide(Xa).astype(np.int8)
        self.gate_ = self._correctness_gate(Xa, Xs, std, self.support_, (pred == yidx).astype(np.int8))

    def _fit_k(self, Xa: np.ndarray, Xs: np.ndarray, std: Standardizer, yidx: np.ndarray) -> L1GateClassifier:
        """K > 2 classes: group-lasso support, multinomial f1 (K class scorers), the margin gate or the gate on
        f1's correctness."""
        from compiler.gated.linear_k import group_lasso_support, multinomial_on, scorers_k  # noqa: PLC0415

        K = int(self.classes_.size)
        support = group_lasso_support(Xs, yidx, K, float(self.gamma) * self.costs_)
        self.support_ = support.astype(np.int32)
        W, b = multinomial_on(Xs, yidx, K, support, float(self.C))
        self.f1_k_ = scorers_k(std, W, b)
        self.f1_ = self.f1_k_[0]
        self._fit_gate(Xa, Xs, std, yidx)
        return self

    def _correctness_gate(self, Xa: np.ndarray, Xs: np.ndarray, std: Standardizer, support: np.ndarray,
                          correct: np.ndarray) -> SparseLinear:
        """The gate: a logistic regression of f1's correctness on the support, thresholded so that at most
        p_full of the training rows go to f0."""
        g = np.zeros(Xa.shape[1])
        g0 = 0.0
        if support.size and 0 < correct.sum() < correct.size:
            gate_lr = LogisticRegression(C=float(self.C)).fit(Xs[:, support], correct)
            g[support] = gate_lr.coef_[0]
            g0 = float(gate_lr.intercept_[0])
        g_raw, g0_raw = std.to_raw(g, g0)
        gate = SparseLinear.from_dense(g_raw, g0_raw, 0.0)
        return SparseLinear(gate.feature, gate.weight, gate.bias, quantile_threshold(gate.score(Xa),
                                                                                     float(self.p_full)))
