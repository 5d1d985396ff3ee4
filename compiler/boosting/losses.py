"""Boosting losses on encoded targets Y (n, K) and float32 scores F (n, K).

- ``squared``: (Y - F)^2 with Y = +-1 (the Greedy Miser paper's stage-wise regression; kept as an
  option). Gradient/hessian are taken with the factor 1/2 dropped (g = F - Y, h = 1), and the split
  gain is scaled by 2 to stay the SSE reduction.
- ``logistic``: log(1 + e^F) - Y F with Y in {0, 1} (one output, binary).
- ``multiclass-log``: softmax cross-entropy, one output (and one tree per iteration) per class;
  the hessian carries LightGBM's and scikit-learn's factor K / (K - 1).
"""

from __future__ import annotations

import numpy as np


def sigmoid(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def softmax(F: np.ndarray) -> np.ndarray:
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
    """Target matrix (n, K): ±1 for squared loss, 0/1 for the log losses; float32, which holds them exactly (half
    the memory of float64; every loss computes in float64)."""
    K = n_outputs_for(loss, n_classes)
    if K == 1:
        t = (y_idx == 1)[:, None]
    else:
        t = y_idx[:, None] == np.arange(K)[None, :]
    return (2.0 * t - 1.0).astype(np.float32) if loss == "squared" else t.astype(np.float32)


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


def pointwise_loss(Y: np.ndarray, F: np.ndarray, loss: str) -> np.ndarray:
    """Loss of every row (n,)."""
    F64 = F.astype(np.float64)
    if loss == "squared":
        return np.sum((Y - F64) ** 2, axis=1)
    if loss == "logistic":
        return np.logaddexp(0.0, F64[:, 0]) - Y[:, 0] * F64[:, 0]
    z = F64 - F64.max(axis=1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
    return -np.sum(Y * logp, axis=1)


def mean_loss(Y: np.ndarray, F: np.ndarray, loss: str) -> float:
    """Mean loss of scores F against encoded targets Y."""
    return float(np.mean(pointwise_loss(Y, F, loss)))


def gradient_step(Y: np.ndarray, F: np.ndarray, loss: str) -> tuple[np.ndarray, np.ndarray | None]:
    """Negative gradient (n, K) and the Newton denominator p(1-p) (None for squared loss)."""
    F64 = F.astype(np.float64)
    if loss == "squared":
        return Y - F64, None
    p = sigmoid(F64) if loss == "logistic" else softmax(F64)
    return Y - p, p * (1.0 - p)


LOG_GAIN_UNIT = 2.0


def grad_hess(Y: np.ndarray, F: np.ndarray, loss: str) -> tuple[np.ndarray, np.ndarray, float]:
    """Gradient and hessian (n, K) of the loss in F, and the factor on the Newton split gain.

    Squared loss: 2, which makes the gain its loss reduction (the factor 2 is dropped from g and h).
    Log losses: ``LOG_GAIN_UNIT`` (2): the Newton gain of a split that separates two balanced classes
    at p = 1/2 is half the squared loss's on +-1 targets; the factor puts both in one unit, so that
    Greedy Miser's lambda charges a feature alike under every loss."""
    neg, den = gradient_step(Y, F, loss)
    if den is None:
        return -neg, np.ones_like(neg), 2.0
    K = Y.shape[1]
    if loss == "multiclass-log" and K > 1:
        den = den * (K / (K - 1.0))
    return -neg, den, LOG_GAIN_UNIT
