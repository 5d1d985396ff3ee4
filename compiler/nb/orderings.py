"""Feature orderings for naive Bayes: information gain, chi-square, delta-CP,
FCBF, and the greedy forward-selection wrapper (in nb_train, it needs the model).

All metrics work on discretized training data: counts[j, b, c] is the number
of training rows of class c whose feature j falls in bin b.
"""

from __future__ import annotations

import numpy as np

ORDERINGS = ("auto", "ig", "chi2", "dcp", "greedy", "fcbf")


def class_bin_counts(B: np.ndarray, y: np.ndarray, n_bins: int, n_classes: int = 2) -> np.ndarray:
    """counts[j, b, c] over binned data B (rows x features) and class indices y."""
    d = B.shape[1]
    counts = np.zeros((d, n_bins, n_classes), dtype=np.int64)
    for c in range(n_classes):
        Bc = B[y == c]
        for b in range(n_bins):
            counts[:, b, c] = (Bc == b).sum(axis=0)
    return counts


def _entropy(p: np.ndarray, axis: int) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(p > 0, -p * np.log2(np.where(p > 0, p, 1.0)), 0.0)
    return t.sum(axis=axis)


def information_gain(counts: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=(1, 2)).astype(float)
    py = counts.sum(axis=1) / n[:, None]  # [d, 2]
    hy = _entropy(py, axis=1)
    nb = counts.sum(axis=2).astype(float)  # [d, bins]
    pb = nb / n[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        pyb = np.where(nb[..., None] > 0, counts / np.maximum(nb[..., None], 1), 0.0)
    h_cond = (pb * _entropy(pyb, axis=2)).sum(axis=1)
    return hy - h_cond


def chi_square(counts: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=(1, 2)).astype(float)
    nb = counts.sum(axis=2).astype(float)
    nc = counts.sum(axis=1).astype(float)
    expected = nb[:, :, None] * nc[:, None, :] / n[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(expected > 0, (counts - expected) ** 2 / np.where(expected > 0, expected, 1), 0.0)
    return terms.sum(axis=(1, 2))


def delta_cp(counts: np.ndarray) -> np.ndarray:
    """sum over values x of p(x) |p(x|1) - p(x|0)|; for K classes p(x) (max_c p(x|c) - min_c p(x|c))."""
    n = counts.sum(axis=(1, 2)).astype(float)
    nc = np.maximum(counts.sum(axis=1).astype(float), 1)  # [d, K]
    px = counts.sum(axis=2) / n[:, None]
    pxc = counts / nc[:, None, :]
    if counts.shape[2] == 2:
        return (px * np.abs(pxc[:, :, 1] - pxc[:, :, 0])).sum(axis=1)
    return (px * (pxc.max(axis=2) - pxc.min(axis=2))).sum(axis=1)


def symmetric_uncertainty(counts: np.ndarray) -> np.ndarray:
    n = counts.sum(axis=(1, 2)).astype(float)
    hy = _entropy(counts.sum(axis=1) / n[:, None], axis=1)
    hx = _entropy(counts.sum(axis=2) / n[:, None], axis=1)
    ig = information_gain(counts)
    denom = hx + hy
    return np.where(denom > 0, 2 * ig / np.where(denom > 0, denom, 1), 0.0)


def _su_pair(a: np.ndarray, b: np.ndarray, n_bins: int) -> float:
    joint = np.bincount(a.astype(np.int64) * n_bins + b, minlength=n_bins * n_bins).astype(float)
    joint /= joint.sum()
    pa = joint.reshape(n_bins, n_bins).sum(axis=1)
    pb = joint.reshape(n_bins, n_bins).sum(axis=0)
    ha, hb, hab = _entropy(pa, 0), _entropy(pb, 0), _entropy(joint, 0)
    return float(2 * (ha + hb - hab) / (ha + hb)) if ha + hb > 0 else 0.0


def fcbf(counts: np.ndarray, B: np.ndarray, n_bins: int, max_candidates: int = 300) -> np.ndarray:
    """FCBF (Yu and Liu 2003): features by symmetric uncertainty with the class,
    dropping a feature when an already kept one predicts it at least as well as
    it predicts the class. Kept features come first, then the dropped ones,
    then those beyond max_candidates, each group by SU."""
    su = symmetric_uncertainty(counts)
    ranked = np.argsort(-su, kind="stable")
    candidates = ranked[:max_candidates]
    kept: list[int] = []
    dropped: list[int] = []
    for j in candidates:
        if su[j] <= 0:
            dropped.append(int(j))
            continue
        if any(_su_pair(B[:, i], B[:, j], n_bins) >= su[j] for i in kept):
            dropped.append(int(j))
        else:
            kept.append(int(j))
    return np.array(kept + dropped + [int(j) for j in ranked[max_candidates:]], dtype=np.int64)


def rank(metric: str, counts: np.ndarray) -> np.ndarray:
    """Features in decreasing order of a filter metric (stable on ties)."""
    scores = {"ig": information_gain, "chi2": chi_square, "dcp": delta_cp}[metric](counts)
    return np.argsort(-scores, kind="stable")
