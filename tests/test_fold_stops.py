"""compiler.trees.fold_stops: each fold's fit early-stopped on its own held-out rows; the refit's length."""

from __future__ import annotations

import numpy as np
import pytest

from compiler.options import stratified_folds
from compiler.trees.fold_stops import early_stopped_fits, refit_length
from compiler.trees.miser import GreedyMiserClassifier


def test_each_fold_is_fitted_on_its_training_rows_and_stopped_on_its_held_out_rows() -> None:
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 4)).astype(np.float32)
    y = (X[:, 0] + 0.8 * rng.normal(size=150) > 0).astype(np.int64)
    folds = stratified_folds(y, 3, seed=1)
    make = lambda: GreedyMiserClassifier(lam=0.0, n_trees=200, n_iter_no_change=10)  # noqa: E731
    fits = list(early_stopped_fits(make, X, y, folds))
    assert [te.tolist() for _, te in fits] == [te.tolist() for _, te in folds]
    for (m, te), (tr, _) in zip(fits, folds, strict=True):
        alone = make().fit(X[tr], y[tr], eval_set=(X[te], y[te]))
        assert m.n_iter_ == alone.n_iter_ < 200  # stopped early, on the held-out rows
        np.testing.assert_array_equal(m.predict_proba(X), alone.predict_proba(X))
    assert len({id(m) for m, _ in fits}) == 3  # a new estimator per fold


@pytest.mark.parametrize(("mean", "length"), [(0.2, 1), (1.0, 1), (2.4, 2), (2.6, 3), (37.5, 38), (38.5, 38)])
def test_the_refit_gets_the_mean_length_rounded_and_at_least_one(mean: float, length: int) -> None:
    assert refit_length(mean) == length
