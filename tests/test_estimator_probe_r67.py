"""What round 67's probe of the Python estimators found, each checked against the behaviour wanted: the helper
methods (route, features_read, cost) validate X as predict does; argmax(predict_proba) is predict's class also when
the scores differ by less than the probabilities show; an unreachable depth limit costs nothing; small training
sets, wrong parameter types and values beyond float32 at predict are named."""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_iris, load_wine

from compiler.cstc.train import CSTCClassifier
from compiler.gated.adapt_gbrt import AdaptGbrtClassifier
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.nb.train import NaiveBayesBudget
from compiler.skyline.classifier import SkylineClassifier
from compiler.trees.cscc import CsccCascadeClassifier
from compiler.trees.frontier import CascadeFrontierClassifier
from compiler.trees.miser import GreedyMiserClassifier, proba_of_scores

os.environ.setdefault("FRUGALML_PROGRESS", "off")


def iris() -> tuple[np.ndarray, np.ndarray]:
    return load_iris(return_X_y=True)


@pytest.fixture(scope="module")
def gbrt() -> AdaptGbrtClassifier:
    X, y = iris()
    return AdaptGbrtClassifier(n_trees=4, hpc="rf:5:3").fit(X, y)


@pytest.fixture(scope="module")
def miser() -> GreedyMiserClassifier:
    X, y = iris()
    return GreedyMiserClassifier(n_trees=4).fit(X, y)


@pytest.mark.parametrize("width", [3, 8])
@pytest.mark.parametrize("method", ["route", "features_read", "cost", "mean_cost", "predict_f0"])
def test_adapt_gbrt_helpers_check_the_feature_count(gbrt: AdaptGbrtClassifier, method: str, width: int) -> None:
    """Was: an IndexError (3 columns), a numpy broadcast error or a silent answer (8 columns)."""
    X = np.zeros((5, width))
    with pytest.raises(ValueError, match=f"X has {width} features, but AdaptGbrtClassifier is expecting 4"):
        getattr(gbrt, method)(X)


@pytest.mark.parametrize("method", ["features_read", "test_time_cost"])
def test_miser_helpers_check_the_feature_count(miser: GreedyMiserClassifier, method: str) -> None:
    with pytest.raises(ValueError, match="X has 3 features, but GreedyMiserClassifier is expecting 4"):
        getattr(miser, method)(np.zeros((5, 3)))


def test_helpers_still_answer_on_the_right_width(gbrt: AdaptGbrtClassifier, miser: GreedyMiserClassifier) -> None:
    X, _ = iris()
    assert gbrt.features_read(X).shape == X.shape and gbrt.route(X).shape == (150,)
    assert np.array_equal(gbrt.predict_f0(X), gbrt.f0_.predict(X.astype(np.float32)))
    assert miser.features_read(X).shape == X.shape


@pytest.mark.parametrize("make", [
    lambda: GreedyMiserClassifier(n_trees=10),
    lambda: GreedyMiserClassifier(n_trees=10, class_trees="shared"),
    lambda: CascadeFrontierClassifier(n_trees=10, lambdas=(0.0, 1.0), refine=0),
])
def test_argmax_of_proba_is_predict_on_constant_features(make: Callable[[], Any]) -> None:
    """Constant features: the class scores end 1e-17 apart; predict's float32 argmax and the softmax's exactly
    equal thirds disagreed on every row."""
    X, y = iris()
    Xc = np.ones_like(X)
    m = make().fit(Xc, y)
    P = m.predict_proba(Xc)
    assert np.array_equal(m.classes_[P.argmax(axis=1)], m.predict(Xc))
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)


@pytest.mark.parametrize(("scores", "loss", "threshold", "want"), [
    (np.array([[0.0, 1e-17, 0.0]], np.float32), "multiclass-log", 0.0, 1),
    (np.array([[1e-20]], np.float32), "logistic", 0.0, 1),  # sigmoid(1e-20) is 0.5 exactly
    (np.array([[0.0]], np.float32), "logistic", 0.0, 0),  # not above the threshold: class 0, as ir_decide
    (np.array([[-1.5, -1.2]], np.float32), "squared", 0.0, 1),  # both clipped to 0: equal halves
    (np.array([[2.0, 2.0, 1.0]], np.float32), "multiclass-log", 0.0, 0),  # a true tie: the first, as argmax
])
def test_proba_of_scores_agrees_with_the_decision(scores: np.ndarray, loss: str, threshold: float, want: int) -> None:
    P = proba_of_scores(scores, loss, threshold)
    assert int(P.argmax(axis=1)[0]) == want
    assert abs(float(P.sum()) - 1.0) < 1e-12


def test_an_unreachable_depth_limit_grows_the_same_trees() -> None:
    """The depth-wise loop ran max_depth levels even after the last node stopped splitting: max_depth=1e8 took
    83 s on 150 rows (1e9 did not finish); it now stops at the first empty level."""
    X, y = iris()
    deep = GreedyMiserClassifier(n_trees=3, max_depth=10**9).fit(X, y)
    some = GreedyMiserClassifier(n_trees=3, max_depth=40).fit(X, y)
    assert np.array_equal(deep.predict_proba(X), some.predict_proba(X))


def test_skyline_small_training_set_names_its_split() -> None:
    """2 rows of each of 3 classes: was train_test_split's "The test_size = 2 should be greater or equal to the
    number of classes = 3"."""
    X, y = iris()
    rows = np.r_[0, 1, 50, 51, 100, 101]
    with pytest.raises(ValueError, match="validation_fraction 0.3.*eval_set"):
        SkylineClassifier(method="greedy-acc").fit(X[rows], y[rows])


BAD_TYPES: dict[str, tuple[Callable[[], Any], str]] = {
    "nb bins=8": (lambda: NaiveBayesBudget(bins=8), "bins"),
    "skyline max_sets=2.5": (lambda: SkylineClassifier(method="greedy-acc", max_sets=2.5), "max_sets"),
    "skyline max_sets=inf": (lambda: SkylineClassifier(method="greedy-acc", max_sets=float("inf")), "max_sets"),
    "skyline epsilon=None": (lambda: SkylineClassifier(method="greedy-acc", epsilon=None), "epsilon"),
    "skyline approx=None": (lambda: SkylineClassifier(method="greedy-acc", approx=None), "approx"),
    "frontier lambdas=1.0": (lambda: CascadeFrontierClassifier(n_trees=3, lambdas=1.0), "lambdas"),
    "frontier exit_every=5": (lambda: CascadeFrontierClassifier(n_trees=3, exit_every=5), "exit_every"),
    "adapt-lin l2=inf": (lambda: AdaptLinClassifier(l2=float("inf")), "l2"),
    "miser tree_eval_cost=nan": (lambda: GreedyMiserClassifier(n_trees=3, tree_eval_cost=float("nan")),
                                 "tree_eval_cost"),
    "miser tree_eval_cost=inf": (lambda: GreedyMiserClassifier(n_trees=3, tree_eval_cost=float("inf")),
                                 "tree_eval_cost"),
}


@pytest.mark.parametrize("case", list(BAD_TYPES))
def test_a_parameter_of_the_wrong_type_is_named(case: str) -> None:
    make, name = BAD_TYPES[case]
    X, y = iris()
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        make().fit(X, y)


@pytest.mark.parametrize(("kw", "name"), [({"lam_grid": 1.0, "lam": None}, "lam_grid"),
                                          ({"pool_lambdas": 0.0}, "pool_lambdas"),
                                          ({"pool_lambdas": ()}, "pool_lambdas"),
                                          ({"tree_eval_cost": float("inf")}, "tree_eval_cost")])
def test_cscc_names_a_grid_that_is_not_one(kw: dict[str, Any], name: str) -> None:
    X, y = iris()
    two = y < 2
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        CsccCascadeClassifier(n_trees=3, **kw).fit(X[two], y[two])


@pytest.mark.parametrize("make", [
    lambda: AdaptLinClassifier(n_iter=2),
    lambda: CSTCClassifier(depth=1, max_iter=1),
    lambda: NaiveBayesBudget(),
    lambda: SkylineClassifier(method="greedy-acc", cv_below=0),
], ids=["adapt-lin", "cstc", "nb", "skyline"])
def test_predict_refuses_values_beyond_float32_as_fit_does(make: Callable[[], Any]) -> None:
    """Was: a silent prediction on a 1e39 that the device, reading float32, holds as infinity (adapt-lin: with
    numpy's overflow warnings)."""
    X, y = iris()
    m = make().fit(X, y)
    row = X[:2].copy()
    row[1, 3] = 1e39
    with pytest.raises(ValueError, match="beyond float32"):
        m.predict(row)
    assert m.predict(X[:2]).shape == (2,)


@pytest.mark.parametrize(("budget", "size", "needle"), [
    (None, 0.0, "budget must be a number or one number per row, got None"),
    (np.ones(7), 0.0, "budget has 7 values for"),
    (1.0, -1.0, "size must be a finite number >= 0"),
    (1.0, np.ones((2, 2)), "size has 4 values for"),
])
def test_skyline_predict_budgeted_names_a_bad_budget_or_size(budget: object, size: object, needle: str) -> None:
    """Round 68's probe: numpy's broadcast message, "budget must not be NaN" for None, and a negative size taken."""
    X, y = load_wine(return_X_y=True)
    m = SkylineClassifier(max_sets=4).fit(X, y)
    with pytest.raises(ValueError, match=re.escape(needle)):
        m.predict_budgeted(X, budget, size)


@pytest.mark.parametrize("seed", ["abc", [1, 2], -1])
def test_cstc_random_state_is_named(seed: object) -> None:
    """Round 68's probe: a bare TypeError from numpy's SeedSequence, or a list taken as a seed."""
    X, y = load_iris(return_X_y=True)
    with pytest.raises(ValueError, match="random_state must be an integer >= 0 or None"):
        CSTCClassifier(depth=2, max_iter=1, random_state=seed).fit(X, y)
