"""Quantile binning of float32 features into uint8 codes (fit once, transform many).

Every threshold is a float32 value with this property: for every float32 ``x``,
``x <= thresholds[b]`` holds exactly when ``x``'s code is <= b (code = number of thresholds
below x), so a tree grown on codes and exported with float thresholds partitions float32
inputs exactly like the codes do: the float32 runtime reproduces the training partition.
"""

from __future__ import annotations

import numpy as np

from compiler.boosting._histboost import ffi, lib

MAX_BINS_LIMIT = 256
FIT_SAMPLE = 200_000  # rows the bin edges are chosen from (all rows below this)


def as_float32_matrix(X: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):  # a float64 beyond float32's range becomes inf, refused below in one line
        X32 = np.asarray(X, dtype=np.float32)
    if X32.ndim != 2:
        raise ValueError(f"X must be 2-D, got shape {X32.shape}")
    # min and max propagate NaN and show an infinity: finiteness without an n x d mask (its bytes are the codes')
    if X32.size and not (np.isfinite(X32.min()) and np.isfinite(X32.max())):
        raise ValueError("X contains NaN or infinite values (after conversion to float32)")
    return X32


def _midpoints_f32(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Float32 t with lo <= t < hi elementwise (lo < hi, both float32)."""
    m = ((lo.astype(np.float64) + hi.astype(np.float64)) / 2.0).astype(np.float32)
    return np.where((lo <= m) & (m < hi), m, lo).astype(np.float32)


class Binner:
    """Quantile binning of float32 features; fit once, transform many.

    Features with at most ``max_bins`` distinct values get one bin per value; others are cut at
    the quantiles of their empirical distribution (chosen from at most ``FIT_SAMPLE`` rows,
    drawn with a fixed seed).
    """

    def __init__(self, max_bins: int = 255) -> None:
        if not 2 <= max_bins <= MAX_BINS_LIMIT:
            raise ValueError(f"max_bins must be in 2..{MAX_BINS_LIMIT}, got {max_bins}")
        self.max_bins = max_bins
        self.thresholds_: list[np.ndarray] = []

    def fit(self, X: np.ndarray) -> Binner:
        X32 = as_float32_matrix(X)
        pick: np.ndarray | slice = slice(None)
        if X32.shape[0] > FIT_SAMPLE:
            pick = np.sort(np.random.default_rng(0).choice(X32.shape[0], FIT_SAMPLE, replace=False))
        # one sampled column at a time: a copy of the sampled rows would be twice the codes' bytes
        self.thresholds_ = [self._feature_thresholds(X32[pick, j]) for j in range(X32.shape[1])]
        return self

    def _feature_thresholds(self, col: np.ndarray) -> np.ndarray:
        values, counts = np.unique(col, return_counts=True)
        if values.size <= 1:
            return np.zeros(0, dtype=np.float32)
        if values.size <= self.max_bins:
            cut = np.arange(values.size - 1)
        else:
            # cut after the unique value at each quantile of the empirical distribution
            cum = np.cumsum(counts)
            targets = cum[-1] * np.arange(1, self.max_bins) / self.max_bins
            cut = np.searchsorted(cum, targets, side="left")
            cut = np.unique(np.clip(cut, 0, values.size - 2))
        return np.unique(_midpoints_f32(values[cut], values[cut + 1]))

    @property
    def n_features(self) -> int:
        return len(self.thresholds_)

    @property
    def n_bins(self) -> int:
        """Bins per feature in the code space (max thresholds + 1)."""
        return 1 + max((t.size for t in self.thresholds_), default=0)

    def transform(self, X: np.ndarray) -> np.ndarray:
        """Bin codes, uint8 (n, d) in Fortran order (each feature's codes contiguous, as the core reads
        them): code b means thr[b-1] < x <= thr[b]."""
        X32 = np.ascontiguousarray(as_float32_matrix(X))
        if X32.shape[1] != self.n_features:
            raise ValueError(f"expected {self.n_features} features, got {X32.shape[1]}")
        n, d = X32.shape
        thr = np.ascontiguousarray(np.concatenate(self.thresholds_ or [np.zeros(0, np.float32)]),
                                   dtype=np.float32)
        start = np.zeros(d + 1, dtype=np.int64)
        start[1:] = np.cumsum([t.size for t in self.thresholds_])
        codes = np.empty((n, d), dtype=np.uint8, order="F")
        if n and d:
            lib.hb_bin_codes(ffi.from_buffer("float[]", X32), n, d, ffi.from_buffer("float[]", thr),
                             ffi.from_buffer("int64_t[]", start), ffi.cast("uint8_t *", codes.ctypes.data))
        return codes
