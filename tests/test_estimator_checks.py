"""scikit-learn's estimator checks for every frugalml estimator.

Skips are listed per estimator with the reason; everything else must pass.
"""

from __future__ import annotations

import warnings
from typing import Any

from sklearn.tree import DecisionTreeClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from compiler.cstc.train import CSTCClassifier
from compiler.gated.adapt_gbrt import AdaptGbrtClassifier
from compiler.gated.adapt_lin import AdaptLinClassifier
from compiler.gated.l1_gate import L1GateClassifier
from compiler.nb.train import NaiveBayesBudget
from compiler.skyline.classifier import SkylineClassifier
from compiler.trees.cscc import CsccCascadeClassifier
from compiler.trees.frontier import CascadeFrontierClassifier
from compiler.trees.miser import GreedyMiserClassifier

# check name -> why it cannot pass, by estimator class
EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "NaiveBayesBudget": {
        "check_classifiers_train": (
            "asks for accuracy > 0.83 on 2-D blobs; the paper's default discretization (mean +- std, three "
            "bins per feature) reaches 0.775 there (bins='quantile:8' reaches 0.975)"),
    },
    "GreedyMiserClassifier": {
        "check_sample_weight_equivalence_on_dense_data": (
            "the number of trees is chosen on an internal validation split drawn by row; repeating rows "
            "changes that split, so weighting and repeating give different (both valid) models; with "
            "validation_fraction=0 too, as a zero-weight row still shapes the bins and counts towards "
            "min_samples_leaf (rows, as HistGradientBoosting's min_samples_leaf)"),
    },
    "CsccCascadeClassifier": {
        "check_class_weight_classifiers": (
            "class_weight is None or 'balanced' (the paper's exit-weighted loss weighs classes equally); "
            "per-class dicts are not supported"),
    },
}


def small_f0() -> DecisionTreeClassifier:
    return DecisionTreeClassifier(max_depth=3, random_state=0)


# small settings keep the checks fast; the checks are about the API, not accuracy at scale
ESTIMATORS = [
    NaiveBayesBudget(),
    SkylineClassifier(max_sets=6),
    GreedyMiserClassifier(n_trees=10),
    GreedyMiserClassifier(n_trees=10, class_trees="shared"),  # the cascade's K-class trees
    CsccCascadeClassifier(n_trees=10, n_rounds=1),
    CascadeFrontierClassifier(n_trees=10, lambdas=(0.0, 1.0), refine=0),  # the default `train cascade`
    CSTCClassifier(depth=2, max_iter=3),
    AdaptGbrtClassifier(hpc=small_f0(), n_trees=10),
    AdaptLinClassifier(hpc=small_f0(), n_iter=3, inner_iter=50),
    L1GateClassifier(hpc=small_f0()),
]
# Not checked: EarlyExitEnsemble (compiler.trees.cascade) learns exit points for an already fitted
# GreedyMiserClassifier given to its constructor; it has no default construction to check.


def expected_failed_checks(est: Any) -> dict[str, str]:
    return EXPECTED_FAILURES.get(type(est).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator: Any, check: Any, monkeypatch: Any) -> None:
    monkeypatch.setenv("FRUGALML_PROGRESS", "off")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
