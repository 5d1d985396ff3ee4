"""method="auto" of the budget index: the search picked by the problem's size within a time budget."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_classification
from sklearn.naive_bayes import GaussianNB

from compiler.skyline.auto import auto_search
from compiler.skyline.classifier import SkylineClassifier
from compiler.skyline.search import AccuracyOracle, polydom_search


def oracle(d: int, seed: int = 0) -> AccuracyOracle:
    X, y = make_classification(n_samples=400, n_features=d, n_informative=min(d, 4), random_state=seed)
    return AccuracyOracle(GaussianNB(), X[:250], y[:250], X[250:], y[250:])


def test_small_lattice_runs_exact_polydom(capsys: pytest.CaptureFixture[str]) -> None:
    res, method = auto_search(oracle(6), 6, np.ones((6, 3)), 1.0)
    assert method == "polydom" and res.complete
    exact = polydom_search(oracle(6), 6)
    assert res.accuracy == exact.accuracy  # the same sets, the same accuracies
    assert "polydom (exact" in capsys.readouterr().err


def test_lattice_over_budget_caps_polydom_then_greedy(capsys: pytest.CaptureFixture[str]) -> None:
    o = oracle(12)
    res, method = auto_search(o, 12, np.ones((12, 3)), 1.0, max_sets=60)
    err = capsys.readouterr().err
    assert method == "polydom+greedy-acc" and not res.complete
    assert "on at most 60 sets" in err and "greedy-acc on the rest" in err
    assert (1 << 12) - 1 in res.accuracy and 0 in res.accuracy
    assert res.n_evaluated <= 60 + 13  # the cap, plus one greedy step at the least


def test_more_features_than_the_lattice_takes_uses_greedy(capsys: pytest.CaptureFixture[str]) -> None:
    res, method = auto_search(oracle(30), 30, np.ones((30, 3)), 1.0, max_sets=200)
    assert method == "greedy-acc" and res.n_evaluated <= 200 + 1
    assert "30 features (polydom takes at most 24)" in capsys.readouterr().err


def test_classifier_default_records_the_method_used() -> None:
    X, y = make_classification(n_samples=300, n_features=5, n_informative=3, random_state=1)
    clf = SkylineClassifier(base="nb", method="auto").fit(X, y)
    assert clf.method_ == "polydom" and clf.index_.method == "polydom"
    assert clf.score(X, y) > 0.7


def test_the_timed_set_is_scored_as_the_search_scores_it() -> None:
    """With cross-validated scores a set costs every fold's fit: auto budgets by that time (until round 58 it timed
    one fit on the training part, so a 5-fold search could take five times its minute). Counted in fits, not
    seconds: the timed scoring fits once per fold, or once on the training part."""
    fits: list[int] = []

    class CountingNB(GaussianNB):
        def fit(self, X: np.ndarray, y: np.ndarray, sample_weight: object = None) -> CountingNB:
            fits.append(X.shape[0])
            return super().fit(X, y, sample_weight)

    X, y = make_classification(n_samples=400, n_features=6, n_informative=4, random_state=0)
    for cv, expected in ((0, [250]), (4, [300, 300, 300, 300])):
        o = AccuracyOracle(CountingNB(), X[:250], y[:250], X[250:], y[250:], cv=cv)
        fits.clear()
        assert o.seconds_per_set(0b111111) > 0
        assert fits == expected
        assert o.n_evaluated == 0  # timing is not scoring: nothing cached
    o = AccuracyOracle(CountingNB(), X[:250], y[:250], X[250:], y[250:], cv=4)
    fits.clear()
    auto_search(o, 6, np.ones((6, 3)), 1.0)
    fitted_sets = o.n_evaluated - (0 in o.cache)  # the empty set predicts the majority: no fit
    assert len(fits) == 4 * (fitted_sets + 1)  # every scored set and the timed one: four folds each (before: 4 n + 1)
