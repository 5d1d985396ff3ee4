"""What a naive Bayes table entry is estimated from: the class-bin counts, or a per-class Gaussian.

The runtime's NB reads one table entry per feature and bin, log P(bin | class), however it was estimated.
Two estimates of the class-bin "counts" n[j, b, c] that the Laplace-smoothed entry is computed from:

- ``counts`` (the paper's, the default): how many training rows of class c fall in bin b of feature j.
  Needs rows: with K classes and N bins each cell holds about rows / (K N), so fine bins get noisy.
- ``gaussian``: a Gaussian per class and feature (mean and standard deviation of the class's values)
  integrated over each bin, times the class's rows: n[j, b, c] = n_c (Phi((e_b - mu) / sd) -
  Phi((e_{b-1} - mu) / sd)) for bin b = (e_{b-1}, e_b] (the runtime's bin rule: bin = #{edges < x}).
  With fine bins (quantile:32 and up) the tables approach scikit-learn's GaussianNB, and they smooth
  the cells that counts leave empty. A feature with an "exactly zero" bin (mean-std bins) is
  zero-inflated: the zero bin keeps the count of exact zeros, the Gaussian is fitted to the class's
  non-zero values and spread over the other bins. A class's standard deviation is floored at 1e-3 of
  the feature's (sklearn's var_smoothing in spirit); where the feature is constant the class's mass
  goes to the bin holding its mean. The Gaussian is integrated between the middles of the gaps around the
  edges (the continuity correction: a 0/1 feature's mass at 0 stays below an edge at 0; ``gap_midpoints``).

The entry is then log((n[j, b, c] + a) / (n[j, ., c] + a * bins_j)) with the pseudo-count a = alpha for
counts and alpha / bins_j for the Gaussian (``pseudo_count``). The ordering and stop rules are the same
either way, and the C runtime is unchanged.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from compiler.nb.discretize import Bins
from compiler.nb.orderings import class_bin_counts

LIKELIHOODS = ("counts", "gaussian")
SD_FLOOR = 1e-3  # a class's standard deviation is at least this share of the feature's


def check_likelihood(name: str) -> str:
    if name not in LIKELIHOODS:
        raise ValueError(f"likelihood must be one of {', '.join(LIKELIHOODS)}, got {name!r}")
    return name


def gaussian_counts(X: np.ndarray, y: np.ndarray, n_classes: int, bins: Bins, width: int) -> np.ndarray:
    """n[j, b, c] (float64, [d, width, n_classes]): each class's rows spread over feature j's bins by a
    Gaussian fitted to the class's values (zero-inflated where the feature has a zero bin)."""
    X32 = np.asarray(X, dtype=np.float32)
    d = X32.shape[1]
    out = np.zeros((d, width, n_classes), dtype=np.float64)
    for j in range(d):
        col = X32[:, j].astype(np.float64)
        zero = bool(bins.zero_bin[j])
        spread_of = col[col != 0] if zero else col
        edges = gap_midpoints(bins.edges[j].astype(np.float64), np.unique(spread_of))
        first = 1 if zero else 0  # the first interval bin
        spread = float(np.std(spread_of)) if spread_of.size else 0.0
        for c in range(n_classes):
            v = col[y == c]
            if zero:
                out[j, 0, c] = float(np.sum(v == 0))
                v = v[v != 0]
            if v.size == 0:
                continue
            mu, sd = float(v.mean()), max(float(v.std()), SD_FLOOR * spread)
            if sd > 0:
                cdf = np.concatenate([[0.0], ndtr((edges - mu) / sd), [1.0]])
                out[j, first:first + edges.size + 1, c] = v.size * np.diff(cdf)
            else:
                out[j, first + int(np.searchsorted(edges, mu, side="left")), c] = v.size
    return out


def pseudo_count(likelihood: str, alpha: float, n_bins: int) -> float:
    """The Laplace pseudo-count each bin gets: alpha for counts (the paper's), alpha / n_bins for the
    Gaussian estimate, which already gives every bin some mass: a prior of alpha rows in all, so that
    fine bins (quantile:32 and up, each holding less than a row of a small class) are not flattened."""
    return float(alpha) if likelihood == "counts" else float(alpha) / n_bins


def table_counts(B: np.ndarray, y: np.ndarray, n_classes: int, bins: Bins, counts: np.ndarray,
                 likelihood: str = "counts", X: np.ndarray | None = None) -> np.ndarray:
    """The class-bin counts the tables are smoothed from: ``counts`` itself, or the Gaussian estimate
    (needs the raw training rows X, binned as B)."""
    if check_likelihood(likelihood) == "counts":
        return counts.astype(np.float64)
    if X is None or X.shape[0] != B.shape[0]:
        raise ValueError("likelihood 'gaussian' needs the raw training rows X (the rows B was binned from)")
    return gaussian_counts(X, y, n_classes, bins, counts.shape[1])


def gap_midpoints(edges: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each edge moved to the middle of the gap between it and the next larger training value (the edge itself
    when none is larger): the same bins for every training value, and the continuity correction of a
    discrete feature. An edge is a training value (the quantile and mean-std rules put it on one or between
    two), so without this a 0/1 feature with its edge at 0 would have half of the Gaussian's mass at 0
    integrated into the bin above the edge."""
    if values.size == 0:  # no training value to move towards (a zero-inflated feature that is always 0)
        return edges
    nxt = np.searchsorted(values, edges, side="right")
    return np.where(nxt < values.size, 0.5 * (edges + values[np.minimum(nxt, values.size - 1)]), edges)


def log_likelihoods(B: np.ndarray, y: np.ndarray, n_classes: int, bins: Bins, alpha: float = 1.0,
                    likelihood: str = "counts", X: np.ndarray | None = None) -> tuple[list[np.ndarray], np.ndarray]:
    """The Laplace-smoothed log P(bin | class) of every feature, float64 [bins_j, n_classes] each, from the
    binned training rows B (``likelihood``: what the counts are, above); and the class-bin counts themselves
    [d, width, n_classes] (the orderings rank features by them)."""
    width = max(bins.n_bins(j) for j in range(B.shape[1]))
    counts = class_bin_counts(B, y, width, n_classes)
    est = table_counts(B, y, n_classes, bins, counts, likelihood, X)
    nc = est.sum(axis=1)  # [d, K]
    out = []
    for j in range(B.shape[1]):
        nb = bins.n_bins(j)
        a = pseudo_count(likelihood, alpha, nb)
        out.append(np.log((est[j, :nb, :] + a) / (nc[j][None, :] + a * nb)))
    return out, counts
