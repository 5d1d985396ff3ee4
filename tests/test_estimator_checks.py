"""scikit-learn's estimator checks for every frugalml estimator.

Skips are listed per estimator with the reason; everything else must pass.
"""

from __future__ import annotations

import warnings
from typing import Any

from sklearn.utils.estimator_checks import parametrize_with_checks

from compiler.nb.train import NaiveBayesBudget
from compiler.skyline.classifier import SkylineClassifier

# check name -> why it cannot pass, by estimator class
EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "NaiveBayesBudget": {
        "check_classifiers_train": (
            "asks for accuracy > 0.83 on 2-D blobs; the paper's default discretization (mean +- std, three "
            "bins per feature) reaches 0.775 there (bins='quantile:8' reaches 0.975)"),
    },
}

ESTIMATORS = [
    NaiveBayesBudget(),
    SkylineClassifier(max_sets=6),  # a small search keeps the checks fast
]


def expected_failed_checks(est: Any) -> dict[str, str]:
    return EXPECTED_FAILURES.get(type(est).__name__, {})


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=expected_failed_checks)
def test_sklearn_estimator_checks(estimator: Any, check: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check(estimator)
