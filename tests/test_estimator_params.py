"""Numeric parameters of the Python estimators are checked at fit as scikit-learn's are: a bad value (out of its
range, NaN, a fraction where a count is wanted) is named in a ValueError before any training. Until round 67 these
surfaced as an IndexError, a NaN slipping through ``value < 0``, the model format's "table entries must be finite"
or silent acceptance (round 66's probe). The CLI's options carry the same ranges; these are the Python entry
points (compiler.params)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sklearn.datasets import load_iris

from compiler.cstc.train import CSTCClassifier
from compiler.gated.adapt_gbrt import AdaptGbrtClassifier
from compiler.nb.train import NaiveBayesBudget
from compiler.params import check_n_jobs, check_number
from compiler.skyline.classifier import SkylineClassifier
from compiler.trees.cscc import CsccCascadeClassifier
from compiler.trees.frontier import CascadeFrontierClassifier
from compiler.trees.miser import GreedyMiserClassifier

NAN = float("nan")


def iris() -> tuple[np.ndarray, np.ndarray]:
    return load_iris(return_X_y=True)


def frontier(**kw: Any) -> CascadeFrontierClassifier:
    return CascadeFrontierClassifier(n_trees=3, lambdas=(0.0,), refine=0, **kw)


CASES: dict[str, tuple[Callable[[], Any], str]] = {
    # was: IndexError from np.quantile on an empty training part
    "nb validation_fraction=1.0": (lambda: NaiveBayesBudget(validation_fraction=1.0), "validation_fraction"),
    "nb validation_fraction=-0.1": (lambda: NaiveBayesBudget(validation_fraction=-0.1), "validation_fraction"),
    # was: "table entries must be finite" from the model format
    "nb alpha=nan": (lambda: NaiveBayesBudget(alpha=NAN), "alpha"),
    "nb n_jobs=0": (lambda: NaiveBayesBudget(n_jobs=0), "n_jobs"),
    # was: "cannot convert float NaN to integer" from margin_threshold
    "adapt-gbrt eta=nan": (lambda: AdaptGbrtClassifier(n_trees=3, eta=NAN), "eta"),
    "adapt-gbrt xi=-1": (lambda: AdaptGbrtClassifier(n_trees=3, xi=-1.0), "xi"),
    "adapt-gbrt hpc_cv=-2": (lambda: AdaptGbrtClassifier(n_trees=3, hpc_cv=-2), "hpc_cv"),
    "adapt-gbrt gate_step=0": (lambda: AdaptGbrtClassifier(n_trees=3, gate_step=0.0), "gate_step"),
    # was: trained with leaves of no rows allowed (leaf_rows clamps it to 1)
    "miser min_samples_leaf=0": (lambda: GreedyMiserClassifier(n_trees=3, min_samples_leaf=0), "min_samples_leaf"),
    # was: int(2.5) trained 2 trees
    "miser n_trees=2.5": (lambda: GreedyMiserClassifier(n_trees=2.5), "n_trees"),
    # the CLI's --min-agreement is (0, 1]; the estimator took 2.0
    "frontier min_agreement=2": (lambda: frontier(min_agreement=2.0), "min_agreement"),
    "frontier min_agreement=0": (lambda: frontier(min_agreement=0.0), "min_agreement"),
    "cstc tol=-1": (lambda: CSTCClassifier(depth=1, tol=-1.0), "tol"),
    "cstc zero_tol=nan": (lambda: CSTCClassifier(depth=1, zero_tol=NAN), "zero_tol"),
    "cstc internal_loss=-0.5": (lambda: CSTCClassifier(depth=1, internal_loss=-0.5), "internal_loss"),
    # was: a ValueError naming scikit-learn's test_size
    "skyline validation_fraction=1.5": (lambda: SkylineClassifier(method="greedy-acc", validation_fraction=1.5),
                                        "validation_fraction"),
    "skyline n_jobs=-3": (lambda: SkylineClassifier(method="greedy-acc", n_jobs=-3), "n_jobs"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_bad_parameter_is_named_at_fit(case: str) -> None:
    make, name = CASES[case]
    X, y = iris()
    with pytest.raises(ValueError, match=rf"^{name} must be"):
        make().fit(X, y)


def test_cscc_names_a_negative_pool_lambda() -> None:
    X, y = iris()
    two = y < 2  # CSCC is binary
    with pytest.raises(ValueError, match="pool_lambdas"):
        CsccCascadeClassifier(n_trees=3, pool_lambdas=(0.0, -1.0)).fit(X[two], y[two])


def test_skyline_refuses_values_beyond_float32_as_the_others_do() -> None:
    """NaiveBayesBudget, CSTC and the gated linear trainers raise "beyond float32" (check_float32_range);
    SkylineClassifier trained on a 1e300 it cannot represent in its float32 tables."""
    X, y = iris()
    X[0, 0] = 1e300
    with pytest.raises(ValueError, match="float32"):
        SkylineClassifier(method="greedy-acc", cv_below=0).fit(X, y)
    X, y = iris()
    X_val = X[::3].copy()
    X_val[1, 2] = -1e300
    with pytest.raises(ValueError, match="float32"):
        SkylineClassifier(method="greedy-acc", cv_below=0).fit(X, y, eval_set=(X_val, y[::3]))


@pytest.mark.parametrize(("value", "kw", "ok"), [
    (0.5, {"low": 0, "high": 1}, True),
    (0, {"low": 0, "high": 1, "low_open": True}, False),
    (1, {"low": 0, "high": 1, "high_open": True}, False),
    (1, {"low": 0, "high": 1}, True),
    (np.float32(0.25), {"low": 0}, True),
    (np.int64(3), {"low": 1, "integer": True}, True),
    (3.0, {"low": 1, "integer": True}, False),  # a count given as a float is refused, not truncated
    (True, {"low": 0}, False),
    ("1", {"low": 0}, False),
    (float("inf"), {"low": 0}, False),
    (NAN, {}, False),
    (None, {"low": 0}, False),
    (None, {"low": 0, "none_ok": True}, True),
    (-1e-12, {"low": 0}, False),
])
def test_check_number_ranges(value: Any, kw: dict[str, Any], ok: bool) -> None:
    if ok:
        check_number("p", value, **kw)
    else:
        with pytest.raises(ValueError, match=r"^p must be .*, got "):
            check_number("p", value, **kw)


def test_check_n_jobs_follows_the_cli_jobs_option() -> None:
    for good in (None, 1, 4, -1, np.int32(2)):
        check_n_jobs(good)
    for bad in (0, -2, 1.0, True, "2"):
        with pytest.raises(ValueError, match="n_jobs must be"):
            check_n_jobs(bad)
