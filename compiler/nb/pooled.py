"""The small-set rule's folds (round 34, two classes since round 38): the train and validation rows pooled and
split into stratified folds; per fold, tables fitted on the other folds and the fold's own rows to judge on."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np

T = TypeVar("T")


def pooled_folds(X: np.ndarray, y: np.ndarray, X_val: np.ndarray, y_val: np.ndarray,
                 folds: list[tuple[np.ndarray, np.ndarray]], fit: Callable[[np.ndarray, np.ndarray], T]
                 ) -> list[tuple[T, np.ndarray, np.ndarray]]:
    """Per fold of the pooled rows: (``fit`` on the other folds' rows and labels, the fold's rows, their labels),
    fold after fold."""
    Xp = np.concatenate([X, np.asarray(X_val, dtype=X.dtype)])
    yp = np.concatenate([y, y_val])
    return [(fit(Xp[tr], yp[tr]), Xp[te], yp[te]) for tr, te in folds]
