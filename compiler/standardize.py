"""Column standardisation for the linear trainers (ADAPT-LIN, the L1 baseline, the skyline's linear black
box): fit on standardised columns, store the weights in raw input units.

The raw weights are w_j / s_j and the bias b - sum_j w_j m_j / s_j (m_j, s_j: the column's training mean
and standard deviation, s_j = 1 for a constant column): the same scores up to rounding.
"""

from __future__ import annotations

import numpy as np

F32_MAX = float(np.finfo(np.float32).max)


class Standardizer:
    """Column means and scales of the training X; constant columns keep scale 1."""

    def __init__(self, X: np.ndarray) -> None:
        self.mean = X.mean(axis=0)
        sd = X.std(axis=0)
        self.scale = np.where(sd > 0, sd, 1.0)

    def transform(self, X: np.ndarray) -> np.ndarray:
        return (X - self.mean) / self.scale

    def to_raw(self, w: np.ndarray, b: float) -> tuple[np.ndarray, float]:
        """One scorer's weights (d,) and bias on standardised features -> on raw features (same scores)."""
        w_raw = self._checked(w / self.scale)
        return w_raw, float(b - np.dot(w_raw, self.mean))

    def rows_to_raw(self, W: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """K scorers' weight rows (K, d) and biases (K,) on standardised features -> on raw features."""
        W_raw = self._checked(W / self.scale)
        return W_raw, b - W_raw @ self.mean

    def _checked(self, w_raw: np.ndarray) -> np.ndarray:
        """Raw weights the device's float32 holds; NarrowColumnError naming the column whose spread is too small
        for it (its weight in input units is the standardised weight over the spread)."""
        over = np.abs(w_raw) > F32_MAX  # NaN is not a narrow column: the scorer's own check refuses it
        if np.any(over):
            j = int(np.flatnonzero(over.reshape(-1, self.scale.size).any(axis=0))[0])
            raise NarrowColumnError(j, float(self.scale[j]))
        return w_raw


class NarrowColumnError(ValueError):
    """A column whose spread is too small for a float32 weight in input units. ``column`` counts the columns the
    model was fitted on; a caller that fitted on a subset renumbers it (``in_data``)."""

    def __init__(self, column: int, spread: float) -> None:
        self.column, self.spread = column, spread
        super().__init__(f"feature {column} (counting from 0) spreads only {spread:.3g} over the training rows, so "
                         "a linear model's weight on it in input units is beyond float32 (|w| <= 3.4e38), which the "
                         "device computes in: scale the column (e.g. to a spread near 1)")

    def in_data(self, columns: list[int]) -> NarrowColumnError:
        """The same error for a model fitted on the data's ``columns``: the column counted in the data."""
        return NarrowColumnError(int(columns[self.column]), self.spread)
