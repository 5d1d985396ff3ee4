"""The skyline's linear black box: a logistic regression fitted on standardised columns and stored in raw
units, so its weights are the sparse linear scorers the runtime evaluates (fm_linear, one per class for
K > 2 classes: FM_SKY_LINEARK).

Why standardise: the budget search fits hundreds of feature sets; on raw columns of different scales (wine:
0.1 to 1,000) lbfgs needs thousands of iterations and stops unconverged, and the L2 penalty weighs the
columns unevenly. On standardised columns it converges in tens. The weights go back to raw units through
compiler.standardize.Standardizer (the same decision function up to rounding).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.utils.validation import check_is_fitted, validate_data

from compiler.standardize import Standardizer


class StandardLogistic(ClassifierMixin, BaseEstimator):
    """LogisticRegression (L2, strength ``C``; multinomial for K > 2 classes) on standardised columns,
    with ``coef_`` (n_outputs, d) and ``intercept_`` (n_outputs,) in raw input units: one row for two
    classes (score > 0: classes_[1]), K rows for K classes (argmax)."""

    def __init__(self, C: float = 1.0, max_iter: int = 1000) -> None:
        self.C = C
        self.max_iter = max_iter

    def fit(self, X: Any, y: Any) -> StandardLogistic:
        X, y = validate_data(self, X, y, dtype=np.float64)
        std = Standardizer(X)
        lr = LogisticRegression(C=self.C, max_iter=int(self.max_iter)).fit(std.transform(X), y)
        self.classes_ = lr.classes_
        self.coef_, self.intercept_ = std.rows_to_raw(lr.coef_, lr.intercept_)
        return self

    def decision_function(self, X: Any) -> np.ndarray:
        check_is_fitted(self, "coef_")
        X = validate_data(self, X, dtype=np.float64, reset=False)
        s = X @ self.coef_.T + self.intercept_
        return s[:, 0] if s.shape[1] == 1 else s

    def predict(self, X: Any) -> np.ndarray:
        s = self.decision_function(X)
        return self.classes_[(s > 0).astype(np.int64) if s.ndim == 1 else np.argmax(s, axis=1)]
