"""Early stopping under cross-validation, shared by miser ``--sweep``'s folds (compiler.trees.kind_miser) and the
cascade's cross-validated frontier (compiler.trees.kind_cascade): every fold's fit stops on its own held-out rows,
and a refit on all the pooled rows, which has no part left to stop on, gets the folds' mean length."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np


def early_stopped_fits(make: Callable[[], Any], X: np.ndarray, y: np.ndarray,
                       folds: list[tuple[np.ndarray, np.ndarray]]) -> Iterator[tuple[Any, np.ndarray]]:
    """For each fold (train, held-out row indices): a new estimator of ``make()`` fitted on the fold's training rows
    with its held-out rows as ``eval_set`` (so its ``n_iter_`` is where they stopped improving), and those held-out
    rows; one fit at a time."""
    for tr, te in folds:
        yield make().fit(X[tr], y[tr], eval_set=(X[te], y[te])), te


def refit_length(mean_iterations: float) -> int:
    """The iterations of a refit on the pooled rows: the folds' mean early-stopped iterations, rounded, at least 1."""
    return max(1, round(float(mean_iterations)))
