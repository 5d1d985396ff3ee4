"""K-class (K > 2) training of the linear gated models (ADAPT-LIN and the L1 baseline).

The natural multi-class form of Nan & Saligrama's linear gated model:

- f1 is K linear scorers (one per class, a multinomial logistic model); it answers the class of the
  largest score (FM_PART_LINEAR_K, pyruntime.multilinear);
- the gate: f1's own confidence by default (``gate="margin"``: f1's largest class score minus its second
  largest above a threshold set on the training rows, FM_PART_MARGIN in fm_gated.h; it reads no feature),
  or the paper's binary linear scorer (``gate="linear"``: "easy, answer with f1"). With K classes the
  learned linear g ranks the rows poorly: on digits (seed 0, gamma 0.1, P 0.1, 24 features) it sent to f0
  rows f1 answers 97% right and kept those it answers 90% right; f1's margin at the same share keeps 0.950
  on validation against 0.908 (docs/gated.md, "K classes");
- ADAPT-LIN: the alternation of the binary model with f1's logistic loss replaced by the multinomial
  cross-entropy, A_i = CE(f1(x_i), y_i) + log(1 + e^{g(x_i)}), B_i = -log P_f0(y_i | x_i) +
  log(1 + e^{-g(x_i)}); the group penalty ties feature j's weights of the gate and of all K class
  scorers, so a feature is read by all or by none. Starts from the paper's start only (f1 on all rows,
  g = 0), not the binary trainer's split starts;
- L1 baseline: a cost-weighted group-lasso multinomial fit picks the features, f1 is a multinomial
  logistic regression on them, the gate a logistic regression of f1's correctness.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from compiler.gated.adapt_lin import fista_group, lipschitz_logistic, quantile_threshold
from compiler.gated.common import SparseLinear, q_step, softplus


def softmax(S: np.ndarray) -> np.ndarray:
    E = np.exp(S - S.max(axis=1, keepdims=True))
    return E / E.sum(axis=1, keepdims=True)


def cross_entropy(S: np.ndarray, yidx: np.ndarray) -> np.ndarray:
    """-log softmax(S)[y] per row."""
    m = S.max(axis=1)
    lse = m + np.log(np.exp(S - m[:, None]).sum(axis=1))
    return lse - S[np.arange(S.shape[0]), yidx]


def fit_gate_f1_k(Xs: np.ndarray, yidx: np.ndarray, q: np.ndarray, penalty: np.ndarray, l2: float,
                  W: np.ndarray, b: np.ndarray, n_iter: int, lipschitz: float,
                  tol: float = 1e-7) -> tuple[np.ndarray, np.ndarray]:
    """The g, f1 step: W[:, 0] = g, W[:, 1:] = the K class scorers of f1 (standardised space)."""
    n = Xs.shape[0]
    Y = np.eye(W.shape[1] - 1)[yidx]

    weight = ((1.0 - q) / n)[:, None]

    def residuals(S: np.ndarray) -> np.ndarray:
        R = np.empty_like(S)
        R[:, 0] = (expit(S[:, 0]) - q) / n
        R[:, 1:] = weight * (softmax(S[:, 1:]) - Y)
        return R

    return fista_group(Xs, residuals, penalty, l2, W, b, n_iter, lipschitz, tol)


def costs_ab(Xs: np.ndarray, yidx: np.ndarray, neg_log_p0: np.ndarray, W: np.ndarray,
             b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(A, B) of the q step: the cost of answering each row with f1, with f0."""
    sg = Xs @ W[:, 0] + b[0]
    A = cross_entropy(Xs @ W[:, 1:] + b[1:], yidx) + softplus(sg)
    return A, neg_log_p0 + softplus(-sg)


def adapt_lin_k(Xs: np.ndarray, yidx: np.ndarray, K: int, neg_log_p0: np.ndarray, penalty: np.ndarray,
                p_full: float, l2: float, n_iter: int, inner_iter: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ADAPT-LIN's alternation for K classes: (W, b, q) in standardised space."""
    n, d = Xs.shape
    lip = 2.0 * lipschitz_logistic(Xs)  # the softmax cross-entropy's curvature is at most twice the logistic's
    W, b = fit_gate_f1_k(Xs, yidx, np.zeros(n), penalty, l2, np.zeros((d, K + 1)), np.zeros(K + 1), inner_iter, lip)
    W[:, 0], b[0] = 0.0, 0.0
    for _ in range(n_iter):
        q, _ = q_step(*costs_ab(Xs, yidx, neg_log_p0, W, b), p_full)
        W_new, b_new = fit_gate_f1_k(Xs, yidx, q, penalty, l2, W, b, inner_iter, lip)
        change = max(float(np.max(np.abs(W_new - W))), float(np.max(np.abs(b_new - b))))
        W, b = W_new, b_new
        if change < 1e-6:
            break
    q, _ = q_step(*costs_ab(Xs, yidx, neg_log_p0, W, b), p_full)
    return W, b, q


def group_lasso_support(Xs: np.ndarray, yidx: np.ndarray, K: int, penalty: np.ndarray) -> np.ndarray:
    """Features of nonzero weight in a cost-weighted group-lasso multinomial fit (the gate column idle)."""
    n, d = Xs.shape
    W, _ = fit_gate_f1_k(Xs, yidx, np.zeros(n), penalty, 0.0, np.zeros((d, K + 1)), np.zeros(K + 1), 2000,
                         2.0 * lipschitz_logistic(Xs), tol=1e-9)
    return np.flatnonzero(np.any(W[:, 1:] != 0.0, axis=1))


def multinomial_on(Xs: np.ndarray, yidx: np.ndarray, K: int, support: np.ndarray,
                   C: float, sample_weight: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(W [d, K], b [K]) of a multinomial logistic regression on the support's columns, the rows weighted by
    ``sample_weight`` if given (priors alone when the support is empty)."""
    d = Xs.shape[1]
    W = np.zeros((d, K))
    if support.size == 0:
        w = np.ones(yidx.size) if sample_weight is None else sample_weight
        prior = np.clip(np.bincount(yidx, weights=w, minlength=K) / max(float(w.sum()), 1e-12), 1e-6, 1.0)
        return W, np.log(prior)
    lr = LogisticRegression(C=C, max_iter=1000).fit(Xs[:, support], yidx, sample_weight=sample_weight)
    W[support] = lr.coef_.T
    return W, lr.intercept_.astype(np.float64)


def scorers_k(std: Any, W: np.ndarray, b: np.ndarray) -> list[SparseLinear]:
    """The K class scorers on raw features (W [d, K] and b [K] in standardised space)."""
    out = []
    for c in range(W.shape[1]):
        w_raw, b_raw = std.to_raw(W[:, c], float(b[c]))
        out.append(SparseLinear.from_dense(w_raw, b_raw, 0.0))
    return out


def argmax_f32(scorers: list[SparseLinear], X: np.ndarray) -> np.ndarray:
    """Class index of the largest float32 score (the first on ties), as the C runtime."""
    S = np.column_stack([s.score(X) for s in scorers])
    return np.argmax(S, axis=1)


def margin_f32(scorers: list[SparseLinear], X: np.ndarray) -> np.ndarray:
    """f1's largest float32 class score minus its second largest (0 on a tie at the top), float32, as the C
    runtime's margin gate."""
    S = np.sort(np.column_stack([s.score(X) for s in scorers]), axis=1)
    return (S[:, -1] - S[:, -2]).astype(np.float32)


def margin_threshold(scorers: list[SparseLinear], X: np.ndarray, share: float) -> float:
    """The margin gate's threshold: the floor(share x n) training rows of smallest margin go to f0."""
    return float(quantile_threshold(margin_f32(scorers, X), share))


GATES = ("auto", "linear", "margin")


def gate_kind(gate: str, n_classes: int) -> str:
    """The gate a linear gated model trains: auto = margin for K > 2 classes, linear for two."""
    if gate not in GATES:
        raise ValueError(f"gate must be one of {', '.join(GATES)}, got {gate!r}")
    if gate == "margin" and n_classes <= 2:
        raise ValueError("gate 'margin' needs K > 2 classes (f1 of K class scorers); two classes use the "
                         "linear gate")
    return "margin" if gate == "auto" and n_classes > 2 else ("linear" if gate == "auto" else gate)


def scores_f64(scorers: list[SparseLinear], X: np.ndarray) -> np.ndarray:
    return np.column_stack([s.score(X).astype(np.float64) for s in scorers])
