"""What every frugalml estimator shares with scikit-learn's conventions: targets as class
indices (any K >= 2 labels, ``classes_`` sorted; for two, the second is the positive class),
input validation through ``sklearn.utils.validation.validate_data`` and the binary-only tag of
the estimators that are still binary.

Imported only by training code (scikit-learn is loaded here)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.utils import check_random_state
from sklearn.utils.multiclass import check_classification_targets, type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data


def check_float32_range(X: np.ndarray) -> None:
    """Training inputs the device can read: finite in float32 (a float64 beyond +-3.4e38 becomes inf there, and
    the tables fitted on it hold infinities: "bin edges must be finite" at export, or a degenerate model)."""
    big = float(np.abs(X).max()) if X.size else 0.0
    if big > float(np.finfo(np.float32).max):
        raise ValueError(f"X holds values beyond float32's range (|x| up to {big:.3g}): the models read float32 "
                         "inputs; scale the features")


def fit_binary(est: Any, X: Any, y: Any, dtype: Any = np.float64) -> tuple[np.ndarray, np.ndarray]:
    """Validate (X, y) for fit, set est.classes_ and est.n_features_in_; y as 0/1 (1 = classes_[1])."""
    X, y = validate_data(est, X, y, dtype=dtype, ensure_min_samples=2)
    check_float32_range(X)
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
    check_float32_range(X)
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


def check_eval_set(eval_set: Any) -> tuple[Any, Any]:
    """``eval_set`` as (X_val, y_val): a pair whose X and y have the same number of rows (a mismatch named, not
    left to a numpy broadcast error deep in the trainer)."""
    if not isinstance(eval_set, (tuple, list)) or len(eval_set) != 2:
        what = f"{len(eval_set)} items" if isinstance(eval_set, (tuple, list)) else type(eval_set).__name__
        raise ValueError(f"eval_set must be a pair (X_val, y_val), got {what}")
    X_val, y_val = eval_set
    rows, labels = _rows(X_val), _rows(y_val)
    if rows != labels:
        raise ValueError(f"validation data: X_val has {rows} rows and y_val {labels} labels (one label per row)")
    return X_val, y_val


def _rows(a: Any) -> int:
    """Rows of an array-like: its first dimension where it has a shape (scipy's sparse matrices refuse len()),
    else len()."""
    shape = getattr(a, "shape", None)
    return int(shape[0]) if shape is not None and len(shape) > 0 else len(a)


def seed_of(random_state: Any) -> int:
    """``random_state`` as the int seed a fit uses throughout: an int as given; None or a numpy RandomState
    (scikit-learn's conventions) draw one from check_random_state."""
    if isinstance(random_state, (int, np.integer)):
        return int(random_state)
    return int(check_random_state(random_state).randint(np.iinfo(np.int32).max))


def check_split_classes(y: Any, avoid: str, fraction: float) -> None:
    """Before a stratified internal validation split of the training labels ``y`` (``fraction`` of the rows, as
    train_test_split's test_size): every class needs at least 2 rows (one for each part), and each part at least
    one row of every class. ``avoid`` ends the message: how the caller's estimator does without the split."""
    classes, counts = np.unique(np.asarray(y), return_counts=True)
    few = classes[counts < 2]
    if few.size:
        raise ValueError(f"training data: class{'es' if few.size > 1 else ''} {few[:5].tolist()} "
                         f"{'have' if few.size > 1 else 'has'} a single row, too few for the internal stratified "
                         f"validation split (at least 2 rows of every class); {avoid}")
    n = int(counts.sum())
    n_val = int(np.ceil(fraction * n))
    if min(n_val, n - n_val) < classes.size:
        raise ValueError(f"training data: {n} rows leave {n_val} for the internal validation part (validation_fraction "
                         f"{fraction:g}) and {n - n_val} for training, fewer than the {classes.size} classes in one "
                         f"part; {avoid}")


def check_X(est: Any, X: Any, attribute: str, dtype: Any = np.float64) -> np.ndarray:
    """X for predict (or validation): est fitted (attribute set), same number of features as in fit, values
    within float32's range as at fit (check_float32_range: the device reads float32)."""
    check_is_fitted(est, attribute)
    X = validate_data(est, X, dtype=dtype, reset=False)
    check_float32_range(X)
    return X


def binary_only(tags: Any) -> Any:
    """sklearn tags of a binary-only classifier."""
    tags.classifier_tags.multi_class = False
    return tags
