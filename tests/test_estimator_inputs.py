"""Input checks of the Python estimators: validation data (eval_set) checked like predict's input and against
the training classes, predict's X checked against fit's, a single class or a class of one row refused with a
message that says what to do. Tiny data, few trees: these are about the error paths."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
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


def nb() -> Any:
    from compiler.nb.train import NaiveBayesBudget

    return NaiveBayesBudget()


def cscc() -> Any:
    from compiler.trees.cscc import CsccCascadeClassifier

    return CsccCascadeClassifier(n_trees=5, n_rounds=1)


# estimators whose fit takes eval_set, early_exit left out (its fit takes the validation rows alone)
EVAL_SET_FITS = {**{k: v[0] for k, v in WITH_EVAL_SET.items() if k != "early_exit"}, "nb": nb, "cscc": cscc}


@pytest.mark.parametrize("name", list(EVAL_SET_FITS))
def test_eval_set_of_mismatched_rows_or_not_a_pair_is_named(name: str) -> None:
    """X_val of 25 rows with 20 labels raised numpy's broadcast error from four trainers; a 3-tuple was taken
    (the probe of round 65)."""
    Xtr, ytr, Xva, yva = iris()
    make = EVAL_SET_FITS[name]
    with pytest.raises(ValueError, match=f"validation data: X_val has {len(yva)} rows and y_val 20 labels"):
        make().fit(Xtr, ytr, eval_set=(Xva, yva[:20]))
    with pytest.raises(ValueError, match="eval_set must be a pair \\(X_val, y_val\\), got 3 items"):
        make().fit(Xtr, ytr, eval_set=(Xva, yva, None))


@pytest.mark.parametrize("name", list(EVAL_SET_FITS))
def test_sparse_validation_rows_get_the_estimators_dense_message(name: str) -> None:
    """A sparse X_val was counted with len(), which scipy refuses ("sparse array length is ambiguous", a
    TypeError out of fit): its rows are now counted from its shape, a mismatch is named as for dense rows, and
    a matching sparse X_val meets the estimator's own check (these trainers take dense rows)."""
    Xtr, ytr, Xva, yva = iris()
    make = EVAL_SET_FITS[name]
    with pytest.raises(ValueError, match=f"validation data: X_val has {len(yva)} rows and y_val 20 labels"):
        make().fit(Xtr, ytr, eval_set=(sparse.csr_matrix(Xva), yva[:20]))
    with pytest.raises(TypeError, match="dense data is required"):
        make().fit(Xtr, ytr, eval_set=(sparse.csr_matrix(Xva), yva))


@pytest.mark.parametrize("make", [nb, frontier], ids=["nb", "frontier"])
def test_random_state_takes_none_and_a_random_state(make: Callable[[], Any]) -> None:
    """scikit-learn's three forms of random_state: an int, None and a RandomState (NaiveBayesBudget and
    CascadeFrontierClassifier raised TypeError on the last two); the same RandomState seed gives the same model."""
    X, y = load_iris(return_X_y=True)
    make().set_params(random_state=None).fit(X, y)
    a = make().set_params(random_state=np.random.RandomState(5)).fit(X, y).predict_proba(X)
    b = make().set_params(random_state=np.random.RandomState(5)).fit(X, y).predict_proba(X)
    np.testing.assert_array_equal(a, b)


def test_skyline_score_takes_a_column_and_refuses_a_wrong_length() -> None:
    """score(X, y) with y of shape (n, 1) broadcast to n x n and gave 100.0; a y of one label was scored."""
    Xtr, ytr, Xva, yva = iris(3)
    sk = SkylineClassifier(max_sets=4).fit(Xtr, ytr)
    want = sk.score(Xva, yva)
    assert 0.0 <= want <= 1.0
    with pytest.warns(Warning, match="column-vector y was passed when a 1d array was expected"):
        assert sk.score(Xva, yva.reshape(-1, 1)) == want
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        sk.score(Xva, yva[:1])


def test_miser_refuses_negative_sample_weights() -> None:
    Xtr, ytr, _, _ = iris()
    w = np.ones(len(ytr))
    w[0] = -1.0
    with pytest.raises(ValueError, match="sample_weight must be >= 0"):
        miser().fit(Xtr, ytr, sample_weight=w)


@pytest.mark.parametrize("make", [miser, frontier, cscc], ids=["miser", "frontier", "cscc"])
def test_too_few_rows_for_the_internal_split_name_the_fraction(make: Callable[[], Any]) -> None:
    """4 rows of 2 classes at validation_fraction 0.2 leave one validation row: scikit-learn's "The test_size = 1
    should be greater or equal to the number of classes = 2", about a parameter the user never set."""
    X, y = load_iris(return_X_y=True)
    rows = [0, 1, 50, 51]
    with pytest.raises(ValueError, match="4 rows leave 1 for the internal validation part .*fewer than the 2 classes"):
        make().fit(X[rows], y[rows])


def test_cstc_with_the_boosting_trick_is_tagged_binary() -> None:
    assert CSTCClassifier().__sklearn_tags__().classifier_tags.multi_class
    assert not CSTCClassifier(phi="trees").__sklearn_tags__().classifier_tags.multi_class


@pytest.mark.parametrize("make", [nb, lambda: CSTCClassifier(depth=2, max_iter=1, n_starts=1)], ids=["nb", "cstc"])
def test_inputs_beyond_float32_are_refused_at_fit(make: Callable[[], Any]) -> None:
    """NB said "bin edges must be finite" (a model-file error) and CSTC fitted a 0.50 model on X * 1e39 (the
    estimators that validate X as float32 get scikit-learn's "too large for dtype('float32')")."""
    Xtr, ytr, _, _ = iris()
    with pytest.raises(ValueError, match="X holds values beyond float32's range"):
        make().fit(Xtr * 1e39, ytr)
