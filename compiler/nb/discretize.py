"""Discretization of numeric features into the bins the runtime uses.

A feature's bins are: optionally "exactly zero" (bin 0), then the intervals
cut by ascending float32 edges, with bin = zero_bin + #{edges < x}. The same
rule, on float32 values, is applied at training time and in the runtime.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Bins:
    zero_bin: np.ndarray  # uint8 [d]
    edges: list[np.ndarray]  # float32 ascending, one array per feature

    def n_bins(self, j: int) -> int:
        return int(self.zero_bin[j]) + self.edges[j].size + 1

    def transform(self, X: np.ndarray, features: np.ndarray | None = None) -> np.ndarray:
        """Bin indices (int8, or int16 when needed) of the given feature columns."""
        X32 = np.asarray(X, dtype=np.float32)
        cols = np.arange(X32.shape[1]) if features is None else np.asarray(features)
        width = max((self.n_bins(int(j)) for j in cols), default=1)
        out = np.empty((X32.shape[0], cols.size), dtype=np.int8 if width < 127 else np.int16)
        for c, j in enumerate(cols):
            v = X32[:, j]
            e = self.edges[j]
            b = np.searchsorted(e, v, side="left").astype(out.dtype)  # = #{edges < v}
            if self.zero_bin[j]:
                b += 1
                b[v == 0] = 0
            out[:, c] = b
        return out


def parse_bins(spec: str) -> tuple[str, int]:
    """'mean-std' or 'quantile:N' -> (method, N)."""
    if not isinstance(spec, str):
        raise ValueError(f"bins must be 'mean-std', 'quantile:N', 'auto' or None, got {spec!r}")
    if spec == "mean-std":
        return "mean-std", 4
    if spec.startswith("quantile:"):
        try:
            n = int(spec.split(":", 1)[1])
        except ValueError:
            raise ValueError(f"--bins quantile:N needs an integer N, got {spec!r}") from None
        if not 2 <= n <= 64:
            raise ValueError(f"--bins quantile:N needs 2 <= N <= 64, got {n}")
        return "quantile", n
    raise ValueError(f"--bins must be 'mean-std', 'quantile:N' or (nb-static, nb-stop) 'auto', got {spec!r}")


def fit_bins(X: np.ndarray, spec: str = "mean-std") -> Bins:
    """Learn bin edges from training data.

    mean-std (the paper's four bins): exactly zero, (-inf, mu-sigma],
    (mu-sigma, mu+sigma], (mu+sigma, inf), with mu and sigma of the column.
    quantile:N: N bins cut at the column's quantiles (duplicates merged).
    """
    method, n = parse_bins(spec)
    X = np.asarray(X, dtype=np.float64)
    d = X.shape[1]
    if method == "mean-std":
        mu, sd = X.mean(axis=0), X.std(axis=0)
        lo = (mu - sd).astype(np.float32)
        hi = (mu + sd).astype(np.float32)
        edges = [np.unique(np.array([lo[j], hi[j]], dtype=np.float32)) for j in range(d)]
        return Bins(zero_bin=np.ones(d, dtype=np.uint8), edges=edges)
    qs = np.quantile(X, np.arange(1, n) / n, axis=0, method="lower").astype(np.float32)
    edges = [np.unique(qs[:, j]) for j in range(d)]
    return Bins(zero_bin=np.zeros(d, dtype=np.uint8), edges=edges)
