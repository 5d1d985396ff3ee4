"""What every frugalml estimator shares with scikit-learn's conventions: targets as class
indices (any K >= 2 labels, ``classes_`` sorted; for two, the second is the positive class),
input validation through ``sklearn.utils.validation.validate_data`` and the binary-only tag of
the estimators that are still binary.

Imported only by training code (scikit-learn is loaded here)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data


def fit_binary(est: Any, X: Any, y: Any, dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Validate (X, y) for fit, set est.classes_ and est.n_features_in_; y as 0/1 (1 = classes_[1])."""
    X, y = validate_data(est, X, y, dtype=dtype, ensure_min_samples=2)
    y_type = type_of_target(y, input_name="y", raise_unknown=True)
    classes = np.unique(y)
    if y_type not in ("binary",) or classes.size != 2:
        if classes.size == 1:
            raise ValueError("training data has a single class: nothing to learn (needs 2 classes)")
        raise ValueError(f"Only binary classification is supported. The type of the target is {y_type} "
                         "(use --positive LABEL for one-vs-rest).")
    est.classes_ = classes
    return X, (y == classes[1]).astype(np.int64)


def fit_classes(est: Any, X: Any, y: Any, dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Validate (X, y) for fit of a K-class estimator, set est.classes_ and est.n_features_in_; y as the
    index into classes_ (0/1 for two classes, as fit_binary)."""
    X, y = validate_data(est, X, y, dtype=dtype, ensure_min_samples=2)
    type_of_target(y, input_name="y", raise_unknown=True)
    check_classification_targets(y)
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError("training data has a single class: nothing to learn (needs 2 classes)")
    est.classes_ = classes
    return X, np.searchsorted(classes, y).astype(np.int64)


def encode_classes(est: Any, y: Any, what: str) -> np.ndarray:
    """Labels of further data (e.g. validation) as indices into est.classes_; unseen labels are an error."""
    y = np.asarray(y)
    if y.ndim != 1:
        raise ValueError(f"{what}: y must be 1-D, got shape {y.shape}")
    unknown = np.setdiff1d(np.unique(y), est.classes_)
    if unknown.size:
        raise ValueError(f"{what}: labels {unknown[:5].tolist()} were not seen in the training data")
    return np.searchsorted(est.classes_, y).astype(np.int64)


def check_split_classes(y: Any, avoid: str) -> None:
    """Before a stratified internal validation split of the training labels ``y``: every class needs at least
    2 rows (one for each part). ``avoid`` ends the message: how the caller's estimator does without the split."""
    classes, counts = np.unique(np.asarray(y), return_counts=True)
    few = classes[counts < 2]
    if few.size:
        raise ValueError(f"training data: class{'es' if few.size > 1 else ''} {few[:5].tolist()} "
                         f"{'have' if few.size > 1 else 'has'} a single row, too few for the internal stratified "
                         f"validation split (at least 2 rows of every class); {avoid}")


def check_X(est: Any, X: Any, attribute: str, dtype: Any = np.float64) -> np.ndarray:
    """X for predict: est fitted (attribute set), same number of features as in fit."""
    check_is_fitted(est, attribute)
    return validate_data(est, X, dtype=dtype, reset=False)


def binary_only(tags: Any) -> Any:
    """sklearn tags of a binary-only classifier."""
    tags.classifier_tags.multi_class = False
    return tags
