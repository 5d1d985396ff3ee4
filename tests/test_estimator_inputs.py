"""Input checks of the Python estimators: validation data (eval_set) checked like predict's input and against
the training classes, predict's X checked against fit's, a single class or a class of one row refused with a
message that says what to do. Tiny data, few trees: these are about the error paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris

from compiler.cstc.train import CSTCClassifier
from compiler.skyline.classifier import SkylineClassifier
from compiler.trees.cascade import EarlyExitEnsemble
from compiler.trees.frontier import CascadeFrontierClassifier
from compiler.trees.miser import GreedyMiserClassifier


def iris(n_classes: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Training and validation rows of iris (4 features), the first ``n_classes`` classes."""
    X, y = load_iris(return_X_y=True)
    keep = y < n_classes
    X, y = X[keep], y[keep]
    va = np.arange(len(y)) % 4 == 0
    return X[~va], y[~va], X[va], y[va]


def miser() -> GreedyMiserClassifier:
    return GreedyMiserClassifier(n_trees=5)


def frontier() -> CascadeFrontierClassifier:
    return CascadeFrontierClassifier(n_trees=5, lambdas=(0.0,), refine=0, exit_every=(1,), with_cscc=False)


class _EarlyExit:
    """EarlyExitEnsemble over a miser model fitted on the training rows; fit(X, y, eval_set) learns the exits on
    eval_set (EarlyExitEnsemble.fit takes the validation rows alone)."""

    def fit(self, X: np.ndarray, y: np.ndarray, eval_set: tuple[Any, Any]) -> EarlyExitEnsemble:
        return EarlyExitEnsemble(miser().fit(X, y), every=1).fit(*eval_set)


# name -> a fresh unfitted estimator with fit(X, y, eval_set=...); the class named in sklearn's messages
WITH_EVAL_SET: dict[str, tuple[Callable[[], Any], str]] = {
    "miser": (miser, "GreedyMiserClassifier"),
    "cstc": (lambda: CSTCClassifier(depth=2, max_iter=1, n_starts=1), "CSTCClassifier"),
    "skyline": (lambda: SkylineClassifier(max_sets=4), "SkylineClassifier"),
    "frontier": (frontier, "CascadeFrontierClassifier"),
    "early_exit": (_EarlyExit, "EarlyExitEnsemble"),
}


@pytest.mark.parametrize("n_classes", [2, 3])
@pytest.mark.parametrize("name", list(WITH_EVAL_SET))
def test_eval_set_unknown_labels_are_refused(name: str, n_classes: int) -> None:
    Xtr, ytr, Xva, yva = iris(n_classes)
    bad = yva.copy()
    bad[:2] = 7
    make, _ = WITH_EVAL_SET[name]
    with pytest.raises(ValueError, match=r"validation data: labels \[7\] were not seen in the training data"):
        make().fit(Xtr, ytr, eval_set=(Xva, bad))


@pytest.mark.parametrize("name", list(WITH_EVAL_SET))
def test_eval_set_wrong_feature_count_is_refused(name: str) -> None:
    Xtr, ytr, Xva, yva = iris()
    make, cls = WITH_EVAL_SET[name]
    with pytest.raises(ValueError, match=f"X has 3 features, but {cls} is expecting 4 features as input"):
        make().fit(Xtr, ytr, eval_set=(Xva[:, :3], yva))


@pytest.mark.filterwarnings("ignore:X does not have valid feature names")
def test_frontier_predict_checks_feature_names_and_count() -> None:
    Xtr, ytr, Xva, yva = iris()
    cols = ["a", "b", "c", "d"]
    clf = frontier().fit(pd.DataFrame(Xtr, columns=cols), ytr, eval_set=(pd.DataFrame(Xva, columns=cols), yva))
    Xdf = pd.DataFrame(Xva, columns=cols)
    for method in ("predict", "predict_proba", "decision_function"):
        answer = getattr(clf, method)
        np.testing.assert_array_equal(answer(Xdf), getattr(clf.best_estimator_, method)(Xva))  # valid: unchanged
        with pytest.raises(ValueError, match="feature names should match those that were passed during fit"):
            answer(Xdf[cols[::-1]])
        with pytest.raises(ValueError, match="X has 3 features, but CascadeFrontierClassifier is expecting 4"):
            answer(Xva[:, :3])


def test_early_exit_predict_full_checks_feature_count() -> None:
    Xtr, ytr, Xva, yva = iris()
    ee = _EarlyExit().fit(Xtr, ytr, eval_set=(Xva, yva))
    np.testing.assert_array_equal(ee.predict_full(Xva), ee.model.predict(Xva))
    with pytest.raises(ValueError, match="X has 3 features, but EarlyExitEnsemble is expecting 4"):
        ee.predict_full(Xva[:, :3])


def test_skyline_refuses_a_single_class() -> None:
    Xtr, ytr, _, _ = iris()
    with pytest.raises(ValueError, match="training data has a single class"):
        SkylineClassifier(max_sets=4).fit(Xtr, np.zeros_like(ytr))


def one_row_class() -> tuple[np.ndarray, np.ndarray]:
    """Iris' first two classes and one row of the third."""
    X, y = load_iris(return_X_y=True)
    return X[:101], y[:101]


def test_miser_one_row_class_says_how_to_avoid_the_split() -> None:
    X, y = one_row_class()
    with pytest.raises(ValueError, match=r"class \[2\] has a single row.*validation_fraction=0"):
        miser().fit(X, y)
    m = GreedyMiserClassifier(n_trees=5, validation_fraction=0).fit(X, y)  # what the message offers
    assert m.n_iter_ == 5 and m.validation_accuracy_ is None
    Xva = load_iris(return_X_y=True)[0][::10]
    miser().fit(X, y, eval_set=(Xva, load_iris(return_X_y=True)[1][::10]))


def test_frontier_one_row_class_says_how_to_avoid_the_split() -> None:
    X, y = one_row_class()
    with pytest.raises(ValueError, match=r"class \[2\] has a single row.*eval_set=\(X_val, y_val\)"):
        frontier().fit(X, y)
